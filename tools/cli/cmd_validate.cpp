// `ttsim validate`: in-sample error of the shipped profiles, and a fresh hold-out calibration (<= 64 GPUs) that
// predicts the large-scale H100/H200 results it never saw.
#include <cstdio>
#include <ostream>
#include <string>

#include "models/calibration/calibration.hpp"
#include "models/calibration/run_lines.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/command_list.hpp"

namespace ttsim::cli {

namespace {
// Percentages with two decimals: the data do not support more (3.61%, not 3.61315%).
std::string percent(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f%%", value);
    return text;
}
}  // namespace

int run_validate(const CommandArgs& args, std::ostream& out) {
    ArgParser parser("validate", "[--data FILE] [--profiles DIR] [--shared LIST] [--cross-validate]",
                     "(a) in-sample error of the profiles for every v4.1 H100-SXM/H200-SXM/B200 result; (b) hold-out: "
                     "calibrate on results with <= 64 GPUs only, predict every H100/H200 result with >= 128 GPUs.");
    parser.option("data", "FILE", "results CSV", "shipped models/data/mlperf/v4.1_results.csv")
        .option("profiles", "DIR", "directory with profiles.yaml", "models/profiles")
        .option("shared", "LIST",
                std::string("parameters shared by all profiles and fitted jointly, comma-separated from: ") +
                    kSharedParameterNames + "; or none",
                SharedFit{}.describe())
        .flag("cross-validate",
              "only print cross-validation on the <= 64-GPU results (model selection evidence): forward chaining "
              "(fit on fewer GPUs, predict the next count; decides the shipped model) and leave-one-GPU-count-out");
    if (!parser.parse(args, out)) return 0;
    CalibrationOptions options;
    if (parser.has("data")) options.results_csv = parser.get("data");
    if (parser.has("shared")) options.shared = parser.get_parsed("shared", SharedFit::parse);
    // ProfileSet names its key "profiles"; the user typed --profiles.
    const ProfileSet profiles = parser.naming_flags([&] {
        return ProfileSet::load_dir(parser.has("profiles") ? std::filesystem::path(parser.get("profiles"))
                                                           : ProfileSet::default_dir());
    });
    const std::vector<CalibrationPoint> points = load_calibration_points(options);
    std::vector<PointError> in_sample;
    for (const auto& p : points) in_sample.push_back(evaluate_point(p, profiles));
    out << "(a) in-sample, shipped profiles\n" << format_point_table(in_sample);
    out << "in-sample MAPE: " << percent(mean_absolute_percentage_error(in_sample)) << " over " << in_sample.size()
        << " results\n\n";
    if (parser.get_flag("cross-validate")) {
        std::string summary;
        for (const CrossValidationScheme scheme :
             {CrossValidationScheme::ForwardChaining, CrossValidationScheme::LeaveOneGpuCountOut}) {
            const CrossValidationReport cv = cross_validate(points, scheme, 64, options.shared);
            out << "(c) " << describe(scheme) << " on results with <= 64 GPUs, shared parameters fitted: "
                << options.shared.describe() << "\n"
                << format_point_table(cv.predicted) << "cross-validation MAPE: " << percent(cv.mape_percent)
                << " over " << cv.predicted.size() << " results\n\n";
            summary += describe(scheme) + ": " + percent(cv.mape_percent) + " over " +
                       std::to_string(cv.predicted.size()) + " results\n";
        }
        out << "cross-validation summary (--shared " << options.shared.describe() << ")\n" << summary;
        return 0;
    }
    const HoldoutReport holdout = holdout_validation(points, 64, 128, options.shared);
    out << "(b) hold-out: fitted on " << holdout.fit.fitted.size() << " results with <= 64 GPUs (fit MAPE "
        << percent(mean_absolute_percentage_error(holdout.fit.fitted)) << ", shared parameters fitted: " << options.shared.describe() << "), predicting results with >= 128 GPUs\n"
        << format_point_table(holdout.predicted) << "hold-out MAPE: " << percent(holdout.mape_percent) << " over "
        << holdout.predicted.size() << " results\n\n";
    std::vector<const CalibrationPoint*> held_out;
    for (const CalibrationPoint& p : points)
        for (const PointError& e : holdout.predicted)
            if (e.submitter == p.result.submitter && e.system == p.result.system && e.workload == p.scenario.workload->name)
                held_out.push_back(&p);
    out << "(b') the hold-out errors split by the run logs: a least-squares line through each result's runs, seconds "
           "on the clock against samples at convergence, gives the measured seconds per step (evaluations "
           "amortised, +- standard error) and per run (intercept); the same line through the hold-out model's "
           "predictions at each run's convergence point gives the model's; RCP/runs = the samples the prediction "
           "uses over the runs' mean\n"
        << format_step_time_checks(step_time_checks(held_out, holdout.fit.profiles, load_mlperf_runs()));
    return 0;
}

}  // namespace ttsim::cli
