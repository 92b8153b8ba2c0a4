// `ttsim calibrate`: fit compute profiles to the v4.1 results and write them as YAML.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>

#include "models/calibration/calibration.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/model_flag.hpp"
#include "tools/cli/output_dir.hpp"
#include "tools/cli/command_list.hpp"

namespace ttsim::cli {

int run_calibrate(const CommandArgs& args, std::ostream& out) {
    ArgParser parser("calibrate", "[--data FILE] [--runs FILE] [--max-gpus N] [--shared LIST] [--out DIR]",
                     "Fit the compute profiles (per workload and GPU) to the MLPerf Training v4.1 results with NLopt, "
                     "print predicted vs published for every result used, and write DIR/profiles.yaml (--model operator: "
                     "DIR/operator_profiles.yaml).");
    parser.option("data", "FILE", "results CSV (v4.1_results.csv format)", "shipped models/data/mlperf/v4.1_results.csv")
        .option("runs", "FILE", "run logs CSV (v4.1_runs.csv format), matched to the results by submitter/system/benchmark",
                "shipped models/data/mlperf/v4.1_runs.csv")
        .option("max-gpus", "N", "fit only results with at most N GPUs")
        .option("out", "DIR",
                "directory to write profiles.yaml into (never the shipped models/profiles unless named: use them "
                "with 'ttsim predict --profiles DIR')",
                "./profiles")
        .option("shared", "LIST",
                std::string("shared parameters (fitted jointly over all profiles) and fit options, comma-separated from: ") +
                    kSharedParameterNames + "; or none",
                SharedFit{}.describe());
    declare_model_flag(parser);
    if (!parser.parse(args, out)) return 0;
    CalibrationOptions options;
    if (parser.has("data")) options.results_csv = parser.get("data");
    for (const char* flag : {"data", "runs"})
        if (parser.has(flag) && !std::filesystem::is_regular_file(parser.get(flag)))
            parser.fail(flag, "cannot open " + parser.get(flag));
    if (parser.has("runs")) options.runs_csv = parser.get("runs");
    if (parser.has("shared")) options.shared = parser.get_parsed("shared", SharedFit::parse);
    options.shared = fit_for_model(parser, options.shared);
    const std::filesystem::path file_name =
        profile_file("", options.shared.operator_model ? ComputeModel::operator_level : ComputeModel::lumped);
    if (parser.has("max-gpus")) options.max_gpus = static_cast<int>(parser.get_int("max-gpus", 1, 1 << 20));
    // Default ./profiles: a plain `ttsim calibrate` must not overwrite the shipped, tested profiles.
    const std::filesystem::path dir = parser.get("out");
    OutputDir output(dir.string());   // an unusable --out fails before the fit; the folder is made after it

    CalibrationReport report = calibrate(options);
    if (report.fitted.empty()) parser.fail("max-gpus", "no results left to fit");
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    const std::string residual = fmt::format("residual: RMS log error {:.4f}, MAPE {:.2f}% over {} results",
                                             report.rms_log_error, mean_absolute_percentage_error(report.fitted),
                                             report.fitted.size());
    report.profiles.header_comment = "ttsim compute profiles, fitted by 'ttsim calibrate' (NLopt LN_BOBYQA / "
                                     "LN_NELDERMEAD on log-parameters, squared log error)\n" +
                                     report.data_description + "\ndate: " + date + "\n" + residual;
    output.create();
    parser.naming_flags([&] { report.profiles.save_file(dir / file_name); });   // names Field::output_dir
    output.keep();
    out << format_point_table(report.fitted) << residual << "\n"
        << "objective evaluations: " << report.objective_evaluations << "\n"
        << "wrote " << (dir / file_name).string() << "\n";
    return 0;
}

}  // namespace ttsim::cli
