// The MLPerf Training rounds ttsim reads (models/data/mlperf/rounds.yaml): per round its results, run logs and log
// timings, and the round whose software predictions assume by default.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ttsim {

struct MlperfRound {
    std::string name;                        // "4.0", "4.1", "5.0": the results' `round` column
    std::filesystem::path results, runs, timing;   // absolute paths
    // The submitters' own layouts where they differ from the catalog's (submission_layouts.hpp); none: no such file.
    std::optional<std::filesystem::path> layouts;
    std::string source;
    // "v4.1": how `same_run_times_as` links in the results name a round.
    std::string link_prefix() const { return "v" + name + ":"; }
};

struct MlperfRounds {
    std::vector<MlperfRound> rounds;         // file order (oldest first)
    std::string default_round;               // a name in `rounds`
    // Submitters whose multi-node runs used in-network reduction (SHARP); the file says why.
    std::set<std::string> in_network_reduction_submitters;
    // The round named `name` ("5.0", "v5.0"); InputError listing the known rounds otherwise (no location: the
    // caller names its flag).
    const MlperfRound& find(const std::string& name) const;
    std::string names() const;               // "4.0, 4.1, 5.0"
};

// Loads the shipped rounds.yaml (or `file`), strictly: unknown keys, a repeated round, a file that does not exist
// or a default that names no round are InputErrors at their line. Loaded once per process for the default file.
const MlperfRounds& mlperf_rounds();
MlperfRounds load_mlperf_rounds(const std::filesystem::path& file);

}  // namespace ttsim
