// Fitting compute profiles to the MLPerf Training v4.1 results, and checking them.
//
// Data: each distinct scored result once (models/mlperf/results.hpp), accelerator families H100-SXM, H200-SXM and
// B200; target = ttt_minutes_official_scaled (the published score), or with the run-logs option (shipped) each
// run's own minutes at its own convergence point where the runs converged at different points. Each result is turned into a PreparedScenario
// with the layout it actually ran (GPU count, global batch, gradient accumulation from the CSV; TP/CP/DP and
// switches from NVIDIA's published layout at the nearest scale, CP doubled when the batch does not otherwise split).
//
// Fit: per (workload, GPU) the parameters of ComputeProfile (log f_max, log x_half, log fixed_step_seconds) minimise
// the sum of squared log errors log(predicted / published) with NLopt LN_BOBYQA on log-parameters within bounds.
// H100-SXM has results at several scales and fits all three; H200-SXM and B200 (single-node results only, a
// single per-GPU batch) fit f_max only and take x_half and the fixed step cost from H100-SXM's fit of the same
// workload. The prepared scenarios hold the collective durations, so one objective evaluation costs a few event
// simulations (microseconds).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

// Which terms make up a result's loss (fit_loss.hpp point_loss; the fit options of SharedFit: run-logs, robust,
// step-logs, eval-logs, warmup-logs).
struct LossTerms {
    bool run_logs = false, robust = false, step_logs = false, eval_logs = false, warmup_logs = false;
    // The run minutes price each result's evaluations at its logged seconds per evaluation where it has them
    // (staged-logged-evals' first stage), not at the model's.
    bool logged_eval_price = false;
};

