// A long job's wall time under failures, checkpoints and restarts, by a seeded Monte Carlo.
//
// One trial plays the job out: it works in segments of `interval` seconds of work, each followed by a blocking
// checkpoint write of `checkpoint` seconds (the last segment, which ends the job, writes none). Failures arrive
// at exponential times of rate lambda (memoryless: the clock restarts at each restart). A failure loses the work
// since the last completed checkpoint and costs a restart of `restart` seconds (detection, re-initialisation,
// checkpoint read), which a failure may strike too (then it starts over). A failure that takes a host out
// (reliability_data.hpp takes_host_out; drawn by each component's share of lambda) needs a hot spare: with a
// limited pool, each spare used returns `repair` seconds after the failure that called it (the broken host,
// repaired, becomes the spare), and with none free the job waits for the earliest repair before restarting.
//
// Determinism: trial i draws from its own generator seeded by (seed, i) (SplitMix64, exact integer arithmetic;
// uniforms and exponentials by inversion, no library distribution whose algorithm may differ between standard
// libraries), trials run in parallel and are combined in trial order, so the result is identical for a seed at
// any thread count and on any platform with IEEE doubles.
#pragma once

#include <cstdint>
#include <optional>

namespace ttsim::reliability {

struct RunModel {
    double work_seconds = 0;          // the failure-free time to train
    double failure_rate_per_s = 0;    // lambda of the whole job
    double host_out_share = 1;        // of the failures, the share that takes a host out
    double interval_seconds = 0;      // work between two checkpoints (> 0)
    double checkpoint_seconds = 0;    // one blocking checkpoint write
    double restart_seconds = 0;       // detection + re-initialisation + checkpoint read
    std::optional<int> hot_spares;    // hosts; unset: never short of one (a pool larger than the job needs)
    double repair_seconds = 0;        // a host out until then (with a limited pool)
    int trials = 1000;
    std::uint64_t seed = 1;
};

struct RunDistribution {
    // The mean: the closed form (Daly's per-segment form, expected_wall_seconds) for the time the job works or
    // restarts, plus the waits for a host: none with no limit on spares, one repair per host-out failure with no
    // spares, the Monte Carlo's mean wait only with a limited pool. A rare failure (a short job) would otherwise
    // make the sample mean noise: one failed trial in a thousand adds a restart's quarter hour / 1000 to a
    // one-minute job.
    double mean_wall_seconds = 0;
    double monte_carlo_mean_wall_seconds = 0;
    double p10_wall_seconds = 0, p50_wall_seconds = 0, p90_wall_seconds = 0;   // the Monte Carlo's
    double mean_interruptions = 0;    // failures that struck the job, restarts included (exact like the mean)
    double mean_checkpoints = 0;      // checkpoints written (completed or not)
    // Effective training time share: work over mean wall time (what Llama 3's "> 90 % effective training time"
    // and Meta's ETTR measure).
    double goodput = 1;
    int trials = 0;
};

// The expected wall time of the run with no limit on spares, exactly: each segment of s seconds (work and its
// checkpoint) takes M e^(R/M) (e^(s/M) - 1) on average (Daly's per-segment form: e^(s/M) - 1 failures expected
// before it completes, each followed by a restart that itself completes after e^(R/M) - 1 failures on average),
// summed over the full segments and the last, shorter one without a checkpoint.
double expected_wall_seconds(const RunModel& model);

// InputError-free: the caller checks the model (positive interval, rates >= 0). A job that would need more than
// ~10^7 failure draws over all trials runs fewer trials (at least 16), so the cost stays bounded.
RunDistribution simulate_runs(const RunModel& model);

}  // namespace ttsim::reliability
