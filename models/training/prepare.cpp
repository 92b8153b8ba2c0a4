// Preparing a scenario: the workload, system, GPU count and layout resolved, checked and turned into what
// evaluate() prices (layer tables, collectives, convergence, evaluation schedule).
#include "models/training/predict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "models/training/layer_graph_cache.hpp"
#include "models/training/layer_plan.hpp"
#include "models/training/layout_search.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {

PreparedScenario prepare_with_layout(std::shared_ptr<const Workload> workload, const System& system, int gpus,
                                     const ParallelismConfig& layout, const PrepareReuse& reuse) {
    TTSIM_ASSERT(workload != nullptr, "no workload");
    PreparedScenario s = prepare_with_layout(*workload, system, gpus, layout, reuse);
    s.owned_workload = std::move(workload);
    return s;
}

ConvergenceEstimate samples_to_train_at(const Workload& workload, int global_batch) {
    if (workload.samples_to_train) {
        ConvergenceEstimate fixed;
        fixed.samples_mean = fixed.samples_p10 = fixed.samples_p90 = *workload.samples_to_train;
        return fixed;
    }
    const ConvergenceModel convergence = ConvergenceModel::for_workload(workload);
    const auto kept = convergence.table().kept();
    if (!kept.empty() && static_cast<long long>(global_batch) * 4 < kept.front().global_batch)
        throw InputError("global batch " + std::to_string(global_batch) + " is far below the smallest " + workload.name +
                             " RCP batch " + std::to_string(kept.front().global_batch) +
                             " (more than 4x); convergence there is unknown",
                         Field::global_batch);
    return convergence.samples_to_converge(global_batch);
}

double trained_samples(const PreparedScenario& scenario, const ComputeProfile& profile, double samples) {
    return scenario.samples_from_rcps ? samples * profile.convergence_factor : samples;
}

bool follows_published_memory(const ParallelismConfig& layout, const ParallelismConfig& ran) {
    return layout.tensor_parallel == ran.tensor_parallel && layout.context_parallel == ran.context_parallel &&
           layout.pipeline_parallel == ran.pipeline_parallel && layout.virtual_pipeline == ran.virtual_pipeline &&
           layout.samples_per_micro_batch == ran.samples_per_micro_batch &&
           layout.packing_factor == ran.packing_factor && layout.distributed_optimizer == ran.distributed_optimizer &&
           (!layout.distributed_optimizer || layout.data_parallel >= ran.data_parallel);
}

std::string ran_over_estimate_warning(const std::string& memory_summary, const std::string& ran_as_published) {
    return "the memory estimate puts this layout over HBM (" + memory_summary +
           "), but the published layout it follows in memory (" + ran_as_published +
           ") ran: the estimate is high for it (activation offload or recomputation the workload data does not state)";
}

namespace {

// prepare_as_answer's memory rule (predict.hpp).
void check_fits_in_memory(PreparedScenario& scenario, const PredictionRequest& request) {
    if (!scenario.operator_table || scenario.operator_table->memory.fits) return;
    if (!scenario.ran_as_published.empty()) {
        scenario.warnings.push_back(ran_over_estimate_warning(scenario.operator_table->memory.summary,
                                                              scenario.ran_as_published));
        return;
    }
    const bool layout_asked = request.layout.mode == LayoutMode::published;
    const Field field = request.memory_reserve_bytes ? Field::memory_reserve
                        : request.tensor_parallel    ? Field::tensor_parallel
                        : request.context_parallel   ? Field::context_parallel
                        : request.global_batch       ? Field::global_batch
                        : request.samples_per_rank   ? Field::batch_per_rank
                        : layout_asked               ? Field::layout
                                                     : Field::gpus;
    // The same explanation as the layout search's refusal, with the changes the search would make named too: this
    // layout was given or published, not searched.
    std::vector<std::string> changes;
    if (request.memory_reserve_bytes) changes.push_back("keep less memory free");
    if (request.layout.mode != LayoutMode::fastest) changes.push_back("let the layout search choose (layout fastest, operator model)");
    throw InputError("the layout does not fit in memory: " +
                         memory_refusal(*scenario.workload, scenario.system, scenario.layout,
                                        scenario.operator_table->memory, std::move(changes)),
                     field);
}

// Runs `body` (pricing a request); where the request gives its batch per data-parallel rank, an error about the
// global batch it made is re-raised as the per-rank batch's (the field its user set).
template <typename Body>
decltype(auto) naming_per_rank_batch(const PredictionRequest& request, Body body) {
    try {
        return body();
    } catch (const InputError& e) {
        if (!request.samples_per_rank || e.field() != Field::global_batch) throw;
        throw InputError(e.message(), Field::batch_per_rank);
    }
}

}  // namespace

