// Fitting compute profiles to the MLPerf Training results of one or several rounds, and checking them.
//
// Data: each distinct scored result once (models/mlperf/results.hpp) whose GPU is in the catalog; target =
// ttt_minutes_official_scaled (the published score), or with the run-logs switch each run's own minutes at its own
// convergence point where the runs converged at different points. Each result is turned into a PreparedScenario
// with the layout it actually ran (GPU count, global batch, gradient accumulation from the CSV; TP/CP/DP and
// switches from the published layout at the nearest scale, CP doubled when the batch does not otherwise split).
//
// Two models are fitted (--model): the operator-level model (operator_fit.hpp, the default: kernel classes priced by
// their rooflines, host costs, a speed per software stack) and the lumped one (lumped_fit.hpp: one saturation curve
// per workload and GPU). Both minimise the same loss (fit_loss.hpp) on log-parameters within physical bounds with
// NLopt BOBYQA. The prepared scenarios hold the collective durations, so one objective evaluation costs a few event
// simulations (microseconds).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration/parameter_table.hpp"
#include "models/compute/compute_profile.hpp"
#include "models/mlperf/results.hpp"
#include "models/training/predict.hpp"

namespace ttsim {

struct CalibrationPoint {
    MlperfResult result;                   // result.round: the MLPerf round it comes from ("4.1"; "" for a user's runs)
    PreparedScenario scenario;             // convergence from the RCPs (what a prediction knows): reports, hold-out
    // The same scenario with the result's own published convergence (samples_to_converge_mean, or
    // epochs_to_converge_mean x train samples for RetinaNet) when the CSV has it: what the FIT uses, so that
    // run-to-run convergence noise is not absorbed into the compute profile. Held-out results never enter a fit, so
    // their published convergence is never used.
    PreparedScenario fit_scenario;
    bool published_convergence = false;    // fit_scenario uses the published convergence
    double published_minutes = 0;
    // The result's successful runs (v4.1_runs.csv): samples at convergence (RetinaNet: epochs x train samples) and
    // seconds on the clock. With the `run-logs` fit option, a result whose runs converged at two or more
    // different points is fitted run by run (see SharedFit::run_logs).
    struct Run {
        double samples = 0, seconds = 0;
    };
    std::vector<Run> runs;
    bool runs_span_convergence() const;    // >= 3 runs at >= 2 distinct convergence points
    // Measured times: seconds per optimizer step (evaluations excluded) and blocking seconds per on-the-clock
    // evaluation. For the v4.1 results the medians over the result's run logs (v4.1_timing.csv: the mean step
    // inside the training segments, empty where a log has no eval intervals, so its segments include them); for
    // a user's runs the step_time column (user_runs.hpp). With the `step-logs` fit option (always on for user
    // runs) the fit matches them as well as the minutes; with published_minutes 0 a point has only a step time,
    // and its report row compares step times.
    std::optional<double> measured_step_seconds, measured_eval_seconds;
    // The first training segment's excess over its steps at the steady rate (MlperfTiming::
    // first_segment_excess_seconds), the median over the logs that give it; what the per-run overhead stands for.
    std::optional<double> measured_excess_seconds;
    // Where the evaluation is scored asynchronously (RetinaNet's COCO scoring in a CPU process), the final,
    // converging evaluation's scoring, which the clock counts once per run (MlperfTiming::final_scoring_seconds):
    // the median over the logs that give it.
    std::optional<double> measured_final_scoring_seconds;
};

// Which measurements make up a result's loss (fit_loss.hpp point_loss; the switches of SharedFit).
struct LossTerms {
    bool run_logs = false, robust = false, step_logs = false, eval_logs = false;
};

// The switches of a fit (`--shared`): which measurements the loss reads, how it weighs them, and whether predictions
// carry the measured convergence lag. The model itself (its parameters, their bounds and which the data can
// identify) is not a switch: operator_fit.hpp and lumped_fit.hpp state it. Every switch has a reason a user may turn
// it off: logs they do not have or do not trust, outliers they have removed themselves, or a prediction at the
// reference convergence.
struct SharedFit {
    // Not a switch: the operator-level model instead of the lumped curve (--model).
    bool operator_model = false;
    // Not a switch: after an operator fit, the identifiability report and the parameter covariance
    // (parameter_table.hpp laplace_estimates; about 2 n^2 more objective evaluations for n parameters). `ttsim
    // calibrate` asks for it; the method check's and cross-validation's many fits do not.
    bool parameter_uncertainty = false;
    // robust: soft-L1 instead of squared log error (fit_loss.cpp kRobustScale), so a result no parameter explains (a
    // slower cluster, another software release) pulls the fit with a bounded force. Off: least squares, for data
    // whose outliers are already removed.
    bool robust = true;
    // run-logs: a result whose runs span several convergence points contributes the mean squared log error of its
    // runs, each priced at its own convergence point, instead of one error of its mean: the spread of the runs
    // separates per-step, per-evaluation and per-run costs that the mean alone confounds.
    bool run_logs = true;
    // step-logs, eval-logs: each result also contributes the log error of its measured step time and of its blocking
    // seconds per evaluation (CalibrationPoint::measured_*), so the fit need not split a run's minutes into steps,
    // evaluations and the per-run cost from the minutes alone. On by default for the operator model, whose step and
    // evaluation terms they identify; a user's step times are always read (user_runs.hpp).
    bool step_logs = false;
    bool eval_logs = false;
    // convergence-lag: predictions, whose samples to converge come from the RCP mean, take them x each workload's
    // measured lag (ComputeProfile::convergence_factor): the geometric mean, over that workload's fit results with a
    // published convergence, of published samples / RCP samples at their batch. Measured, not searched; the fit
    // itself uses the published convergence either way. On by default for the operator model.
    bool convergence_lag = false;

