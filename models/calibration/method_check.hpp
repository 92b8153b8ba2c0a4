// The method check: how well the calibration procedure predicts the scales nobody fitted, round by round. For each
// MLPerf round, calibrate on its results with <= fit_max_gpus GPUs and predict its results with >= predict_min_gpus
// at their published layouts; then fit every round together and price every result (in-sample); and, from the
// published scores alone, how much faster each workload ran from one round to the next on the same GPU and count.
#pragma once

#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim {

// A held-out result's prediction as a band needs it: the published minutes, the convergence percentiles of the
// prediction (the RCPs' spread) and the fold profile's parameter uncertainty.
struct HeldOutBand {
    double published_minutes = 0, p10_minutes = 0, p50_minutes = 0, p90_minutes = 0, parameter_sd = 0;
};

struct RoundHoldout {
    std::string round;
    int fitted = 0;                          // results with <= fit_max_gpus GPUs
    std::vector<PointError> predicted;       // results with >= predict_min_gpus GPUs
    std::vector<HeldOutBand> bands;          // one per predicted result
    double mape_percent = 0, max_abs_percent = 0;
};

// Per workload, between two rounds: the geometric mean over the (GPU family, GPU count) cells both rounds
// published of (older round's best minutes / newer round's best minutes); > 1 is faster in the newer round.
struct RoundSpeedup {
    std::string workload, from_round, to_round;
    int cells = 0;
    double speedup = 1;
};

struct MethodCheck {
    std::vector<RoundHoldout> rounds;
    std::vector<PointError> in_sample;       // every round fitted together, every result priced
    double in_sample_mape_percent = 0, in_sample_max_abs_percent = 0;
    std::vector<RoundSpeedup> speedups;
};

struct MethodCheckOptions {
    std::vector<std::string> rounds;         // rounds.yaml names, oldest first; empty: every round
    int fit_max_gpus = 64, predict_min_gpus = 72;
    bool in_sample = true;                   // also fit every round together (the longest part)
    SharedFit shared;
};

// Each round's hold-out uses every result that round published (load_calibration_points of that round alone, so
// results it republished from an earlier round count); the in-sample fit and the speedups use every round
// together, each result once (a republished result is no new software).
MethodCheck method_check(const MethodCheckOptions& options);

// Published scores only: the speedups of RoundSpeedup, for consecutive rounds among `rounds` (file order).
std::vector<RoundSpeedup> round_speedups(const std::vector<CalibrationPoint>& points, const std::vector<std::string>& rounds);

// The whole report: per round its points, MAPE and largest error, then the in-sample line and the speedups.
std::string format_method_check(const MethodCheck& check, const MethodCheckOptions& options);

// How often the predicted p10-p90 band (model_error.hpp combine_band) holds the published score, per round: the
// convergence spread, the fold's parameter uncertainty and, as the model error, the RMS log error of the OTHER
// rounds' held-out predictions (a round's band is never sized on its own errors; a single round: none).
struct BandCoverage {
    std::string round;
    int inside = 0, results = 0;
    double model_sigma = 0;
    double percent() const { return results > 0 ? 100.0 * inside / results : 0.0; }
};
std::vector<BandCoverage> band_coverage(const MethodCheck& check);
// Every round's together (the acceptance aim: 60-95 %).
BandCoverage total_coverage(const std::vector<BandCoverage>& rounds);

// Largest |error| in percent.
double max_abs_percent(const std::vector<PointError>& errors);

}  // namespace ttsim