PreparedScenario prepare_as_answer(const PredictionRequest& request) {
    PreparedScenario scenario = prepare(request);
    check_fits_in_memory(scenario, request);
    return scenario;
}

void check_batch_request(const PredictionRequest& request) {
    if (request.global_batch && request.samples_per_rank)
        throw InputError("give a global batch or a batch per data-parallel rank, not both", Field::batch_per_rank);
    if (request.global_batch && *request.global_batch < 1)
        throw InputError("global batch must be >= 1", Field::global_batch);
    if (request.samples_per_rank && *request.samples_per_rank < 1)
        throw InputError("the batch per data-parallel rank must be >= 1", Field::batch_per_rank);
}

void PreparedScenario::set_eval_schedule(const EvalSchedule& schedule) {
    eval_schedule = schedule;
    evaluations = evaluations_until(eval_schedule, samples_mean);
}

PreparedScenario prepare_with_layout(const Workload& workload, const System& system, int gpus,
                                     const ParallelismConfig& layout, const PrepareReuse& reuse) {
    TTSIM_ASSERT(layout.gpus() == gpus, "layout does not multiply out to the GPU count");
    PreparedScenario s;
    s.workload = &workload;
    s.system = system;
    s.gpu = system.gpu;
    s.gpus = gpus;
    s.layout = layout;
    const int model_split = layout.model_split();
    s.samples_per_gpu = static_cast<double>(layout.samples_per_micro_batch) / model_split;

    const ConvergenceEstimate estimate = samples_to_train_at(workload, layout.global_batch);
    s.samples_mean = estimate.samples_mean;
    s.samples_p10 = estimate.samples_p10;
    s.samples_p90 = estimate.samples_p90;
    s.samples_from_rcps = !workload.samples_to_train;
    for (const auto& w : estimate.warnings) s.warnings.push_back(w);

    // Collectives: simulated on the system's topology (step_collectives.hpp).
    StepCollectives comm;
    if (reuse.without_collectives) {
        TTSIM_ASSERT(reuse.collectives && reuse.operator_table, "a scenario without collectives needs a session and a table");
        comm.optimizer_shards = reuse.collectives->optimizer_shards(layout);
    } else {
        comm = reuse.collectives ? reuse.collectives->price(workload, layout)
                                 : step_collectives(workload, system, gpus, layout);
    }
    s.bucket_comm_seconds = std::move(comm.bucket_seconds);
    s.bucket_comm_name = comm.bucket_name;
    s.bucket_collectives = std::move(comm.bucket_collectives);
    s.param_all_gather_seconds = comm.param_all_gather_seconds;
    s.tp_cp_comm_seconds_per_micro_step = comm.tp_cp_seconds_per_micro_step;
    s.layer_collectives = std::move(comm.layer_collectives);
    s.collective_layers = comm.collective_layers;
    s.optimizer_shards = comm.optimizer_shards;
    s.pp_send_seconds = std::move(comm.pp_send_seconds);
    s.comm_topology = comm.topology;
    s.collective_simulations = comm.simulations;
    if (system.preset.empty() && !system.topology_file)
        s.warnings.push_back("no preset system for " + system.gpu->name + ": collectives simulated on a generic node (" +
                             std::to_string(system.gpus_per_nvlink_domain) + " GPUs per NVLink domain at " +
                             units::format_number(system.gpu->scaleup_bandwidth_per_direction / 1e9) +
                             " GB/s, one NIC per GPU) on the DGX SuperPOD fabric");
    // A topology file describes its own links: where its NVLink is not the GPU's own (an H100 cluster's file under
    // --system dgx-b200), the collectives run at the file's figure, which the user may not have meant.
    const double own_nvlink = system.gpu->scaleup_bandwidth_per_direction;
    if (system.topology_file && system.topology_file_nvlink_bytes_per_s > 0 && own_nvlink > 0 &&
        std::abs(system.topology_file_nvlink_bytes_per_s / own_nvlink - 1.0) > 0.01)
        s.warnings.push_back("topology " + *system.topology_file + " gives each GPU NVLink at " +
                             units::format_number(system.topology_file_nvlink_bytes_per_s / 1e9, 3) +
                             " GB/s per direction, where " + system.gpu->name + "'s own is " +
                             units::format_number(own_nvlink / 1e9, 3) +
                             " GB/s (gpus.yaml): the collectives use the file's links, the kernels the " +
                             system.gpu->name + "'s roofs");
    // Hashed ECMP routes flows; SHARP's reductions run on the switches' aggregation trees, which it does not touch.
    if (system.fabric.routing == FabricRouting::StaticEcmp && !system.topology_file && layout.sharp)
        s.warnings.push_back("static routing changes only the collectives that cross the fabric as flows: the gradient "
                             "reduction runs on SHARP's in-network trees (compare with SHARP off)");

    // Evaluation.
    s.set_eval_schedule(eval_schedule(workload, layout.global_batch));
    s.eval_samples_per_rank = eval_samples_per_rank(workload, layout);
    s.eval_steps = workload.eval_on_the_clock ? eval_steps_per_evaluation(workload, layout, s.eval_samples_per_rank) : 0.0;

    // The tables' graphs and layer description: the caller's, else this scenario's own.
    LayerGraphCache own_graphs;
    LayerGraphCache& graphs = reuse.graphs ? *reuse.graphs : own_graphs;
    if (reuse.operator_table)
        s.operator_table = reuse.operator_table;
    else if (workload.layer_model && system.gpu->sms)
        s.operator_table = build_operator_table(workload, graphs.graph(workload, layout), *system.gpu, layout,
                                                s.optimizer_shards, memory_assumptions_of(system));
    if (s.operator_table && workload.eval_on_the_clock)
        s.eval_table = reuse.eval_table ? reuse.eval_table
                                        : build_eval_table(workload, graphs.description(workload), *system.gpu, layout,
                                                           s.eval_samples_per_rank, *s.operator_table);

    s.straggler_sigmas = expected_max_standard_normal(gpus);
    const int domain = system.gpus_per_nvlink_domain;
    s.node_straggler_sigmas = expected_max_standard_normal((gpus + domain - 1) / domain);
    return s;
}

