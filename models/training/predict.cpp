#include "models/training/predict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/lower_bound.hpp"
#include "models/collectives/tuner.hpp"
#include "models/training/comm_model.hpp"
#include "sim/errors.hpp"
#include "topologies/presets.hpp"

namespace ttsim {

namespace {

// Llama2-70B shapes for the tensor/context-parallel collectives (Llama 2 paper, Table 1 / HF config: 80 layers,
// hidden 8192, 8 KV heads of 128; params.md §4.1: 8192 tokens per sequence). Activations in bf16 (2 bytes).
constexpr int kLlamaLayers = 80;
constexpr double kLlamaHidden = 8192;
constexpr double kLlamaKvWidth = 8 * 128;
constexpr double kLlamaTokens = 8192;
constexpr double kActivationBytes = 2;
// BERT-large (Devlin et al. 2019, Table / "BERT_LARGE": 24 layers, hidden 1024) at MLPerf's 512-token sequences;
// with packing 2 samples share a 512-token row, so a sample is 256 tokens on average (params.md §7 item 5).
constexpr int kBertLayers = 24;
constexpr double kBertHidden = 1024;
constexpr double kBertTokensPerSample = 256;

struct SystemEntry {
    const char* name;
    const char* gpu;
};
// Preset systems (topologies/presets.hpp) and which catalog GPU they hold.
constexpr SystemEntry kPresetSystems[] = {
    {"dgx-h100", "H100-SXM"}, {"dgx-h200", "H200-SXM"}, {"dgx-b200", "B200"}, {"gb200-nvl72", "GB200"}};

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

long long ceil_div(double a, double b) { return static_cast<long long>(std::ceil(a / b - 1e-9)); }

// On-the-clock evaluations for a run that converges at `samples`: the run stops at the first evaluation at or
// after convergence, so every evaluation point up to and including that one is counted.
long long evaluations_until(const EvalSchedule& schedule, double samples) {
    if (!schedule.on_the_clock || schedule.interval_samples == 0) return 0;
    const double first = static_cast<double>(schedule.first_eval_samples);
    if (samples <= first) return 1;
    return 1 + ceil_div(samples - first, static_cast<double>(schedule.interval_samples));
}


// The preset topology of a system: its own preset, or (a system named only by its GPU, e.g. an MLPerf system
// string or "H100") the DGX preset of that GPU. Empty when the GPU has no preset (A100, MI300X).
std::string preset_of(const std::string& system, const GpuSpec& gpu) {
    const std::string key = lower(system);
    for (const auto& s : kPresetSystems)
        if (key == s.name) return s.name;
    for (const auto& s : kPresetSystems)
        if (gpu.name == s.gpu) return s.name;
    return {};
}


// The simulator's `auto` decision (the fastest applicable algorithm, NCCL-like protocol choice; ties to the
// earlier candidate), without simulating candidates that cannot win: each candidate's duration is at least its
// NCCL latency plus the protocol-scaled physical lower bound (lower_bound.hpp; duration is monotone in the
// bandwidth time), so candidates are simulated in ascending order of that bound and the search stops when the next
// bound is no better than the best simulated duration. Same answer as CollectiveAlgorithm::Auto; at 16,384 GPUs it
// skips e.g. ring and tree over 2,048 rail peers (seconds of flow simulation) when SHARP wins by far.
double auto_collective_seconds(CollectiveSimulator& simulator, const Topology& topology, const NcclParams& params,
                               CollectiveOp op, double bytes, const std::vector<int>& group) {
    const std::uint64_t size = static_cast<std::uint64_t>(std::llround(bytes));
    const GroupLayout layout(topology, group);
    const std::vector<CollectiveAlgorithm> candidates =
        candidate_algorithms(op, layout, simulator.options().sharp_enabled);
    TTSIM_ASSERT(!candidates.empty(), "no collective algorithm applies");
    const LatencyShape shape{op, layout.size(), layout.island_count(), layout.max_per_island(),
                             simulator.options().net_overhead_us};
    // Margin: the bound includes one path latency (microseconds) that the bandwidth part need not contain.
    const double bound = std::max(0.0, 0.9 * collective_lower_bound(layout, op, static_cast<double>(size)).seconds() - 5e-6);
    std::vector<std::pair<double, std::size_t>> order;
    for (std::size_t i = 0; i < candidates.size(); ++i)
        order.emplace_back(choose_protocol(params, candidates[i], NcclProtocol::Auto, shape, static_cast<double>(size),
                                           bound, simulator.options().nccl_channels)
                               .total_seconds(),
                           i);
    std::sort(order.begin(), order.end());
    double best = 0;
    std::size_t best_index = candidates.size();
    for (const auto& [lower, i] : order) {
        if (best_index < candidates.size() && lower > best) break;
        CollectiveRequest request;
        request.op = op;
        request.bytes = size;
        request.group = group;
        request.algorithm = candidates[i];
        const double seconds = simulator.run(request).duration.seconds();
        if (best_index == candidates.size() || seconds < best || (seconds == best && i < best_index)) {
            best = seconds;
            best_index = i;
        }
    }
    return best;
}

struct CommTimes {
    std::vector<double> bucket_seconds;
    std::string bucket_name = "allreduce";
    double param_all_gather_seconds = 0;
    double tp_cp_seconds_per_micro_step = 0;
    int optimizer_shards = 1;
    std::string topology;                  // preset name, or "analytic" (no preset for the GPU)
    std::uint64_t simulations = 0;
    std::vector<std::string> warnings;
};

// Global rank of the GPU at (tp, cp, pp, dp) coordinates: Megatron order, TP fastest, then CP, PP, DP.
int rank_of(const ParallelismConfig& c, int tp, int cp, int pp, int dp) {
    return tp + c.tensor_parallel * (cp + c.context_parallel * (pp + c.pipeline_parallel * dp));
}

// Collective durations of one optimizer step for the representative rank class (TP = CP = PP = 0 coordinates).
// The topology (build_preset) and the CollectiveSimulator are local to this call, so prepare()/predict() stay
// thread-safe; the simulator caches per (op, algorithm, bytes, group), so every bucket after the first is a
// lookup. Algorithm and protocol are auto (NCCL-like tuner); SHARP is available when the layout enables it.
//
// Groups (all other rank classes run the same collectives at the same time on their own rails; with one NIC per
// GPU on a rail-optimised fabric they do not share NICs, so one group is simulated):
//  - data parallel: the ranks that share TP/CP/PP coordinates;
//  - plain data parallel: one all-reduce per gradient bucket over the DP group;
//  - distributed optimizer (apex DistributedFusedLAMB/Adam, dwu group = the NVLink domain): reduce-scatter of the
//    bucket over the DP ranks inside the NVLink domain, all-reduce of this rank's shard over the DP ranks with the
//    same position in every other domain (SHARP when on), optimizer on the shard, all-gather of the updated
//    parameters inside the domain;
//  - tensor parallel (Llama2-70B LoRA, Megatron sequence parallelism): per layer 4 all-gathers + 4 reduce-scatters
//    of this rank's activations over the TP group; context parallel (ring attention): ~3 all-gathers of K,V per
//    layer over the CP group.
CommTimes collective_times(const Workload& workload, const GpuSpec& gpu, const std::string& system, int gpus,
                           const ParallelismConfig& c, FabricRouting routing) {
    CommTimes out;
    const std::string preset = preset_of(system, gpu);
    std::optional<Topology> topology;
    std::optional<CollectiveSimulator> simulator;
    std::optional<AnalyticCommModel> analytic;
    NcclParams params;
    int domain_size = std::min(gpus, gpu.gpus_per_scaleup_domain);
    if (!preset.empty()) {
        FabricOptions fabric;
        fabric.routing = routing;
        topology.emplace(build_preset(preset, gpus, fabric));
        CollectiveOptions options;
        options.sharp_enabled = c.sharp;
        simulator.emplace(*topology, options);
        params = nccl_params(gpu_generation_of(*topology));
        for (const PresetInfo& p : preset_systems())
            if (p.name == preset) domain_size = std::min(gpus, p.gpus_per_nvlink_domain);
        out.topology = preset;
    } else {
        analytic.emplace(gpu);
        out.topology = "analytic";
        out.warnings.push_back("no preset topology for " + gpu.name +
                               "; collective durations from the analytic NCCL model (comm_model.hpp)");
        if (routing != FabricOptions{}.routing)
            out.warnings.push_back(std::string(to_string(routing)) +
                                   " routing has no effect: the analytic model has no switch fabric");
    }
    // Seconds of one collective over `group` (global ranks).
    auto seconds = [&](CollectiveOp op, double bytes, const std::vector<int>& group) -> double {
        if (group.size() < 2 || bytes <= 0) return 0.0;
        if (simulator) return auto_collective_seconds(*simulator, *topology, params, op, bytes, group);
        std::map<int, int> per_domain;
        for (int r : group) ++per_domain[r / std::max(1, domain_size)];
        const CommGroupShape shape{static_cast<int>(group.size()), per_domain.begin()->second,
                                   c.sharp && per_domain.size() > 1};
        const CollectiveKind kind = op == CollectiveOp::AllReduce       ? CollectiveKind::all_reduce
                                    : op == CollectiveOp::ReduceScatter ? CollectiveKind::reduce_scatter
                                                                        : CollectiveKind::all_gather;
        return analytic->seconds(kind, bytes, shape);
    };

    // Data-parallel groups.
    std::vector<int> dp_group;
    for (int d = 0; d < c.data_parallel; ++d) dp_group.push_back(rank_of(c, 0, 0, 0, d));
    const int domain_of_first = dp_group.front() / std::max(1, domain_size);
    std::vector<int> dp_in_domain, dp_across_domains;
    for (int r : dp_group)
        if (r / std::max(1, domain_size) == domain_of_first) dp_in_domain.push_back(r);
    const int dp_per_domain = static_cast<int>(dp_in_domain.size());
    for (std::size_t i = 0; i < dp_group.size(); i += dp_per_domain) dp_across_domains.push_back(dp_group[i]);

    // Gradients per data-parallel rank: TP shards the weights, CP and DP do not.
    const double gradient_bytes = static_cast<double>(workload.gradient_bytes) / c.tensor_parallel;
    const int buckets = std::max(1, static_cast<int>(std::ceil(gradient_bytes / kGradientBucketBytes)));
    const double bucket_bytes = gradient_bytes / buckets;
    if (c.data_parallel > 1) {
        if (!c.distributed_optimizer) {
            out.bucket_seconds.assign(buckets, seconds(CollectiveOp::AllReduce, bucket_bytes, dp_group));
        } else {
            const double rs = seconds(CollectiveOp::ReduceScatter, bucket_bytes, dp_in_domain);
            const double ar = seconds(CollectiveOp::AllReduce, bucket_bytes / dp_per_domain, dp_across_domains);
            out.bucket_seconds.assign(buckets, rs + ar);
            out.bucket_name = dp_across_domains.size() > 1 ? "reducescatter+allreduce" : "reducescatter";
            out.param_all_gather_seconds = seconds(CollectiveOp::AllGather, gradient_bytes, dp_in_domain);
            out.optimizer_shards = dp_per_domain;
        }
    }

    // Tensor parallel for BERT (no v4.1 submission used it; what-if only): Megatron-style, two all-reduces of the
    // layer's activations in forward and two in backward per transformer layer.
    if (workload.name == "bert" && c.tensor_parallel > 1) {
        std::vector<int> tp_group;
        for (int t = 0; t < c.tensor_parallel; ++t) tp_group.push_back(rank_of(c, t, 0, 0, 0));
        const double activation = kBertTokensPerSample * c.samples_per_micro_batch * kBertHidden * kActivationBytes;
        out.tp_cp_seconds_per_micro_step = kBertLayers * 4 * seconds(CollectiveOp::AllReduce, activation, tp_group);
    }
    // Tensor / context parallel collectives per micro step (Llama2-70B LoRA only in v4.1).
    if (workload.name == "llama2_70b_lora" && (c.tensor_parallel > 1 || c.context_parallel > 1)) {
        const double tokens_per_rank = kLlamaTokens * c.samples_per_micro_batch / c.context_parallel;
        double total = 0;
        if (c.tensor_parallel > 1) {
            std::vector<int> tp_group;
            for (int t = 0; t < c.tensor_parallel; ++t) tp_group.push_back(rank_of(c, t, 0, 0, 0));
            const double activation = tokens_per_rank * kLlamaHidden * kActivationBytes;
            total += kLlamaLayers * 4 *
                     (seconds(CollectiveOp::AllGather, activation, tp_group) +
                      seconds(CollectiveOp::ReduceScatter, activation, tp_group));
        }
        if (c.context_parallel > 1) {
            std::vector<int> cp_group;
            for (int k = 0; k < c.context_parallel; ++k) cp_group.push_back(rank_of(c, 0, k, 0, 0));
            const double kv = tokens_per_rank * 2 * kLlamaKvWidth * kActivationBytes * c.context_parallel;
            total += kLlamaLayers * 3 * seconds(CollectiveOp::AllGather, kv, cp_group);
        }
        out.tp_cp_seconds_per_micro_step = total;
    }
    if (simulator) out.simulations = simulator->simulations();
    return out;
}
}  // namespace

std::vector<std::string> system_names() {
    std::vector<std::string> names;
    for (const auto& s : kPresetSystems) names.push_back(s.name);
    for (const auto& g : gpu_names()) names.push_back(g);
    return names;
}

SystemInfo resolve_system(const std::string& system) {
    const std::string key = lower(system);
    for (const auto& s : kPresetSystems) {
        if (key == s.name) {
            SystemInfo info{s.name, &find_gpu(s.gpu), 8};
            for (const PresetInfo& p : preset_systems())
                if (p.name == s.name) info.gpus_per_node = p.gpus_per_node;
            return info;
        }
    }
    // A bare GPU name: an 8-GPU node of that GPU (its catalog scale-up domain), one NIC per GPU.
    try {
        const GpuSpec& gpu = find_gpu(system);
        for (const auto& s : kPresetSystems)
            if (gpu.name == s.gpu) return resolve_system(s.name);
        return SystemInfo{gpu.name, &gpu, std::min(8, gpu.gpus_per_scaleup_domain)};
    } catch (const InputError&) {
        std::string list;
        for (const auto& n : system_names()) list += (list.empty() ? "" : ", ") + n;
        throw InputError("unknown system '" + system + "'; valid: " + list, {}, "system");
    }
}

std::string sharp_unavailable_reason(const SystemInfo& system, int gpus) {
    const int domain = system.gpu->gpus_per_scaleup_domain;
    if (gpus > domain) return {};
    return std::to_string(gpus) + (gpus == 1 ? " GPU fits" : " GPUs fit") + " in one " + system.name +
           " NVLink domain (up to " + std::to_string(domain) +
           " GPUs): SHARP reduces between NVLink domains in the InfiniBand switches, and one domain has no switch "
           "fabric";
}

PreparedScenario prepare_with_layout(const Workload& workload, const GpuSpec& gpu, const std::string& system,
                                     int gpus, const ParallelismConfig& layout, FabricRouting routing) {
    TTSIM_ASSERT(layout.gpus() == gpus, "layout does not multiply out to the GPU count");
    PreparedScenario s;
    s.workload = &workload;
    s.gpu = &gpu;
    s.system = system;
    s.gpus = gpus;
    s.layout = layout;
    const int model_split = layout.tensor_parallel * layout.context_parallel * layout.pipeline_parallel;
    s.samples_per_gpu = static_cast<double>(layout.samples_per_micro_batch) / model_split;

    // Convergence at the global batch.
    const ConvergenceModel convergence = ConvergenceModel::for_workload(workload);
    const auto kept = convergence.table().kept();
    if (!kept.empty() && layout.global_batch * 4 < kept.front().global_batch)
        throw InputError("global batch " + std::to_string(layout.global_batch) + " is far below the smallest " +
                             workload.name + " RCP batch " + std::to_string(kept.front().global_batch) +
                             " (more than 4x); convergence there is unknown",
                         {}, "global-batch");
    ConvergenceEstimate estimate;
    try {
        estimate = convergence.samples_to_converge(layout.global_batch);
    } catch (const InputError& e) {
        throw InputError(e.message(), {}, "global-batch");
    }
    s.samples_mean = estimate.samples_mean;
    s.samples_p10 = estimate.samples_p10;
    s.samples_p90 = estimate.samples_p90;
    for (auto& w : estimate.warnings) s.warnings.push_back(w);

    // Collectives: simulated on the real topology (collective_times below).
    CommTimes comm = collective_times(workload, gpu, system, gpus, layout, routing);
    s.bucket_comm_seconds = std::move(comm.bucket_seconds);
    s.bucket_comm_name = comm.bucket_name;
    s.param_all_gather_seconds = comm.param_all_gather_seconds;
    s.tp_cp_comm_seconds_per_micro_step = comm.tp_cp_seconds_per_micro_step;
    s.optimizer_shards = comm.optimizer_shards;
    s.comm_topology = comm.topology;
    if (comm.topology != "analytic") s.routing = routing;
    s.collective_simulations = comm.simulations;
    for (auto& w : comm.warnings) s.warnings.push_back(std::move(w));

    // Evaluation.
    const EvalSchedule schedule = eval_schedule(workload, layout.global_batch);
    s.evaluations = evaluations_until(schedule, s.samples_mean);
    const double eval_per_rank = std::ceil(static_cast<double>(workload.eval_samples) / layout.data_parallel);
    s.eval_samples_per_gpu = eval_per_rank / model_split;

    s.straggler_sigmas = expected_max_standard_normal(gpus);
    s.node_straggler_sigmas =
        expected_max_standard_normal((gpus + gpu.gpus_per_scaleup_domain - 1) / gpu.gpus_per_scaleup_domain);
    return s;
}

namespace {
// Which model parallelism ttsim has a communication model for: TP for the transformers (BERT Megatron-style,
// Llama2-70B LoRA as v4.1); the convolutional RetinaNet and the Stable Diffusion UNet ran data parallel only.
bool tensor_parallel_modelled(const Workload& workload) {
    return workload.name == "llama2_70b_lora" || workload.name == "bert";
}
}  // namespace

PreparedScenario prepare(const PredictionRequest& request) {
    const Workload* found = nullptr;
    try {
        found = &find_workload(request.workload);
    } catch (const InputError& e) {
        throw InputError(e.message(), {}, "workload");
    }
    const Workload& workload = *found;
    const SystemInfo system = resolve_system(request.system);
    const GpuSpec& gpu = *system.gpu;
    const int n = request.gpus;
    if (n < 1) throw InputError("GPU count must be at least 1 (got " + std::to_string(n) + ")", {}, "gpus");
    if (n > kMaxPresetGpus)
        throw InputError(system.name + " holds at most " + std::to_string(kMaxPresetGpus) + " GPUs (got " +
                             std::to_string(n) + ")",
                         {}, "gpus");
    if (n > system.gpus_per_node && n % system.gpus_per_node != 0)
        throw InputError(std::to_string(n) + " GPUs is not a whole number of " + system.name + " nodes (" +
                             std::to_string(system.gpus_per_node) + " GPUs each)",
                         {}, "gpus");

    ParallelismChoice choice;
    try {
        choice = default_parallelism(workload, gpu.name, n);
    } catch (const InputError& e) {
        if (!request.tensor_parallel && !request.context_parallel) throw InputError(e.message(), {}, "gpus");
        // The user sets TP/CP below; start from the published layout at 8 GPUs' switches instead.
        choice = default_parallelism(workload, gpu.name, 8);
        choice.config.tensor_parallel = choice.config.context_parallel = 1;
        choice.config.data_parallel = n;
    }
    ParallelismConfig c = choice.config;
    std::vector<std::string> defaults;
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
        if (tp < 1) throw InputError("must be >= 1", {}, "tp");
        if (cp < 1) throw InputError("must be >= 1", {}, "cp");
        if (tp > gpu.gpus_per_scaleup_domain)
            throw InputError("tensor parallelism " + std::to_string(tp) + " exceeds the NVLink domain of " +
                                 std::to_string(gpu.gpus_per_scaleup_domain) + " GPUs",
                             {}, "tp");
        const int split = tp * cp * c.pipeline_parallel;
        if (n % split != 0)   // name the flag that breaks divisibility (TP first), not merely the last one given
            throw InputError(std::to_string(n) + " GPUs are not divisible by TP x CP = " + std::to_string(tp) + " x " +
                                 std::to_string(cp) + " = " + std::to_string(split),
                             {}, n % tp != 0 || !request.context_parallel ? "tp" : "cp");
        if (tp > 1 && !tensor_parallel_modelled(workload))
            throw InputError("tensor parallelism is modelled for bert and llama2_70b_lora only; " + workload.name +
                                 " runs data parallel (as in MLPerf v4.1)",
                             {}, "tp");
        if (cp > 1 && workload.name != "llama2_70b_lora")
            throw InputError("context parallelism is modelled for llama2_70b_lora only; " + workload.name +
                                 " runs without it (as in MLPerf v4.1)",
                             {}, "cp");
        c.tensor_parallel = tp;
        c.context_parallel = cp;
        c.data_parallel = n / split;
    }
    if (request.global_batch) {
        const int b = *request.global_batch;
        if (b < 1) throw InputError("global batch must be >= 1", {}, "global-batch");
        if (b % c.data_parallel != 0)
            throw InputError("global batch " + std::to_string(b) + " is not divisible by the data-parallel size " +
                                 std::to_string(c.data_parallel),
                             {}, "global-batch");
        const int share = b / c.data_parallel;
        int accumulation = request.gradient_accumulation.value_or(0);
        if (accumulation > 0) {
            if (share % accumulation != 0)
                throw InputError("global batch " + std::to_string(b) + " is not divisible by data-parallel size x " +
                                     "gradient accumulation = " + std::to_string(c.data_parallel * accumulation),
                                 {}, "global-batch");
        } else {
            // The fewest micro steps whose micro batch is no larger than any v4.1 layout ran.
            accumulation = fewest_micro_steps(share, largest_published_micro_batch(workload));
        }
        c.gradient_accumulation = accumulation;
        c.samples_per_micro_batch = share / accumulation;
        c.global_batch = b;
    } else {
        // The default batch: v4.1's at the nearest published scale, kept within the RCPs (convergence is measured
        // there), never below v4.1's at fewer GPUs, rounded up to the data-parallel size (workload.hpp).
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
            throw InputError(std::to_string(n) + " GPUs need a global batch of at least " +
                                 std::to_string(c.data_parallel) + " (one sample per data-parallel rank, " +
                                 std::to_string(model_split) + (model_split == 1 ? " GPU" : " GPUs") + " per replica), beyond " +
                                 std::to_string(static_cast<int>(max_factor)) + "x the largest RCP batch (" + std::to_string(largest_rcp) +
                                 "), where convergence is unknown; use at most " + std::to_string(most) +
                                 " GPUs with this layout" +
                                 (!tensor_parallel_modelled(workload) ? ""
                                  : workload.name == "bert"         ? ", or more GPUs per replica (--tp)"
                                                                    : ", or more GPUs per replica (--tp/--cp)"),
                             {}, "gpus");
        }
        c.global_batch = batch.global_batch;
        c.samples_per_micro_batch = batch.samples_per_micro_batch;
        c.gradient_accumulation = batch.gradient_accumulation;
        defaults.push_back(batch.note);
    }
    // The layout must at least hold the model state in HBM (activations come on top and are not modelled).
    if (const double need = model_state_bytes_per_gpu(workload, c); need > gpu.hbm_capacity_bytes) {
        int tp = c.tensor_parallel;
        ParallelismConfig wider = c;
        while (tp < gpu.gpus_per_scaleup_domain && model_state_bytes_per_gpu(workload, wider) > gpu.hbm_capacity_bytes) {
            tp *= 2;
            wider.tensor_parallel = tp;
        }
        char text[96];
        std::snprintf(text, sizeof text, "%.0f GB of model state per GPU", need / 1e9);
        throw InputError(workload.name + " needs at least " + text + " with TP " + std::to_string(c.tensor_parallel) +
                             " (bf16 weights and gradients, fp32 optimizer state; activations not counted), more than " +
                             gpu.name + "'s " + std::to_string(static_cast<int>(gpu.hbm_capacity_bytes / 1e9)) +
                             " GB of HBM" +
                             (model_state_bytes_per_gpu(workload, wider) <= gpu.hbm_capacity_bytes
                                  ? "; use --tp " + std::to_string(tp) + " or more"
                                  : std::string("")),
                         {}, request.tensor_parallel ? "tp" : "gpus");
    }
    if (c.packing_factor > 1 && c.samples_per_micro_batch % c.packing_factor != 0) c.packing_factor = 1;
    // NVIDIA's multi-node v4.1 runs enabled SHARP (params.md §2); keep that default for NVIDIA multi-node layouts.
    // Asked for where it cannot run, SHARP would silently do nothing: refuse instead.
    const std::string sharp_refusal = sharp_unavailable_reason(system, n);
    if (request.sharp.value_or(false) && !sharp_refusal.empty()) throw InputError(sharp_refusal, {}, "sharp");
    c.sharp = request.sharp.value_or(sharp_refusal.empty() && gpu.vendor == "NVIDIA");
    if (!request.sharp && c.sharp) defaults.push_back("SHARP in-network reduction on (as NVIDIA's multi-node v4.1 runs)");

    PreparedScenario s =
        prepare_with_layout(workload, gpu, system.name, n, c, request.routing.value_or(FabricOptions{}.routing));
    s.defaults.insert(s.defaults.begin(), defaults.begin(), defaults.end());
    return s;
}

