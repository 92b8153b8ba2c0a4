// A planner's own measured runs as calibration data: `ttsim calibrate --data FILE` with a CSV
// in the user-runs format (docs/user-runs.md; example examples/my-runs-bert-h100.csv) instead of the MLPerf v4.1
// results format. Each row is one measured run or step-time point on a ttsim system preset:
//
//   workload, system, gpus, global_batch        required (catalog workload name or alias; system preset or GPU)
//   tp, cp, micro, accumulation,                optional layout; an empty cell or absent column takes the
//   distributed_optimizer, cuda_graphs          published (MLPerf v4.1) layout at the nearest scale, as predict
//   step_time, time_to_train                    what was measured, with a unit ("85ms", "12.5min"); at least one
//   samples_to_converge                         optional: where a time_to_train run converged (default: the RCPs)
//   label                                       optional SUBMITTER/SYSTEM: the software stack (--like)
//
// Lines starting with '#' are comments. The reader is strict: an unknown, duplicate or missing column, a bad unit
// or number, or a layout that cannot run (GPUs the split does not divide, a batch that does not divide, a layout
// over HBM) is an InputError naming FILE:LINE and the column. Each row becomes a CalibrationPoint priced by the
// same prepare() as a prediction, so `calibrate_points` (lumped or operator) fits user rows exactly as it fits
// the v4.1 results; a step time enters the loss as one more log error (fit_loss.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim {

// Which format a calibration data file is in, from its header: true for the user-runs format (a `workload`
// column), false for the v4.1 results format (a `benchmark` column); InputError (FILE:LINE) for neither, or an
// empty file.
bool is_user_runs_csv(const std::filesystem::path& file);

// Every row of a user-runs file as a calibration point (file order). Unlabelled rows are stack "user".
std::vector<CalibrationPoint> load_user_runs(const std::filesystem::path& file);

// Fits the points with calibrate_points; the operator model holds `fallback`'s physics (calibrate_operator_points
// `held`) and fits the workload and stack terms. Without a single time_to_train among them the per-run and
// per-evaluation costs are not identifiable (a step time does not contain them): they are not fitted but
// taken from `fallback` (the shipped profile set of the same model) for each (workload, GPU); `note` says so
// (also appended to the report's data_description), empty otherwise.
struct UserCalibration {
    CalibrationReport report;
    std::string note;
};
UserCalibration calibrate_user_runs(const std::vector<CalibrationPoint>& points, const std::string& description,
                                    SharedFit shared, const ProfileSet& fallback);

// Measured against predicted, per point: step time and/or time to train, whichever the row measured.
std::string format_user_run_table(const std::vector<CalibrationPoint>& points, const ProfileSet& profiles);

}  // namespace ttsim
