// Handlers of the planning scenario kinds: `scaling-study` (the default scenario), `sweep` and `plan`.
#include "tools/cli/scenario_sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>

#include <tbb/info.h>

#include "models/planning/plan_evaluator.hpp"
#include "models/planning/plan_format.hpp"
#include "models/planning/prediction_band.hpp"
#include "models/planning/published_results.hpp"
#include "models/planning/results_format.hpp"
#include "models/trace/iteration_timeline.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/output_dir.hpp"
#include "tools/cli/exit_codes.hpp"
#include "tools/cli/interrupt.hpp"
#include "tools/cli/plots.hpp"
#include "tools/cli/scenario_compute.hpp"
#include "tools/cli/scenario_kinds.hpp"
#include "tools/cli/scenario_profiles.hpp"
#include "tools/report/results_report.hpp"

namespace ttsim::cli {

namespace {

// GPUs drawn in a trace: one node is enough, every data-parallel rank has the same timeline in the model.
constexpr int kTracedGpus = 8;
// Default traced point: the largest count <= this, multi-node enough to show gradient communication.
constexpr int kDefaultTraceGpus = 64;

int run_sweep_kind(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    // Everything is read and validated before any point runs.
    planning::SweepScenario scenario = planning::read_sweep_scenario(root);
    const std::vector<planning::SweepPoint> points =
        planning::expand_sweep(scenario.spec, planning::shipped_published_counts);
    const ScenarioProfiles chosen =
        read_scenario_profiles(root, scenario.model, planning::catalog_gpus(scenario.spec.systems, scenario.spec.variants));
    const ProfileSet& profiles = chosen.profiles;
    if (context.format) scenario.format = *context.format;
    // Ctrl-C: points not yet started are skipped; the finished ones are written below (interrupt.hpp). One that
    // came while the file was read stops here, before any output exists.
    const InterruptGuard interrupt_guard;
    if (interrupted()) return report_interrupted_before_start();
    std::optional<OutputDir> output;
    if (context.out_dir) output.emplace(*context.out_dir);   // checked before the run, created after it
    scenario.options.threads = context.threads;
    scenario.options.progress = make_progress_bar(scenario.name);
    scenario.options.cancelled = [] { return interrupted(); };
    scenario.options.published_profiles = &chosen.before_like;
    const ComputedSweep computed = compute_sweep(points, profiles, scenario.options, context, out);
    if (!computed.result) return computed.exit_code;   // an MPI rank other than 0, or a --shard run: done
    planning::SweepResult result = *computed.result;
    // What `like:` did, on every point it applies to (a footnote in the table, a note in CSV and JSON).
    for (planning::PointResult& p : result.points)
        if (const auto notes = chosen.notes.find(resolve_system(p.point.base_system).catalog_gpu->name);
            notes != chosen.notes.end())
            p.notes.insert(p.notes.end(), notes->second.begin(), notes->second.end());

    const std::string fabric = planning::fabric_choice_note(scenario.spec.routing, scenario.spec.sharp);
    std::string title = scenario.name + " (" + scenario.kind + ", " + std::to_string(points.size()) + (points.size() == 1 ? " point" : " points") +
                        (fabric.empty() ? "" : ", " + fabric) + ")";
    if (result.interrupted)
        title += "\ninterrupted: " + std::to_string(result.points.size()) + " of " +
                 std::to_string(result.points_requested) + " points finished; only those are shown";
    if (output) {
        const std::string results_json = planning::format_sweep_json(scenario.kind, scenario.name, result);
        output->write("results.csv", planning::format_sweep_csv(result));
        output->write("results.json", results_json);
        std::vector<std::string> images;
        if (!result.interrupted) {
            write_point_trace(result, scenario.trace, profiles, *output);
            if (scenario.plots) images = write_sweep_plots(result, output->create());
        }
        output->write("report.html",
                      ::ttsim::report::results_page(results_json, ::ttsim::report::scenario_command(context.file), images));
        output->keep();
    }
    if (scenario.format == "csv")
        out << planning::format_sweep_csv(result);
    else if (scenario.format == "json")
        out << planning::format_sweep_json(scenario.kind, scenario.name, result);
    else
        out << planning::format_sweep_table(title, result);
    if (!result.interrupted) return sweep_exit_code(result);
    out.flush();
    return report_interrupted(result.points.size(), result.points_requested, "points",
                              context.out_dir ? "results.csv and results.json in " + *context.out_dir +
                                                    " hold only those (no trace or plots)"
                                              : "only those are printed");
}

}  // namespace

int worker_threads(const ArgParser& args) {
    const int requested = static_cast<int>(args.get_int("threads", 0, 1024));
    const int available = tbb::info::default_concurrency();
    if (requested <= available) return requested;
    std::fprintf(stderr, "ttsim: note: --threads %d is more than the %d hardware threads; using %d\n", requested,
                 available, available);
    return available;
}

planning::PlanEvaluator with_notes(planning::PlanEvaluator evaluate, const std::vector<std::string>& notes) {
    if (notes.empty()) return evaluate;
    return [evaluate = std::move(evaluate), notes](const planning::PlanCandidate& c) {
        planning::PlanEvaluation e = evaluate(c);
        e.warnings.insert(e.warnings.end(), notes.begin(), notes.end());
        return e;
    };
}

std::string write_point_trace(const planning::SweepResult& result, const planning::TraceChoice& choice,
                              const ProfileSet& profiles, OutputDir& output) {
    // The series: the first matching the chosen workload and system.
    const planning::SeriesSummary* series = nullptr;
    for (const auto& s : result.series) {
        const auto& first = result.points[s.points.front()].point;
        if (choice.workload && first.workload != *choice.workload) continue;
        if (choice.system && first.system != *choice.system) continue;
        series = &s;
        break;
    }
    if (!series) return {};
    const planning::PointResult* chosen = nullptr;
    for (std::size_t i : series->points) {
        const auto& r = result.points[i];
        if (!r.outcome.ok) continue;
        if (choice.gpus) {
            if (r.point.gpus == *choice.gpus) chosen = &r;
        } else if (!chosen || r.point.gpus <= kDefaultTraceGpus) {
            chosen = &r;
        }
    }
    if (!chosen) {
        if (choice.gpus)
            throw InputError("trace: no successful point with " + std::to_string(*choice.gpus) + " GPUs in series " +
                                 series->label, {}, "trace.gpus");
        return {};
    }
    const planning::SweepPoint& point = chosen->point;
    // The batch the point ran at; per rank, the rule itself, so a searched point draws the layout it chose.
    const bool per_rank = point.batch.rule == planning::BatchRule::per_rank;
    const std::optional<int> batch = point.batch.rule == planning::BatchRule::published || per_rank
                                         ? std::nullopt
                                         : std::optional<int>(chosen->outcome.prediction.global_batch);
    const std::optional<int> samples_per_rank = per_rank ? std::optional<int>(point.batch.value) : std::nullopt;
    const planning::PreparedPoint prepared = planning::prepare_point(point, profiles, batch, samples_per_rank);
    const std::string description = point.workload + " on " + std::to_string(point.gpus) + " GPUs of " + point.system +
                                    (series->label != point.system ? " (" + series->label + ")" : "") +
                                    (prepared.scenario.workload->eval_on_the_clock
                                         ? ", one optimizer step, then one evaluation apart"
                                         : ", one optimizer step");
    write_iteration_trace(prepared.scenario, prepared.profile, description, output);
    return description;
}

void write_iteration_trace(const PreparedScenario& scenario, const ComputeProfile& profile,
                           const std::string& description, OutputDir& output) {
    const trace::Trace t = trace::iteration_trace(scenario, profile, std::min(scenario.gpus, kTracedGpus), description);
    output.write("trace.json", trace::format_trace_json(t));
}

int run_scaling_study_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    return run_sweep_kind(root, context, out);
}

