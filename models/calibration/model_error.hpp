// The model's own error, measured by cross-validation for each kind of extrapolation a prediction makes, and the
// kind of a given prediction.
//
// Kinds, and how `ttsim validate --error-model` measures each (every fit with the shipped operator options):
//   inside      inside the calibrated range: the default round's results in two folds (every other result),
//               each predicted from a fit of the other; only results inside the fit's GPU counts of their cell count.
//   scale       beyond the data: each round fitted on its results with <= 64 GPUs, predicting its results with
//               >= 72 (the method check, method_check.hpp).
//   gpu_family  a GPU family with no results at scale: per round, every family besides the reference H100-SXM
//               with results above one node (8 GPUs) has those held out of one fit, which predicts them.
//   stack       a software stack never seen: the default round's second and third largest submitters (the largest
//               holds most results at scale), left out of one fit and predicted at the population's speed.
//   round       another round: profiles fitted on one round predicting the next round's results (4.0 -> 4.1,
//               4.1 -> 5.0), on the GPU families the fit has.
// Each kind's figure is the root mean square of log(predicted / published) over its predictions (bias included:
// a band centred on the prediction has to cover it) and their MAPE. The file (models/data/validation/
// model_error.yaml) names the command, the date and the rounds; predictions read it once.
//
// A prediction's kinds: `inside` always; `scale` beyond the profile's calibrated GPU counts; `gpu_family` when its
// profile is transferred from another GPU (no results of this GPU for the workload); `stack` unless it names a
// fitted stack (`--like`: otherwise it is priced at the population's speed, as a stack the fit never saw);
// `round` for a round the profiles were not fitted on. It carries the kind with the largest measured error.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "models/compute/compute_profile.hpp"

namespace ttsim {

enum class ExtrapolationKind { inside, scale, gpu_family, stack, round };
inline constexpr ExtrapolationKind kExtrapolationKinds[] = {ExtrapolationKind::inside, ExtrapolationKind::scale,
                                                            ExtrapolationKind::gpu_family, ExtrapolationKind::stack,
                                                            ExtrapolationKind::round};
const char* key_of(ExtrapolationKind kind);          // the YAML key: "inside", "gpu_family", ...
const char* describe(ExtrapolationKind kind);        // "scale beyond the calibrated GPU counts", ...

struct KindError {
    ExtrapolationKind kind = ExtrapolationKind::inside;
    int results = 0;                 // predictions measured
    double rms_log_error = 0;        // sqrt(mean log(predicted / published)^2): the log-normal sigma of the band
    double mape_percent = 0;         // mean |predicted / published - 1| x 100
};

struct ModelErrors {
    std::string command, date, rounds;
    std::vector<KindError> kinds;    // one per kind, in kExtrapolationKinds order
    const KindError& of(ExtrapolationKind kind) const;
};

// The command written into the file and quoted beside every band.
inline constexpr const char* kModelErrorCommand = "ttsim validate --error-model > models/data/validation/model_error.yaml";

// The file's text, and its strict reading (every kind present, nothing else; InputError naming file:line:key).
std::string format_model_error_yaml(const ModelErrors& errors);
ModelErrors load_model_errors(const std::filesystem::path& path);
// The shipped file (data_dir()/validation/model_error.yaml), read once.
const ModelErrors& shipped_model_errors();

// What a prediction asks beyond its profile's own data.
struct ExtrapolationQuery {
    int gpus = 0;
    bool stack_named = false;        // priced at a fitted stack's speed (--like)
    bool other_round = false;        // a round the profiles were not fitted on
};
std::vector<ExtrapolationKind> applicable_kinds(const ComputeProfile& profile, const ExtrapolationQuery& query);
// Of the applicable kinds, the one with the largest measured error (ties: the later kind in the list).
const KindError& model_error_for(const ModelErrors& errors, const ComputeProfile& profile,
                                 const ExtrapolationQuery& query);

// The p10/p90 band around a p50 from three independent log-normal terms, their sigmas added in quadrature in log
// space: the convergence spread, read off the convergence p10 and p90 on each side (z = 1.2816 at the 10th and
// 90th percentiles, so its skew is kept); the fit's parameter uncertainty, ln(1 + parameter_sd); the model error,
// a kind's RMS log error:
//   p10 = p50 exp(-z sqrt(s_conv,low^2 + s_param^2 + s_model^2)),  p90 = p50 exp(z sqrt(s_conv,high^2 + ...)).
// Percentiles out of order (or not positive) are returned as they are, with no terms.
inline constexpr double kZ90 = 1.2815515655446004;   // the standard normal's 90th percentile
struct LogNormalBand {
    double p10 = 0, p90 = 0;
    double convergence_low_sigma = 0, convergence_high_sigma = 0, parameter_sigma = 0, model_sigma = 0;
};
LogNormalBand combine_band(double p10, double p50, double p90, double parameter_sd, double model_sigma);

// Measures every kind (minutes: a dozen full fits). `progress`, where given, receives a line per fit.
ModelErrors measure_model_errors(std::ostream* progress = nullptr);

}  // namespace ttsim