System resolve_request_system(const PredictionRequest& request) {
    // The what-if GPU first (it brings its own NIC rate), then the request's fabric, which overrides it.
    System system = resolve_system(request.system);
    if (request.gpu_override)
        system = with_gpu(std::move(system), request.gpu_override,
                          request.gpu_label.empty() ? request.gpu_override->name : request.gpu_label);
    const FabricOptions own_fabric = system.fabric;
    system = with_fabric(std::move(system), request.fabric);
    // A job within one NVLink domain uses no NIC and no switch: oversubscription, or a NIC or a routing other than
    // the system's own, cannot apply there (nor SHARP on: sharp_unavailable_reason). A sweep's points drop them.
    if (!system.topology_file && request.gpus > 0) {
        check_fabric_applies(system.name, system.gpus_per_nvlink_domain, request.gpus, system.fabric, own_fabric);
        // A radix or tiers asked for that cannot hold the job: they are at fault, not the count.
        if (request.fabric.shape.sets_capacity()) check_radix_holds(system.node_shape(), request.gpus, system.fabric);
    }
    if (request.memory_reserve_bytes) {
        check_memory_reserve(*request.memory_reserve_bytes, *system.gpu);
        system.memory_reserve_bytes = *request.memory_reserve_bytes;
    }
    return system;
}