int run_sweep_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    return run_sweep_kind(root, context, out);
}

int run_plan_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    planning::PlanScenario scenario = planning::read_plan_scenario(root);
    const ScenarioProfiles chosen =
        read_scenario_profiles(root, scenario.model, planning::catalog_gpus(scenario.query.systems, scenario.query.variants));
    const ProfileSet& profiles = chosen.profiles;
    if (context.format) scenario.format = *context.format;
    const InterruptGuard interrupt_guard;
    if (interrupted()) return report_interrupted_before_start();
    std::optional<OutputDir> output;
    if (context.out_dir) output.emplace(*context.out_dir);
    scenario.query.threads = context.threads;
    scenario.query.cancelled = [] { return interrupted(); };
    // The band's model term (prediction_band.hpp): the measured errors where they describe these profiles.
    scenario.query.model_errors = planning::model_errors_for(scenario.model == ComputeModel::lumped,
                                                             root.optional("profiles") ? chosen.source : "",
                                                             scenario.query.model_error_not_quoted);
    scenario.query.stack_named = root.optional("like").has_value();
    planning::add_published_counts(scenario.query, scenario.workload);
    const std::optional<planning::PlanAnswer> computed = compute_plan(
        scenario.query,
        with_plan_progress(with_notes(planning::make_prediction_evaluator(scenario.workload, profiles, scenario.energy,
                                                                          scenario.cost, scenario.query),
                                      all_notes(chosen.notes)),
                           scenario.query));
    if (!computed) return kExitAnswered;   // an MPI rank other than 0: rank 0 writes
    const planning::PlanAnswer& answer = *computed;
    planning::PlanReportContext report{scenario.workload, &scenario.query, &scenario.cost, &scenario.energy,
                                       scenario.model == ComputeModel::operator_level};
    report.explain = context.explain;
    return print_plan(scenario.name, ::ttsim::report::scenario_command(context.file), scenario.format, report, answer,
                      out, output);
}

