// Time-to-train prediction: the library API the CLI (`ttsim predict`), calibration and the sweep/planning layer
// use.
//
//   TTT [min] = (steps x step time + evaluations x evaluation time (when on the clock) + per-run overhead) / 60
//   steps     = ceil(samples to converge at the global batch / global batch)     (models/convergence)
//   step time = simulate_iteration(): compute + exposed gradient communication + optimizer + fixed costs
//
// predict() is deterministic and thread-safe: it keeps no state between calls (every model it builds is local
// to the call), so concurrent calls from many threads are fine.
// prepare() + evaluate() split predict() into the profile-independent part (layout, collective durations,
// convergence, evaluation counts; the expensive part) and the cheap part that depends on the compute profile,
// so that calibration evaluates its objective thousands of times without recomputing collectives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/compute/compute_profile.hpp"
#include "models/convergence/convergence.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/hardware/system.hpp"
#include "models/reliability/job_reliability.hpp"
#include "models/training/iteration.hpp"
#include "models/training/operator_step.hpp"
#include "models/training/step_collectives.hpp"
#include "models/workloads/workload.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

class LayerGraphCache;

// How the layout is chosen (layout_search.hpp): `automatic` is `fastest` when the profile is an operator profile
// and the workload has a layer graph, else `published` (the lumped model's behaviour, unchanged); `pinned`
// searches only the layouts that match LayoutPins (`--layout tp=4,cp=2`).
enum class LayoutMode { automatic, fastest, published, pinned };
struct LayoutPins {
    std::optional<int> tensor_parallel, context_parallel, micro_batch, gradient_accumulation;
    std::optional<int> pipeline_parallel, virtual_pipeline;   // pp=, vp=
    std::optional<std::string> recompute;                     // recompute=none|full
    std::optional<std::string> schedule;                      // schedule=gpipe|1f1b|interleaved (pipeline_schedule.hpp)
    std::optional<bool> distributed_optimizer;
    // Gradients reduced once backward has ended (true) or bucket by bucket during it (false); unset: as the layout
    // the search starts from (its published recipe: ParallelismConfig::gradient_reduction_after_backward).
    std::optional<bool> reduction_after_backward;
    bool any() const {
        return tensor_parallel || context_parallel || micro_batch || gradient_accumulation || pipeline_parallel ||
               virtual_pipeline || recompute || schedule || distributed_optimizer || reduction_after_backward;
    }
};
struct LayoutRequest {
    LayoutMode mode = LayoutMode::automatic;
    LayoutPins pins;                        // for `pinned`
    // Asked for a search (fastest, or pins), which only the operator model prices; `automatic` decides later.
    bool searches() const { return mode == LayoutMode::fastest || mode == LayoutMode::pinned; }
};

struct PredictionRequest {
    std::string workload;                  // "bert", "llama2_70b_lora", "retinanet", "stable_diffusion" (aliases ok)
    // A user-defined model (custom_workload.hpp) in place of the catalog's `workload`; operator model only.
    std::shared_ptr<const Workload> custom_workload;
    LayoutRequest layout;
    std::string system;                    // "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", or a GPU name
    int gpus = 0;
    std::optional<int> global_batch;       // default: from v4.1 at the nearest scale
    // Samples per data-parallel rank per optimizer step (a sweep's `per_rank` batch rule): the global batch is this
    // times the DP of each layout priced (the published one, or each one searched). Not with global_batch.
    std::optional<int> samples_per_rank;
    std::optional<int> tensor_parallel;
    std::optional<int> context_parallel;
    std::optional<int> gradient_accumulation;   // micro steps; default derived from the published layout
    // SHARP in-network reduction of the gradient all-reduce. Default: on for NVIDIA jobs spanning NVLink domains,
    // as in v4.1. Explicitly on where it cannot run (sharp_unavailable_reason) is an InputError keyed "sharp".
    std::optional<bool> sharp;
    // GPU memory kept free on each GPU besides the model state (System::memory_reserve_bytes), bytes; unset: the
    // 2 GB prior. At least the GPU's memory is an InputError keyed "memory_reserve".
    std::optional<double> memory_reserve_bytes;
    // The fabric the collectives are simulated on (system.hpp FabricChoice): NIC rate, oversubscription, routing,
    // or a YAML topology file; unset fields keep the system's (NDR, non-blocking, adaptive). Oversubscription on a
    // job within one NVLink domain is an InputError keyed "oversubscription".
    FabricChoice fabric;
    // A what-if GPU in place of the system's own (a modified copy of its catalog GPU; the sweep's gpu_variants):
    // same node shape, layout and calibrated profile as the catalog GPU, its own FLOP/s, HBM, NVLink and NIC rates.
    // `gpu_label` names the system in the output (default: the GPU's name).
    std::shared_ptr<const GpuSpec> gpu_override;
    std::string gpu_label;
    bool compute_efficiency_vs_8gpu = true;     // one extra 8-GPU prediction for efficiency_vs_8gpu
    // Failures, checkpoints and restarts over the run (models/reliability/job_reliability.hpp): rates, a pinned
    // checkpoint interval, storage bandwidth, hot spares; unset fields take reliability.yaml's defaults.
    reliability::ReliabilityRequest reliability;
    // Layer graphs shared with other requests of one worker (a sweep's points at one GPU count: layer_graph_cache.hpp);
    // null: each prediction builds its own. Not part of the question: results are the same either way.
    LayerGraphCache* graphs = nullptr;
};

