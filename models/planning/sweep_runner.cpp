#include "models/planning/sweep_runner.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>
#include <map>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <fmt/format.h>

#include "models/planning/plan_evaluator.hpp"
#include "models/training/layer_graph_cache.hpp"
#include "models/training/predict.hpp"
#include "sim/units.hpp"

namespace ttsim::planning {

namespace {

SweepResult finish_sweep(std::vector<PointResult> results, const SweepOptions& options, std::size_t requested,
                         bool interrupted, const PublishedPredictor& predict_published) {
    SweepResult result = derive_sweep_metrics(std::move(results), options, &shipped_published_index(), predict_published);
    result.points_requested = requested;
    result.interrupted = interrupted;
    return result;
}

}  // namespace

std::vector<std::optional<PointOutcome>> predict_points(const std::vector<SweepPoint>& points,
                                                       const std::vector<std::size_t>& indices,
                                                       const ProfileSet& profiles, const SweepOptions& options) {
    std::vector<std::optional<PointOutcome>> outcomes(indices.size());   // slot k written by the one worker of k
    // The points of one workload at one GPU count search the same splits on every system, GPU variant and fabric
    // (a layer graph does not depend on the GPU), so they are scheduled next to one another and each worker thread
    // keeps the graphs of the group it is in (layer_graph_cache.hpp; a 4 x 12 x 3 sweep builds a third as many),
    // emptied when it moves to another group. A graph is a function of its key alone, so results do not depend on
    // which thread ran which point; every point stays its own task, so a sweep of one group uses every thread.
    std::vector<std::size_t> order(indices.size()), group_of(indices.size());
    {
        std::map<std::pair<std::string, int>, std::size_t> groups;
        for (std::size_t k = 0; k < indices.size(); ++k) {
            const SweepPoint& point = points.at(indices[k]);
            group_of[k] = groups.try_emplace({point.workload, point.gpus}, groups.size()).first->second;
        }
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return group_of[a] < group_of[b]; });
    }
    struct WorkerGraphs {
        std::size_t group = std::numeric_limits<std::size_t>::max();
        LayerGraphCache graphs;
    };
    tbb::enumerable_thread_specific<WorkerGraphs> workers;
    std::atomic<std::size_t> finished{0};
    std::atomic<bool> stop{false};
    auto work = [&] {
        tbb::task_group_context context;
        // Grain 1: points differ widely in cost (rcp_optimal tries many batches), so let TBB balance them.
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, order.size(), 1),
            [&](const auto& range) {
                for (std::size_t i = range.begin(); i != range.end(); ++i) {
                    if (stop.load(std::memory_order_relaxed) || (options.cancelled && options.cancelled())) {
                        stop = true;
                        context.cancel_group_execution();   // ranges not yet started are dropped
                        return;
                    }
                    const std::size_t k = order[i];
                    // The call owns its cache while it runs: a point this thread steals while waiting inside it
                    // (the failure simulation runs its trials in parallel) finds the slot empty and starts its own.
                    WorkerGraphs& slot = workers.local();
                    LayerGraphCache graphs = slot.group == group_of[k] ? std::move(slot.graphs) : LayerGraphCache{};
                    slot.group = std::numeric_limits<std::size_t>::max();
                    outcomes[k] = predict_point(points.at(indices[k]), profiles, &graphs);
                    workers.local() = WorkerGraphs{group_of[k], std::move(graphs)};
                    const std::size_t count = ++finished;
                    if (options.progress) options.progress(count, indices.size());
                }
            },
            context);
    };
    if (options.threads > 0) {
        tbb::task_arena arena(options.threads);
        arena.execute(work);
    } else {
        work();
    }
    return outcomes;
}

SweepResult assemble_sweep(const std::vector<SweepPoint>& points, std::vector<std::optional<PointOutcome>> outcomes,
                           const ProfileSet& profiles, const SweepOptions& options) {
    // The finished points, in sweep order (all of them unless interrupted).
    std::vector<PointResult> kept;
    kept.reserve(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (!outcomes.at(i)) continue;
        PointResult r;
        r.point = points[i];
        r.outcome = std::move(*outcomes[i]);
        kept.push_back(std::move(r));
    }
    const bool interrupted = kept.size() < points.size();
    return finish_sweep(std::move(kept), options, points.size(), interrupted,
                        calibration_predictor(options.published_profiles ? *options.published_profiles : profiles));
}

