#include "models/calibration/calibration.hpp"
#include "models/calibration/lumped_fit.hpp"
#include "models/calibration/operator_fit.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <fmt/ranges.h>

#include "models/data_dir.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/mlperf/rounds.hpp"
#include "models/mlperf/submission_layouts.hpp"
#include "sim/errors.hpp"
#include "sim/statistics.hpp"
#include "sim/units.hpp"

namespace ttsim {

namespace {

std::filesystem::path results_path(const CalibrationOptions& options) {
    return options.results_csv ? *options.results_csv : mlperf_rounds().find(mlperf_rounds().default_round).results;
}

// The layout a published result ran: its submitter's own where v4.1_submission_layouts.yaml gives it (`own`, which
// must match the result's GPU family, count and global batch); else NVIDIA's published layout at the nearest
// scale, with the result's GPU count, global batch and gradient accumulation; CP doubled while the batch does not
// split over DP x accumulation; SHARP where the job spans NVLink domains of `system` (an NVL72 job of 64 GPUs has
// no switch fabric to reduce in).
ParallelismConfig layout_of(const Workload& workload, const System& system, const MlperfResult& r, int accumulation,
                            const PublishedParallelism* own) {
    if (own) {
        if (own->system_family != r.accelerator_family || own->gpus != r.n_accelerators ||
            own->config.global_batch != *r.global_batch_size || own->config.gradient_accumulation != accumulation)
            throw InputError("v4.1_submission_layouts.yaml: the layout of " + r.key() + " (" + own->system_family +
                                 ", " + std::to_string(own->gpus) + " GPUs, global batch " +
                                 std::to_string(own->config.global_batch) + ", accumulation " +
                                 std::to_string(own->config.gradient_accumulation) + ") is not the result's (" +
                                 r.accelerator_family + ", " + std::to_string(r.n_accelerators) + ", " +
                                 std::to_string(*r.global_batch_size) + ", " + std::to_string(accumulation) + ")");
        return own->config;
    }
    ParallelismConfig c = default_parallelism(workload, r.accelerator_family, r.n_accelerators).config;
    const int gbs = *r.global_batch_size;
    const int n = r.n_accelerators;
    while (gbs % (c.data_parallel * accumulation) != 0 && c.data_parallel % 2 == 0 &&
           c.tensor_parallel * c.context_parallel * 2 <= n) {
        c.context_parallel *= 2;
        c.data_parallel /= 2;
    }
    if (gbs % (c.data_parallel * accumulation) != 0) accumulation = 1;
    if (gbs % c.data_parallel != 0)   // a user's CSV (calibrate --data) may hold any batch; the shipped one splits
        throw InputError("global batch " + std::to_string(gbs) + " does not split over the " +
                             std::to_string(c.data_parallel) + " data-parallel replicas of the nearest published "
                             "layout at " + std::to_string(n) + " GPUs (TP " + std::to_string(c.tensor_parallel) +
                             ", CP " + std::to_string(c.context_parallel) + ")",
                         Field::global_batch);
    c.gradient_accumulation = accumulation;
    c.samples_per_micro_batch = gbs / (c.data_parallel * accumulation);
    c.global_batch = gbs;
    // Runs across NVLink domains of the submitters that reduce in the switches (models/data/mlperf/rounds.yaml says
    // whose).
    c.sharp = system.spans_domains(n) && mlperf_rounds().in_network_reduction_submitters.count(r.submitter) > 0;
    return c;
}


}  // namespace

namespace {

// One round's files: the shipped round's, or the caller's results CSV with the default round's logs unless named.
struct RoundFiles {
    std::string name;   // "" for a caller's file (its rows' round column, where it has one, says)
    std::filesystem::path results, runs, timing;
    std::optional<std::filesystem::path> layouts;
};

std::vector<RoundFiles> round_files(const CalibrationOptions& options) {
    const MlperfRounds& shipped = mlperf_rounds();
    if (options.results_csv) {
        const MlperfRound& def = shipped.find(shipped.default_round);
        return {RoundFiles{"", *options.results_csv, options.runs_csv.value_or(def.runs),
                           options.timing_csv.value_or(def.timing), std::nullopt}};
    }
    std::vector<RoundFiles> out;
    const std::vector<std::string> names = options.rounds.empty() ? std::vector{shipped.default_round} : options.rounds;
    for (const MlperfRound& r : shipped.rounds)   // oldest first, whatever order the caller gave
        for (const std::string& name : names)
            if (&shipped.find(name) == &r) out.push_back({r.name, r.results, r.runs, r.timing, r.layouts});
    return out;
}

// submitter/system/workload: a result's identity across rounds, whatever the round called its benchmark.
std::string canonical_key(const std::string& submitter, const std::string& system, const std::string& benchmark) {
    return submitter + "/" + system + "/" + find_workload(benchmark).name;
}

}  // namespace

std::vector<CalibrationPoint> load_calibration_points(const CalibrationOptions& options,
                                                      std::vector<SkippedResult>* skipped) {
    const std::vector<RoundFiles> files = round_files(options);
    // A caller's own file is refused at its first row that cannot be used; the shipped rounds list such rows.
    const bool strict = options.results_csv.has_value();
    std::vector<std::string> families = options.families;
    if (families.empty())
        for (const GpuSpec& gpu : gpu_catalog()) families.push_back(gpu.name);
    auto skip = [&](const std::string& round, const MlperfResult& r, std::string reason) {
        if (skipped)
            skipped->push_back({round, r.key(), r.accelerator_family, r.n_accelerators, r.csv_line, std::move(reason)});
    };
    // Every round's rows first: a later round's row that repeats an earlier loaded round's runs is used once.
    std::vector<std::vector<MlperfResult>> rows;
    std::map<std::string, std::set<std::string>> scored_keys;   // "v4.1:" -> canonical keys of scored rows
    for (const RoundFiles& f : files) {
        rows.push_back(load_mlperf_results(f.results));
        for (const MlperfResult& r : rows.back())
            if (r.ttt_minutes_official_scaled)
                scored_keys["v" + (f.name.empty() ? r.round : f.name) + ":"].insert(
                    canonical_key(r.submitter, r.system, r.benchmark));
    }
    std::vector<CalibrationPoint> points;
    for (std::size_t round_index = 0; round_index < files.size(); ++round_index) {
        const RoundFiles& f = files[round_index];
        const std::vector<MlperfResult>& all = rows[round_index];
        const std::map<std::string, SubmissionFacts> submissions =
            f.layouts ? load_submission_facts(*f.layouts) : std::map<std::string, SubmissionFacts>{};
        // Run logs matched to results by submitter/system/benchmark within the round.
        const std::vector<MlperfRun> run_rows = load_mlperf_runs(f.runs);
        std::map<std::string, std::vector<const MlperfRun*>> runs;
        for (const MlperfRun& run : run_rows)
            if (run.success && run.minutes && run.convergence_point) runs[run.key()].push_back(&run);
        // Logged step and evaluation times, by the same key. A log's step time counts only where its evaluations
        // were logged too: without eval intervals its segments include the evaluations.
        std::map<std::string, std::vector<double>> logged_steps, logged_evals, logged_excesses, logged_scorings;
        for (const MlperfTiming& t : load_mlperf_timing(f.timing)) {
            if (!t.log_read || !t.eval_blocking_minutes) continue;
            if (t.step_ms && *t.step_ms > 0) logged_steps[t.key()].push_back(*t.step_ms / 1e3);
            if (const auto excess = t.first_segment_excess_seconds()) logged_excesses[t.key()].push_back(*excess);
            if (const auto eval = t.eval_blocking_seconds()) logged_evals[t.key()].push_back(*eval);
            if (const auto scoring = t.final_scoring_seconds()) logged_scorings[t.key()].push_back(*scoring);
        }
        const std::vector<MlperfResult> distinct = distinct_scored_results(all);
        std::set<int> distinct_lines;
        for (const MlperfResult& r : distinct) distinct_lines.insert(r.csv_line);
        for (const MlperfResult& r : all) {
            const std::string round = f.name.empty() ? r.round : f.name;
            if (!r.ttt_minutes_official_scaled) {
                skip(round, r, "not scored (no ttt_minutes_official_scaled: logs not available)");
                continue;
            }
            if (!distinct_lines.count(r.csv_line)) {
                skip(round, r, "the same runs as " + r.same_run_times_as + ", which stands for both");
                continue;
            }
            const std::string own = "v" + round + ":";
            if (const std::string& link = r.same_run_times_as; !link.empty() && link.rfind(own, 0) != 0) {
                const std::string other_round = link.substr(0, link.find(':') + 1);
                const auto loaded = scored_keys.find(other_round);
                // The earlier round's row stands for both (rounds load oldest first, so it is already a point).
                if (loaded != scored_keys.end() && other_round < own) {
                    const std::string rest = link.substr(other_round.size());
                    const auto slash = rest.rfind('/');
                    const auto first = rest.find('/');
                    if (slash != std::string::npos && first != slash &&
                        loaded->second.count(canonical_key(rest.substr(0, first), rest.substr(first + 1, slash - first - 1),
                                                           rest.substr(slash + 1)))) {
                        skip(round, r, "the same runs as " + link + " (loaded from that round)");
                        continue;
                    }
                }
            }
            if (std::find(families.begin(), families.end(), r.accelerator_family) == families.end()) {
                const bool in_catalog = std::any_of(gpu_catalog().begin(), gpu_catalog().end(),
                                                    [&](const GpuSpec& g) { return g.name == r.accelerator_family; });
                skip(round, r, in_catalog ? "GPU " + r.accelerator_family + " not among the families asked for"
                                          : "GPU " + r.accelerator_family + " is not in the GPU catalog (models/data/gpus.yaml)");
                continue;
            }
            if (!r.global_batch_size) {
                skip(round, r, "no global batch size");
                continue;
            }
            const Workload& workload = find_workload(r.benchmark);
            System system = resolve_system(r.accelerator_family);   // the GPU's preset system, default fabric
            system.name = r.system;
            const auto found_facts = submissions.find(r.key());
            const SubmissionFacts* facts = found_facts == submissions.end() ? nullptr : &found_facts->second;
            CalibrationPoint p;
            p.result = r;
            p.result.round = round;
            try {
                const ParallelismConfig layout = layout_of(workload, system, r, r.gradient_accumulation_steps.value_or(1),
                                                           facts && facts->layout ? &*facts->layout : nullptr);
                p.scenario = prepare_with_layout(workload, system, r.n_accelerators, layout);
            } catch (const InputError& e) {
                // The result's row is what cannot be laid out (a user's CSV may hold any GPU count and batch):
                // say so at its line, not at a workload file's key the row never named.
                if (!strict) {
                    skip(round, r, "no layout runs it: " + e.message());
                    continue;
                }
                throw InputError(r.key() + " at " + std::to_string(r.n_accelerators) + " GPUs: " + e.message(),
                                 SourceLocation{f.results.string(), r.csv_line, 0});
            }
            if (facts) p.scenario.set_eval_schedule(with_submission_evaluation(p.scenario.eval_schedule, *facts));
            p.fit_scenario = p.scenario;
            std::optional<double> samples = r.samples_to_converge_mean;
            if (!samples && r.epochs_to_converge_mean && workload.train_samples)
                samples = *r.epochs_to_converge_mean * static_cast<double>(*workload.train_samples);
            if (samples && *samples > 0) {
                p.fit_scenario.samples_mean = p.fit_scenario.samples_p10 = p.fit_scenario.samples_p90 = *samples;
                p.fit_scenario.samples_from_rcps = false;
                p.published_convergence = true;
            }
            p.published_minutes = *r.ttt_minutes_official_scaled;
            const bool epochs = workload.convergence_unit == ConvergenceUnit::epochs;   // the runs log epochs
            if (const auto found = runs.find(r.key()); found != runs.end() && (!epochs || workload.train_samples))
                for (const MlperfRun* run : found->second)
                    p.runs.push_back({*run->convergence_point *
                                          (epochs ? static_cast<double>(*workload.train_samples) : 1.0),
                                      *run->minutes * 60.0});
            if (const auto found = logged_steps.find(r.key()); found != logged_steps.end())
                p.measured_step_seconds = median(found->second);
            if (const auto found = logged_evals.find(r.key()); found != logged_evals.end() && workload.eval_on_the_clock)
                p.measured_eval_seconds = median(found->second);
            if (const auto found = logged_excesses.find(r.key()); found != logged_excesses.end())
                p.measured_excess_seconds = median(found->second);
            if (const auto found = logged_scorings.find(r.key()); found != logged_scorings.end())
                p.measured_final_scoring_seconds = median(found->second);
            points.push_back(std::move(p));
        }
    }
    // Within a round, by GPU family in the order of `families` (then file order), as fits and reports list them.
    auto family_index = [&](const CalibrationPoint& p) {
        return std::find(families.begin(), families.end(), p.result.accelerator_family) - families.begin();
    };
    std::stable_sort(points.begin(), points.end(), [&](const CalibrationPoint& a, const CalibrationPoint& b) {
        const auto round_of = [&](const CalibrationPoint& p) {
            return std::find_if(files.begin(), files.end(), [&](const RoundFiles& f) { return f.name == p.result.round; }) -
                   files.begin();
        };
        return std::pair{round_of(a), family_index(a)} < std::pair{round_of(b), family_index(b)};
    });
    return points;
}

std::string format_skipped_table(const std::vector<SkippedResult>& skipped) {
    std::string out = fmt::format("{:<6} {:<52} {:<14} {:>5}  {}\n", "round", "result", "gpu", "gpus", "why not used");
    for (const SkippedResult& s : skipped)
        fmt::format_to(std::back_inserter(out), "{:<6} {:<52.52} {:<14.14} {:>5}  {}\n", s.round, s.key, s.gpu, s.gpus,
                       s.reason);
    return out;
}

ComputeProfile point_profile(const CalibrationPoint& point, const ProfileSet& profiles) {
    ComputeProfile profile = profiles.find(*point.scenario.workload, *point.scenario.gpu);
    profile.operator_stack_speed *= speed_of(speed_keys(point), profiles.stack_speeds);
    return profile;
}

PointError evaluate_point(const CalibrationPoint& point, const ProfileSet& profiles) {
    const Prediction prediction = evaluate(point.scenario, point_profile(point, profiles));
    PointError e;
    e.workload = point.scenario.workload->name;
    e.gpu = point.scenario.gpu->name;
    e.submitter = point.result.submitter;
    e.system = point.result.system;
    e.gpus = point.scenario.gpus;
    e.global_batch = point.scenario.layout.global_batch;
    e.published_minutes = point.published_minutes;
    e.predicted_minutes = prediction.ttt_minutes;
    e.predicted_ms = prediction.step_ms;
    if (point.measured_step_seconds) e.published_ms = *point.measured_step_seconds * 1e3;
    e.step_time_only = point.published_minutes <= 0;
    TTSIM_ASSERT(!e.step_time_only || point.measured_step_seconds, "calibration point without a measurement");
    e.error = e.step_time_only ? e.predicted_ms / e.published_ms - 1.0 : prediction.ttt_minutes / point.published_minutes - 1.0;
    return e;
}

double mean_absolute_percentage_error(const std::vector<PointError>& errors) {
    if (errors.empty()) return 0.0;
    double sum = 0;
    for (const auto& e : errors) sum += std::abs(e.error);
    return 100.0 * sum / errors.size();
}

namespace {
// convergence-lag's factors (ConvergenceLags): the geometric mean of published / RCP samples over the results that
// publish their convergence, per workload.
ConvergenceLags convergence_lags(const std::vector<CalibrationPoint>& points) {
    std::map<std::string, std::pair<double, int>> sums;   // per workload: sum of log ratios, count
    for (const CalibrationPoint& p : points) {
        if (!p.published_convergence || !p.scenario.samples_from_rcps || !(p.scenario.samples_mean > 0)) continue;
        auto& [sum, n] = sums[p.scenario.workload->name];
        sum += std::log(p.fit_scenario.samples_mean / p.scenario.samples_mean);
        ++n;
    }
    ConvergenceLags lags;
    for (const auto& [workload, sum_n] : sums) lags[workload] = std::exp(sum_n.first / sum_n.second);
    return lags;
}
}  // namespace

void apply_convergence_lags(ProfileSet& profiles, const ConvergenceLags& lags) {
    if (lags.empty()) return;
    ProfileSet lagged = profiles;
    for (auto [key, profile] : profiles.all()) {
        auto found = lags.find(profile.workload);
        if (found == lags.end()) continue;
        profile.convergence_factor = found->second;
        lagged.add(std::move(profile));
    }
    profiles = std::move(lagged);
}

CalibrationReport calibrate_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                   const SharedFit& shared, const ProfileSet* held) {
    const ConvergenceLags lags = shared.convergence_lag ? convergence_lags(points) : ConvergenceLags{};
    CalibrationReport report = shared.operator_model ? calibrate_operator_points(points, description, shared, lags, held)
                                                     : calibrate_lumped_points(points, description, shared, lags);
    if (lags.empty()) return report;
    std::string described;
    for (const auto& [workload, lag] : lags)
        described += (described.empty() ? "" : ", ") + workload + " " +
                     units::format_number(lag, 4);
    report.data_description += "; convergence lag (published / RCP samples of the fit results): " + described;
    return report;
}