namespace {
double evaluation_seconds(const PreparedScenario& s, const ComputeProfile& profile) {
    const Workload& w = *s.workload;
    if (!w.eval_on_the_clock) return 0.0;
    return forward_seconds(profile, w, *s.gpu, s.layout.fp8, s.eval_samples_per_gpu) + profile.eval_fixed_seconds;
}
}  // namespace

IterationPlan make_iteration_plan(const PreparedScenario& s, const ComputeProfile& profile) {
    const Workload& w = *s.workload;
    const GpuSpec& gpu = *s.gpu;
    const ParallelismConfig& c = s.layout;
    IterationPlan plan;
    plan.micro_steps = c.gradient_accumulation;
    const double compute = micro_step_compute_seconds(profile, w, gpu, c.fp8, s.samples_per_gpu);
    plan.micro_step_compute_seconds = compute + profile.tp_comm_exposed_fraction * s.tp_cp_comm_seconds_per_micro_step;
    plan.bucket_comm_seconds = s.bucket_comm_seconds;
    plan.bucket_comm_name = s.bucket_comm_name;
    plan.optimizer_seconds = optimizer_seconds(w, gpu, s.optimizer_shards);
    // A job spanning more than one scale-up domain (node) pays the shared multi-node per-step overhead.
    const bool multi_node = s.gpus > gpu.gpus_per_scaleup_domain;
    const double sigmas = profile.step_jitter_per_node ? s.node_straggler_sigmas : s.straggler_sigmas;
    plan.fixed_step_seconds = profile.fixed_step_seconds + (multi_node ? profile.multi_node_step_seconds : 0.0) +
                              profile.step_jitter_seconds * sigmas;
    plan.param_all_gather_seconds = s.param_all_gather_seconds;
    plan.straggler_factor = 1.0 + profile.step_jitter_cv * sigmas;
    plan.eval_seconds = evaluation_seconds(s, profile);
    return plan;
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
                    eval_schedule(*s.workload, s.layout.global_batch)};
}
}  // namespace

