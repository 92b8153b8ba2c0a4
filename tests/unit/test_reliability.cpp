// Failures, checkpoints and restarts (models/reliability): the Young/Daly interval by hand, the Monte Carlo
// against Daly's closed form, determinism, and the public anchors (Llama 3 405B on 16,384 H100s; Meta's research
// clusters' 1,024-GPU MTTF; an MLPerf-length run).
#include <catch2/catch.hpp>

#include <cmath>

#include <tbb/task_arena.h>

#include "models/reliability/checkpointing.hpp"
#include "models/reliability/job_reliability.hpp"
#include "models/reliability/reliability_data.hpp"
#include "models/reliability/run_simulation.hpp"
#include "sim/errors.hpp"
#include "topologies/superpod_fabric.hpp"

using namespace ttsim::reliability;

namespace {

// A job on DGX-style hosts of 8 GPUs with one NIC per GPU, on the SuperPOD fat tree of its hosts.
ReliabilityJob dgx_job(int gpus, double parameters, double work_hours) {
    ReliabilityJob job;
    job.gpus = gpus;
    job.gpus_per_host = 8;
    job.switches = ttsim::superpod_switch_equivalents(gpus, 8);
    job.total_parameters = job.trainable_parameters = parameters;
    job.work_seconds = job.work_p90_seconds = work_hours * 3600.0;
    return job;
}

}  // namespace

TEST_CASE("reliability: Young's and Daly's checkpoint intervals, by hand", "[reliability]") {
    // delta = 60 s, M = 3600 s. Young: sqrt(2 x 60 x 3600) = sqrt(432000) = 657.2671 s.
    REQUIRE(young_interval_seconds(60, 3600) == Approx(657.2671).epsilon(1e-6));
    // Daly: x = delta / 2M = 1/120; sqrt(x) = 0.0912871; 657.2671 x (1 + 0.0912871/3 + (1/120)/9) - 60
    //     = 657.2671 x 1.0313549 - 60 = 677.8757 - 60 = 617.8757 s.
    REQUIRE(daly_interval_seconds(60, 3600) == Approx(617.8757).epsilon(1e-6));
    // A checkpoint longer than two MTTFs: checkpoint every MTTF.
    REQUIRE(daly_interval_seconds(8000, 3600) == 3600);
    // Daly's interval minimises his expected wall time: 20 % either side costs more.
    const double tau = daly_interval_seconds(60, 3600);
    const double at = daly_expected_wall_seconds(1e6, tau, 60, 600, 3600);
    REQUIRE(at < daly_expected_wall_seconds(1e6, 0.8 * tau, 60, 600, 3600));
    REQUIRE(at < daly_expected_wall_seconds(1e6, 1.2 * tau, 60, 600, 3600));
}

TEST_CASE("reliability: the Monte Carlo reproduces Daly's expected wall time", "[reliability]") {
    // W = 100 h of work, M = 2 h, checkpoint 2 min, restart 15 min, Daly's interval: 50 failures and more.
    RunModel m;
    m.work_seconds = 100 * 3600.0;
    m.failure_rate_per_s = 1.0 / 7200;
    m.checkpoint_seconds = 120;
    m.restart_seconds = 900;
    m.interval_seconds = daly_interval_seconds(120, 7200);
    m.trials = 4000;
    const RunDistribution d = simulate_runs(m);
    const double expected = daly_expected_wall_seconds(m.work_seconds, m.interval_seconds, 120, 900, 7200);
    // Daly's formula counts a checkpoint after the last segment too (one interval's worth at most: < 0.1 %).
    REQUIRE(d.monte_carlo_mean_wall_seconds == Approx(expected).epsilon(0.01));
    // The closed form the mean is reported from (no spare limit) sums the same per segment, exactly.
    REQUIRE(d.mean_wall_seconds == Approx(expected).epsilon(0.002));
    REQUIRE(d.mean_wall_seconds == Approx(expected_wall_seconds(m)));
    // Each hour of wall time sees 1/M failures on average (restarts included, waits none).
    REQUIRE(d.mean_interruptions == Approx(d.mean_wall_seconds / 7200).epsilon(1e-12));
    REQUIRE(d.p10_wall_seconds < d.p50_wall_seconds);
    REQUIRE(d.p50_wall_seconds < d.p90_wall_seconds);
    REQUIRE(d.goodput == Approx(m.work_seconds / d.mean_wall_seconds));
}