    // The loss terms these switches select (fit_loss.hpp).
    LossTerms loss_terms() const;
    // "robust,run-logs" etc.; "none" for no switch on. InputError on unknown names.
    static SharedFit parse(const std::string& list);
    // Every switch parse() knows, comma-separated, in describe()'s order (for help texts and messages).
    static std::string option_names();
    // The operator model with its default switches (all on).
    static SharedFit operator_defaults();
    std::string describe() const;
};

struct CalibrationOptions {
    // The shipped rounds to read (models/data/mlperf/rounds.yaml names: "4.0", "4.1", "5.0"); empty: the default
    // round. Ignored where results_csv names a file of its own.
    std::vector<std::string> rounds;
    std::optional<std::filesystem::path> results_csv;    // a results CSV of one round instead of the shipped rounds
    std::optional<std::filesystem::path> runs_csv;       // its run logs (default: the default round's)
    std::optional<std::filesystem::path> timing_csv;     // its log timings (default: the default round's)
    std::optional<int> max_gpus;                         // fit only results with <= this many GPUs
    std::vector<std::string> families;                   // GPU catalog names; empty: every GPU in the catalog
    SharedFit shared;
};

// A published result that the calibration does not use, and why (nothing is left out silently).
struct SkippedResult {
    std::string round, key, gpu;   // key: submitter/system/benchmark as the file writes it; gpu: accelerator_family
    int gpus = 0;
    int csv_line = 0;
    std::string reason;
};
std::string format_skipped_table(const std::vector<SkippedResult>& skipped);

struct PointError {
    std::string workload, gpu, submitter, system;
    int gpus = 0;
    int global_batch = 0;
    double published_minutes = 0, predicted_minutes = 0;
    double error = 0;                                    // predicted / published - 1
    // A point with only a measured step time (CalibrationPoint::measured_step_seconds): published_ms and
    // predicted_ms hold the step times, published/predicted minutes stay 0 and error compares the step times.
    bool step_time_only = false;
    double published_ms = 0, predicted_ms = 0;
};

struct CalibrationReport {
    ProfileSet profiles;
    std::vector<PointError> fitted;                      // every result used, predicted vs published
    double rms_log_error = 0;
    int objective_evaluations = 0;
    std::string data_description;                        // data file and filter, for headers
    // With SharedFit::parameter_uncertainty (operator model): what the data determined, one per fitted parameter.
    std::vector<ParameterEstimate> parameters;
};

// All distinct scored results of the rounds and families, as prepared scenarios (no filter on GPU count). A row
// that is not used (unscored, the same runs as another row, a GPU outside the catalog or the families, no layout
// that runs it on the shipped data) goes to `skipped` with its reason where given. With several rounds, a result
// whose runs another loaded round also publishes (`same_run_times_as`) is used once, from the earlier round.
std::vector<CalibrationPoint> load_calibration_points(const CalibrationOptions& options,
                                                      std::vector<SkippedResult>* skipped = nullptr);

// Fits the results of options.rounds (or options.results_csv); `skipped`, where given, receives the results not used;
// `held_out`, where given, the results above options.max_gpus (loaded, not fitted: to predict with the fit).
CalibrationReport calibrate(const CalibrationOptions& options, std::vector<SkippedResult>* skipped = nullptr,
                            std::vector<CalibrationPoint>* held_out = nullptr);

// convergence-lag's factors (SharedFit::convergence_lag): per workload. Measured from the fit results before the fit, which never sees them; each fitter sets them on its
// profiles (apply_convergence_lags) before it prices its in-sample errors at the RCPs.
using ConvergenceLags = std::map<std::string, double>;
void apply_convergence_lags(ProfileSet& profiles, const ConvergenceLags& lags);
// `held`: the operator model's physics held at these profiles' values (calibrate_operator_points).
CalibrationReport calibrate_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                   const SharedFit& shared = {}, const ProfileSet* held = nullptr);

