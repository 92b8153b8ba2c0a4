// The profile set a scenario's predictions are priced with (sweep, scaling study, plan, user model): the shipped
// set of its compute model, or `profiles: DIR` (a `ttsim calibrate --out` folder; relative to the scenario's
// folder unless absolute), the scenario-file counterpart of `--profiles`; and `like: SUBMITTER/SYSTEM`, the
// counterpart of `predict --like` (like_system.hpp), applied to every GPU family the scenario runs on.
#pragma once

#include <string>
#include <vector>

#include "models/calibration/like_system.hpp"
#include "models/compute/profile_files.hpp"
#include "sim/config.hpp"

namespace ttsim::cli {

struct ScenarioProfiles {
    ProfileSet profiles;
    // The same set before `like:`: the v4.1 comparison prices each published result with its own stack's offset
    // (as `ttsim validate`), not the one `like:` names (SweepOptions::published_profiles).
    ProfileSet before_like;
    std::string source;               // the profile file named by `profiles:`, else "shipped <model> profiles"
    LikeNotes notes;                  // what `like:` did, per GPU family (for the report's notes)
};

// `gpus`: the catalog GPU names the scenario predicts on (a what-if GPU's base). Every failure points at the key
// (file:line): a folder without the model's profile file, a `like:` the set cannot resolve.
ScenarioProfiles read_scenario_profiles(const ConfigNode& root, ComputeModel model, const std::vector<std::string>& gpus);

}  // namespace ttsim::cli