TEST_CASE("reliability: the Monte Carlo is the same for a seed at any thread count", "[reliability]") {
    RunModel m;
    m.work_seconds = 30 * 24 * 3600.0;
    m.failure_rate_per_s = 1.0 / 10800;
    m.host_out_share = 0.8;
    m.checkpoint_seconds = 30;
    m.restart_seconds = 900;
    m.interval_seconds = 1800;
    m.hot_spares = 3;
    m.repair_seconds = 24 * 3600.0;
    m.trials = 500;
    // (A limited pool: the mean comes from the Monte Carlo too.)
    RunDistribution one, four;
    tbb::task_arena(1).execute([&] { one = simulate_runs(m); });
    tbb::task_arena(4).execute([&] { four = simulate_runs(m); });
    REQUIRE(one.mean_wall_seconds == four.mean_wall_seconds);   // bit for bit
    REQUIRE(one.p90_wall_seconds == four.p90_wall_seconds);
    REQUIRE(one.mean_interruptions == four.mean_interruptions);
    m.seed = 2;
    REQUIRE(simulate_runs(m).mean_wall_seconds != one.mean_wall_seconds);
}

TEST_CASE("reliability: hot spares: none waits for each repair, a few for some, an ample pool for none", "[reliability]") {
    RunModel m;
    m.work_seconds = 30 * 24 * 3600.0;
    m.failure_rate_per_s = 1.0 / 10800;   // ~240 failures in 30 days
    m.host_out_share = 1;
    m.checkpoint_seconds = 30;
    m.restart_seconds = 900;
    m.interval_seconds = 1800;
    m.repair_seconds = 24 * 3600.0;
    m.trials = 200;
    const double ample = simulate_runs(m).monte_carlo_mean_wall_seconds;
    m.hot_spares = 0;
    const RunDistribution without = simulate_runs(m);
    const double none = without.mean_wall_seconds;
    // Its mean is exact (the closed form plus one repair per host-out failure); the Monte Carlo agrees.
    REQUIRE(without.monte_carlo_mean_wall_seconds == Approx(none).epsilon(0.02));
    m.hot_spares = 4;   // ~8 failures a day, each spare back after a day: the pool runs dry
    const double few = simulate_runs(m).mean_wall_seconds;
    m.hot_spares = 100;   // more than a day's failures: never dry
    const double many = simulate_runs(m).mean_wall_seconds;
    REQUIRE(ample < few);
    REQUIRE(few < none);
    // No spares: every failure waits a day's repair; 240 failures take the job past 240 days.
    REQUIRE(none > 240 * 24 * 3600.0);
    REQUIRE(many == Approx(ample).epsilon(0.02));
}

TEST_CASE("reliability: checkpoint size and write time from the model's state and the storage", "[reliability]") {
    const ReliabilityData& data = reliability_data();
    // 405e9 parameters x (2 + 12) bytes = 5.67e12 bytes.
    REQUIRE(checkpoint_bytes(405e9, 405e9, data.weights_bytes_per_parameter, data.optimizer_bytes_per_parameter) ==
            Approx(5.67e12));
    // 2,048 hosts x 100 GB/s is more than the file system's 2 TB/s: 5.67e12 / 2e12 = 2.835 s.
    REQUIRE(storage_seconds(5.67e12, 2e12, 2048, 1e11) == Approx(2.835));
    // One host writes through its own 2 x 400 Gb/s = 100 GB/s: 1e12 / 1e11 = 10 s.
    REQUIRE(storage_seconds(1e12, 2e12, 1, 1e11) == Approx(10.0));
}

TEST_CASE("reliability: the default rates reproduce their reference job, Llama 3 405B on 16,384 H100s", "[reliability]") {
    const ReliabilityData& data = reliability_data();
    const FailureRates& rates = data.rates(data.default_rates);
    const ReliabilityJob job = dgx_job(16384, 405e9, 54 * 24.0);
    const JobParts parts = job_parts(job.gpus, 8, 1, job.switches);
    // The rates are its 419 unexpected interruptions over its parts and 1,296 h: one per 1296/419 = 3.093 h.
    REQUIRE(rates.job_mttf_hours(parts) == Approx(1296.0 / 419).epsilon(1e-9));
    // 54 days of failure-free work take longer than 54 days, so a little over 419 interruptions.
    const RunReliability r = assess_reliability({}, job, data);
    INFO("interruptions " << r.runs.mean_interruptions << ", goodput " << r.runs.goodput << ", interval "
                          << r.checkpoint_interval_minutes << " min, checkpoint " << r.checkpoint_write_seconds << " s");
    REQUIRE(r.runs.mean_interruptions >= 300);
    REQUIRE(r.runs.mean_interruptions <= 600);
    // Llama 3 reports > 90 % effective training time.
    REQUIRE(r.runs.goodput >= 0.85);
    REQUIRE(r.runs.goodput <= 0.95);
    REQUIRE(!r.interval_pinned);
    REQUIRE(r.checkpoint_interval_minutes * 60 ==
            Approx(daly_interval_seconds(r.checkpoint_write_seconds, r.mttf_hours * 3600)));
}