// Cross-validation on the results with <= max_gpus GPUs: a diagnostic of extrapolation inside one round's data (the
// model is judged by the method check across rounds, method_check.hpp).
// Only results whose (workload, GPU) group and whose workload's H100-SXM group keep at least one result in the fold's
// fit are predicted.
//  - LeaveOneGpuCountOut: for each distinct GPU count, calibrate on the other counts, predict that count
//    (interpolation and extrapolation mixed).
//  - ForwardChaining: for each distinct GPU count N above the smallest, calibrate on the results with fewer than
//    N GPUs, predict the results at N (extrapolation only, like the hold-out's <= 64 -> >= 128).
enum class CrossValidationScheme { LeaveOneGpuCountOut, ForwardChaining };
std::string describe(CrossValidationScheme scheme);

struct CrossValidationReport {
    std::vector<PointError> predicted;
    double mape_percent = 0;
    // The same predictions split into the parts the run logs measure (log_parts.hpp): the model's steady step
    // against the logged one, and one evaluation's blocking seconds against the logged one, as MAPEs (%) over the
    // predicted results that have the part logged. A fold that gets a run's minutes right by trading a part for
    // another (a per-run cost standing in for evaluations, efficiencies for the launch cost) shows here without
    // the hold-out.
    double step_mape_percent = 0, eval_mape_percent = 0;
    int step_results = 0, eval_results = 0;
    // Diagnostic: the same fold models given each predicted result's own published convergence instead of the
    // RCPs (what a prediction cannot know), as a MAPE (%) over the predicted results that publish one: how much of
    // the time-to-train error is the RCPs' and not the step, evaluation and per-run model's.
    double published_convergence_mape_percent = 0;
    int published_convergence_results = 0;
};
CrossValidationReport cross_validate(const std::vector<CalibrationPoint>& points, CrossValidationScheme scheme,
                                     int max_gpus = 64, const SharedFit& shared = {});

// |predicted / published - 1| of each point with a published convergence and time to train, priced at that
// convergence instead of the RCPs (what a prediction cannot know): the diagnostic of cross-validation and hold-out.
std::vector<double> published_convergence_errors(const std::vector<const CalibrationPoint*>& points,
                                                 const ProfileSet& profiles);

// The profile a point is priced with: its workload's and GPU's, times its software stack's speed where the profiles
// have one (the operator model's stack speeds).
ComputeProfile point_profile(const CalibrationPoint& point, const ProfileSet& profiles);
PointError evaluate_point(const CalibrationPoint& point, const ProfileSet& profiles);
double mean_absolute_percentage_error(const std::vector<PointError>& errors);   // in percent

// Hold-out validation: calibrate on results with <= fit_max_gpus GPUs only, predict every H100/H200 result with
// >= predict_min_gpus GPUs. The held-out results are never passed to the fit.
struct HoldoutReport {
    CalibrationReport fit;
    std::vector<const CalibrationPoint*> held_out;   // into the caller's points, in the order of `predicted`
    std::vector<PointError> predicted;
    double mape_percent = 0;
};
HoldoutReport holdout_validation(const std::vector<CalibrationPoint>& points, int fit_max_gpus = 64,
                                 int predict_min_gpus = 128, const SharedFit& shared = {});

}  // namespace ttsim

namespace ttsim {
// Fixed-width table of points (workload, GPU, GPUs, batch, submitter, published, predicted, error %).
std::string format_point_table(const std::vector<PointError>& points);
}  // namespace ttsim
