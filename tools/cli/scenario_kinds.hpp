// `ttsim run FILE`: the `scenario:` key of a file names its kind, and each kind has a handler that first
// reads and validates the whole file (every error before any simulated time passes), then runs it.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "sim/config.hpp"
#include "tools/cli/shard_file.hpp"

namespace ttsim::cli {

struct ScenarioContext {
    std::string file;
    std::optional<std::string> out_dir;  // --out: where result files go (written atomically)
    int threads = 0;                     // --threads: 0 = all cores
    std::optional<std::string> format;   // --format: overrides the scenario's output.format
    std::optional<ShardSpec> shard;      // --shard I/N: compute only this share (shard_file.hpp)
    const MergedShards* merged = nullptr;   // `ttsim merge`: the rows come from these shards, none is computed
    bool explain = false;                // --explain: a plan's table adds its definitions and formulas
};

// Handlers, one per scenario kind. `root` is the whole document; the handler checks its own keys.
int run_collective_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out);
int run_scaling_study_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out);
int run_sweep_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out);
int run_plan_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out);
int run_user_model_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out);

}  // namespace ttsim::cli