// Parameters shared by every (workload, GPU) profile, each either fitted jointly over all results (outer
// optimisation, every per-group profile refitted at each trial) or left at its default (0 = off, except
// step_jitter_cv: 1%):
//   multi_node    ComputeProfile::multi_node_step_seconds  (per step, jobs spanning more than one node)
//   run_overhead  ComputeProfile::run_overhead_seconds     (per run)
//   step_jitter   ComputeProfile::step_jitter_seconds      (per step, x E[max of N standard normals])
//   half_work     ComputeProfile::half_saturation_samples = W / train FLOPs per sample: one amount of work per
//                 GPU per micro step (FLOPs) at which every workload reaches half its f_max, instead of x_half
//                 fitted per workload (which the <= 64-GPU results, all at large per-GPU batches, barely constrain)
//   eval_fixed    ComputeProfile::eval_fixed_seconds       (per on-the-clock evaluation, besides its forward passes)
//   jitter_cv     ComputeProfile::step_jitter_cv           (compute stretched by 1 + cv x E[max of N normals])
// and two fit options: configuration weights and run logs (below).
// The shipped model is proposed by forward-chaining cross-validation on <= 64 GPUs (`ttsim validate
// --cross-validate --shared LIST`; see cross_validate below): a term joins only if it lowers that MAPE by at least
// 0.1 points (a judgement call, set before the greedy search; the unpaired standard error of a 43-result MAPE is
// several tenths of a point, so smaller gains are not evidence); a term stays only if removing it raises that MAPE
// by at least 0.1 points. The hold-out has a veto (README, select_by_rule below): a proposal whose hold-out
// MAPE is worse than the shipped model's is not shipped, so the hold-out is a validation set, not a blind test.
// The members' defaults are the lumped model's fit (workload-run-overhead, jitter-cv, run-logs, jitter-nodes and
// robust, as SharedFit::parse names them); SharedFit::operator_defaults() (shared_fit.cpp) gives the operator
// model's. The README lists the candidate terms and the figures the rule judged them by.
// A term that no fit result can identify (a cost the data cannot see) is not searched: several options below
// hold such a dimension at its floor or at what the logs measure instead.
struct SharedFit {
    bool multi_node = false;
    bool run_overhead = false;
    bool step_jitter = false;
    bool half_work = false;
    bool workload_run_overhead = true;    // run_overhead_seconds fitted per workload (with its H100-SXM shape)
    bool jitter_cv = true;                // ComputeProfile::step_jitter_cv shared and fitted
    bool eval_fixed = false;              // ComputeProfile::eval_fixed_seconds shared and fitted
    // Fit option: a result whose runs span several convergence points contributes the mean squared log error of
    // its runs, each priced at its own convergence point, instead of one error of its mean: the spread of the
    // runs separates per-step, per-evaluation and per-run costs that the mean alone confounds.
    bool run_logs = true;
    // Model option: the step-time noise of jitter-cv / step-jitter is drawn per node (scale-up domain) instead of
    // per GPU (ComputeProfile::step_jitter_per_node): N in E[max of N normals] counts nodes, and single-node jobs
    // have no straggler term, so the single-node results fit the per-step costs without it.
    bool jitter_nodes = true;
    // Fit option: soft-L1 instead of squared log error (calibration.cpp, kRobustScale), so results no term explains
    // pull the fit with a bounded force.
    bool robust = true;
    // Not a parameter but a fit option: weight each result by 1 / (results of its workload and GPU at the same GPU
    // count), so every configuration counts once however many submitters ran it (default: every result once).
    bool configuration_weights = false;
    // Model option: the operator-level model (models/calibration/operator_fit.hpp) instead of the lumped curve:
    // kernel-class efficiencies and launch cost shared by every workload, a speed factor per GPU besides the
    // reference one, a fixed step cost and (workload-run-overhead) a run overhead per workload.
    bool operator_model = false;
    // With operator: a speed factor per software stack (submitter and system family) pooled towards 1 by a
    // log-normal prior (operator_fit.cpp), in place of one speed per GPU family only.
    bool system_speed = false;
    // With operator: a speed per NGC container release on a GPU family, where a result's system name says it
    // (software_release), pooled like system-speed's (kSystemSpeedSigma).
    bool release_speed = false;
    // With operator: fit the GPU time each kernel costs beyond its roofline (Efficiency::kernel_overhead_seconds).
    bool kernel_overhead = false;
    // Fit ComputeProfile::tp_comm_exposed_fraction (the share of TP/CP collective time not hidden), shared.
    bool tp_exposed = false;
    // With operator: the fixed per-step host cost overlaps the GPU's work (ComputeProfile::operator_host_overlap).
    bool host_overlap = false;
    // With operator: the same, only where the step replays one CUDA graph for the whole iteration
    // (ComputeProfile::operator_graph_host_overlap); elsewhere the cost is added, as without either option.
    bool graph_host_overlap = false;
    // Fit options: each result also contributes the squared (or soft-L1) log error of its measured step time
    // (step-logs) and of its blocking seconds per evaluation (eval-logs; CalibrationPoint::measured_*), so the fit
    // no longer has to split a run's minutes into steps, evaluations and the per-run cost from the minutes alone.
    bool step_logs = false;
    bool eval_logs = false;
    // With operator: one evaluation costs eval_forward_factor x its forward passes + eval_fixed_seconds, both per
    // workload (post-processing such as RetinaNet's box decoding and NMS, the metric's gather and scoring).
    bool eval_cost = false;
    // With operator: each iteration of the framework's evaluation loop costs a fixed time per workload
    // (ComputeProfile::eval_step_seconds x PreparedScenario::eval_steps): NeMo's validation_step over a global batch,
    // BERT's synchronise per batch.
    bool eval_step_cost = false;
    // Fit option: each result's per-run overhead also matches its first segment's logged excess over its steady
    // steps (CalibrationPoint::measured_excess_seconds; the comparison in fit_loss.hpp), so the per-run cost is
    // what the logs show the clock counting once, not whatever part of a run's minutes the other terms leave over.
    // Needs a fitted overhead (run-overhead or workload-run-overhead).
    bool warmup_logs = false;
    // With operator: the kernel-class efficiencies (GEMM, convolution, attention, memory) are pulled towards their
    // published priors (kernel_time.hpp Efficiency) by a log-normal prior (operator_fit.cpp), so data that cannot
    // tell them apart (no small-batch results in a fold) leave them near what benchmarks of the kernels measure.
    bool efficiency_prior = false;
    // With operator: evaluations priced as the framework's own passes (ComputeProfile::operator_eval_passes).
    bool eval_passes = false;
    // With eval-passes: the eager evaluation loops' host cost per kernel fitted apart from the training launch cost
    // (layers::Efficiency::eval_launch_seconds), which the training steps (graphed, or GPU-bound) leave near the
    // CUDA launch.
    bool eval_launch = false;
    // With eval-passes: per workload with an on-the-clock evaluation, eager host operations per evaluation sample
    // beyond the catalog's (ComputeProfile::eval_host_kernels_per_sample).
    bool eval_host_ops = false;
    // With operator and workload-run-overhead: a workload's per-run overhead is not searched but measured, the median
    // over its fit results of the logged first-segment excess (CalibrationPoint::measured_excess_seconds, clamped to
    // the fit's 0.01-300 s), where its results have one; the others keep theirs fitted. The per-run cost is then
    // what the logs show, held exactly instead of by warmup-logs' loss term.
    bool logged_overhead = false;
    // stream-memory (operator): the memory efficiency held within what STREAM measures of the vendor bandwidth
    // (0.79-0.93 on A100 and H200, models/data/hardware/params.md §1: at least 0.75), not the fit's 0.30 floor, so a
    // streaming kernel is never slower than the memory system shows and a GEMM is not made memory-bound by it.
    bool stream_memory = false;
    // roof-blend (operator): a kernel's compute and memory roofs combine as their p-norm with a fitted exponent
    // (layers::Efficiency::roof_exponent, 1-32), not as the larger of the two: kernels near their ridge point
    // overlap loads and math only in part.
    bool roof_blend = false;
    // tensor-memory (operator): the tensor-core kernels' memory efficiency (layers::Efficiency::tensor_memory)
    // fitted apart from the streaming kernels', so a floor that stands in for the streaming kernels' missing
    // traffic need not make every GEMM memory-bound.
    bool tensor_memory = false;
    // class-overhead (operator, with kernel-overhead): the streaming kernels' GPU overhead per kernel
    // (layers::Efficiency::streaming_overhead_seconds) fitted apart from the tensor-core kernels'.
    bool class_overhead = false;
    // same-die (operator): a GPU on the reference GPU's compute die (gpus.yaml `die`: H200 is H100's GH100 with
    // faster HBM) keeps the reference's speed, 1, instead of a fitted one: the same SMs at the same clocks can differ
    // only in what the roofline already prices (HBM bandwidth). The shipped fit gives H200 0.77, pricing its
    // compute-bound kernels 31 % slower than an H100's, which is what lets memory-bound kernels stand in for them.
    bool same_die = false;
    // eval-stage (operator, with an evaluation term: eval-passes, eval-host-ops, eval-launch, eval-cost,
    // eval-step-cost, eval-fixed): a fit in two stages. The first fits every other term, with evaluations priced as
    // without those terms; the second fits only the evaluation terms and the per-run overheads, the rest held at
    // the first stage's values. The evaluation terms' costs are then read from the evaluation logs and the run
    // minutes without moving the kernel efficiencies, launch and per-kernel costs that price every training step:
    // those come from the first stage, as without the terms (its eval-logs, where on, still compares evaluations
    // priced as training forwards), and a joint fit lets the evaluations' host-bound passes (LoRA's eager TP4 x CP2
    // forwards, BERT's eager batches of 16) pull them. objective_evaluations counts both stages.
    bool eval_stage = false;
    // logged-scoring (operator): a workload whose evaluations are scored asynchronously pays, once per run, the final
    // evaluation's scoring as its logs measure it (the median over its fit results' logs, not searched), on top
    // of the fitted per-run overhead, which otherwise has to stand for it (RetinaNet: about 5-6 s a run).
    bool logged_scoring = false;
    // convergence-lag (either model): predictions, whose samples to converge come from the RCP mean, take them x
    // each workload's measured lag (ComputeProfile::convergence_factor): the geometric mean, over that workload's fit
    // results with a published convergence, of published samples / RCP samples at their batch. Measured, not
    // searched, and the fit itself is unchanged (it uses the published convergence). pooled-convergence-lag: one
    // factor over every fit result (README).
    bool convergence_lag = false;
    bool pooled_convergence_lag = false;
    // staged-logged-evals (with eval-stage): the first stage prices each fit result's evaluations at its logged
    // seconds per evaluation (CalibrationPoint::measured_eval_seconds) where it has them, and leaves out eval-logs'
    // comparison, so that evaluations priced as training forwards (cheaper than the eager passes logged) do not
    // slow the kernels every step shares. The second stage and predictions are unchanged.
    bool staged_logged_evals = false;
    // identified-host-cost (operator): a workload's fixed per-step cost is searched only where its fit results run
    // at two or more per-GPU batches; elsewhere it is held at its floor (10 us). With one per-GPU batch, a step is
    // explained as well by its kernels as by a fixed cost that makes it host-bound (or adds to it), and the fit may
    // take either: a host-bound step then stays as long at half the per-GPU batch (with staged-logged-evals and
    // without this option, RetinaNet's 4 -> 8 GPU fold is +87-92 % off). As the step-jitter dimensions, a cost
    // the data cannot see is not searched. In the operator defaults (shared_fit.cpp).
    bool identified_host_cost = false;
    // gpu-efficiencies (operator): each GPU family besides the reference has its own four kernel-class efficiencies
    // (GEMM, convolution, attention, memory), within the reference's bounds, in place of one speed that divides
    // every roof alike (efficiency per kernel class per GPU). A family without fit results gets no profile of its
    // own; ProfileSet::find transfers the nearest calibrated GPU's.
    bool gpu_efficiencies = false;
    // staged-refit (with eval-stage): after the two stages, the first stage's dimensions are searched again with
    // every evaluation priced as the second stage fitted it (the first stage prices them as training forwards,
    // cheaper than the eager passes the logs show, so it slows the kernels every step shares to match the run
    // minutes: the shipped fit's in-sample errors are +3 % on average), then the second stage again, each locally
    // from where the stages left off.
    bool staged_refit = false;
    // Set by without_evaluation_terms() for staged-logged-evals' first stage; not an option of its own.
    bool logged_eval_price = false;
    // The first stage of eval-stage: these options without the evaluation's own terms (and without eval-stage).
    SharedFit without_evaluation_terms() const;
    // The loss terms these options select (fit_loss.hpp).
    LossTerms loss_terms() const;
    // The first term that only the operator model fits (marked in shared_fit.cpp's option table) among those on,
    // in the table's order, or "" (the lumped fit would ignore it).
    std::string operator_only_term() const;
    // "multi-node,run-overhead" etc.; "none" for no shared parameter. InputError on unknown names.
    static SharedFit parse(const std::string& list);
    // Every option parse() knows, comma-separated, in describe()'s order (for help texts and messages).
    static std::string option_names();
    // The operator model's shipped selection (forward-chaining CV, README): the lumped defaults plus operator,
    // kernel-overhead, tp-exposed, step-logs and eval-logs.
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

// convergence-lag's factors (SharedFit::convergence_lag, pooled_convergence_lag): per workload, or one under "" when
// pooled. Measured from the fit results before the fit, which never sees them; each fitter sets them on its
// profiles (apply_convergence_lags) before it prices its in-sample errors at the RCPs.
using ConvergenceLags = std::map<std::string, double>;
void apply_convergence_lags(ProfileSet& profiles, const ConvergenceLags& lags);
CalibrationReport calibrate_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                   const SharedFit& shared = {});