struct Prediction {
    std::string workload, system, gpu;
    int gpus = 0;
    ParallelismConfig layout;
    FabricRouting routing = FabricRouting::Adaptive;   // of the fabric the collectives were simulated on
    std::string fabric;                    // System::fabric_description(): NICs, oversubscription, routing, or file
    std::string comm_topology;             // the topology the collectives were simulated on
    double ttt_minutes = 0, ttt_p10_minutes = 0, ttt_p90_minutes = 0;
    double samples_to_converge = 0;
    // What samples_to_converge multiplies the RCP mean by (ComputeProfile::convergence_factor, convergence-lag);
    // 1 where the convergence is given or no lag was calibrated.
    double convergence_lag = 1.0;
    int global_batch = 0;
    long long steps = 0;
    double step_ms = 0, compute_ms = 0, exposed_comm_ms = 0, comm_total_ms = 0, fixed_ms = 0;
    // The optimizer update's part of compute_ms: a distributed optimizer's shard, so it shrinks as DP grows.
    double optimizer_ms = 0;
    // Tensor/context-parallel collectives per optimizer step (all micro steps): their total time, and the share not
    // hidden behind GEMMs (ComputeProfile::tp_comm_exposed_fraction), which compute_ms includes. comm_total_ms and
    // exposed_comm_ms are the data-parallel gradient collectives only.
    double tp_cp_comm_ms = 0, tp_cp_exposed_ms = 0;
    // Pipeline parallelism: the busiest stage's idle time in the step (fill, drain, imbalance, p2p waits) and its
    // share of that stage's compute (0 without PP).
    double bubble_ms = 0, bubble_fraction = 0;
    double eval_minutes = 0;               // on-the-clock evaluation time (0 for Stable Diffusion)
    long long evaluations = 0;
    double run_overhead_minutes = 0;       // once per run (ComputeProfile::run_overhead_seconds)
    // ttt_minutes = steps x step_ms + eval_minutes + run_overhead_minutes.
    double per_gpu_throughput = 0;         // samples / s / GPU
    // Model FLOPs utilisation: the time the step's training FLOPs (forward and backward, recomputation left out)
    // would take at the GPU's dense peak, each FLOP at its precision's (FP8 kernels at the FP8 rate), over the
    // step time. The FLOPs are the ones the step is priced for: the layer graph's kernels under the operator
    // model, the workload's stated per-sample FLOPs at the layout's precision under the lumped curve. At most 1:
    // no kernel beats its roof. 0 where the workload states no FLOPs.
    double model_flops_utilisation = 0;
    double model_flops_per_gpu = 0;        // the same FLOPs per second per GPU achieved (FLOP/s)
    std::optional<double> efficiency_vs_8gpu;   // per-GPU throughput relative to the default 8-GPU layout
    // Which compute model priced the step: "operator" (layer graph, operator_step.hpp) or "lumped"
    // (compute_profile.hpp's curve).
    std::string compute_model = "lumped";
    bool launch_bound = false;             // operator model: the host's kernel launches set a pass's time
    // Memory per GPU of the layout (operator model's layer graph; empty summary when the workload has none).
    double memory_per_gpu_bytes = 0, memory_capacity_bytes = 0;
    bool memory_fits = true;
    std::string memory_summary;
    double gpu_hours = 0;
    double compute_only_bound_minutes = 0; // steps x compute-only step time (no comm, no fixed costs, no eval)
    // Layout search (layout_search.hpp), when it chose the layout: how, over how many layouts, how long it took,
    // and the published layout's prediction at this scale beside it (when one exists).
    std::string layout_choice;             // "fastest of 38 layouts that fit (52 enumerated)"; empty: published
    int layouts_enumerated = 0, layouts_fitting = 0;
    int layouts_priced = 0;                // of the fitting: the rest were bounded out (layout_search.hpp)
    double layout_search_seconds = 0;      // wall time of the search
    struct Alternative {
        // What the comparison layout is: a catalog workload's published one, or, for a user model that nobody
        // published, the Megatron-style layout (predict_layout.cpp).
        enum class Basis { published, megatron };
        Basis basis = Basis::published;
        std::string label;                 // "published (MLPerf v4.1 ...)"
        ParallelismConfig layout;
        double ttt_minutes = 0, step_ms = 0, memory_per_gpu_bytes = 0;
        bool memory_fits = true;
    };
    std::optional<Alternative> published;
    std::vector<std::string> defaults;     // what was taken from v4.1 defaults
    std::vector<std::string> warnings;
    // The run's failures, checkpoints and restarts over ttt_minutes (which leaves them out, as MLPerf's clock
    // does): expected interruptions, the checkpoint interval, goodput and the wall time's distribution. Set by
    // predict() and predict_explained(); evaluate() (calibration's inner loop) leaves it at its default.
    std::optional<reliability::RunReliability> reliability;
};