RunClock run_clock(const PreparedScenario& s, const ComputeProfile& profile) {
    const IterationPlan plan = make_iteration_plan(s, profile);
    return clock_of(s, profile, simulate_iteration(plan).step_seconds, plan.eval_seconds);
}

Prediction evaluate(const PreparedScenario& s, const ComputeProfile& profile) {
    const Workload& w = *s.workload;
    const GpuSpec& gpu = *s.gpu;
    const ParallelismConfig& c = s.layout;

    const IterationPlan plan = make_iteration_plan(s, profile);
    const double compute = micro_step_compute_seconds(profile, w, gpu, c.fp8, s.samples_per_gpu);
    const IterationResult it = simulate_iteration(plan);
    const double eval_seconds = plan.eval_seconds;
    const RunClock clock = clock_of(s, profile, it.step_seconds, eval_seconds);
    auto minutes_for = [&](double samples, long long* steps_out, long long* evals_out) {
        return clock.seconds(samples, steps_out, evals_out) / 60.0;
    };

    Prediction p;
    p.workload = w.name;
    p.system = s.system;
    p.gpu = gpu.name;
    p.gpus = s.gpus;
    p.layout = c;
    p.routing = s.routing;
    p.global_batch = c.global_batch;
    p.samples_to_converge = s.samples_mean;
    p.ttt_minutes = minutes_for(s.samples_mean, &p.steps, &p.evaluations);
    p.ttt_p10_minutes = minutes_for(s.samples_p10, nullptr, nullptr);
    p.ttt_p90_minutes = minutes_for(s.samples_p90, nullptr, nullptr);
    p.step_ms = it.step_seconds * 1e3;
    p.compute_ms = it.compute_seconds * 1e3;
    p.exposed_comm_ms = it.exposed_comm_seconds * 1e3;
    p.comm_total_ms = it.total_comm_seconds * 1e3;
    p.tp_cp_comm_ms = s.tp_cp_comm_seconds_per_micro_step * c.gradient_accumulation * 1e3;
    p.tp_cp_exposed_ms = profile.tp_comm_exposed_fraction * p.tp_cp_comm_ms;
    p.fixed_ms = it.fixed_seconds * 1e3;
    p.eval_minutes = p.evaluations * eval_seconds / 60.0;
    p.run_overhead_minutes = clock.run_overhead_seconds / 60.0;
    p.per_gpu_throughput = c.global_batch / it.step_seconds / s.gpus;
    p.gpu_hours = p.ttt_minutes / 60.0 * s.gpus;
    p.compute_only_bound_minutes = p.steps * c.gradient_accumulation * compute / 60.0;
    p.defaults = s.defaults;
    p.warnings = s.warnings;
    if (profile.transferred_from)
        p.warnings.push_back("no v4.1 calibration for " + gpu.name + "; " + w.name + " compute profile transferred from " +
                             *profile.transferred_from + " by scaling with peak FLOP/s and HBM bandwidth");
    for (auto& w : extrapolation_warnings(profile, s.samples_per_gpu, s.gpus)) p.warnings.push_back(std::move(w));
    return p;
}

Prediction predict(const PredictionRequest& request, const ProfileSet& profiles) {
    const PreparedScenario scenario = prepare(request);
    const ComputeProfile profile = profiles.find(*scenario.workload, *scenario.gpu);
    Prediction p = evaluate(scenario, profile);
    if (request.compute_efficiency_vs_8gpu) {
        PredictionRequest base;
        base.workload = request.workload;
        base.system = request.system;
        base.gpus = 8;
        base.routing = request.routing;
        base.compute_efficiency_vs_8gpu = false;
        const Prediction reference = evaluate(prepare(base), profile);
        p.efficiency_vs_8gpu = p.per_gpu_throughput / reference.per_gpu_throughput;
    }
    return p;
}

}  // namespace ttsim
