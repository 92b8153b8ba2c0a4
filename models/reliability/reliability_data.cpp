#include "models/reliability/reliability_data.hpp"

#include <cmath>
#include <limits>

#include "models/data_dir.hpp"
#include "models/reference_data.hpp"
#include "sim/errors.hpp"
#include "sim/fields.hpp"
#include "topologies/superpod_fabric.hpp"

namespace ttsim::reliability {

const char* to_string(Component component) {
    switch (component) {
        case Component::gpu: return "gpu";
        case Component::hbm: return "hbm";
        case Component::nic: return "nic";
        case Component::network_switch: return "switch";
        case Component::host: return "host";
        case Component::software: return "software";
    }
    return "?";
}

bool takes_host_out(Component component) {
    return component != Component::network_switch && component != Component::software;
}

JobParts job_parts(int gpus, int gpus_per_host, double nics_per_gpu, double switches) {
    TTSIM_ASSERT(gpus >= 1 && gpus_per_host >= 1, "a job holds at least one GPU and hosts of at least one");
    JobParts parts;
    auto set = [&](Component c, double n) { parts.count[static_cast<std::size_t>(c)] = n; };
    set(Component::gpu, gpus);
    set(Component::hbm, gpus);   // the HBM stacks of one GPU package fail as one part of it
    set(Component::nic, gpus * nics_per_gpu);
    set(Component::network_switch, switches);
    set(Component::host, std::ceil(static_cast<double>(gpus) / gpus_per_host));
    set(Component::software, gpus);   // one process per GPU
    return parts;
}

double FailureRates::job_rate_per_hour(const JobParts& parts) const {
    double rate = 0;
    for (const Component c : kComponents) rate += of(c) * parts.of(c);
    return rate;
}

double FailureRates::job_mttf_hours(const JobParts& parts) const {
    const double rate = job_rate_per_hour(parts);
    return rate > 0 ? 1.0 / rate : std::numeric_limits<double>::infinity();
}

const FailureRates& ReliabilityData::rates(std::string_view name) const {
    for (const FailureRates& r : rate_sets)
        if (r.name == name) return r;
    std::string names;
    for (const FailureRates& r : rate_sets) names += (names.empty() ? "" : ", ") + r.name;
    throw InputError("unknown failure rates '" + std::string(name) + "' (valid: " + names + ")", Field::failure_rates);
}

std::vector<std::string> ReliabilityData::rate_set_names() const {
    std::vector<std::string> names;
    for (const FailureRates& r : rate_sets) names.push_back(r.name);
    return names;
}

ReliabilityData load_reliability_data(const std::filesystem::path& path) {
    const ConfigNode root = load_reference_file(path, {"failures", "checkpoint", "restart"});
    ReliabilityData out;

    const ConfigNode failures = root.required("failures");
    failures.check_keys({"reference_job", "interruptions", "scaled_clusters", "default_rates"});
    const ConfigNode job = sourced_table(failures, "reference_job", {"gpus", "gpus_per_host", "nics_per_gpu", "duration"});
    const int gpus = static_cast<int>(job.required("gpus").as_int(1, 1 << 24));
    const int gpus_per_host = static_cast<int>(job.required("gpus_per_host").as_int(1, 1024));
    const double nics_per_gpu = job.required("nics_per_gpu").as_double(0, 16);
    const double hours = job.required("duration").as_time_seconds() / 3600.0;
    if (!(hours > 0)) job.required("duration").fail("the reference job must have run for some time");
    // The reference job's switches as this model counts any job's (the SuperPOD fat tree of its hosts), so that
    // the job itself is predicted to fail exactly as often as it did.
    const JobParts parts = job_parts(gpus, gpus_per_host, nics_per_gpu,
                                     job.required("gpus").feeding([&] { return superpod_switch_equivalents(gpus, gpus_per_host); }));
    const ConfigNode counts = sourced_table(failures, "interruptions", {"gpu", "hbm", "nic", "switch", "host", "software"});
    FailureRates reference;
    reference.name = "production-h100";
    for (const Component c : kComponents) {
        const ConfigNode count = counts.required(to_string(c));
        const double n = count.as_double(0, 1e9);
        if (n > 0 && !(parts.of(c) > 0)) count.fail("the reference job holds none of this part to have failed");
        reference.per_part_hour[static_cast<std::size_t>(c)] = n > 0 ? n / (parts.of(c) * hours) : 0.0;
    }
    out.rate_sets.push_back(reference);

    // Scaled clusters: the reference mix, times the factor that gives a one-host job the measured MTTF.
    const JobParts one_host = job_parts(gpus_per_host, gpus_per_host, nics_per_gpu, 0);
    const ConfigNode scaled = failures.required("scaled_clusters");
    scaled.check_keys(scaled.keys());   // refuses duplicate keys
    for (const std::string& name : scaled.keys()) {
        const ConfigNode entry = sourced_table(scaled, name, {"single_host_mttf"});
        if (name == reference.name) scaled.required(name).fail("'" + name + "' is the reference job's own set");
        const double mttf_h = entry.required("single_host_mttf").as_time_seconds() / 3600.0;
        if (!(mttf_h > 0)) entry.required("single_host_mttf").fail("a mean time to failure must be positive");
        FailureRates r = reference;
        r.name = name;
        const double factor = 1.0 / (mttf_h * reference.job_rate_per_hour(one_host));
        for (double& rate : r.per_part_hour) rate *= factor;
        out.rate_sets.push_back(r);
    }
    out.default_rates = sourced(failures, "default_rates").as_string();
    failures.required("default_rates").feeding([&] { return out.rates(out.default_rates).name; });

    const ConfigNode checkpoint = root.required("checkpoint");
    checkpoint.check_keys({"bytes_per_parameter", "storage_bandwidth", "host_storage_bandwidth"});
    const ConfigNode bytes = sourced_table(checkpoint, "bytes_per_parameter", {"weights", "optimizer"});
    out.weights_bytes_per_parameter = bytes.required("weights").as_double(0, 64);
    out.optimizer_bytes_per_parameter = bytes.required("optimizer").as_double(0, 64);
    out.storage_bytes_per_s = sourced(checkpoint, "storage_bandwidth").as_bandwidth();
    out.host_storage_bytes_per_s = sourced(checkpoint, "host_storage_bandwidth").as_bandwidth();

    const ConfigNode restart = root.required("restart");
    restart.check_keys({"detection", "reinitialisation", "repair_time"});
    out.detection_seconds = sourced(restart, "detection").as_time_seconds();
    out.reinitialisation_seconds = sourced(restart, "reinitialisation").as_time_seconds();
    out.repair_seconds = sourced(restart, "repair_time").as_time_seconds();
    return out;
}

const ReliabilityData& reliability_data() {
    // Function-local static: loaded once, thread-safe (C++11), immutable afterwards.
    static const ReliabilityData data = load_reliability_data(data_file("reliability.yaml"));
    return data;
}

}  // namespace ttsim::reliability
