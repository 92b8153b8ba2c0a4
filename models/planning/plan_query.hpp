// Planning queries: which configuration (system, GPU count) meets a deadline or a budget and is best by some
// objective. The search is independent of how a configuration is evaluated (a PlanEvaluator), so it is tested
// on synthetic models and run on ttsim's predictions by plan_evaluator.hpp.
//
// Search: every candidate of the grid (per system: the given GPU counts) is evaluated; then, wherever two
// neighbouring grid counts of a system differ in feasibility, the boundary between them is found by bisection
// over whole nodes (assuming feasibility is monotone in N between the two, true for a deadline when time falls
// with N and for a budget when GPU-hours rise with N); the boundary point joins the candidates. The answer is
// the feasible candidate with the best objective; ties go to fewer GPUs, then less time, then system order.
//
// Cancellation: PlanQuery::cancelled is polled before each evaluation. Once it returns true, grid candidates
// not yet started are skipped and no refinement runs; the answer covers only what was evaluated and has
// `interrupted` set.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/planning/sweep_spec.hpp"
#include "topologies/topology.hpp"

namespace ttsim::planning {

enum class Objective { gpus, time, cost, gpu_hours, energy };
Objective parse_objective(const std::string& text);   // "gpus", "time", "cost", "gpu-hours", "energy"
const char* to_string(Objective objective);

struct PlanConstraints {
    std::optional<double> deadline_minutes;
    std::optional<double> budget_gpu_hours;
    std::optional<double> budget_money;
};

struct PlanCandidate {
    std::string system;
    int gpus = 0;
};

struct PlanEvaluation {
    bool ok = false;
    std::string error;
    double ttt_minutes = 0, gpu_hours = 0, cost = 0, energy_kwh = 0;
    std::vector<std::string> warnings;
};

using PlanEvaluator = std::function<PlanEvaluation(const PlanCandidate&)>;

struct PlanQuery {
    std::vector<std::string> systems;
    // Fabric routing of the systems' topologies (the evaluator predicts on them; reports state it).
    FabricRouting routing = FabricRouting::Adaptive;
    // The fabric every candidate runs on (NIC, oversubscription; a network option's SHARP is `sharp` below), or a
    // YAML topology (then the grid is the file's GPU count).
    NetworkOption network;
    std::optional<std::string> topology_file;
    // Hypothetical GPUs (the sweep's gpu_variants), searched where `systems` names them; the batch rule of every
    // candidate (the sweep's `batch:`).
    std::vector<HardwareVariant> variants;
    BatchChoice batch;
    // SHARP of every candidate (`--sharp`, `sharp:`); nullopt: predict()'s default. "On" candidates within one
    // NVLink domain run without it (SweepPoint::requested_sharp).
    std::optional<bool> sharp;
    std::vector<int> gpu_counts;             // the grid, ascending
    std::function<int(const std::string&)> gpus_per_node = [](const std::string&) { return 8; };
    PlanConstraints constraints;
    Objective objective = Objective::gpus;
    bool refine = true;
    int threads = 0;                          // grid evaluation width (0 = all cores)
    // Polled before each evaluation, from worker threads: thread-safe and cheap. Empty = never cancelled.
    std::function<bool()> cancelled;
};

struct EvaluatedCandidate {
    PlanCandidate candidate;
    PlanEvaluation evaluation;
    bool feasible = false;
};

struct PlanAnswer {
    std::optional<EvaluatedCandidate> best;
    std::vector<EvaluatedCandidate> evaluated;   // grid in (system, count) order, then refinements
    std::size_t grid_size = 0;                    // grid candidates of the query (evaluated or not)
    std::size_t grid_evaluated = 0;               // of those, evaluated (= grid_size unless interrupted)
    bool interrupted = false;                     // cancelled: `evaluated` and `best` cover part of the search
};

bool is_feasible(const PlanEvaluation& evaluation, const PlanConstraints& constraints);
double objective_value(const EvaluatedCandidate& c, Objective objective);

// InputError when no constraint is given.
PlanAnswer answer_plan_query(const PlanQuery& query, const PlanEvaluator& evaluate);

// 8, 12, 16, 24, 32, 48, ... up to `max_gpus`: powers of two and 1.5x powers of two, a grid fine enough that
// bisection (whole nodes) only has short gaps to close. Counts below one node are left out except `min_gpus`.
std::vector<int> plan_gpu_grid(int min_gpus, int max_gpus);

}  // namespace ttsim::planning