TEST_CASE("reliability: research-cluster rates give a 1,024-GPU job Meta's measured MTTF (7.9 h) within 25 %", "[reliability]") {
    // research-a100 is fitted to the 8-GPU jobs' MTTF (47.7 days) only; the 1,024-GPU figure checks the scaling.
    const ReliabilityData& data = reliability_data();
    const FailureRates& rates = data.rates("research-a100");
    REQUIRE(rates.job_mttf_hours(job_parts(8, 8, 1, 0)) == Approx(47.7 * 24).epsilon(1e-9));
    const double mttf = rates.job_mttf_hours(job_parts(1024, 8, 1, ttsim::superpod_switch_equivalents(1024, 8)));
    INFO("1,024-GPU MTTF " << mttf << " h");
    REQUIRE(std::abs(mttf / 7.9 - 1) <= 0.25);
    // The prediction uses that MTTF, and its Monte Carlo agrees with the closed form: 200 h of work on 1,024 GPUs.
    ReliabilityRequest request;
    request.failure_rates = "research-a100";
    const RunReliability r = assess_reliability(request, dgx_job(1024, 70e9, 200), data);
    REQUIRE(r.mttf_hours == Approx(mttf));
    REQUIRE(r.runs.monte_carlo_mean_wall_seconds == Approx(r.runs.mean_wall_seconds).epsilon(0.01));
}

TEST_CASE("reliability: an MLPerf-length run loses under 1 % to failures", "[reliability]") {
    // Llama 2 70B LoRA-sized state on 1,024 H100s for 30 min, and BERT-sized on 8 GPUs for 20 min.
    const ReliabilityData& data = reliability_data();
    const RunReliability lora = assess_reliability({}, dgx_job(1024, 70e9, 0.5), data);
    REQUIRE(lora.runs.goodput > 0.99);
    const RunReliability bert = assess_reliability({}, dgx_job(8, 340e6, 20.0 / 60), data);
    REQUIRE(bert.runs.goodput > 0.999);
    // The median run sees no failure at all: its wall time is the work and its checkpoints' writes, 140 GB each
    // at 2 TB/s (70 ms) every few minutes.
    REQUIRE(lora.runs.p50_wall_seconds > 0.5 * 3600);
    REQUIRE(lora.runs.p50_wall_seconds < 0.5 * 3600 * 1.002);
}

TEST_CASE("reliability: a pinned checkpoint interval is used, and bad requests name their field", "[reliability]") {
    const ReliabilityData& data = reliability_data();
    ReliabilityRequest request;
    request.checkpoint_interval_seconds = 1800;
    const RunReliability pinned = assess_reliability(request, dgx_job(16384, 405e9, 24 * 7), data);
    REQUIRE(pinned.interval_pinned);
    REQUIRE(pinned.checkpoint_interval_minutes == 30);
    // A 30-minute interval loses more work per failure than Daly's ~4 minutes.
    REQUIRE(pinned.runs.goodput < assess_reliability({}, dgx_job(16384, 405e9, 24 * 7), data).runs.goodput);

    auto field_of = [&](const ReliabilityRequest& r) {
        try {
            check_reliability_request(r, data);
        } catch (const ttsim::InputError& e) {
            return e.field();
        }
        return std::optional<ttsim::Field>{};
    };
    ReliabilityRequest bad;
    bad.checkpoint_interval_seconds = 0;
    REQUIRE(field_of(bad) == ttsim::Field::checkpoint_interval);
    bad = {};
    bad.storage_bytes_per_s = 1;
    REQUIRE(field_of(bad) == ttsim::Field::storage_bandwidth);
    bad = {};
    bad.hot_spares = -1;
    REQUIRE(field_of(bad) == ttsim::Field::hot_spares);
    bad = {};
    bad.failure_rates = "nonesuch";
    REQUIRE(field_of(bad) == ttsim::Field::failure_rates);
}
