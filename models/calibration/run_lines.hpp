// Step time at each published scale, measured from the run logs rather than inferred from the mean.
//
// A result's runs (v4.1_runs.csv) differ in how many samples they needed to converge, and little else: the same
// system, software and batch. A least-squares line through (samples at convergence, seconds on the clock) over
// its successful runs therefore measures the marginal seconds per sample (times the global batch: seconds per
// step, evaluations amortised) and the intercept (what the clock counts once per run), without any model.
// The same line through the model's predictions at each run's convergence point gives the model's counterparts,
// so a time-to-train error splits into a convergence part (RCP samples against the published runs' mean), a
// step-time part and a per-run part. `ttsim validate` prints this for every held-out result.
#pragma once

#include <optional>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/mlperf/results.hpp"

namespace ttsim {

// seconds = intercept + slope x samples, by ordinary least squares, with the usual standard errors.
struct RunLine {
    int runs = 0;
    double slope = 0, intercept = 0;            // seconds per sample; seconds
    double slope_error = 0, intercept_error = 0;   // standard errors (0 when the line passes through every point)
};
// Needs at least 3 points and at least 2 distinct x; nullopt otherwise.
std::optional<RunLine> fit_run_line(const std::vector<double>& samples, const std::vector<double>& seconds);

struct StepTimeCheck {
    PointError point;                     // the result and its time-to-train error
    RunLine measured;                     // through the published runs
    RunLine model;                        // through the model's time-to-train at each run's convergence point
    double published_samples_mean = 0;    // mean over the successful runs
    double rcp_samples = 0;               // what the prediction uses
    double measured_step_seconds() const { return measured.slope * point.global_batch; }
    double model_step_seconds() const { return model.slope * point.global_batch; }
};

// One check per point whose successful runs give a line (see fit_run_line); the others are skipped.
std::vector<StepTimeCheck> step_time_checks(const std::vector<const CalibrationPoint*>& points,
                                            const ProfileSet& profiles, const std::vector<MlperfRun>& runs);

std::string format_step_time_checks(const std::vector<StepTimeCheck>& checks);

}  // namespace ttsim
