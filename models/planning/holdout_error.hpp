// The model's measured hold-out error per workload, so that a plan can say how far its own predictions have
// been off at scale. `ttsim validate` calibrates on the v4.1 results with <= 64 GPUs and predicts the H100/H200
// results with >= 128 GPUs it never saw (calibration.hpp holdout_validation); the mean absolute percentage
// error of those predictions, per workload, is shipped in models/data/validation/holdout.yaml, written by
// `ttsim validate --holdout-yaml` (the file names the command; a test checks it still agrees with validate).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim::planning {

struct WorkloadHoldoutError {
    std::string workload;
    int results = 0;              // held-out results predicted (0: none at >= predict_min_gpus)
    double mape_percent = 0;      // mean |predicted / published - 1| x 100 over them
};

struct HoldoutErrors {
    std::string command;          // the command that regenerates the file
    int fit_max_gpus = 0, predict_min_gpus = 0;
    std::vector<WorkloadHoldoutError> workloads;   // every workload of the catalog, in catalog order
    // Non-empty (and no workloads): the measured errors do not describe the profiles priced with, and why.
    std::string not_quoted;

    const WorkloadHoldoutError* find(const std::string& workload) const;
};

// The command written into the file and into plan reports.
inline constexpr const char* kHoldoutCommand = "ttsim validate --holdout-yaml > models/data/validation/holdout.yaml";

// Per-workload errors of a hold-out report (every catalog workload, those without held-out results at 0).
HoldoutErrors holdout_errors(const HoldoutReport& report, int fit_max_gpus, int predict_min_gpus);

// The file's text, and its strict reading (InputError naming file:line:key).
std::string format_holdout_yaml(const HoldoutErrors& errors);
HoldoutErrors load_holdout_errors(const std::filesystem::path& path);
// The shipped file (data_dir()/validation/holdout.yaml), read once.
const HoldoutErrors& shipped_holdout_errors();
// The errors that describe the profiles a plan prices with: the shipped file's for the shipped default (operator)
// profiles; none, with the reason in `not_quoted`, for the lumped model (`lumped`) or the profiles in
// `profiles_dir` (non-empty), which the file does not measure.
HoldoutErrors holdout_errors_for(bool lumped, const std::string& profiles_dir);

// The time-to-train range with the model's own error besides the run-to-run spread of convergence: both as
// log-normal, the convergence one from its p10 and p90 (+-1.2816 sigma), the model's with the mean absolute size the
// hold-out MAPE measured (E|X| = sigma sqrt(2/pi) for a normal X, so sigma = MAPE sqrt(pi/2)), independent, so their
// sigmas add in quadrature around p50. None where the workload has no held-out result.
struct ModelErrorBand {
    double p10_minutes = 0, p90_minutes = 0;
    double model_sigma = 0;       // log units
    double mape_percent = 0;
};
std::optional<ModelErrorBand> band_with_model_error(const HoldoutErrors& errors, const std::string& workload,
                                                    double p10_minutes, double p50_minutes, double p90_minutes);

// One line for a plan: "model hold-out error for bert: 4.1% MAPE over 3 results at >= 128 GPUs (ttsim validate
// --holdout-yaml)", that there were none, or why none is quoted.
std::string describe_holdout_error(const HoldoutErrors& errors, const std::string& workload);

}  // namespace ttsim::planning
