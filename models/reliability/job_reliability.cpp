#include "models/reliability/job_reliability.hpp"

#include <algorithm>
#include <cmath>

#include "models/reliability/checkpointing.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "sim/fields.hpp"

namespace ttsim::reliability {
namespace {

// A checkpoint interval shorter than a second is no schedule a training loop keeps (and with a free checkpoint
// Daly's optimum tends to 0); a week of work between checkpoints is beyond any job this models.
constexpr double kMinIntervalSeconds = 1.0;
constexpr double kMaxPinnedIntervalSeconds = 7 * 24 * 3600.0;
// Hot spares: a pool larger than any cluster this models is a slip.
constexpr int kMaxHotSpares = 1 << 20;
// Storage rates from 1 MB/s to 1 PB/s.
constexpr double kMinStorage = 1e6, kMaxStorage = 1e15;

}  // namespace

void check_reliability_request(const ReliabilityRequest& r, const ReliabilityData& data) {
    if (r.failure_rates) data.rates(*r.failure_rates);
    if (r.checkpoint_interval_seconds &&
        !(*r.checkpoint_interval_seconds >= kMinIntervalSeconds && *r.checkpoint_interval_seconds <= kMaxPinnedIntervalSeconds))
        throw InputError("a checkpoint interval must be between 1s and 168h", Field::checkpoint_interval);
    if (r.storage_bytes_per_s && !(*r.storage_bytes_per_s >= kMinStorage && *r.storage_bytes_per_s <= kMaxStorage))
        throw InputError("a storage bandwidth must be between 1MB/s and 1PB/s", Field::storage_bandwidth);
    if (r.hot_spares && !(*r.hot_spares >= 0 && *r.hot_spares <= kMaxHotSpares))
        throw InputError("hot spares must be a count of hosts from 0 to " + std::to_string(kMaxHotSpares),
                         Field::hot_spares);
}

ReliabilityRequest read_reliability_request(const ConfigNode& node) {
    node.check_keys({"failure_rates", "checkpoint_interval", "storage_bandwidth", "hot_spares"});
    ReliabilityRequest r;
    if (const auto n = node.optional("failure_rates")) r.failure_rates = n->as_string();
    if (const auto n = node.optional("checkpoint_interval")) r.checkpoint_interval_seconds = n->as_time_seconds();
    if (const auto n = node.optional("storage_bandwidth")) r.storage_bytes_per_s = n->as_bandwidth();
    if (const auto n = node.optional("hot_spares")) r.hot_spares = static_cast<int>(n->as_int(0, kMaxHotSpares));
    node.feeding_keys(node, [&] { check_reliability_request(r, reliability_data()); });
    return r;
}

RunReliability assess_reliability(const ReliabilityRequest& request, const ReliabilityJob& job,
                                  const ReliabilityData& data) {
    check_reliability_request(request, data);
    TTSIM_ASSERT(job.gpus >= 1 && job.work_seconds >= 0 && job.work_p90_seconds >= 0, "a job with GPUs and work");
    const FailureRates& rates = data.rates(request.failure_rates.value_or(data.default_rates));
    const JobParts parts = job_parts(job.gpus, job.gpus_per_host, job.nics_per_gpu, job.switches);

    RunReliability out;
    out.failure_rates = rates.name;
    const double rate_per_hour = rates.job_rate_per_hour(parts);
    out.mttf_hours = rates.job_mttf_hours(parts);
    double host_out_rate = 0;
    for (const Component c : kComponents)
        if (takes_host_out(c)) host_out_rate += rates.of(c) * parts.of(c);

    out.checkpoint_bytes = checkpoint_bytes(job.total_parameters, job.trainable_parameters,
                                            data.weights_bytes_per_parameter, data.optimizer_bytes_per_parameter);
    const double storage = request.storage_bytes_per_s.value_or(data.storage_bytes_per_s);
    const double hosts = parts.of(Component::host);
    out.checkpoint_write_seconds = storage_seconds(out.checkpoint_bytes, storage, hosts, data.host_storage_bytes_per_s);
    // Reading back moves the same bytes over the same links.
    out.restart_seconds = data.detection_seconds + data.reinitialisation_seconds + out.checkpoint_write_seconds;

    const double mttf_seconds = out.mttf_hours * 3600.0;
    double interval = request.checkpoint_interval_seconds.value_or(0);
    out.interval_pinned = request.checkpoint_interval_seconds.has_value();
    if (!out.interval_pinned)
        interval = std::isfinite(mttf_seconds) ? daly_interval_seconds(out.checkpoint_write_seconds, mttf_seconds)
                                               : kMaxPinnedIntervalSeconds;
    interval = std::max(interval, kMinIntervalSeconds);
    out.checkpoint_interval_minutes = interval / 60.0;

    RunModel model;
    model.failure_rate_per_s = rate_per_hour / 3600.0;
    model.host_out_share = rate_per_hour > 0 ? host_out_rate / rate_per_hour : 0.0;
    model.interval_seconds = interval;
    model.checkpoint_seconds = out.checkpoint_write_seconds;
    model.restart_seconds = out.restart_seconds;
    model.hot_spares = request.hot_spares;
    model.repair_seconds = data.repair_seconds;
    model.trials = request.trials;
    model.seed = request.seed;
    model.work_seconds = job.work_seconds;
    out.runs = simulate_runs(model);
    model.work_seconds = job.work_p90_seconds;
    out.wall_p90_at_p90_minutes = simulate_runs(model).p90_wall_seconds / 60.0;
    return out;
}

}  // namespace ttsim::reliability