void check_memory_reserve(double reserve_bytes, const GpuSpec& gpu) {
    const double capacity = gpu.usable_memory_bytes();
    if (!(reserve_bytes >= 0) || reserve_bytes >= capacity)
        throw InputError(fmt::format("a memory reserve of {:.1f} GB leaves nothing of the {}'s {:.1f} GB for the "
                                     "model (it is what each GPU keeps free besides weights, gradients, optimizer "
                                     "state and activations; the default is {:.0f} GB)",
                                     reserve_bytes / 1e9, gpu.name, capacity / 1e9,
                                     layers::MemoryAssumptions{}.reserve_bytes / 1e9),
                         Field::memory_reserve);
}

PreparedScenario prepare(const PredictionRequest& request, StepCollectiveSession* collectives) {
    const Workload& workload = find_workload(request.workload);
    System system = resolve_request_system(request);
    // Layouts, memory limits and calibrated profiles are the catalog GPU's: a what-if GPU is laid out as the GPU
    // it derives from.
    const GpuSpec& gpu = *system.catalog_gpu;
    const int n = request.gpus;
    check_job_size(system, n);

    ParallelismChoice choice;
    try {
        choice = default_parallelism(workload, gpu.name, n);
    } catch (const InputError&) {
        if (!request.tensor_parallel && !request.context_parallel) throw;   // it names the GPU count
        // The user sets TP/CP below; start from the published layout at 8 GPUs' switches instead.
        choice = default_parallelism(workload, gpu.name, 8);
        choice.config.tensor_parallel = choice.config.context_parallel = 1;
        choice.config.data_parallel = n;
    }
    ParallelismConfig c = choice.config;
    std::vector<std::string> defaults;
    std::string batch_note;
    const bool split_given = request.tensor_parallel || request.context_parallel;
    defaults.push_back((split_given ? "TP x CP as given; the rest of the layout (micro batch cap, distributed optimizer, "
                                      "FP8) from "
                                    : "layout from ") +
                       choice.basis.source + " (" + choice.basis.system_family + ", " + std::to_string(choice.basis.gpus) +
                       " GPUs)");
    for (auto& note : choice.notes) defaults.push_back(note);

    if (request.tensor_parallel || request.context_parallel) {
        const int tp = request.tensor_parallel.value_or(c.tensor_parallel);
        const int cp = request.context_parallel.value_or(c.context_parallel);
        if (tp < 1) throw InputError("must be >= 1", Field::tensor_parallel);
        if (cp < 1) throw InputError("must be >= 1", Field::context_parallel);
        if (tp > system.gpus_per_nvlink_domain)
            throw InputError(system.tensor_parallel_domain_problem(tp), Field::tensor_parallel);
        const int split = tp * cp * c.pipeline_parallel;
        if (n % split != 0)   // name the flag that breaks divisibility (TP first), not merely the last one given
            throw InputError(std::to_string(n) + " GPUs are not divisible by TP x CP = " + std::to_string(tp) + " x " +
                                 std::to_string(cp) + " = " + std::to_string(split),
                             n % tp != 0 || !request.context_parallel ? Field::tensor_parallel : Field::context_parallel);
        if (!system.tensor_parallel_fits_domain(tp, n))   // divides the GPUs, but some groups would cross domains
            throw InputError(system.tensor_parallel_domain_problem(tp), Field::tensor_parallel);
        if (!system.model_parallel_fits_domain(tp, cp, n))
            throw InputError(system.model_parallel_domain_problem(tp, cp, n),
                             request.context_parallel ? Field::context_parallel : Field::tensor_parallel);
        if (tp > 1 && !workload.tensor_parallel_modelled())
            throw InputError("tensor parallelism is modelled for bert and llama2_70b_lora only; " + workload.name +
                                 " runs data parallel (as in MLPerf v4.1)",
                             Field::tensor_parallel);
        if (cp > 1 && !workload.context_parallel_modelled())
            throw InputError("context parallelism is not modelled for " + workload.name +
                                 ", which runs without it (as in MLPerf v4.1)",
                             Field::context_parallel);
        c.tensor_parallel = tp;
        c.context_parallel = cp;
        c.data_parallel = n / split;
    }
    // The batch given: global, or per data-parallel rank of this layout.
    check_batch_request(request);
    std::optional<int> given_batch = request.global_batch;
    if (request.samples_per_rank) {
        const long long global = static_cast<long long>(*request.samples_per_rank) * c.data_parallel;
        if (global > (1 << 30))
            throw InputError(fmt::format("{} samples per data-parallel rank x DP {} is a global batch beyond 2^30",
                                         *request.samples_per_rank, c.data_parallel),
                             Field::batch_per_rank);
        given_batch = static_cast<int>(global);
        defaults.push_back(fmt::format("global batch {} = {} samples per data-parallel rank x DP {}", *given_batch,
                                       *request.samples_per_rank, c.data_parallel));
    }
    if (given_batch) {
        const int b = *given_batch;
        if (b % c.data_parallel != 0)
            throw InputError("global batch " + std::to_string(b) + " is not divisible by the data-parallel size " +
                                 std::to_string(c.data_parallel),
                             Field::global_batch);
        const int share = b / c.data_parallel;
        int accumulation = request.gradient_accumulation.value_or(0);
        if (accumulation > 0) {
            if (share % accumulation != 0)
                throw InputError("global batch " + std::to_string(b) + " is not divisible by data-parallel size x " +
                                     "gradient accumulation = " +
                                     std::to_string(static_cast<std::int64_t>(c.data_parallel) * accumulation),
                                 Field::global_batch);
        } else {
            // The fewest micro steps whose micro batch is no larger than any v4.1 layout ran.
            accumulation = fewest_micro_steps(share, largest_published_micro_batch(workload));
        }
        c.gradient_accumulation = accumulation;
        c.samples_per_micro_batch = share / accumulation;
        c.global_batch = b;
    } else {
        // The default batch: v4.1's at the nearest published scale, kept within the RCPs (convergence is measured
        // there), never below a batch v4.1 published at fewer GPUs, rounded to the nearest multiple of the
        // data-parallel size (workload.hpp).
        const RcpTable rcps = load_rcp_table(workload);
        const auto kept = rcps.kept();
        const int largest_rcp = kept.empty() ? 0 : kept.back().global_batch;
        const int smallest_rcp = rcps.records.empty() ? 0 : rcps.records.front().global_batch;
        const BatchChoice batch = scaled_default_batch({&workload, gpu.name, system.gpus_per_node, n, c.data_parallel,
                                                        choice.batch_target, choice.batch_source, smallest_rcp,
                                                        largest_rcp});
        // Even one sample per data-parallel rank may be beyond what the convergence data covers.
        const double max_factor = ConvergenceOptions{}.max_extrapolation_factor;
        if (largest_rcp > 0 && batch.global_batch > max_factor * largest_rcp) {
            const int model_split = c.tensor_parallel * c.context_parallel * c.pipeline_parallel;
            const long long most = static_cast<long long>(max_factor * largest_rcp) * model_split;
            // The hints name TP and CP, not a flag: a sweep or plan row reports the same refusal.
            throw InputError(std::to_string(n) + " GPUs need a global batch of at least " +
                                 std::to_string(c.data_parallel) + " (one sample per data-parallel rank, " +
                                 std::to_string(model_split) + (model_split == 1 ? " GPU" : " GPUs") + " per replica), beyond " +
                                 std::to_string(static_cast<int>(max_factor)) + "x the largest RCP batch (" + std::to_string(largest_rcp) +
                                 "), where convergence is unknown; use at most " + std::to_string(most) +
                                 " GPUs with this layout" +
                                 // The default batch is sized for the published layout's replica, whatever is pinned
                                 // or searched: a larger replica needs its batch given.
                                 (!workload.tensor_parallel_modelled()
                                      ? std::string()
                                      : std::string(", or more GPUs per replica (a larger ") +
                                            (workload.context_parallel_modelled() ? "TP or CP" : "TP") +
                                            ") with the global batch given (the default is sized for the published "
                                            "layout's replica)"),
                             Field::gpus);
        }
        c.global_batch = batch.global_batch;
        c.samples_per_micro_batch = batch.samples_per_micro_batch;
        c.gradient_accumulation = batch.gradient_accumulation;
        defaults.push_back(batch.note);
        batch_note = batch.note;
    }
    // The layout must at least hold the model state in the memory a layout may fill (activations and the reserve
    // come on top and are not counted here: a lower bound).
    if (const double need = model_state_bytes_per_gpu(workload, c); need > gpu.usable_memory_bytes()) {
        int tp = c.tensor_parallel;
        ParallelismConfig wider = c;
        while (system.tensor_parallel_fits_domain(tp * 2, n) &&
               model_state_bytes_per_gpu(workload, wider) > gpu.usable_memory_bytes()) {
            tp *= 2;
            wider.tensor_parallel = tp;
        }
        const std::string text = fmt::format("{:.0f} GB of model state per GPU", need / 1e9);
        throw InputError(workload.name + " needs at least " + text + " with TP " + std::to_string(c.tensor_parallel) +
                             " (bf16 weights and gradients, fp32 optimizer state; activations not counted), more than " +
                             gpu.name + "'s " + fmt::format("{:.1f}", gpu.usable_memory_bytes() / 1e9) +
                             " GB of HBM" +
                             (model_state_bytes_per_gpu(workload, wider) <= gpu.usable_memory_bytes()
                                  ? "; use TP " + std::to_string(tp) + " or more"
                                  : std::string("")),
                         request.tensor_parallel ? Field::tensor_parallel : Field::gpus);
    }
    if (c.packing_factor > 1 && c.samples_per_micro_batch % c.packing_factor != 0) c.packing_factor = 1;
    // NVIDIA's multi-node v4.1 runs enabled SHARP (params.md §2); keep that default for NVIDIA multi-node layouts.
    // Asked for where it cannot run, SHARP would silently do nothing: refuse instead.
    const std::string sharp_refusal = sharp_unavailable_reason(system, n);
    if (request.sharp.value_or(false) && !sharp_refusal.empty()) throw InputError(sharp_refusal, Field::sharp);
    c.sharp = request.sharp.value_or(sharp_by_default(system, n));
    if (!request.sharp && c.sharp) defaults.push_back("SHARP in-network reduction on (as NVIDIA's multi-node v4.1 runs)");

    PrepareReuse reuse;
    reuse.collectives = collectives;
    reuse.graphs = request.graphs;
    // Convergence at the batch a per-rank request made is the per-rank batch's to answer for.
    PreparedScenario s = naming_per_rank_batch(request, [&] { return prepare_with_layout(workload, system, n, c, reuse); });
    // What sets memory per GPU is the split, the micro batch, packing and how far the optimizer state is sharded;
    // where all of it is as a published layout of this GPU family ran, that layout is the evidence it fits.
    const ParallelismConfig& ran = choice.basis.config;
    const bool reserve_as_ran = !request.memory_reserve_bytes ||
                                *request.memory_reserve_bytes <= layers::MemoryAssumptions{}.reserve_bytes;
    // A split given as the published one is the published one (the layout search counts it so too).
    if (choice.basis.system_family == gpu.name && reserve_as_ran && follows_published_memory(c, ran))
        s.ran_as_published = fmt::format("{}, {} GPUs: TP {} x CP {}, micro batch {}", choice.basis.system_family,
                                         choice.basis.gpus, ran.tensor_parallel, ran.context_parallel,
                                         ran.samples_per_micro_batch);
    s.defaults.insert(s.defaults.begin(), defaults.begin(), defaults.end());
    s.batch_note = batch_note;
    return s;
}

}  // namespace ttsim
