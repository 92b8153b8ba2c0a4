// The model's measured hold-out error per workload (the accuracy summary of `ttsim validate --summary`; plans
// and predictions carry the error of their kind of extrapolation instead, prediction_band.hpp). `ttsim validate` calibrates on the v4.1 results with <= 64 GPUs and predicts the H100/H200
// results with >= 128 GPUs it never saw (calibration.hpp holdout_validation); the mean absolute percentage
// error of those predictions, per workload, is shipped in models/data/validation/holdout.yaml, written by
// `ttsim validate --holdout-yaml` (the file names the command; a test checks it still agrees with validate).
#pragma once

#include <filesystem>
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
}  // namespace ttsim::planning