CalibrationReport calibrate(const CalibrationOptions& options, std::vector<SkippedResult>* skipped,
                            std::vector<CalibrationPoint>* held_out) {
    std::vector<CalibrationPoint> all = load_calibration_points(options, skipped);
    std::vector<CalibrationPoint> used;
    for (auto& p : all) {
        if (!options.max_gpus || p.scenario.gpus <= *options.max_gpus)
            used.push_back(std::move(p));
        else if (held_out)
            held_out->push_back(std::move(p));
    }
    const std::string families = options.families.empty() ? std::string("every GPU in the catalog")
                                                          : fmt::format("{}", fmt::join(options.families, ", "));
    // Nothing to fit is the data's or the filter's doing (a header-only CSV reached the operator fit's assert).
    if (used.empty() && all.empty())
        throw InputError("no scored result of " + families + " with a global batch to fit",
                         SourceLocation{results_path(options).string(), 0, 0});
    if (used.empty())
        throw InputError("no result with at most " + std::to_string(*options.max_gpus) +
                             (*options.max_gpus == 1 ? " GPU" : " GPUs") + " to fit (" + std::to_string(all.size()) +
                             " results have more)",
                         Field::max_gpus);
    // Paths under the source tree are written relative to it, so the committed header does not name this machine.
    std::string data_name;
    const std::string root = std::string(TTSIM_SOURCE_DIR) + "/";
    for (const RoundFiles& f : round_files(options)) {
        std::string name = f.results.string();
        if (name.rfind(root, 0) == 0) name = name.substr(root.size());
        data_name += (data_name.empty() ? "" : ", ") + name;
    }
    std::string description = "data: " + data_name +
                              " (MLPerf Training, each distinct scored result once; target "
                              "ttt_minutes_official_scaled)\nfilter: accelerator families " + families +
                              (options.max_gpus ? "; results with <= " + std::to_string(*options.max_gpus) + " GPUs"
                                                : std::string("; all GPU counts")) +
                              "\nresults used: " + std::to_string(used.size()) +
                              "\nmodel: collectives simulated on the preset topology of each result's GPU "
                              "(CollectiveSimulator, auto algorithm, SHARP for the submitters that reduce in the "
                              "switches, across NVLink domains); the fit uses each result's published convergence "
                              "(samples_to_converge_mean, RetinaNet epochs x train samples), predictions use the RCPs" +
                              (options.shared.run_logs
                                   ? std::string("; results whose runs converged at different points are fitted run by "
                                                 "run instead (target: each run's minutes in its round's runs CSV at its own "
                                                 "convergence point)")
                                   : std::string()) +
                              "; fit switches: " + options.shared.describe();
    return calibrate_points(used, description, options.shared);
}

}  // namespace ttsim

namespace ttsim {
std::string format_point_table(const std::vector<PointError>& points) {
    std::string out = fmt::format("{:<17} {:<9} {:>6} {:>6} {:<24} {:>10} {:>10} {:>8}\n", "workload", "gpu", "gpus",
                                  "batch", "submitter/system", "published", "predicted", "error%");
    for (const auto& p : points) {
        const std::string who = (p.submitter + "/" + p.system).substr(0, 24);
        fmt::format_to(std::back_inserter(out), "{:<17} {:<9} {:>6} {:>6} {:<24} {:>10.4f} {:>10.4f} {:>+8.2f}\n",
                       p.workload, p.gpu, p.gpus, p.global_batch, who, p.published_minutes, p.predicted_minutes,
                       100.0 * p.error);
    }
    return out;
}
}  // namespace ttsim
