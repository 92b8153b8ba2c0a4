// Shared by the calibration tests: the shipped v4.1 calibration points, loaded once, and the small H100 subsets
// the options' tests fit on.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim::test {

inline const std::vector<CalibrationPoint>& calibration_points() {
    static const std::vector<CalibrationPoint> all = load_calibration_points({});
    return all;
}

// The H100 results of these workloads on at most `max_gpus` GPUs, in the shipped order.
inline std::vector<CalibrationPoint> h100_points(const std::set<std::string>& workloads, int max_gpus) {
    std::vector<CalibrationPoint> chosen;
    for (const CalibrationPoint& p : calibration_points())
        if (workloads.count(p.scenario.workload->name) && p.scenario.gpu->name == "H100-SXM" && p.scenario.gpus <= max_gpus)
            chosen.push_back(p);
    return chosen;
}

}  // namespace ttsim::test
