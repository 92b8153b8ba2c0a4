// A prediction's p10/p90 band (the plan's confidence, predict's ttt_p10/p90_minutes): the convergence spread, the
// fit's parameter uncertainty (ComputeProfile::parameter_sd) and the model error cross-validated for the
// prediction's kind of extrapolation (model_error.hpp, which holds the arithmetic: combine_band). The model term is
// left out, and why said, where the measured errors do not describe the profiles priced with (the lumped model,
// a user's --profiles folder).
#pragma once

#include <optional>
#include <string>

#include "models/calibration/model_error.hpp"
#include "models/training/predict.hpp"

namespace ttsim::planning {

struct PredictionBand : LogNormalBand {
    std::optional<KindError> model;          // the kind whose error the band carries; none: not quoted
    // Where the profile's own fitted results miss by more than that kind's error (ComputeProfile::fit_residual):
    // their RMS log error, which the band carries instead, and their count; 0 results: the kind's.
    double cell_residual = 0;
    int cell_results = 0;
    std::string not_quoted;                  // why there is no model term (where `model` is empty)
};

// The band of `prediction` priced with `profile`: `errors` null where they do not describe the profiles (then
// `not_quoted` says why).
PredictionBand prediction_band(const Prediction& prediction, const ComputeProfile& profile, const ModelErrors* errors,
                               const ExtrapolationQuery& query, const std::string& not_quoted = "");

// `prediction` with its ttt_p10_minutes / ttt_p90_minutes replaced by the band's.
void apply_band(Prediction& prediction, const PredictionBand& band);

// "p10/p90 band: convergence spread, fitted parameters (...); model error (a software stack the fit never saw):
// 8.1 % MAPE (RMS log error 0.093) over 12 cross-validated predictions (command)", or why none is quoted.
std::string describe_band(const PredictionBand& band);

// The measured errors that describe the profiles a prediction prices with: the shipped file for the shipped
// operator profiles; null for the lumped model or a --profiles folder, with the reason in `not_quoted`.
const ModelErrors* model_errors_for(bool lumped, const std::string& profiles_dir, std::string& not_quoted);

}  // namespace ttsim::planning