// Cross-validation on the results with <= max_gpus GPUs: model-selection evidence that never touches the hold-out.
// Only results whose (workload, GPU) group and whose workload's H100-SXM group keep at least one result in the fold's
// fit are predicted.
//  - LeaveOneGpuCountOut: for each distinct GPU count, calibrate on the other counts, predict that count
//    (interpolation and extrapolation mixed).
//  - ForwardChaining: for each distinct GPU count N above the smallest, calibrate on the results with fewer than
//    N GPUs, predict the results at N (extrapolation only, like the hold-out's <= 64 -> >= 128). It decides the
//    shipped model: the criterion mimics the use ttsim is for (predicting scales nobody measured).
enum class CrossValidationScheme { LeaveOneGpuCountOut, ForwardChaining };
std::string describe(CrossValidationScheme scheme);

struct CrossValidationReport {
    std::vector<PointError> predicted;
    double mape_percent = 0;
    // The same predictions split into the parts the run logs measure (log_parts.hpp): the model's steady step
    // against the logged one, and one evaluation's blocking seconds against the logged one, as MAPEs (%) over the
    // predicted results that have the part logged. A fold that gets a run's minutes right by trading a part for
    // another (a per-run cost standing in for evaluations, efficiencies for the launch cost) shows here without
    // the hold-out (the selection rule's second check, README).
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
// have one (system-speed).
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

// The selection rule between two models (README): forward-chaining CV on <= 64 GPUs proposes the
// lower MAPE (a tie proposes the second); the hold-out vetoes a proposal whose time-to-train MAPE is worse than the
// other's. Figures in percent.
struct RuleFigures {
    double forward_cv = 0, holdout = 0;
};
struct RuleDecision {
    bool first_proposed = false;   // forward CV proposes the first model
    bool vetoed = false;           // the proposal's hold-out is worse than the other's
    bool first_chosen() const { return first_proposed != vetoed; }
};
RuleDecision select_by_rule(const RuleFigures& first, const RuleFigures& second);

}  // namespace ttsim

namespace ttsim {
// Fixed-width table of points (workload, GPU, GPUs, batch, submitter, published, predicted, error %).
std::string format_point_table(const std::vector<PointError>& points);
}  // namespace ttsim
