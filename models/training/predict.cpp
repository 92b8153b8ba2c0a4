#include "models/training/predict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "models/training/layer_plan.hpp"
#include "models/training/layout_search.hpp"
#include "models/training/step_bounds.hpp"
#include "models/workloads/custom_workload.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"
#include "topologies/presets.hpp"
#include "topologies/superpod_fabric.hpp"

namespace ttsim {

namespace {

long long ceil_div(double a, double b) { return static_cast<long long>(std::ceil(a / b - 1e-9)); }

}  // namespace

namespace {

// What the compute model says of one step: the lumped curve, or the layer graph priced with the profile's
// operator efficiencies when both the profile and the scenario have them.
struct ComputeTerms {
    bool operator_model = false;
    double micro_step_seconds = 0;         // forward + backward of one micro step (no TP/CP communication)
    double backward_share = 2.0 / 3.0;
    std::vector<double> bucket_ready_fractions;
    std::vector<IterationLayer> layers;    // operator model: the iteration at layer granularity (layer_plan.hpp)
    std::vector<IterationCollective> layer_collectives;
    double optimizer_seconds = 0;
    double eval_forward_seconds = 0;       // one evaluation's forward passes on one GPU
    bool launch_bound = false;
    // Where the profile's fixed per-step host cost goes: added to the step, inside the passes' host time
    // (operator_host_overlap), or on the host beside a whole-iteration graph's replay (operator_graph_host_overlap).
    enum class FixedStep { added, in_passes, beside_graph } fixed_step = FixedStep::added;
};

// Whether the evaluation is priced by its own passes (EvalTable) rather than as training forwards.
bool prices_eval_passes(const PreparedScenario& s, const ComputeProfile& profile) {
    return s.workload->eval_on_the_clock && profile.operator_eval_passes;
}

ComputeTerms compute_terms(const PreparedScenario& s, const ComputeProfile& profile,
                           const ScenarioKernelSums* sums = nullptr) {
    const Workload& w = *s.workload;
    const GpuSpec& gpu = *s.gpu;
    const ParallelismConfig& c = s.layout;
    ComputeTerms t;
    if (profile.operator_efficiency && s.operator_table) {
        // With host overlap the fixed per-step host cost is spread over the step's 2 x micro-steps passes.
        const double host_per_pass =
            profile.operator_host_overlap ? profile.fixed_step_seconds / (2.0 * c.gradient_accumulation) : 0.0;
        const OperatorStepTimes step = price_operator_step(*s.operator_table, *profile.operator_efficiency,
                                                           profile.operator_speed, host_per_pass,
                                                           profile.operator_stack_speed,
                                                           sums ? &sums->training : nullptr);
        if (profile.operator_host_overlap)
            t.fixed_step = ComputeTerms::FixedStep::in_passes;
        else if (profile.operator_graph_host_overlap && s.operator_table->cuda_graphs == layers::CudaGraphs::full_iteration)
            t.fixed_step = ComputeTerms::FixedStep::beside_graph;
        t.operator_model = true;
        t.micro_step_seconds = step.forward_seconds + step.backward_seconds;
        LayerSchedule layers = layer_schedule(*s.operator_table, step, s.layer_collectives, s.collective_layers,
                                              profile.tp_comm_exposed_fraction, s.bucket_comm_seconds.size());
        // The micro step with its exposed TP/CP waits (plan_from), split where the layers put the waits.
        const double with_waits =
            t.micro_step_seconds + profile.tp_comm_exposed_fraction * s.tp_cp_comm_seconds_per_micro_step;
        t.backward_share = with_waits > 0 ? (step.backward_seconds + layers.exposed_backward_seconds) / with_waits
                                          : t.backward_share;
        t.bucket_ready_fractions = std::move(layers.bucket_ready_fractions);
        t.layers = std::move(layers.layers);
        t.layer_collectives = std::move(layers.collectives);
        t.optimizer_seconds = step.optimizer_seconds + step.graph_launch_seconds;
        if (w.eval_on_the_clock && !profile.operator_eval_passes)
            t.eval_forward_seconds = operator_eval_seconds_at_training_batch(
                *s.operator_table, step, s.eval_samples_per_rank, profile.tp_comm_exposed_fraction,
                s.tp_cp_comm_seconds_per_micro_step);
        else if (w.eval_on_the_clock) {
            TTSIM_ASSERT(s.eval_table != nullptr, "an on-the-clock evaluation without its evaluation table");
            t.eval_forward_seconds = operator_eval_seconds(*s.eval_table, *profile.operator_efficiency,
                                                           profile.operator_speed, s.eval_samples_per_rank,
                                                           profile.tp_comm_exposed_fraction,
                                                           s.tp_cp_comm_seconds_per_micro_step,
                                                           s.operator_table->graph_micro_batch, profile.operator_stack_speed,
                                                           profile.eval_host_kernels_per_sample,
                                                           sums ? &sums->eval : nullptr);
        }
        // The tables price every layer of the rank's TP/CP shard; a pipelined evaluation runs forward-only through
        // the stages, each device its 1/p of the layers for all m micro batches plus the p - 1 micro batches of
        // fill: (m + p - 1) / (m p) of the unsplit time (Megatron's forward-only schedule).
        if (w.eval_on_the_clock && c.pipeline_parallel > 1) {
            const double p = c.pipeline_parallel;
            const double m = std::max(1.0, std::ceil(s.eval_samples_per_rank / std::max(1, c.samples_per_micro_batch)));
            t.eval_forward_seconds *= (m + p - 1.0) / (m * p);
        }
        t.launch_bound = step.launch_bound;
        return t;
    }
    t.micro_step_seconds = micro_step_compute_seconds(profile, w, gpu, c.fp8, s.samples_per_gpu);
    t.optimizer_seconds = optimizer_seconds(w, gpu, s.optimizer_shards);
    if (w.eval_on_the_clock)
        t.eval_forward_seconds = forward_seconds(profile, w, gpu, c.fp8, s.eval_samples_per_rank / c.model_split());
    return t;
}

// `terms` by value: make_iteration_plan hands its own over, and its layer lists move into the plan.
IterationPlan plan_from(const PreparedScenario& s, const ComputeProfile& profile, ComputeTerms terms) {
    const ParallelismConfig& c = s.layout;
    IterationPlan plan;
    plan.micro_steps = c.gradient_accumulation;
    plan.micro_step_compute_seconds =
        terms.micro_step_seconds + profile.tp_comm_exposed_fraction * s.tp_cp_comm_seconds_per_micro_step;
    plan.backward_share = terms.backward_share;
    plan.bucket_comm_seconds = s.bucket_comm_seconds;
    plan.bucket_ready_fractions = std::move(terms.bucket_ready_fractions);
    // Reductions held until backward ends: every bucket is ready at its end, none overlaps the backward pass.
    if (c.gradient_reduction_after_backward) plan.bucket_ready_fractions.assign(plan.bucket_comm_seconds.size(), 1.0);
    plan.layers = std::move(terms.layers);
    plan.layer_collectives = std::move(terms.layer_collectives);
    plan.bucket_comm_name = s.bucket_comm_name;
    plan.optimizer_seconds = terms.optimizer_seconds;
    // A job spanning more than one scale-up domain (node) pays the shared multi-node per-step overhead.
    const bool multi_node = s.system.spans_domains(s.gpus);
    const double sigmas = profile.step_jitter_per_node ? s.node_straggler_sigmas : s.straggler_sigmas;
    using FixedStep = ComputeTerms::FixedStep;
    plan.fixed_step_seconds = (terms.fixed_step == FixedStep::added ? profile.fixed_step_seconds : 0.0) +
                              (multi_node ? profile.multi_node_step_seconds : 0.0) + profile.step_jitter_seconds * sigmas;
    plan.overlapped_host_seconds = terms.fixed_step == FixedStep::beside_graph ? profile.fixed_step_seconds : 0.0;
    plan.param_all_gather_seconds = s.param_all_gather_seconds;
    if (c.pipeline_parallel > 1) {
        TTSIM_ASSERT(terms.operator_model && s.operator_table, "pipeline parallelism is priced by the operator model");
        plan.pipeline_parallel = c.pipeline_parallel;
        plan.virtual_pipeline = c.virtual_pipeline;
        plan.pipeline_schedule = pipe_schedule_of(c.pipeline_schedule, c.virtual_pipeline);
        for (const LayerPrices& layer : s.operator_table->layers) {
            plan.layer_is_block.push_back(layer.block);
            plan.layer_gradient_bytes.push_back(layer.gradient_bytes);
        }
        plan.pp_send_seconds = s.pp_send_seconds;
    }
    plan.straggler_factor = 1.0 + profile.step_jitter_cv * sigmas;
    plan.eval_seconds = s.workload->eval_on_the_clock
                            ? profile.eval_forward_factor * terms.eval_forward_seconds + profile.eval_fixed_seconds +
                                  profile.eval_step_seconds * s.eval_steps
                            : 0.0;
    return plan;
}

}  // namespace

IterationPlan make_iteration_plan(const PreparedScenario& s, const ComputeProfile& profile) {
    return plan_from(s, profile, compute_terms(s, profile));
}

double RunClock::seconds(double samples, long long* steps_out, long long* evaluations_out) const {
    const long long steps = ceil_div(samples, global_batch);
    const long long evaluations = evaluations_until(schedule, samples);
    if (steps_out) *steps_out = steps;
    if (evaluations_out) *evaluations_out = evaluations;
    return steps * step_seconds + evaluations * eval_seconds + run_overhead_seconds;
}

namespace {
// The clock of a scenario whose iteration has been simulated (step seconds) and evaluation priced.
RunClock clock_of(const PreparedScenario& s, const ComputeProfile& profile, double step_seconds, double eval_seconds) {
    return RunClock{step_seconds, eval_seconds, profile.run_overhead_seconds, s.layout.global_batch,
                    s.eval_schedule};
}
}  // namespace

RunClock run_clock(const PreparedScenario& s, const ComputeProfile& profile, const ScenarioKernelSums* sums) {
    const IterationPlan plan = plan_from(s, profile, compute_terms(s, profile, sums));
    return clock_of(s, profile, simulate_iteration(plan).step_seconds, plan.eval_seconds);
}

ScenarioKernelSums kernel_sums(const PreparedScenario& s, const ComputeProfile& profile) {
    TTSIM_ASSERT(profile.operator_efficiency && s.operator_table, "kernel sums without operator efficiencies or table");
    ScenarioKernelSums sums;
    sums.training = layer_kernel_sums(s.operator_table->layers, *profile.operator_efficiency, profile.operator_speed);
    if (prices_eval_passes(s, profile)) {
        TTSIM_ASSERT(s.eval_table != nullptr, "an on-the-clock evaluation without its evaluation table");
        sums.eval = layer_kernel_sums(s.eval_table->layers, *profile.operator_efficiency, profile.operator_speed);
    }
    return sums;
}

bool same_kernel_prices(const PreparedScenario& a, const PreparedScenario& b) {
    if (!a.operator_table || !b.operator_table) return false;
    if (!same_kernel_prices(a.operator_table->layers, b.operator_table->layers)) return false;
    if (!a.eval_table || !b.eval_table) return !a.eval_table && !b.eval_table;
    return same_kernel_prices(a.eval_table->layers, b.eval_table->layers);
}

std::optional<double> ttt_lower_bound_minutes(const PreparedScenario& s, const ComputeProfile& profile) {
    TTSIM_ASSERT(s.bucket_comm_seconds.empty() && s.layer_collectives.empty() && s.tp_cp_comm_seconds_per_micro_step == 0 &&
                     s.param_all_gather_seconds == 0,
                 "a lower bound's scenario has collectives");
    if (!profile.operator_efficiency || !s.operator_table) return std::nullopt;
    if (!(profile.tp_comm_exposed_fraction >= 0) || !(profile.eval_forward_factor >= 0)) return std::nullopt;
    return run_clock(s, profile).seconds(trained_samples(s, profile, s.samples_mean)) / 60.0;
}

std::optional<double> ttt_unsimulated_lower_bound_minutes(const PreparedScenario& s, const ComputeProfile& profile) {
    if (s.layout.pipeline_parallel == 1) return ttt_lower_bound_minutes(s, profile);
    TTSIM_ASSERT(s.bucket_comm_seconds.empty() && s.layer_collectives.empty() && s.tp_cp_comm_seconds_per_micro_step == 0 &&
                     s.param_all_gather_seconds == 0,
                 "a lower bound's scenario has collectives");
    if (!profile.operator_efficiency || !s.operator_table) return std::nullopt;
    if (!(profile.tp_comm_exposed_fraction >= 0) || !(profile.eval_forward_factor >= 0)) return std::nullopt;
    const IterationPlan plan = make_iteration_plan(s, profile);
    // simulate_pipelined_iteration: step = max(makespan + optimizer share + exposed comm, host work beside the
    // graph) + fixed; each term here is at most its counterpart.
    const double step = std::max(pipeline_makespan_lower_bound(plan) + plan.optimizer_seconds / plan.pipeline_parallel,
                                 plan.overlapped_host_seconds) +
                        plan.fixed_step_seconds;
    return clock_of(s, profile, step, plan.eval_seconds).seconds(trained_samples(s, profile, s.samples_mean)) / 60.0;
}

Prediction evaluate(const PreparedScenario& s, const ComputeProfile& profile) {
    const Workload& w = *s.workload;
    const GpuSpec& gpu = *s.gpu;
    const ParallelismConfig& c = s.layout;

    const ComputeTerms terms = compute_terms(s, profile);
    const IterationPlan plan = plan_from(s, profile, terms);
    const double compute = terms.micro_step_seconds;
    const IterationResult it = simulate_iteration(plan);
    const double eval_seconds = plan.eval_seconds;
    const RunClock clock = clock_of(s, profile, it.step_seconds, eval_seconds);
    auto minutes_for = [&](double samples, long long* steps_out, long long* evals_out) {
        return clock.seconds(samples, steps_out, evals_out) / 60.0;
    };

    Prediction p;
    p.workload = w.name;
    p.system = s.system.name;
    p.fabric = s.system.fabric_description();
    p.comm_topology = s.comm_topology;
    p.routing = s.system.topology_file ? FabricRouting::StaticEcmp : s.system.fabric.routing;
    p.gpu = gpu.name;
    p.gpus = s.gpus;
    p.layout = c;
    p.global_batch = c.global_batch;
    p.samples_to_converge = trained_samples(s, profile, s.samples_mean);
    p.convergence_lag = trained_samples(s, profile, 1.0);
    p.ttt_minutes = minutes_for(p.samples_to_converge, &p.steps, &p.evaluations);
    p.ttt_p10_minutes = minutes_for(trained_samples(s, profile, s.samples_p10), nullptr, nullptr);
    p.ttt_p90_minutes = minutes_for(trained_samples(s, profile, s.samples_p90), nullptr, nullptr);
    p.step_ms = it.step_seconds * 1e3;
    p.compute_ms = it.compute_seconds * 1e3;
    p.optimizer_ms = it.optimizer_seconds * 1e3;
    p.exposed_comm_ms = it.exposed_comm_seconds * 1e3;
    p.comm_total_ms = it.total_comm_seconds * 1e3;
    p.tp_cp_comm_ms = s.tp_cp_comm_seconds_per_micro_step * c.gradient_accumulation * 1e3;
    p.tp_cp_exposed_ms = profile.tp_comm_exposed_fraction * p.tp_cp_comm_ms;
    p.fixed_ms = it.fixed_seconds * 1e3;
    p.bubble_ms = it.bubble_seconds * 1e3;
    p.bubble_fraction = it.bubble_fraction;
    p.eval_minutes = p.evaluations * eval_seconds / 60.0;
    p.run_overhead_minutes = clock.run_overhead_seconds / 60.0;
    p.per_gpu_throughput = c.global_batch / it.step_seconds / s.gpus;
    // The FLOPs the step was priced for, each at the peak it was priced at: the layer graph's kernels where the
    // operator model priced the step (the catalog's per-sample figure can differ from the graph's, and BERT's
    // GEMMs run FP8 while its layout's `fp8` switch, which the lumped curve reads, is off), else the workload's
    // stated FLOPs at the lumped curve's peak. Only so is MFU bounded by 1: no kernel beats its roof.
    // The table holds every layer of this GPU's TP/CP shard; a pipeline stage runs 1/PP of them.
    const bool priced_by_kernels = terms.operator_model && s.operator_table;
    const double per_stage = 1.0 / c.pipeline_parallel;
    const double flops_per_step = priced_by_kernels
                                      ? s.operator_table->model_flops_per_micro_step * c.gradient_accumulation * per_stage
                                      : w.train_flops_per_sample * c.global_batch / s.gpus;
    const double ideal_seconds =
        priced_by_kernels
            ? s.operator_table->model_flops_peak_seconds_per_micro_step * c.gradient_accumulation * per_stage
            : flops_per_step / peak_flops(gpu, c.fp8);
    p.model_flops_per_gpu = flops_per_step / it.step_seconds;
    p.model_flops_utilisation = ideal_seconds / it.step_seconds;
    p.gpu_hours = p.ttt_minutes / 60.0 * s.gpus;
    p.compute_only_bound_minutes = p.steps * c.gradient_accumulation * compute * per_stage / 60.0;
    p.defaults = s.defaults;
    p.warnings = s.warnings;
    p.compute_model = terms.operator_model ? "operator" : "lumped";
    p.launch_bound = terms.launch_bound;
    if (s.operator_table) {
        const layers::MemoryEstimate& m = s.operator_table->memory;
        p.memory_per_gpu_bytes = m.total;
        p.memory_capacity_bytes = m.capacity;
        p.memory_fits = m.fits;
        p.memory_summary = m.summary;
    }
    if (profile.transferred_from)
        p.warnings.push_back("no v4.1 calibration for " + gpu.name + "; " + w.name + " compute profile transferred from " +
                             *profile.transferred_from + " by scaling with peak FLOP/s and HBM bandwidth");
    for (auto& w : extrapolation_warnings(profile, s.samples_per_gpu, s.gpus)) p.warnings.push_back(std::move(w));
    return p;
}

namespace {

// The reliability model's view of the job predicted: its parts, its state, its failure-free time.
reliability::RunReliability assess_run_reliability(const reliability::ReliabilityRequest& request,
                                                  const PreparedScenario& s, const Prediction& p) {
    reliability::ReliabilityJob job;
    job.gpus = s.gpus;
    job.gpus_per_host = s.system.gpus_per_node;
    job.nics_per_gpu = 1;   // every system here has one scale-out NIC per GPU (hardware/params.md "Scale-out NICs")
    job.switches = fabric_switch_equivalents(s.gpus, s.system.gpus_per_node, s.system.fabric);
    job.total_parameters = static_cast<double>(s.workload->total_params);
    job.trainable_parameters = static_cast<double>(s.workload->trainable_params);
    job.work_seconds = p.ttt_minutes * 60.0;
    job.work_p90_seconds = p.ttt_p90_minutes * 60.0;
    return reliability::assess_reliability(request, job, reliability::reliability_data());
}

}  // namespace

ExplainedPrediction predict_explained(const PredictionRequest& request, const ProfileSet& profiles) {
    reliability::check_reliability_request(request.reliability, reliability::reliability_data());
    ExplainedPrediction out;
    if (uses_layout_search(request, profiles)) {
        out = predict_searched_explained(request, profiles);
    } else {
        PreparedScenario scenario = prepare_as_answer(request);
        ComputeProfile profile = workload_profile(profiles, *scenario.workload, *scenario.system.catalog_gpu);
        Prediction p = evaluate(scenario, profile);
        if (request.compute_efficiency_vs_8gpu) p.efficiency_vs_8gpu = throughput_vs_8gpu(request, profile, p);
        out = {std::move(p), std::move(scenario), std::move(profile)};
    }
    out.prediction.reliability = assess_run_reliability(request.reliability, out.scenario, out.prediction);
    return out;
}

Prediction predict(const PredictionRequest& request, const ProfileSet& profiles) {
    return predict_explained(request, profiles).prediction;
}

std::optional<double> throughput_vs_8gpu(const PredictionRequest& request, const ComputeProfile& profile,
                                         const Prediction& p) {
    // A model whose published layouts all split it over more than 8 GPUs (GPT-3: TP 4 x PP 8) has no 8-GPU run.
    const Workload& workload = find_workload(request.workload);
    if (std::none_of(workload.published_parallelism.begin(), workload.published_parallelism.end(),
                     [](const PublishedParallelism& l) { return l.config.model_split() <= 8; }))
        return std::nullopt;
    PredictionRequest base;
    base.workload = request.workload;
    base.system = request.system;
    base.gpus = 8;
    // One node: the fabric plays no part (and a topology file holds its own GPU count).
    base.gpu_override = request.gpu_override;
    base.gpu_label = request.gpu_label;
    base.layout.mode = LayoutMode::published;
    base.compute_efficiency_vs_8gpu = false;
    const Prediction reference = evaluate(prepare(base), profile);
    return p.per_gpu_throughput / reference.per_gpu_throughput;
}

}  // namespace ttsim