// Everything about a scenario that does not depend on the compute profile: the one fully resolved job (system,
// workload, layout, batch, convergence, evaluation schedule, and the collectives priced on the system's topology)
// that prepare() builds in one pass. evaluate() and the trace writer read only this; they never go back to the
// request or to the catalogs' defaults.
struct PreparedScenario {
    const Workload* workload = nullptr;    // catalog entry (static lifetime), or owned_workload.get()
    std::shared_ptr<const Workload> owned_workload;   // a user-defined model, kept alive by every copy
    System system;                         // the hardware, fabric included
    std::shared_ptr<const GpuSpec> gpu;    // = system.gpu
    int gpus = 0;
    ParallelismConfig layout;
    double samples_per_gpu = 0;            // per micro step per GPU (x in compute_profile.hpp)
    double samples_mean = 0, samples_p10 = 0, samples_p90 = 0;
    // The samples above come from the RCPs (ConvergenceModel), not from a given convergence (a workload's
    // samples_to_train, a result's published one): a profile's convergence_factor applies (trained_samples).
    bool samples_from_rcps = false;
    std::vector<double> bucket_comm_seconds;   // per gradient bucket (simulated collectives, step_collectives.hpp)
    std::string bucket_comm_name = "allreduce";   // "allreduce", "reducescatter+allreduce" (timeline names)
    std::vector<MeasuredCollective> bucket_collectives;   // what the simulation measured for one bucket
    double param_all_gather_seconds = 0;
    double tp_cp_comm_seconds_per_micro_step = 0;   // before the exposed fraction
    // The TP/CP collectives of each layer that carries them (the table's transformer blocks), and how many such
    // layers there are: tp_cp_comm_seconds_per_micro_step is their sum (step_collectives.hpp).
    std::vector<LayerCollective> layer_collectives;
    int collective_layers = 0;
    int optimizer_shards = 1;
    // Pipeline parallelism: one micro batch's p2p message from pipeline device d to (d+1) mod PP, seconds
    // (StepCollectives::pp_send_seconds); empty without PP.
    std::vector<double> pp_send_seconds;
    EvalSchedule eval_schedule;            // when the run evaluates (MLPerf rules at this global batch)
    long long evaluations = 0;             // on-the-clock evaluations at the mean convergence point
    double eval_samples_per_rank = 0;      // one evaluation's samples on each data-parallel rank (its TP x CP group)
    double eval_steps = 0;                 // one evaluation's iterations of the evaluation loop (eval_steps_per_evaluation)
    double straggler_sigmas = 0;           // E[max of N standard normals], N = GPUs
    double node_straggler_sigmas = 0;      // the same with N = scale-up domains (nodes) spanned
    std::string comm_topology;             // name of the topology the collectives were simulated on
    std::uint64_t collective_simulations = 0;   // flow simulations run by prepare (cache misses)
    // The layer graph's kernels priced at efficiency 1 for this layout (workloads with a layer_model and GPUs
    // with an SM count; null otherwise): what the operator model prices with a profile's efficiencies.
    std::shared_ptr<const OperatorTable> operator_table;
    // One evaluation pass's kernels for this layout (operator_step.hpp EvalTable; null where the table is null or
    // the evaluation is off the clock).
    std::shared_ptr<const EvalTable> eval_table;
    std::vector<std::string> defaults;
    // The published layout of this GPU family that this one follows in everything that sets its memory (TP, CP,
    // PP, micro batch, packing, the distributed optimizer over no fewer ranks; no more than the default reserve),
    // as "B200, 8 GPUs: TP 1 x CP 2, micro batch 1"; empty otherwise. That layout ran, so a memory estimate over HBM
    // is the estimate's error there, not the layout's (prepare_as_answer).
    std::string ran_as_published;
    // How the default global batch was chosen (also among `defaults`); empty where the request gave the batch.
    std::string batch_note;
    std::vector<std::string> warnings;

