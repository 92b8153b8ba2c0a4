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
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration/model_error.hpp"
#include "models/hardware/system.hpp"
#include "models/planning/sweep_spec.hpp"
#include "topologies/topology.hpp"

namespace ttsim::planning {

enum class Objective { gpus, time, cost, gpu_hours, energy };
Objective parse_objective(const std::string& text);   // "gpus", "time", "cost", "gpu-hours", "energy"
const char* to_string(Objective objective);

// Which percentile of the predicted time-to-train a constraint is judged at. A score's convergence varies run to
// run (convergence.hpp), so "meets 3 min" at the median fails about half the time; p90 fails one time in ten.
enum class Confidence { p50, p90 };
Confidence parse_confidence(const std::string& text);   // "p50", "p90"; InputError keyed "confidence"
const char* to_string(Confidence confidence);
// A safety margin "10%" -> 0.10; in [0, 100) %, with its '%' (a bare number other than 0 is ambiguous), else
// InputError keyed "margin".
double parse_margin(const std::string& text);

struct PlanConstraints {
    std::optional<double> deadline_minutes;
    std::optional<double> budget_gpu_hours;
    std::optional<double> budget_money;
    // Every limit is checked against the `confidence` percentile and must be beaten by `margin` (a fraction):
    // time(p) <= deadline x (1 - margin), and likewise GPU-hours and cost at that percentile for budgets.
    Confidence confidence = Confidence::p90;
    double margin = 0;
};

struct PlanCandidate {
    std::string system;
    int gpus = 0;
};

// One evaluated configuration. ttt_minutes, gpu_hours, cost and energy are at the median convergence (p50);
// the p10/p90 times are the band (prediction_band.hpp: the convergence spread, the fit's parameter uncertainty and
// the model error of the candidate's kind of extrapolation). GPU-hours and cost scale with time, so their
// percentiles are the p50 values x time(p) / time(p50) (at_confidence).
struct PlanEvaluation {
    bool ok = false;
    std::string error;
    // gpu_hours: of the GPUs used; cost: of the GPUs rented (whole allocation units, cost_energy.hpp).
    double ttt_minutes = 0, ttt_p10_minutes = 0, ttt_p90_minutes = 0, gpu_hours = 0, cost = 0, energy_kwh = 0;
    int rented_gpus = 0;                 // GPUs of the whole units rented
    std::string allocation;              // what is rented: "2 racks (144 GPUs)"
    std::string layout;                  // the layout it ran (describe_layout), and its global batch
    int global_batch = 0;
    std::vector<std::string> warnings;
    // What the p10/p90 band holds (prediction_band.hpp describe_band) and the kind of extrapolation whose model
    // error it carries (model_error.hpp key_of; "" where none is quoted).
    std::string band, band_kind;
};

// Time-to-train at a percentile, and GPU-hours and cost scaled to it.
struct PercentileValues {
    double ttt_minutes = 0, gpu_hours = 0, cost = 0;
};
PercentileValues at_confidence(const PlanEvaluation& evaluation, Confidence confidence);

using PlanEvaluator = std::function<PlanEvaluation(const PlanCandidate&)>;

// What one system of a plan rents: the unit and its GPUs (System::allocation, allocation_unit_gpus).
struct PlanUnit {
    AllocationUnit unit = AllocationUnit::node;
    int gpus = 8;
};
PlanUnit plan_unit(const System& system);

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
    // GPU memory every candidate keeps free besides the model state (`--memory-reserve`, `memory_reserve:`).
    std::optional<double> memory_reserve_bytes;
    reliability::ReliabilityRequest reliability;   // failures and checkpoints of every candidate's run
    // The requested range as a grid, ascending (plan_gpu_grid(min, max)), or a topology file's one count. Each
    // system searches whole allocation units inside it (plan_counts_for), bisecting boundaries by whole units.
    std::vector<int> gpu_counts;
    // Per system label: GPU counts searched besides the grid, inside its range (add_published_counts: the
    // workload's published counts on the system's GPU family). A time to train need not fall with the GPU count
    // (a default batch that grows, an evaluation schedule), so a published count between grid points can meet a
    // deadline its neighbours miss (RetinaNet: 2,528 GPUs, where the grid has 2,048 and 3,072).
    std::map<std::string, std::vector<int>> published_counts;
    // What every candidate rents (`--allocation`, `allocation:`); nullopt: each system's own unit (system.hpp).
    std::optional<AllocationUnit> allocation;
    // The layout of every candidate (`layout:` in a plan scenario; SweepSpec::layout).
    LayoutRequest layout;
    // A user model (custom_workload.hpp: `--workload FILE`, a plan scenario's `model:`) planned in place of a
    // catalog workload; every candidate searches its fastest layout at the model's global batch (`batch`).
    std::shared_ptr<const Workload> custom_workload;
    // A system's allocation unit under `allocation` (a variant label: its base system's), set by the readers.
    std::function<PlanUnit(const std::string&)> unit_of = [](const std::string&) { return PlanUnit{}; };
    PlanConstraints constraints;
    Objective objective = Objective::gpus;
    bool refine = true;
    int threads = 0;                          // grid evaluation width (0 = all cores)
    // The model errors per kind of extrapolation that each candidate's p10/p90 band carries (prediction_band.hpp);
    // null: the band has no model term, and model_error_not_quoted says why. stack_named: priced at a fitted
    // stack's speed (--like), so not as a stack the fit never saw.
    const ModelErrors* model_errors = nullptr;
    std::string model_error_not_quoted;
    bool stack_named = false;
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
// Time, GPU-hours and cost at `confidence` (the percentile the constraints are judged at); GPUs and energy as is.
double objective_value(const EvaluatedCandidate& c, Objective objective, Confidence confidence);

// The grid candidates of a query, in the order answer_plan_query evaluates and reports them: per system (in
// `systems` order), the GPU counts ascending.
std::vector<PlanCandidate> plan_grid(const PlanQuery& query);

// Evaluates every candidate in parallel (TBB, `threads` wide, 0 = all cores) into its own slot; nullopt for
// those skipped once `cancelled` (polled before each, thread-safe; empty = never) returned true. The grid step
// of answer_plan_query, and what each MPI rank runs on its share of the grid.
std::vector<std::optional<PlanEvaluation>> evaluate_candidates(const std::vector<PlanCandidate>& candidates,
                                                               const PlanEvaluator& evaluate, int threads,
                                                               const std::function<bool()>& cancelled);

// InputError when no constraint is given.
PlanAnswer answer_plan_query(const PlanQuery& query, const PlanEvaluator& evaluate);

// 8, 12, 16, 24, 32, 48, ... up to `max_gpus`: powers of two and 1.5x powers of two, a grid fine enough that
// bisection (whole nodes) only has short gaps to close. Counts below one node are left out except `min_gpus`.
std::vector<int> plan_gpu_grid(int min_gpus, int max_gpus);
// Whole units of `unit_gpus` GPUs in [min_gpus, max_gpus]: the first whole unit from min_gpus up, then units x
// 1, 2, 3, 4, 6, 8, 12, ... (powers of two and 1.5x), and the last whole unit in the range; empty when no whole
// unit fits.
std::vector<int> whole_unit_grid(int min_gpus, int max_gpus, int unit_gpus);
// The counts `system` searches: whole allocation units inside the query's range; on a topology file, its count.
std::vector<int> plan_counts_for(const PlanQuery& query, const std::string& system);
// InputError keyed "max_gpus" when some system fits no whole allocation unit in the range.
void check_plan_range(const PlanQuery& query);

}  // namespace ttsim::planning
