// Runs a sweep: every point predicted in parallel (TBB, in a task_arena of the requested width), results kept in
// the points' order, then per-series scaling metrics and break-even, the Pareto front per workload, published
// v4.1 comparisons, energy and cost. Every point is computed independently of thread count and scheduling, so
// results are identical with 1 or N threads.
//
// Cancellation: SweepOptions::cancelled is polled before each point (the caller decides what cancels, e.g. a
// SIGINT flag in tools/cli; nothing here reads global state). Once it returns true, points not yet started are
// skipped and the TBB loop is cancelled; points already running finish. The result then holds only the
// finished points, in sweep order, with `interrupted` set and `points_requested` the size of the whole sweep.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/compute/compute_profile.hpp"
#include "models/planning/cost_energy.hpp"
#include "models/planning/point_prediction.hpp"
#include "models/planning/published_results.hpp"
#include "models/planning/scaling_metrics.hpp"
#include "models/planning/sweep_spec.hpp"

namespace ttsim::planning {

struct SweepOptions {
    std::optional<int> reference_gpus;       // default: the smallest count of each series
    double break_even_threshold = 0.5;
    BreakEvenRule break_even_rule = BreakEvenRule::knee;   // what the reports lead with (scaling_metrics.hpp)
    std::optional<double> deadline_minutes;  // the cost-optimal count's deadline (`metrics: {deadline: 10min}`)
    EnergyParameters energy;
    CostParameters cost;
    int threads = 0;                         // 0 = all cores
    // Called after each finished point with (finished, total), from worker threads: must be thread-safe.
    std::function<void(std::size_t, std::size_t)> progress;
    // Polled before each point, from worker threads: must be thread-safe and cheap. Empty = never cancelled.
    std::function<bool()> cancelled;
    // What the v4.1 comparison (PointResult::comparison) prices the published results with, each at its own
    // stack's offset as `ttsim validate` does; null: the sweep's set. A scenario's `like:` set is the sweep's, so
    // the scenario passes the set before it here.
    const ProfileSet* published_profiles = nullptr;
};

struct PointResult {
    SweepPoint point;
    PointOutcome outcome;
    // Filled for ok points:
    int reference_gpus = 0;
    ScalingMetrics metrics;
    bool pareto = false;                     // on its workload's (TTT, GPU-hours) Pareto front
    bool pareto_cost = false;                // on its workload's (TTT, cost) Pareto front (prices differ by system)
    std::optional<PublishedTime> published;  // v4.1 median at this count (catalog GPU, default network and batch)
    // The prediction at the published results' own batches and layouts, and its error against their median
    // score (published_results.hpp): what `error` compares, whatever this point's own batch is.
    std::optional<PublishedComparison> comparison;
    std::vector<std::string> notes;          // derived here (superlinear scaling, batch differs from published)
    EnergyBreakdown energy;
    double cost = 0;                         // rented GPU-hours x price, in options.cost.currency
    double rented_gpu_hours = 0;             // whole allocation units x their GPUs x TTT: what the cost bills
    double price_per_gpu_hour = 0;
};

struct SeriesSummary {
    std::string key, workload, label;
    std::vector<std::size_t> points;         // indices into SweepResult::points, ascending GPU count
    std::optional<int> reference_gpus;
    // Set when SweepOptions::reference_gpus was asked for but has no successful point in this series, so the
    // smallest successful count stands in for it (said in every report).
    std::optional<int> requested_reference_gpus;
    std::optional<BreakEven> break_even;     // nullopt: no doubling of the reference in the series to judge
    std::optional<ScalingAnswer> answer;     // knee, cost-optimal and paying doubling; nullopt: no successful point
};

struct SweepResult {
    std::vector<PointResult> points;
    std::vector<SeriesSummary> series;       // in order of first appearance
    SweepOptions options;
    std::size_t points_requested = 0;        // size of the whole sweep (= points.size() unless interrupted)
    bool interrupted = false;                // cancelled: `points` holds only the points that finished
};

// Predicts every point (the expensive part, parallel) and derives the metrics; published comparisons use
// calibration_predictor(profiles).
SweepResult run_sweep(const std::vector<SweepPoint>& points, const ProfileSet& profiles, const SweepOptions& options);

// run_sweep in its two steps, for sweeps computed in pieces (MPI ranks, --shard runs; tools/cli):
// predict_points predicts points[indices[k]] into slot k (nullopt: skipped after cancellation; progress counts
// these indices only); assemble_sweep derives the result from every point's outcome (nullopt: not finished, so
// the result is `interrupted`). Any split of the indices gives the same outcomes, as every thread count does.
std::vector<std::optional<PointOutcome>> predict_points(const std::vector<SweepPoint>& points,
                                                       const std::vector<std::size_t>& indices,
                                                       const ProfileSet& profiles, const SweepOptions& options);
SweepResult assemble_sweep(const std::vector<SweepPoint>& points, std::vector<std::optional<PointOutcome>> outcomes,
                           const ProfileSet& profiles, const SweepOptions& options);

// The derived part alone (series, metrics, Pareto, published, energy, cost), for tests with synthetic outcomes.
// Without `predict_published` points get the published score but no error.
SweepResult derive_sweep_metrics(std::vector<PointResult> points, const SweepOptions& options,
                                 const PublishedIndex* published, const PublishedPredictor& predict_published = {});

}  // namespace ttsim::planning
