// A result's time on the clock split into the parts its logs measure (v4.1_timing.csv medians over its logs:
// CalibrationPoint::measured_*), beside the model's same parts: the steady step, one evaluation, and what comes
// before the first steady step (the model's per-run overhead). `ttsim validate` prints it for the held-out
// results, so a time-to-train miss reads as "the step", "the evaluations" or "the per-run cost" rather than as one
// number.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim {

struct LogPartsCheck {
    PointError point;
    std::optional<double> logged_step_seconds, logged_eval_seconds, logged_warmup_seconds;
    double model_step_seconds = 0, model_eval_seconds = 0, model_overhead_seconds = 0;
    long long model_evaluations = 0;
};

// One check per point, priced with `profiles` at the RCP convergence (as evaluate_point).
std::vector<LogPartsCheck> log_parts_checks(const std::vector<const CalibrationPoint*>& points, const ProfileSet& profiles);

// The table, and the MAPE of the model's step time against the logged steady step over the points that have one.
std::string format_log_parts(const std::vector<LogPartsCheck>& checks);

}  // namespace ttsim
