// A result's time on the clock split into the parts its logs measure (v4.1_timing.csv medians over its logs:
// CalibrationPoint::measured_*), beside the model's same parts: the steady step, one evaluation, and the first
// training segment's excess over its steps at the steady rate (startup and slow early steps: time the clock counts
// once per run, which the model's per-run overhead stands for, with anything else it counts once). `ttsim validate`
// prints it for the held-out results, so a time-to-train miss reads as "the step", "the evaluations" or "the
// per-run cost" rather than as one number.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim {

struct LogPartsCheck {
    PointError point;
    std::optional<double> logged_step_seconds, logged_eval_seconds, logged_excess_seconds;
    // The model's run clock (RunClock) at the RCP convergence: steps x step + evaluations x eval + overhead.
    double model_step_seconds = 0, model_eval_seconds = 0, model_overhead_seconds = 0;
    long long model_steps = 0, model_evaluations = 0;
};

// One check per point, priced with `profiles` at the RCP convergence (as evaluate_point, whose minutes
// LogPartsCheck::point holds).
std::vector<LogPartsCheck> log_parts_checks(const std::vector<const CalibrationPoint*>& points, const ProfileSet& profiles);

// The table, and the MAPE of the model's step time against the logged steady step over the points that have one.
std::string format_log_parts(const std::vector<LogPartsCheck>& checks);

}  // namespace ttsim
