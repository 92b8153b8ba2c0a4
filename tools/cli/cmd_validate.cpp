// `ttsim validate`: in-sample error of the shipped profiles, and a fresh hold-out calibration (<= 64 GPUs) that
// predicts the large-scale H100/H200 results it never saw.
#include <filesystem>
#include <ostream>
#include <string>

#include <fmt/format.h>

#include "models/calibration/calibration.hpp"
#include "models/calibration/run_lines.hpp"
#include "models/planning/holdout_error.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/command_list.hpp"

namespace ttsim::cli {

namespace {
constexpr const char* kRunLinesLegend =
    "a least-squares line through each result's runs, seconds on the clock against samples at convergence, gives "
    "the measured seconds per step (evaluations amortised, +- standard error) and the intercept (per-run cost plus "
    "the evaluation schedule's offset); the same line through the model's predictions at each run's convergence "
    "point gives the model's; RCP/runs = the samples the prediction uses over the runs' mean";
// Percentages with two decimals: the data do not support more (3.61%, not 3.61315%).
std::string percent(double value) { return fmt::format("{:.2f}%", value); }
}  // namespace

int run_validate(const CommandArgs& args, std::ostream& out) {
    ArgParser parser("validate", "[--data FILE] [--runs FILE] [--profiles DIR] [--shared LIST] [--cross-validate | --run-lines | --holdout-yaml]",
                     "(a) in-sample error of the profiles for every v4.1 H100-SXM/H200-SXM/B200 result; (b) hold-out: "
                     "calibrate on results with <= 64 GPUs only, predict every H100/H200 result with >= 128 GPUs.");
    parser.option("data", "FILE", "results CSV", "shipped models/data/mlperf/v4.1_results.csv")
        .option("runs", "FILE", "run logs CSV (v4.1_runs.csv format), matched to the results by submitter/system/benchmark",
                "shipped models/data/mlperf/v4.1_runs.csv")
        .option("profiles", "DIR", "directory with profiles.yaml", "models/profiles")
        .option("shared", "LIST",
                std::string("shared parameters (fitted jointly over all profiles) and fit options, comma-separated from: ") +
                    kSharedParameterNames + "; or none",
                SharedFit{}.describe())
        .flag("run-lines",
              "only print, for every result whose runs converged at different points, the seconds per step and the "
              "intercept measured by a line through its runs against the profiles' (in-sample)")
        .flag("holdout-yaml",
              "only print the hold-out error per workload as YAML (the shipped models/data/validation/holdout.yaml, "
              "which plans quote)")
        .flag("cross-validate",
              "print the in-sample table and cross-validation on the <= 64-GPU results (model selection evidence): forward chaining "
              "(fit on fewer GPUs, predict the next count; decides the shipped model) and leave-one-GPU-count-out");
    if (!parser.parse(args, out)) return 0;
    if (parser.get_flag("run-lines") && parser.get_flag("cross-validate"))
        parser.fail("run-lines", "cannot be combined with --cross-validate (each prints its own report)");
    if (parser.get_flag("holdout-yaml") && (parser.get_flag("run-lines") || parser.get_flag("cross-validate")))
        parser.fail("holdout-yaml", "cannot be combined with --run-lines or --cross-validate (each prints its own report)");
    CalibrationOptions options;
    if (parser.has("data")) options.results_csv = parser.get("data");
    for (const char* flag : {"data", "runs"})
        if (parser.has(flag) && !std::filesystem::is_regular_file(parser.get(flag)))
            parser.fail(flag, "cannot open " + parser.get(flag));
    if (parser.has("runs")) options.runs_csv = parser.get("runs");
    if (parser.has("shared")) options.shared = parser.get_parsed("shared", SharedFit::parse);
    // ProfileSet names Field::profiles; the user typed --profiles.
    const ProfileSet profiles = parser.naming_flags([&] {
        return ProfileSet::load_dir(parser.has("profiles") ? std::filesystem::path(parser.get("profiles"))
                                                           : ProfileSet::default_dir());
    });
    const std::vector<CalibrationPoint> points = load_calibration_points(options);
    constexpr int kFitMaxGpus = 64, kPredictMinGpus = 128;
    if (parser.get_flag("holdout-yaml")) {
        const HoldoutReport holdout = holdout_validation(points, kFitMaxGpus, kPredictMinGpus, options.shared);
        out << planning::format_holdout_yaml(planning::holdout_errors(holdout, kFitMaxGpus, kPredictMinGpus));
        return 0;
    }
    std::vector<PointError> in_sample;
    for (const auto& p : points) in_sample.push_back(evaluate_point(p, profiles));
    if (parser.get_flag("run-lines")) {
        std::vector<const CalibrationPoint*> all;
        for (const CalibrationPoint& p : points) all.push_back(&p);
        out << "(a') in-sample step time from the run logs: " << kRunLinesLegend << "\n"
            << format_step_time_checks(step_time_checks(all, profiles));
        return 0;
    }
    out << "(a) in-sample, shipped profiles\n" << format_point_table(in_sample);
    out << "in-sample MAPE: " << percent(mean_absolute_percentage_error(in_sample)) << " over " << in_sample.size()
        << " results\n\n";
    if (parser.get_flag("cross-validate")) {
        std::string summary;
        for (const CrossValidationScheme scheme :
             {CrossValidationScheme::ForwardChaining, CrossValidationScheme::LeaveOneGpuCountOut}) {
            const CrossValidationReport cv = cross_validate(points, scheme, 64, options.shared);
            out << (scheme == CrossValidationScheme::ForwardChaining ? "(c) " : "(d) ") << describe(scheme) << " on results with <= 64 GPUs, shared parameters fitted: "
                << options.shared.describe() << "\n"
                << format_point_table(cv.predicted) << "cross-validation MAPE: " << percent(cv.mape_percent)
                << " over " << cv.predicted.size() << " results\n\n";
            summary += describe(scheme) + ": " + percent(cv.mape_percent) + " over " +
                       std::to_string(cv.predicted.size()) + " results\n";
        }
        out << "cross-validation summary (--shared " << options.shared.describe() << ")\n" << summary;
        return 0;
    }
    const HoldoutReport holdout = holdout_validation(points, kFitMaxGpus, kPredictMinGpus, options.shared);
    out << "(b) hold-out: fitted on " << holdout.fit.fitted.size() << " results with <= 64 GPUs (fit MAPE "
        << percent(mean_absolute_percentage_error(holdout.fit.fitted)) << ", shared parameters fitted: " << options.shared.describe() << "), predicting results with >= 128 GPUs\n"
        << format_point_table(holdout.predicted) << "hold-out MAPE: " << percent(holdout.mape_percent) << " over "
        << holdout.predicted.size() << " results\n\n";
    const std::vector<const CalibrationPoint*>& held_out = holdout.held_out;
    out << "(b') the hold-out errors split by the run logs: " << kRunLinesLegend << "\n"
        << format_step_time_checks(step_time_checks(held_out, holdout.fit.profiles));
    // The same hold-out model given each result's own published convergence (what a prediction cannot know): the
    // part of the hold-out error that the RCPs' convergence accounts for.
    double own_convergence = 0;
    for (const CalibrationPoint* p : held_out) {
        const ComputeProfile profile = holdout.fit.profiles.find(*p->fit_scenario.workload, *p->fit_scenario.gpu);
        own_convergence += std::abs(evaluate(p->fit_scenario, profile).ttt_minutes / p->published_minutes - 1.0);
    }
    if (!held_out.empty())
        out << "hold-out MAPE with each result's published mean convergence instead of the RCPs (diagnostic only): "
            << percent(100.0 * own_convergence / static_cast<double>(held_out.size())) << "\n";
    return 0;
}

}  // namespace ttsim::cli