int print_plan(const std::string& name, const std::string& command, const std::string& format,
               const planning::PlanReportContext& report, const planning::PlanAnswer& answer, std::ostream& out,
               std::optional<OutputDir>& output) {
    if (output) {
        const std::string results_json = planning::format_plan_json(name, report, answer);
        output->write("results.csv", planning::format_plan_csv(report, answer));
        output->write("results.json", results_json);
        output->write("report.html", ::ttsim::report::results_page(results_json, command));
        output->keep();
    }
    if (format == "csv")
        out << planning::format_plan_csv(report, answer);
    else if (format == "json")
        out << planning::format_plan_json(name, report, answer);
    else
        out << planning::format_plan_table(report, answer);
    return finish_plan(answer, out, output ? std::optional<std::string>(output->path()) : std::nullopt);
}

planning::PlanEvaluator with_plan_progress(planning::PlanEvaluator evaluate, const planning::PlanQuery& query) {
    if (!isatty(STDERR_FILENO)) return evaluate;
    const std::size_t total = query.systems.size() * query.gpu_counts.size();
    auto bar = std::make_shared<ProgressBar>("plan", "configurations");
    auto done = std::make_shared<std::atomic<std::size_t>>(0);
    return [evaluate = std::move(evaluate), bar, done, total](const planning::PlanCandidate& candidate) {
        planning::PlanEvaluation evaluation = evaluate(candidate);
        bar->update(std::min(++*done, total), total);   // evaluator calls come from worker threads
        return evaluation;
    };
}

int sweep_exit_code(const planning::SweepResult& result) {
    for (const planning::PointResult& r : result.points)
        if (r.outcome.ok) return kExitAnswered;
    // Every point failed (or there were none): the table says why, but a script must not take it for results.
    std::fprintf(stderr, "ttsim: no point of the sweep could be predicted (see the errors in the report)\n");
    return kExitNothingFeasible;
}

int finish_plan(const planning::PlanAnswer& answer, std::ostream& out, const std::optional<std::string>& out_dir) {
    if (!answer.interrupted) {
        if (answer.best) return kExitAnswered;
        // The report names the closest configurations; the exit code lets a script tell "none" from an answer.
        out.flush();
        std::fprintf(stderr, "ttsim: no configuration searched meets the constraints (exit 1)\n");
        return kExitNothingFeasible;
    }
    out.flush();
    return report_interrupted(answer.grid_evaluated, answer.grid_size, "grid configurations",
                              "the answer covers only what was evaluated" +
                                  (out_dir ? "; results.csv and results.json in " + *out_dir + " list them" : std::string()));
}

}  // namespace ttsim::cli
