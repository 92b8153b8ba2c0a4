#include "tools/cli/command_list.hpp"

namespace ttsim::cli {

std::vector<Command> all_commands() {
    return {
        {"collective", "nccl-tests-like sweep of one collective over message sizes", run_collective},
        {"run", "run a YAML scenario (scenarios/*.yaml)", run_scenario},
        {"predict", "predict time-to-train of one workload on one system", run_predict},
        {"calibrate", "fit compute profiles to the MLPerf v4.1 results (NLopt)", run_calibrate},
        {"validate", "in-sample and hold-out error of the calibrated simulator", run_validate},
        {"plan", "answer a planning question: fewest GPUs / fastest / cheapest within a deadline or budget", run_plan},
        {"merge", "join the shard files of `run SWEEP.yaml --shard I/N` runs into the whole sweep's results", run_merge},
    };
}

}  // namespace ttsim::cli
