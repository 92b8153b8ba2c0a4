// Network what-ifs that change nothing, and why. A sweep that runs one workload on one system and batch rule
// under several network options prints a series per option; where two of them give the same time to train at
// every GPU count they share, a reader cannot tell whether the option was applied. This says so, with the
// physical reason read off the predictions:
//  - exposed communication under kHiddenShare of every step in both: compute and the fixed per-step (host) cost
//    set the step, so the fabric does not show;
//  - SHARP on in both and only the oversubscription differs: in-network reduction sends one stream per leaf up
//    the aggregation tree, which fits in what the thinned up-links keep;
//  - otherwise: the steps' exposed communication differs by too little to move the time.
#pragma once

#include <string>
#include <vector>

#include "models/planning/sweep_runner.hpp"

namespace ttsim::planning {

// "The same time" is within this relative difference at every shared count (tables print three significant
// figures, so 0.5 % is under one printed digit of difference).
inline constexpr double kSameTimeTolerance = 0.005;
// Exposed communication this small a share of the step leaves the network invisible in the time.
inline constexpr double kHiddenShare = 0.02;

struct UnchangedWhatIf {
    std::string workload;
    std::string series_label, same_as_label;   // the what-if series, and the first series it equals
    std::string reason;
};

// Over series of the same workload, system and batch rule that differ in their network option (in the sweep's
// series order: each series is compared with the earlier ones).
std::vector<UnchangedWhatIf> unchanged_whatifs(const SweepResult& result);

}  // namespace ttsim::planning