SweepResult run_sweep(const std::vector<SweepPoint>& points, const ProfileSet& profiles, const SweepOptions& options) {
    std::vector<std::size_t> all(points.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return assemble_sweep(points, predict_points(points, all, profiles, options), profiles, options);
}

namespace {

// Why a point scales better than linearly from `base` (the reference, or N/2): said in a note, never silently.
// Time-to-train efficiency above 1 comes from the per-GPU batch growing with N (each GPU runs nearer its peak
// and the fixed per-step costs are spread over more samples), or from fewer samples to converge.
std::string superlinear_note(const std::string& what, double value, const PointResult& base, const PointResult& r) {
    const Prediction& b = base.outcome.prediction;
    const Prediction& p = r.outcome.prediction;
    const double base_per_gpu = static_cast<double>(b.global_batch) / base.point.gpus;
    const double per_gpu = static_cast<double>(p.global_batch) / r.point.gpus;
    std::string note = "superlinear: " + what + " " + fmt::format("{:.4f}", value) + " (above 1) from " +
                       std::to_string(base.point.gpus) + " to " + std::to_string(r.point.gpus) + " GPUs: ";
    if (per_gpu > base_per_gpu)
        return note + "the per-GPU batch grew from " + units::format_number(base_per_gpu, 4) + " to " +
               units::format_number(per_gpu, 4) + " samples, so each GPU is used more efficiently";
    if (p.samples_to_converge < b.samples_to_converge)
        return note + "fewer samples to converge (" + units::format_number(b.samples_to_converge, 4) + " -> " +
               units::format_number(p.samples_to_converge, 4) + ")";
    return note + "the per-GPU batch did not grow (" + units::format_number(base_per_gpu, 4) + " -> " +
           units::format_number(per_gpu, 4) + " samples); the step time fell more than the GPU count grew";
}

}  // namespace

SweepResult derive_sweep_metrics(std::vector<PointResult> points, const SweepOptions& options,
                                 const PublishedIndex* published, const PublishedPredictor& predict_published) {
    SweepResult result;
    result.options = options;
    result.points = std::move(points);
    result.points_requested = result.points.size();

    // Series, in order of first appearance; points inside a series are already ascending in GPU count.
    std::map<std::string, std::size_t> series_of_key;
    for (std::size_t i = 0; i < result.points.size(); ++i) {
        const SweepPoint& p = result.points[i].point;
        auto [it, inserted] = series_of_key.emplace(p.series_key(), result.series.size());
        if (inserted) {
            SeriesSummary s;
            s.key = p.series_key();
            s.workload = p.workload;
            s.label = p.series_label();
            result.series.push_back(std::move(s));
        }
        result.series[it->second].points.push_back(i);
    }

    for (SeriesSummary& series : result.series) {
        std::vector<ScalingSample> samples;
        std::vector<std::size_t> ok_points;
        std::map<int, std::size_t> point_of_gpus;
        for (std::size_t i : series.points) {
            const PointResult& r = result.points[i];
            if (!r.outcome.ok) continue;
            samples.push_back({r.point.gpus, r.outcome.prediction.ttt_minutes});
            ok_points.push_back(i);
            point_of_gpus[r.point.gpus] = i;
        }
        series.reference_gpus = reference_gpus(samples, options.reference_gpus);
        if (!series.reference_gpus) continue;
        if (options.reference_gpus && *series.reference_gpus != *options.reference_gpus)
            series.requested_reference_gpus = options.reference_gpus;
        const auto metrics = scaling_metrics(samples, *series.reference_gpus);
        const PointResult& reference = result.points[point_of_gpus.at(*series.reference_gpus)];
        for (std::size_t k = 0; k < ok_points.size(); ++k) {
            PointResult& r = result.points[ok_points[k]];
            r.metrics = metrics[k];
            r.reference_gpus = *series.reference_gpus;
            // Exactly 1 is the reference itself; anything above is superlinear and gets its reason.
            if (r.point.gpus != reference.point.gpus && r.metrics.efficiency > 1.0)
                r.notes.push_back(superlinear_note("time-to-train efficiency", r.metrics.efficiency, reference, r));
            if (r.metrics.marginal_doubling_efficiency && *r.metrics.marginal_doubling_efficiency > 1.0)
                r.notes.push_back(superlinear_note("marginal doubling efficiency", *r.metrics.marginal_doubling_efficiency,
                                                   result.points[point_of_gpus.at(r.point.gpus / 2)], r));
        }
        // Break-even is judged among the series' Pareto points of (time, GPU-hours) only (scaling_metrics.hpp).
        std::vector<ParetoCandidate> front_input;
        for (std::size_t i : ok_points)
            front_input.push_back({result.points[i].outcome.prediction.ttt_minutes, result.points[i].outcome.prediction.gpu_hours});
        for (ScalingSample& sample : samples) sample.pareto = false;
        for (std::size_t k : pareto_front(front_input)) samples[k].pareto = true;
        series.break_even = break_even(samples, *series.reference_gpus, options.break_even_threshold);
    }

    // Per point: published comparison, energy, cost.
    for (PointResult& r : result.points) {
        if (!r.outcome.ok) continue;
        const Prediction& p = r.outcome.prediction;
        if (published && !r.point.variant_gpu && r.point.network.is_default() &&
            r.point.batch.rule == BatchRule::published) {
            r.published = published->find(r.point.workload, r.outcome.catalog_gpu, r.point.gpus);
            if (r.published) {
                r.comparison = compare_with_published(*r.published, r.outcome.catalog_gpu, predict_published);
                const std::vector<int> batches = r.published->global_batches();
                if (std::find(batches.begin(), batches.end(), p.global_batch) == batches.end()) {
                    std::string list;
                    for (int b : batches) list += (list.empty() ? "" : "/") + std::to_string(b);
                    r.notes.push_back("published v4.1 batch " + list + " (this row: " + std::to_string(p.global_batch) +
                                      "); the error compares ttsim at " + list + " with the published score");
                }
            }
        }
        r.energy = energy_of(run_profile_of(r.point, r.outcome, options.energy), options.energy);
        r.price_per_gpu_hour = options.cost.price_of(r.point.system, r.point.base_system);
        // Billed in whole allocation units (cost_energy.hpp).
        r.rented_gpu_hours = rented_gpu_hours(point_system(r.point), r.point.gpus, p.ttt_minutes);
        r.cost = r.rented_gpu_hours * r.price_per_gpu_hour;
    }

    // Pareto fronts of (TTT, GPU-hours) and (TTT, cost) per workload, over all its ok points.
    std::map<std::string, std::vector<std::size_t>> by_workload;
    for (std::size_t i = 0; i < result.points.size(); ++i)
        if (result.points[i].outcome.ok) by_workload[result.points[i].point.workload].push_back(i);
    for (const auto& [workload, indices] : by_workload) {
        std::vector<ParetoCandidate> by_hours, by_cost;
        for (std::size_t i : indices) {
            const PointResult& r = result.points[i];
            by_hours.push_back({r.outcome.prediction.ttt_minutes, r.outcome.prediction.gpu_hours});
            by_cost.push_back({r.outcome.prediction.ttt_minutes, r.cost});
        }
        for (std::size_t k : pareto_front(by_hours)) result.points[indices[k]].pareto = true;
        for (std::size_t k : pareto_front(by_cost)) result.points[indices[k]].pareto_cost = true;
    }

    // How many GPUs are worth it, per series (scaling_metrics.hpp), once the points know what they bill.
    for (SeriesSummary& series : result.series) {
        std::vector<ScalingSample> samples;
        for (std::size_t i : series.points) {
            const PointResult& r = result.points[i];
            if (!r.outcome.ok) continue;
            const Prediction& p = r.outcome.prediction;
            ScalingSample s{r.point.gpus, p.ttt_minutes};
            s.ttt_p10_minutes = p.ttt_p10_minutes;
            s.ttt_p90_minutes = p.ttt_p90_minutes;
            s.rented_gpu_hours = r.rented_gpu_hours;
            samples.push_back(s);
        }
        series.answer = scaling_answer(samples, options.break_even_threshold, options.deadline_minutes);
    }
    return result;
}

}  // namespace ttsim::planning
