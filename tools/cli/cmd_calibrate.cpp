// `ttsim calibrate`: fit compute profiles to the v4.1 results and write them as YAML.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>

#include "models/calibration/calibration.hpp"
#include "models/calibration/fit_sanity.hpp"
#include "models/calibration/user_runs.hpp"
#include "models/mlperf/rounds.hpp"
#include "sim/errors.hpp"
#include "sim/file_reading.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/model_flag.hpp"
#include "tools/cli/output_dir.hpp"
#include "tools/cli/command_list.hpp"

namespace ttsim::cli {

namespace {

// `--data` in the user-runs format (models/calibration/user_runs.hpp): fits the rows with at most --max-gpus
// GPUs, prints them and the rows above it (held out: predicted, with their error) into the returned table.
std::string calibrate_user_file(const ArgParser& parser, const CalibrationOptions& options, CalibrationReport& report) {
    const std::filesystem::path file = parser.get("data");
    std::vector<CalibrationPoint> fit, held_out;
    for (CalibrationPoint& p : load_user_runs(file))
        (!options.max_gpus || p.scenario.gpus <= *options.max_gpus ? fit : held_out).push_back(std::move(p));
    if (fit.empty()) parser.fail("max-gpus", "no rows of " + file.string() + " left to fit");
    const ComputeModel model = options.shared.operator_model ? ComputeModel::operator_level : ComputeModel::lumped;
    if (model == ComputeModel::operator_level &&
        std::none_of(fit.begin(), fit.end(), [](const CalibrationPoint& p) { return p.scenario.operator_table != nullptr; }))
        parser.fail("model", "operator: no row's workload has a layer graph on its GPU");
    const std::string description =
        "data: " + file.filename().string() + " (user runs, docs/user-runs.md), " + std::to_string(fit.size()) +
        " rows fitted" + (options.max_gpus ? " (<= " + std::to_string(*options.max_gpus) + " GPUs)" : std::string()) +
        "\nmodel: the layout of each row priced as 'ttsim predict' prices it; step times and times to train fitted "
        "on their log errors; fit switches: " + options.shared.describe();
    UserCalibration fitted =
        calibrate_user_runs(fit, description, options.shared, load_profiles(ProfileSet::default_dir(), model));
    report = std::move(fitted.report);
    std::string table = "fitted:\n" + format_user_run_table(fit, report.profiles);
    if (!fitted.note.empty()) table += "note: " + fitted.note + "\n";
    if (!held_out.empty()) {
        table += fmt::format("held out (more than {} GPUs; not fitted), predicted with the fitted profiles:\n",
                             *options.max_gpus) +
                 format_user_run_table(held_out, report.profiles);
        std::vector<PointError> errors;
        for (const CalibrationPoint& p : held_out) errors.push_back(evaluate_point(p, report.profiles));
        table += fmt::format("held-out MAPE {:.2f}% over {} rows\n", mean_absolute_percentage_error(errors),
                             errors.size());
    }
    return table;
}

}  // namespace

int run_calibrate(const CommandArgs& args, std::ostream& out) {
    ArgParser parser("calibrate",
                     "[--rounds LIST | --data FILE [--runs FILE] [--timing FILE]] [--max-gpus N] [--model M] [--shared LIST] [--out DIR]",
                     "Fit the compute profiles (per workload and GPU) to MLPerf Training results with NLopt (every "
                     "round in --rounds together), print predicted vs published for every result used and every "
                     "published result not used with why, and write DIR/profiles.yaml (--model operator: "
                     "DIR/operator_profiles.yaml). The operator fit (the default model) of every shipped round takes "
                     "about 2.5 CPU-minutes, of one round 20 s; --model lumped a few seconds.");
    parser.option("data", "FILE",
                  "results CSV: the v4.1_results.csv format, or your own measured runs in the user-runs format "
                  "(docs/user-runs.md; told apart by the header)",
                  "shipped models/data/mlperf/v4.1_results.csv")
        .option("runs", "FILE", "run logs CSV (v4.1_runs.csv format), matched to the results by submitter/system/benchmark",
                "shipped models/data/mlperf/v4.1_runs.csv")
        .option("timing", "FILE",
                "log timings CSV (v4.1_timing.csv columns: logged step and evaluation times), matched like --runs",
                "shipped models/data/mlperf/v4.1_timing.csv")
        .option("rounds", "LIST",
                "MLPerf rounds to fit together, comma-separated from models/data/mlperf/rounds.yaml (4.0, 4.1, 5.0)",
                "operator model: every round, as the shipped profiles are fitted; lumped: the default round, " +
                    mlperf_rounds().default_round)
        .option("max-gpus", "N",
                "fit only results with at most N GPUs (user runs: the larger ones are predicted and their error printed)")
        .option("out", "DIR",
                "directory to write profiles.yaml into (never the shipped models/profiles unless named: use them "
                "with 'ttsim predict --profiles DIR')",
                "./profiles")
        .option("shared", "LIST", shared_flag_help(),
                default_shared_description());
    declare_model_flag(parser);
    if (!parser.parse(args, out)) return 0;
    CalibrationOptions options;
    if (parser.has("rounds") && parser.has("data"))
        parser.fail("rounds", "reads the shipped rounds; --data names a results file of its own");
    if (parser.has("data")) options.results_csv = parser.get("data");
    for (const char* flag : {"data", "runs", "timing"})
        if (parser.has(flag) && !regular_file_exists(parser.get(flag)))
            parser.fail(flag, "cannot open " + parser.get(flag));
    if (parser.has("runs")) options.runs_csv = parser.get("runs");
    if (parser.has("timing")) options.timing_csv = parser.get("timing");
    for (const char* flag : {"runs", "timing"})
        if (parser.has(flag) && !parser.has("data"))
            parser.fail(flag, "goes with --data (the shipped rounds name their own run logs and timings)");
    if (parser.has("shared")) options.shared = parser.get_parsed("shared", SharedFit::parse);
    options.shared = fit_for_model(parser, options.shared);
    // The operator model fits every round together, with a software offset per (round, workload, GPU family); the
    // lumped curves have no offsets, so they fit one round's software.
    options.rounds = rounds_flag(parser, options.shared.operator_model);
    options.shared.parameter_uncertainty = true;   // the identifiability report below
    const std::filesystem::path file_name =
        profile_file("", options.shared.operator_model ? ComputeModel::operator_level : ComputeModel::lumped);
    if (parser.has("max-gpus")) options.max_gpus = static_cast<int>(parser.get_int("max-gpus", 1, 1 << 20));
    // Default ./profiles: a plain `ttsim calibrate` must not overwrite the shipped, tested profiles.
    const std::filesystem::path dir = parser.get("out");
    OutputDir output(dir.string());   // an unusable --out fails before the fit; the folder is made after it
    // The shipped profiles are what predictions, `validate` and the tests read: only a fit of the shipped rounds'
    // results on every GPU count may replace them (how they are regenerated), never one of other data.
    std::error_code ignored;
    if (std::filesystem::equivalent(dir, ProfileSet::default_dir(), ignored))
        for (const char* flag : {"data", "max-gpus", "rounds"})
            if (parser.has(flag))
                parser.fail("out", dir.string() + " holds the shipped profiles, which a fit with --" + flag +
                                       " would replace: write it to another folder and pass that to --profiles");

    const bool user_runs = parser.has("data") && is_user_runs_csv(parser.get("data"));
    for (const char* flag : {"runs", "timing"})
        if (user_runs && parser.has(flag))
            parser.fail(flag, "applies to the MLPerf v4.1 results format; a user-runs file (--data) has no run logs");
    CalibrationReport report;
    std::string table;
    if (user_runs) {
        table = calibrate_user_file(parser, options, report);
    } else {
        std::vector<SkippedResult> skipped;
        std::vector<CalibrationPoint> held_out;
        report = parser.naming_flags([&] { return calibrate(options, &skipped, &held_out); });
        table = format_point_table(report.fitted);
        if (!held_out.empty()) {
            std::vector<PointError> errors;
            for (const CalibrationPoint& p : held_out) errors.push_back(evaluate_point(p, report.profiles));
            table += fmt::format("held out (more than {} GPUs; not fitted), predicted with the fitted profiles:\n",
                                 *options.max_gpus) +
                     format_point_table(errors) +
                     fmt::format("held-out MAPE {:.2f}% over {} results\n", mean_absolute_percentage_error(errors),
                                 errors.size());
        }
        table += "published results not used (" + std::to_string(skipped.size()) + "):\n" + format_skipped_table(skipped);
    }
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    const std::string residual = fmt::format("residual: RMS log error {:.4f}, MAPE {:.2f}% over {} results",
                                             report.rms_log_error, mean_absolute_percentage_error(report.fitted),
                                             report.fitted.size());
    report.profiles.header_comment = "ttsim compute profiles, fitted by 'ttsim calibrate' (NLopt LN_BOBYQA / "
                                     "LN_NELDERMEAD on log-parameters, squared log error)\n" +
                                     report.data_description + "\ndate: " + date + "\n" + residual;
    // A fit physics forbids is refused before anything is written (fit_sanity.hpp), naming its likely outliers.
    const FitSanity sanity = check_fit_sanity(report.profiles, report.fitted);
    if (!sanity.ok()) {
        out << table << residual << "\n";
        throw InputError("the fit breaks what physics allows, so " + (dir / file_name).string() +
                         " was not written (check or remove the results named, then fit again):\n" +
                         format_fit_sanity(sanity));
    }
    output.create();
    parser.naming_flags([&] { report.profiles.save_file(dir / file_name); });   // names Field::output_dir
    output.keep();
    if (!report.parameters.empty())
        table += "\nfitted parameters: what the data determined (Laplace approximation at the optimum: posterior "
                 "against prior sd, as factors; parameter_table.hpp)\n" +
                 format_identifiability(report.parameters);
    out << table << residual << "\n"
        << "objective evaluations: " << report.objective_evaluations << "\n"
        << "sanity (fit_sanity.hpp): ranges, compute at scale and 8 -> 64 GPU speedup bounds hold\n"
        << format_fit_sanity(sanity)
        << "wrote " << (dir / file_name).string() << "\n";
    return 0;
}

}  // namespace ttsim::cli
