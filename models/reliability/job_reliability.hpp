// A training job's failures, checkpoints and restarts: from its parts, its state and its failure-free time to
// train, the expected wall time and goodput (effective training time share) as a distribution.
//
//   lambda      = sum of per-part failure rates x the job's parts          (reliability_data.hpp)
//   checkpoint  = model state (weights + optimizer) / storage rate          (checkpointing.hpp)
//   restart     = detection + re-initialisation + checkpoint read
//   interval    = Daly's optimum for lambda and the checkpoint, unless pinned
//   wall time   = the Monte Carlo of run_simulation.hpp over the failure-free time
//
// The failure-free time to train (Prediction::ttt_minutes) is what MLPerf times and what calibration fits: a
// failed MLPerf run is not a result. The wall time beside it is what a long job's planner waits for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "models/reliability/reliability_data.hpp"
#include "models/reliability/run_simulation.hpp"

namespace ttsim {
class ConfigNode;   // sim/config.hpp
}

namespace ttsim::reliability {

// What a request may set; each unset field takes reliability.yaml's default.
struct ReliabilityRequest {
    std::optional<std::string> failure_rates;           // a rate set's name (reliability.yaml)
    std::optional<double> checkpoint_interval_seconds;  // work between checkpoints, pinned
    std::optional<double> storage_bytes_per_s;          // the file system's sustained rate
    std::optional<int> hot_spares;                      // hosts; unset: never short of one
    std::uint64_t seed = 1;
    int trials = 1000;
};
// A scenario's `reliability:` mapping {failure_rates: NAME, checkpoint_interval: 30min, storage_bandwidth: 2TB/s,
// hot_spares: N}; errors name file, line and key.
ReliabilityRequest read_reliability_request(const ConfigNode& node);
// InputErrors naming the field (Field::checkpoint_interval, storage_bandwidth, hot_spares, failure_rates).
void check_reliability_request(const ReliabilityRequest& request, const ReliabilityData& data);

struct ReliabilityJob {
    int gpus = 0, gpus_per_host = 8;
    double nics_per_gpu = 1;
    double switches = 0;                           // switch equivalents (superpod_switch_equivalents)
    double total_parameters = 0, trainable_parameters = 0;
    double work_seconds = 0;                       // failure-free time to train (at the median convergence)
    double work_p90_seconds = 0;                   // the same at the 90th-percentile convergence
};

struct RunReliability {
    std::string failure_rates;                     // the set used
    double mttf_hours = 0;                         // the job's mean time to failure
    double checkpoint_bytes = 0, checkpoint_write_seconds = 0, restart_seconds = 0;
    double checkpoint_interval_minutes = 0;        // work between checkpoints
    bool interval_pinned = false;                  // false: Daly's optimum
    RunDistribution runs;                          // at the median convergence
    double wall_p90_at_p90_minutes = 0;            // p90 wall time at the p90 convergence (plans' p90)
    double expected_wall_minutes() const { return runs.mean_wall_seconds / 60.0; }
};

RunReliability assess_reliability(const ReliabilityRequest& request, const ReliabilityJob& job,
                                  const ReliabilityData& data);

}  // namespace ttsim::reliability
