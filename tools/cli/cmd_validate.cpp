// `ttsim validate`: in-sample error of the shipped profiles, and a fresh hold-out calibration (<= 64 GPUs) that
// predicts the large-scale H100/H200 results it never saw.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <numeric>
#include <ostream>
#include <string>

#include <fmt/format.h>

#include "models/calibration/calibration.hpp"
#include "models/calibration/log_parts.hpp"
#include "models/calibration/method_check.hpp"
#include "models/calibration/model_error.hpp"
#include "models/calibration/run_lines.hpp"
#include "models/mlperf/rounds.hpp"
#include "models/planning/holdout_error.hpp"
#include "sim/errors.hpp"
#include "sim/file_reading.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/model_flag.hpp"

namespace ttsim::cli {

namespace {
constexpr const char* kRunLinesLegend =
    "a least-squares line through each result's runs, seconds on the clock against samples at convergence, gives "
    "the measured seconds per step (evaluations amortised, +- standard error) and the intercept (per-run cost plus "
    "the evaluation schedule's offset); the same line through the model's predictions at each run's convergence "
    "point gives the model's; RCP/runs = the samples the prediction uses over the runs' mean";
constexpr const char* kLogPartsLegend =
    "v4.1_timing.csv, medians over each result's logs.\n"
    "  step ms: the steady step inside the training segments; eval s: the blocking seconds of one evaluation\n"
    "  (RetinaNet scores asynchronously: its final scoring, counted once per run, is taken out);\n"
    "  excess s: the first training segment's seconds beyond its steps at the steady rate (startup and slow early\n"
    "  steps; negative for Stable Diffusion, whose first block is shorter than the steady ones);\n"
    "  beside each, the model's step, evaluation (with its count at the RCP convergence) and per-run overhead";
// Percentages with two decimals: the data do not support more (3.61%, not 3.61315%).
std::string percent(double value) { return fmt::format("{:.2f}%", value); }

// `validate --summary`: one Markdown row per workload (the hold-out file's order, the catalog's) and one for all,
// the README's accuracy table. The hold-out MAPE over all results is the results-weighted mean of the workloads'
// (each is a mean over its results).
std::string format_accuracy_summary(const std::vector<PointError>& in_sample, const planning::HoldoutErrors& holdout) {
    std::string out = fmt::format(
        "| workload | v4.1 results | in-sample MAPE | results at >= {} GPUs | hold-out MAPE (fit on <= {} GPUs) |\n"
        "|---|---|---|---|---|\n",
        holdout.predict_min_gpus, holdout.fit_max_gpus);
    auto row = [&](const std::string& name, const std::vector<PointError>& errors, int held_out, double held_mape) {
        out += fmt::format("| {} | {} | {} | {} | {} |\n", name, errors.size(),
                           errors.empty() ? "-" : percent(mean_absolute_percentage_error(errors)), held_out,
                           held_out > 0 ? percent(held_mape) : "-");
    };
    int all_held = 0;
    double all_held_sum = 0;
    for (const planning::WorkloadHoldoutError& w : holdout.workloads) {
        std::vector<PointError> mine;
        for (const PointError& e : in_sample)
            if (e.workload == w.workload) mine.push_back(e);
        row(w.workload, mine, w.results, w.mape_percent);
        all_held += w.results;
        all_held_sum += w.results * w.mape_percent;
    }
    row("all", in_sample, all_held, all_held > 0 ? all_held_sum / all_held : 0.0);
    return out;
}

double step_time_mape(const std::vector<StepTimeCheck>& checks) {
    double sum = 0;
    for (const StepTimeCheck& c : checks) sum += std::abs(c.model_step_seconds() / c.measured_step_seconds() - 1.0);
    return checks.empty() ? 0.0 : 100.0 * sum / static_cast<double>(checks.size());
}

// The cross-validation predictions' parts against their logs: a fold that gets the minutes right by trading one part
// for another shows here.
std::string parts_line(const CrossValidationReport& cv) {
    std::string line =
        fmt::format("their parts against the logs (MAPE): steady step {} over {} results, one evaluation {} over {}",
                    percent(cv.step_mape_percent), cv.step_results, percent(cv.eval_mape_percent), cv.eval_results);
    if (cv.published_convergence_results > 0)
        line += fmt::format("; with each result's published convergence instead of the RCPs (diagnostic only): {} over {}",
                            percent(cv.published_convergence_mape_percent), cv.published_convergence_results);
    return line;
}

// "<what> MAPE with each result's published mean convergence ...: x%" from published_convergence_errors (absolute
// errors), or nothing where no result publishes its convergence.
std::string published_convergence_line(const std::string& what, const std::vector<double>& absolute_errors) {
    if (absolute_errors.empty()) return "";
    return fmt::format("{} MAPE with each result's published mean convergence instead of the RCPs (diagnostic only): {} "
                       "over {} results\n",
                       what,
                       percent(100.0 * std::accumulate(absolute_errors.begin(), absolute_errors.end(), 0.0) /
                               static_cast<double>(absolute_errors.size())),
                       absolute_errors.size());
}

// The mean signed error and the share of results priced slow: a fit whose errors are one-signed says which way.
std::string mean_signed_line(const std::vector<PointError>& errors) {
    if (errors.empty()) return "";
    double sum = 0;
    std::size_t slow = 0;
    for (const PointError& e : errors) {
        sum += e.error;
        slow += e.error > 0 ? 1 : 0;
    }
    return fmt::format("mean signed error: {:+.2f}% ({} of {} results predicted slower than published)\n",
                       100.0 * sum / static_cast<double>(errors.size()), slow, errors.size());
}

// One model's figures for the side-by-side report (--compare).
struct ModelFigures {
    double in_sample = 0, forward = 0, loco = 0, holdout = 0, holdout_step = 0;
    std::vector<PointError> holdout_points;
};

ModelFigures model_figures(const std::vector<CalibrationPoint>& points, const ProfileSet& shipped, const SharedFit& shared) {
    ModelFigures f;
    std::vector<PointError> in_sample;
    for (const auto& p : points) in_sample.push_back(evaluate_point(p, shipped));
    f.in_sample = mean_absolute_percentage_error(in_sample);
    f.forward = cross_validate(points, CrossValidationScheme::ForwardChaining, 64, shared).mape_percent;
    f.loco = cross_validate(points, CrossValidationScheme::LeaveOneGpuCountOut, 64, shared).mape_percent;
    const HoldoutReport holdout = holdout_validation(points, 64, 128, shared);
    f.holdout = holdout.mape_percent;
    f.holdout_step = step_time_mape(step_time_checks(holdout.held_out, holdout.fit.profiles));
    f.holdout_points = holdout.predicted;
    return f;
}

int print_comparison(const std::vector<CalibrationPoint>& points, const ArgParser& parser, const SharedFit& shared,
                     std::ostream& out) {
    SharedFit lumped = shared, op = parser.has("shared") ? shared : SharedFit::operator_defaults();
    lumped.operator_model = false;
    op.operator_model = true;
    const std::filesystem::path dir =
        parser.has("profiles") ? std::filesystem::path(parser.get("profiles")) : ProfileSet::default_dir();
    // ProfileSet names Field::profiles; the user typed --profiles.
    const ProfileSet lumped_profiles = parser.naming_flags([&] { return load_profiles(dir, ComputeModel::lumped); });
    const ProfileSet operator_profiles =
        parser.naming_flags([&] { return load_profiles(dir, ComputeModel::operator_level); });
    const ModelFigures a = model_figures(points, lumped_profiles, lumped);
    const ModelFigures b = model_figures(points, operator_profiles, op);
    out << "lumped and operator-level model side by side (MAPE, %; in-sample: shipped profiles; cross-validation on "
           "results with <= 64 GPUs; hold-out: fitted on <= 64 GPUs, predicting >= 128; step time: the hold-out "
           "model against the runs' line)\n";
    out << fmt::format("{:<10} {:>10} {:>12} {:>8} {:>10} {:>15}\n", "model", "in-sample", "forward CV", "LOCO",
                       "hold-out", "hold-out step");
    for (const auto& [name, f] : {std::pair{"lumped", &a}, std::pair{"operator", &b}})
        out << fmt::format("{:<10} {:>10.2f} {:>12.2f} {:>8.2f} {:>10.2f} {:>15.2f}\n", name, f->in_sample, f->forward,
                           f->loco, f->holdout, f->holdout_step);
    out << "\nhold-out points, predicted minutes by each model\n";
    out << fmt::format("{:<17} {:<10} {:>6} {:<26} {:>10} {:>10} {:>8} {:>10} {:>8}\n", "workload", "gpu", "gpus",
                       "submitter/system", "published", "lumped", "err%", "operator", "err%");
    for (std::size_t i = 0; i < a.holdout_points.size() && i < b.holdout_points.size(); ++i) {
        const PointError& x = a.holdout_points[i];
        const PointError& y = b.holdout_points[i];
        out << fmt::format("{:<17} {:<10} {:>6} {:<26.26} {:>10.4f} {:>10.4f} {:>+8.2f} {:>10.4f} {:>+8.2f}\n", x.workload,
                           x.gpu, x.gpus, x.submitter + "/" + x.system, x.published_minutes, x.predicted_minutes,
                           100 * x.error, y.predicted_minutes, 100 * y.error);
    }
    return 0;
}

// --method-check: each round's hold-out at scale, every round in-sample, the rounds' speedups.
int print_method_check(const ArgParser& parser, const SharedFit& shared, std::ostream& out) {
    MethodCheckOptions check_options;
    check_options.rounds = rounds_flag(parser, true);
    check_options.shared = shared;
    CalibrationOptions options;
    options.rounds = check_options.rounds;
    std::vector<SkippedResult> skipped;
    (void)load_calibration_points(options, &skipped);
    out << "published results not used (" << skipped.size() << "):\n" << format_skipped_table(skipped) << "\n";
    out << format_method_check(method_check(check_options), check_options);
    return 0;
}
}  // namespace

int run_validate(const CommandArgs& args, std::ostream& out) {
    ArgParser parser("validate", "[--data FILE] [--runs FILE] [--profiles DIR] [--model M] [--shared LIST] "
                     "[--summary | --cross-validate | --run-lines | --log-parts | --holdout-yaml | --error-model | --compare | "
                     "--method-check [--rounds LIST]]",
                     "(a) in-sample error of the profiles for every result of the round (--round, default " +
                         mlperf_rounds().default_round + ") on a GPU of the catalog; (b) hold-out: "
                     "calibrate on results with <= 64 GPUs only, predict every result with >= 128 GPUs. With the "
                     "operator model (the default) the hold-out fit takes about 20 s of CPU, --cross-validate "
                     "several; --log-parts and --run-lines fit nothing.");
    parser.option("data", "FILE", "results CSV", "shipped models/data/mlperf/v4.1_results.csv")
        .option("runs", "FILE", "run logs CSV (v4.1_runs.csv format), matched to the results by submitter/system/benchmark",
                "shipped models/data/mlperf/v4.1_runs.csv")
        .option("profiles", "DIR", "directory with profiles.yaml and operator_profiles.yaml", "models/profiles")
        .option("shared", "LIST", shared_flag_help(),
                default_shared_description())
        .flag("run-lines",
              "only print, for every result whose runs converged at different points, the seconds per step and the "
              "intercept measured by a line through its runs against the profiles' (in-sample)")
        .flag("log-parts",
              "only print, for every result, its steady step, seconds per evaluation and first-segment excess as its logs "
              "measure them against the profiles' step, evaluation and per-run overhead (in-sample)")
        .flag("summary",
              "only print the accuracy table of the shipped (operator) profiles, per workload, as Markdown: the "
              "in-sample MAPE (priced now, under a second) and the hold-out MAPE read from the shipped "
              "models/data/validation/holdout.yaml (a refit takes minutes; plain validate recomputes it)")
        .flag("holdout-yaml",
              "only print the hold-out error per workload as YAML (the shipped models/data/validation/holdout.yaml, "
              "which plans quote)")
        .flag("cross-validate",
              "print the in-sample table and cross-validation on the <= 64-GPU results: forward chaining "
              "(fit on fewer GPUs, predict the next count) and leave-one-GPU-count-out")
        .flag("compare",
              "only print the lumped and the operator-level model side by side: in-sample, forward-chaining and "
              "leave-one-count-out cross-validation, hold-out time-to-train and step time, and every hold-out point "
              "(both models fitted with --shared; several minutes)")
        .flag("method-check",
              "only print the method check: for each MLPerf round, calibrate on its results with <= 64 GPUs and "
              "predict its results with >= 72 at their published layouts (per-round MAPE, largest error, every "
              "point); then every round fitted together (in-sample), the published speedup of each workload between "
              "rounds, and every result not used with why (about a minute of CPU per round, two more for every round "
              "together)")
        .flag("error-model",
              "only print the model error per kind of extrapolation (inside the calibrated range, scale, a GPU family "
              "without results at scale, an unseen software stack, another round), each cross-validated, as YAML: the "
              "shipped models/data/validation/model_error.yaml that predict and plan bands carry (a dozen fits of the "
              "shipped rounds, about 10 CPU-minutes; progress on stderr)")
        .option("rounds", "LIST", "with --method-check: the rounds, comma-separated from models/data/mlperf/rounds.yaml",
                "every round");
    declare_model_flag(parser);
    parser.option("round", "R",
                  "the MLPerf round whose results to check (" + mlperf_rounds().names() +
                      "); each result is priced with its round's software offsets where the profiles hold them",
                  mlperf_rounds().default_round);
    if (!parser.parse(args, out)) return 0;
    // Each of these prints its own report, so any two exclude each other; the message names the earlier flag.
    const char* reports[] = {"compare",      "run-lines", "log-parts", "cross-validate",
                             "holdout-yaml", "summary",   "method-check", "error-model"};
    for (std::size_t i = 0; i < std::size(reports); ++i)
        for (std::size_t j = i + 1; j < std::size(reports); ++j)
            if (parser.get_flag(reports[i]) && parser.get_flag(reports[j]))
                parser.fail(reports[i], std::string("cannot be combined with --") + reports[j] +
                                            " (each prints its own report)");
    if (parser.get_flag("compare") && parser.has("model"))
        parser.fail("model", "--compare reports both models");
    // The summary's hold-out column is the shipped file, which measures the shipped default profiles only.
    if (parser.get_flag("summary"))
        for (const char* flag : {"model", "profiles", "data", "runs", "round"})
            if (parser.has(flag))
                parser.fail(flag, "--summary describes the shipped default profiles on the v4.1 results (its hold-out "
                                  "column is models/data/validation/holdout.yaml); run 'ttsim validate' without "
                                  "--summary for others");
    // These price the profiles as they are; nothing is fitted.
    for (const char* report : {"run-lines", "log-parts", "summary"})
        if (parser.get_flag(report) && parser.has("shared"))
            parser.fail("shared", std::string("--") + report + " prices the profiles as they are (no fit), so --shared does not apply");
    if (parser.has("rounds") && !parser.get_flag("method-check"))
        parser.fail("rounds", "applies to --method-check");
    if (parser.get_flag("method-check")) {
        for (const char* flag : {"data", "runs", "profiles", "round"})
            if (parser.has(flag))
                parser.fail(flag, "--method-check reads the shipped rounds and fits its own profiles");
        SharedFit shared;
        if (parser.has("shared")) shared = parser.get_parsed("shared", SharedFit::parse);
        return print_method_check(parser, fit_for_model(parser, shared), out);
    }
    if (parser.get_flag("error-model")) {
        for (const char* flag : {"data", "runs", "profiles", "round", "shared", "model"})
            if (parser.has(flag))
                parser.fail(flag, "--error-model measures the shipped operator model on the shipped rounds");
        out << format_model_error_yaml(measure_model_errors(&std::cerr));
        return 0;
    }
    CalibrationOptions options;
    if (parser.has("round")) {
        if (parser.has("data")) parser.fail("round", "reads a shipped round; --data names a results file of its own");
        options.rounds = {parser.get_parsed("round", [](const std::string& r) { return mlperf_rounds().find(r).name; })};
    }
    if (parser.has("data")) options.results_csv = parser.get("data");
    for (const char* flag : {"data", "runs"})
        if (parser.has(flag) && !regular_file_exists(parser.get(flag)))
            parser.fail(flag, "cannot open " + parser.get(flag));
    if (parser.has("runs")) options.runs_csv = parser.get("runs");
    if (parser.has("shared")) options.shared = parser.get_parsed("shared", SharedFit::parse);
    const std::vector<CalibrationPoint> points = load_calibration_points(options);
    if (parser.get_flag("compare")) return print_comparison(points, parser, options.shared, out);
    options.shared = fit_for_model(parser, options.shared);
    const ProfileSet profiles = load_model_profiles(parser);
    constexpr int kFitMaxGpus = 64, kPredictMinGpus = 128;
    if (parser.get_flag("holdout-yaml")) {
        const HoldoutReport holdout = holdout_validation(points, kFitMaxGpus, kPredictMinGpus, options.shared);
        out << planning::format_holdout_yaml(planning::holdout_errors(holdout, kFitMaxGpus, kPredictMinGpus));
        return 0;
    }
    std::vector<const CalibrationPoint*> all;
    for (const CalibrationPoint& p : points) all.push_back(&p);
    if (parser.get_flag("run-lines")) {
        out << "(a') in-sample step time from the run logs: " << kRunLinesLegend << "\n"
            << format_step_time_checks(step_time_checks(all, profiles));
        return 0;
    }
    if (parser.get_flag("log-parts")) {
        out << "(a'') in-sample, every result's parts as its logs measure them: " << kLogPartsLegend << "\n"
            << format_log_parts(log_parts_checks(all, profiles));
        return 0;
    }
    std::vector<PointError> in_sample;
    for (const auto& p : points) in_sample.push_back(evaluate_point(p, profiles));
    if (parser.get_flag("summary")) {
        out << format_accuracy_summary(in_sample, planning::shipped_holdout_errors());
        return 0;
    }
    out << "(a) in-sample, shipped profiles\n" << format_point_table(in_sample);
    out << "in-sample MAPE: " << percent(mean_absolute_percentage_error(in_sample)) << " over " << in_sample.size()
        << " results\n";
    out << mean_signed_line(in_sample);
    // The share of the in-sample error that the RCPs' convergence accounts for: the same profiles at each result's
    // own published mean convergence, where it has one (what a prediction cannot know).
    out << published_convergence_line("in-sample", published_convergence_errors(all, profiles)) << "\n";
    if (parser.get_flag("cross-validate")) {
        std::string summary;
        for (const CrossValidationScheme scheme :
             {CrossValidationScheme::ForwardChaining, CrossValidationScheme::LeaveOneGpuCountOut}) {
            const CrossValidationReport cv = cross_validate(points, scheme, 64, options.shared);
            out << (scheme == CrossValidationScheme::ForwardChaining ? "(c) " : "(d) ") << describe(scheme) << " on results with <= 64 GPUs, fit switches: "
                << options.shared.describe() << "\n"
                << format_point_table(cv.predicted) << "cross-validation MAPE: " << percent(cv.mape_percent)
                << " over " << cv.predicted.size() << " results\n" << parts_line(cv) << "\n\n";
            summary += describe(scheme) + ": " + percent(cv.mape_percent) + " over " +
                       std::to_string(cv.predicted.size()) + " results; " + parts_line(cv) + "\n";
        }
        out << "cross-validation summary (--shared " << options.shared.describe() << ")\n" << summary;
        return 0;
    }
    const HoldoutReport holdout = holdout_validation(points, kFitMaxGpus, kPredictMinGpus, options.shared);
    out << "(b) hold-out: fitted on " << holdout.fit.fitted.size() << " results with <= 64 GPUs (fit MAPE "
        << percent(mean_absolute_percentage_error(holdout.fit.fitted)) << ", fit switches: " << options.shared.describe() << "), predicting results with >= 128 GPUs\n"
        << format_point_table(holdout.predicted) << "hold-out MAPE: " << percent(holdout.mape_percent) << " over "
        << holdout.predicted.size() << " results\n\n";
    const std::vector<const CalibrationPoint*>& held_out = holdout.held_out;
    out << "(b') the hold-out errors split by the run logs: " << kRunLinesLegend << "\n"
        << format_step_time_checks(step_time_checks(held_out, holdout.fit.profiles)) << "\n"
        << "(b'') the hold-out results' parts as their logs measure them: " << kLogPartsLegend << "\n"
        << format_log_parts(log_parts_checks(held_out, holdout.fit.profiles));
    // The same hold-out model given each result's own published convergence (what a prediction cannot know): the
    // part of the hold-out error that the RCPs' convergence accounts for.
    out << published_convergence_line("hold-out", published_convergence_errors(held_out, holdout.fit.profiles));
    return 0;
}

}  // namespace ttsim::cli