    // The run's evaluation schedule and the evaluations it gives at samples_mean, set together (a submission's own
    // schedule replaces the MLPerf rules' in calibration).
    void set_eval_schedule(const EvalSchedule& schedule);
};

// The request's system: the named one, with the what-if GPU, the fabric choices and the memory reserve applied.
System resolve_request_system(const PredictionRequest& request);
// A memory reserve (PredictionRequest::memory_reserve_bytes) that leaves none of `gpu`'s memory for the model is
// an InputError keyed memory_reserve.
void check_memory_reserve(double reserve_bytes, const GpuSpec& gpu);

// Resolves names, layout and defaults, checks the request (InputError naming the flag), and computes the
// profile-independent parts. `collectives`: a session of the request's system, GPU count and SHARP to price
// with (and cache in), as the layout search shares it; null: a fresh one.
PreparedScenario prepare(const PredictionRequest& request, StepCollectiveSession* collectives = nullptr);
// Same, with the system and layout given explicitly (calibration: the layout a published result actually used).
// `reuse` lets a caller that prepares many layouts of one job (layout_search.hpp) share the collective simulation
// and hand in an operator table it already built; either may be null.
struct PrepareReuse {
    StepCollectiveSession* collectives = nullptr;
    std::shared_ptr<const OperatorTable> operator_table;
    // The layout's evaluation table, where the caller built it (build_eval_table for this layout); null: built here.
    std::shared_ptr<const EvalTable> eval_table;
    // Price no collective (each takes 0 s; ttt_lower_bound_minutes): needs `collectives` (for the optimizer
    // shards, nothing simulated) and `operator_table`.
    bool without_collectives = false;
    // Where the tables' graphs and layer description come from when they are built here; null: built afresh.
    LayerGraphCache* graphs = nullptr;
};
PreparedScenario prepare_with_layout(const Workload& workload, const System& system, int gpus,
                                     const ParallelismConfig& layout, const PrepareReuse& reuse = {});
// Samples to train `workload` at `global_batch`: a user's model the amount it states, a catalog workload as its
// RCPs say. InputError (Field::global_batch) where the convergence data do not reach the batch (more than 4x below
// the smallest RCP batch, beyond the extrapolation limit above the largest).
ConvergenceEstimate samples_to_train_at(const Workload& workload, int global_batch);

// The samples a run trains for, given the scenario's `samples` (its mean or a percentile): scaled by the profile's
// convergence_factor where they come from the RCPs, as they are otherwise.
double trained_samples(const PreparedScenario& scenario, const ComputeProfile& profile, double samples);
// The batch a request gives, checked before any layout is built: a global batch or a batch per data-parallel rank
// (not both), each >= 1. InputError (Field::global_batch, Field::batch_per_rank).
void check_batch_request(const PredictionRequest& request);
// prepare() for a layout priced as the answer (predict's published path, a sweep or plan point that does not
// search), held to memory: a layout the layer graph's memory estimate puts over HBM cannot run, an InputError with
// the numbers naming what the request set that made the layout (the reserve, the split, the batch, the layout
// choice, else the GPU count). Where it follows a published layout's memory (PreparedScenario::ran_as_published),
// that one ran: a warning instead. (`calibrate --data` holds a measured row to the estimate on its own terms,
// user_runs.cpp.)
PreparedScenario prepare_as_answer(const PredictionRequest& request);
// Whether `layout` holds per GPU what `ran` (a published layout as its submission ran it) held: the same split,
// micro batch, packing and optimizer, its state sharded at least as far. Such a layout fits because `ran` did,
// whatever the memory estimate says (PreparedScenario::ran_as_published; the layout search's known_to_fit).
bool follows_published_memory(const ParallelismConfig& layout, const ParallelismConfig& ran);
// The warning of a layout over the memory estimate that follows a published layout which ran (ran_as_published).
std::string ran_over_estimate_warning(const std::string& memory_summary, const std::string& ran_as_published);
// A user-defined workload (Workload::user_defined) keeps itself alive in the scenario.
PreparedScenario prepare_with_layout(std::shared_ptr<const Workload> workload, const System& system, int gpus,
                                     const ParallelismConfig& layout, const PrepareReuse& reuse = {});

