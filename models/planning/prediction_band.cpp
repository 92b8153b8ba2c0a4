#include "models/planning/prediction_band.hpp"

#include <cmath>

#include <fmt/format.h>

namespace ttsim::planning {

PredictionBand prediction_band(const Prediction& prediction, const ComputeProfile& profile, const ModelErrors* errors,
                               const ExtrapolationQuery& query, const std::string& not_quoted) {
    PredictionBand band;
    if (errors) band.model = model_error_for(*errors, profile, query);
    else band.not_quoted = not_quoted;
    // Never below the cell's own misfit: a workload and GPU the fit prices badly (its results in the calibrated
    // range off by more than the cross-validated error of that kind) carries its own residual.
    double model_sigma = band.model ? band.model->rms_log_error : 0.0;
    if (band.model && profile.fit_results > 0 && profile.fit_residual > model_sigma) {
        model_sigma = profile.fit_residual;
        band.cell_residual = profile.fit_residual;
        band.cell_results = profile.fit_results;
    }
    static_cast<LogNormalBand&>(band) = combine_band(prediction.ttt_p10_minutes, prediction.ttt_minutes,
                                                     prediction.ttt_p90_minutes, profile.parameter_sd, model_sigma);
    return band;
}

void apply_band(Prediction& prediction, const PredictionBand& band) {
    prediction.ttt_p10_minutes = band.p10;
    prediction.ttt_p90_minutes = band.p90;
}

std::string describe_band(const PredictionBand& band) {
    std::string text = "p10/p90 band: convergence spread";
    text += band.parameter_sigma > 0 ? fmt::format(", fitted parameters ({:.1f} %)", 100 * std::expm1(band.parameter_sigma))
                                     : ", fitted parameters (not estimated by this fit)";
    if (!band.model) return text + "; model error not quoted: " + band.not_quoted;
    const KindError& k = *band.model;
    text += fmt::format("; model error ({}): {:.1f} % MAPE (RMS log error {:.3f}) over {} cross-validated "
                        "predictions ({})",
                        describe(k.kind), k.mape_percent, k.rms_log_error, k.results, kModelErrorCommand);
    if (band.cell_results > 0)
        text += fmt::format("; carried instead: this workload and GPU's {} fitted results, RMS log error {:.3f}",
                            band.cell_results, band.cell_residual);
    return text;
}

const ModelErrors* model_errors_for(bool lumped, const std::string& profiles_dir, std::string& not_quoted) {
    if (!profiles_dir.empty()) {
        not_quoted = "the profiles in " + profiles_dir +
                     " are not the ones models/data/validation/model_error.yaml measures ('ttsim calibrate --data FILE "
                     "--max-gpus N' holds your larger runs out and prints their error)";
        return nullptr;
    }
    if (lumped) {
        not_quoted = "models/data/validation/model_error.yaml measures the default (operator) model, not the lumped one";
        return nullptr;
    }
    return &shipped_model_errors();
}

}  // namespace ttsim::planning