Prediction evaluate(const PreparedScenario& scenario, const ComputeProfile& profile);

// A lower bound of evaluate(scenario, profile).ttt_minutes for the layout of `without_collectives`, a scenario
// prepared with PrepareReuse::without_collectives: its time to train with every collective taking no time. The
// step is compute (stretched by the TP/CP waits' exposed fraction), optimizer, exposed gradient communication
// (>= 0) and fixed costs (the same with or without collectives), and an evaluation its forward passes with their
// exposed TP/CP waits, so collectives only add time where the profile's tp_comm_exposed_fraction and
// eval_forward_factor are >= 0; null where one is not (no bound then), or without the operator model.
std::optional<double> ttt_lower_bound_minutes(const PreparedScenario& without_collectives,
                                              const ComputeProfile& profile);

// Seconds on the clock as a function of the samples a run converges at, for one scenario and profile: steps x
// step time + on-the-clock evaluations x evaluation time + per-run overhead (the formula at the top). evaluate()
// prices the RCP convergence with it; calibration prices each published run at its own convergence point without
// simulating the iteration again.
struct RunClock {
    double step_seconds = 0, eval_seconds = 0, run_overhead_seconds = 0;
    int global_batch = 0;
    EvalSchedule schedule;
    double seconds(double samples, long long* steps = nullptr, long long* evaluations = nullptr) const;
};
// `sums`: the scenario's kernel_sums under `profile`, where the caller has them (the same clock, to the bit).
struct ScenarioKernelSums;
RunClock run_clock(const PreparedScenario& scenario, const ComputeProfile& profile,
                   const ScenarioKernelSums* sums = nullptr);

// The operator tables of a scenario summed at a profile's efficiencies and family speed (layer_kernel_sums, its
// training table and, where the profile prices evaluations by their own passes, its evaluation table): all of the
// kernels' pricing a run clock does that no software stack's offset enters. Equal for scenarios whose tables
// price alike (same_kernel_prices) under profiles with equal efficiencies, family speed and evaluation passes.
struct ScenarioKernelSums {
    LayerKernelSums training, eval;
};
// Requires operator efficiencies on the profile and an operator table on the scenario.
ScenarioKernelSums kernel_sums(const PreparedScenario& scenario, const ComputeProfile& profile);
// Whether two scenarios' tables price alike (kernel_sums equal under any one profile).
bool same_kernel_prices(const PreparedScenario& a, const PreparedScenario& b);

// The iteration plan evaluate() simulates (for traces: set plan.record_timeline and call simulate_iteration()).
// eval_seconds is set to one evaluation's duration when evaluation is on the clock.
IterationPlan make_iteration_plan(const PreparedScenario& scenario, const ComputeProfile& profile);

Prediction predict(const PredictionRequest& request, const ProfileSet& profiles);

// A prediction with the scenario and profile it evaluated (the searched layout's, when predict() searches), so that
// a trace (models/trace/iteration_timeline.hpp) draws exactly the step that was predicted.
struct ExplainedPrediction {
    Prediction prediction;
    PreparedScenario scenario;
    ComputeProfile profile;
};
ExplainedPrediction predict_explained(const PredictionRequest& request, const ProfileSet& profiles);

// Prediction::efficiency_vs_8gpu: `p`'s per-GPU throughput over that of the published layout on 8 GPUs of the
// request's system (GPU override included, fabric not), priced with `profile`; none for a model no published
// layout runs on 8 GPUs.
std::optional<double> throughput_vs_8gpu(const PredictionRequest& request, const ComputeProfile& profile,
                                         const Prediction& p);

}  // namespace ttsim
