#include "models/training/predict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

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

PreparedScenario prepare_with_layout(const Workload& workload, const GpuSpec& gpu, const std::string& system,
                                     int gpus, const ParallelismConfig& layout) {
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

    // Communication groups. Ranks of one data-parallel group that share an NVLink domain:
    const int domain = std::min(gpus, gpu.gpus_per_scaleup_domain);
    const int dp_per_domain = std::max(1, std::min(layout.data_parallel, domain / std::min(domain, model_split)));
    const int domains = (layout.data_parallel + dp_per_domain - 1) / dp_per_domain;
    const bool sharp = layout.sharp && domains > 1;
    const AnalyticCommModel comm(gpu);

    // Gradients per data-parallel rank: TP shards the weights, CP and DP do not.
    const double gradient_bytes = static_cast<double>(workload.gradient_bytes) / layout.tensor_parallel;
    const int buckets = std::max(1, static_cast<int>(std::ceil(gradient_bytes / kGradientBucketBytes)));
    const double bucket_bytes = gradient_bytes / buckets;
    if (layout.data_parallel > 1) {
        if (!layout.distributed_optimizer) {
            const double t = comm.seconds(CollectiveKind::all_reduce, bucket_bytes,
                                          {layout.data_parallel, dp_per_domain, sharp});
            s.bucket_comm_seconds.assign(buckets, t);
            s.optimizer_shards = 1;
        } else {
            // Distributed optimizer, hierarchical as in apex DistributedFusedLAMB/Adam: reduce-scatter inside the
            // NVLink domain, all-reduce of each rank's shard across domains (SHARP when on), optimizer on the
            // shard, all-gather of the updated parameters inside the domain.
            const double rs = comm.seconds(CollectiveKind::reduce_scatter, bucket_bytes,
                                           {dp_per_domain, dp_per_domain, false});
            const double ar = domains > 1 ? comm.seconds(CollectiveKind::all_reduce, bucket_bytes / dp_per_domain,
                                                         {domains, 1, sharp})
                                          : 0.0;
            s.bucket_comm_seconds.assign(buckets, rs + ar);
            s.param_all_gather_seconds =
                comm.seconds(CollectiveKind::all_gather, gradient_bytes, {dp_per_domain, dp_per_domain, false});
            s.optimizer_shards = dp_per_domain;
        }
    }

    // Tensor / context parallel collectives per micro step (Llama2-70B LoRA only in v4.1).
    if (workload.name == "llama2_70b_lora" && (layout.tensor_parallel > 1 || layout.context_parallel > 1)) {
        const double tokens_per_rank = kLlamaTokens * layout.samples_per_micro_batch / layout.context_parallel;
        double seconds = 0;
        if (layout.tensor_parallel > 1) {
            // Megatron sequence parallelism: per layer 2 all-gathers + 2 reduce-scatters forward, the same
            // backward, each over the full activation tensor of this rank's tokens.
            const double activation = tokens_per_rank * kLlamaHidden * kActivationBytes;
            const int tp = layout.tensor_parallel;
            const double one = comm.seconds(CollectiveKind::all_gather, activation, {tp, std::min(tp, domain), false});
            seconds += kLlamaLayers * 8 * one;
        }
        if (layout.context_parallel > 1) {
            // Ring attention: each rank passes its K and V chunk around the CP ring, once forward and twice in
            // backward (KV and their gradients): ~ an all-gather of K,V three times per layer.
            const int cp = layout.context_parallel;
            const double kv = tokens_per_rank * 2 * kLlamaKvWidth * kActivationBytes * cp;
            const int cp_per_domain = std::max(1, std::min(cp, domain / std::min(domain, layout.tensor_parallel)));
            seconds += kLlamaLayers * 3 * comm.seconds(CollectiveKind::all_gather, kv, {cp, cp_per_domain, false});
        }
        s.tp_cp_comm_seconds_per_micro_step = seconds;
    }

    // Evaluation.
    const EvalSchedule schedule = eval_schedule(workload, layout.global_batch);
    s.evaluations = evaluations_until(schedule, s.samples_mean);
    const double eval_per_rank = std::ceil(static_cast<double>(workload.eval_samples) / layout.data_parallel);
    s.eval_samples_per_gpu = eval_per_rank / model_split;

    s.straggler_sigmas = expected_max_standard_normal(gpus);
    return s;
}

PreparedScenario prepare(const PredictionRequest& request) {
    const Workload& workload = find_workload(request.workload);
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
    defaults.push_back("layout from " + choice.basis.source + " (" + choice.basis.system_family + ", " +
                       std::to_string(choice.basis.gpus) + " GPUs)");
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
        if (n % split != 0)
            throw InputError(std::to_string(n) + " GPUs are not divisible by TP x CP = " + std::to_string(split), {},
                             request.context_parallel ? "cp" : "tp");
        c.tensor_parallel = tp;
        c.context_parallel = cp;
        c.data_parallel = n / split;
        if (!request.global_batch) {
            c.gradient_accumulation = 1;
            c.global_batch = c.data_parallel * c.samples_per_micro_batch;
            defaults.push_back("global batch = DP x published micro batch = " + std::to_string(c.global_batch));
        }
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
            accumulation = std::max(1, (share + c.samples_per_micro_batch - 1) / c.samples_per_micro_batch);
            while (share % accumulation != 0) ++accumulation;
        }
        c.gradient_accumulation = accumulation;
        c.samples_per_micro_batch = share / accumulation;
        c.global_batch = b;
    } else {
        defaults.push_back("global batch " + std::to_string(c.global_batch) + " (v4.1 at the nearest scale)");
    }
    if (c.packing_factor > 1 && c.samples_per_micro_batch % c.packing_factor != 0) c.packing_factor = 1;
    // NVIDIA's multi-node v4.1 runs enabled SHARP (params.md §2); keep that default for NVIDIA multi-node layouts.
    const bool multi_node = n > gpu.gpus_per_scaleup_domain;
    c.sharp = request.sharp.value_or(multi_node && gpu.vendor == "NVIDIA");
    if (!request.sharp && c.sharp) defaults.push_back("SHARP in-network reduction on (as NVIDIA's multi-node v4.1 runs)");

    PreparedScenario s = prepare_with_layout(workload, gpu, system.name, n, c);
    s.defaults.insert(s.defaults.begin(), defaults.begin(), defaults.end());
    return s;
}

Prediction evaluate(const PreparedScenario& s, const ComputeProfile& profile) {
    const Workload& w = *s.workload;
    const GpuSpec& gpu = *s.gpu;
    const ParallelismConfig& c = s.layout;

    IterationPlan plan;
    plan.micro_steps = c.gradient_accumulation;
    const double compute = micro_step_compute_seconds(profile, w, gpu, c.fp8, s.samples_per_gpu);
    plan.micro_step_compute_seconds = compute + profile.tp_comm_exposed_fraction * s.tp_cp_comm_seconds_per_micro_step;
    plan.bucket_comm_seconds = s.bucket_comm_seconds;
    plan.optimizer_seconds = optimizer_seconds(w, gpu, s.optimizer_shards);
    plan.fixed_step_seconds = profile.fixed_step_seconds;
    plan.param_all_gather_seconds = s.param_all_gather_seconds;
    plan.straggler_factor = 1.0 + profile.step_jitter_cv * s.straggler_sigmas;
    const IterationResult it = simulate_iteration(plan);

    const double eval_seconds =
        w.eval_on_the_clock ? forward_seconds(profile, w, gpu, c.fp8, s.eval_samples_per_gpu) + profile.eval_fixed_seconds
                            : 0.0;
    const EvalSchedule schedule = eval_schedule(w, c.global_batch);
    auto minutes_for = [&](double samples, long long* steps_out, long long* evals_out) {
        const long long steps = ceil_div(samples, c.global_batch);
        const long long evals = evaluations_until(schedule, samples);
        if (steps_out) *steps_out = steps;
        if (evals_out) *evals_out = evals;
        return (steps * it.step_seconds + evals * eval_seconds) / 60.0;
    };

    Prediction p;
    p.workload = w.name;
    p.system = s.system;
    p.gpu = gpu.name;
    p.gpus = s.gpus;
    p.layout = c;
    p.global_batch = c.global_batch;
    p.samples_to_converge = s.samples_mean;
    p.ttt_minutes = minutes_for(s.samples_mean, &p.steps, &p.evaluations);
    p.ttt_p10_minutes = minutes_for(s.samples_p10, nullptr, nullptr);
    p.ttt_p90_minutes = minutes_for(s.samples_p90, nullptr, nullptr);
    p.step_ms = it.step_seconds * 1e3;
    p.compute_ms = it.compute_seconds * 1e3;
    p.exposed_comm_ms = it.exposed_comm_seconds * 1e3;
    p.comm_total_ms = it.total_comm_seconds * 1e3;
    p.fixed_ms = it.fixed_seconds * 1e3;
    p.eval_minutes = p.evaluations * eval_seconds / 60.0;
    p.per_gpu_throughput = c.global_batch / it.step_seconds / s.gpus;
    p.gpu_hours = p.ttt_minutes / 60.0 * s.gpus;
    p.compute_only_bound_minutes = p.steps * c.gradient_accumulation * compute / 60.0;
    p.defaults = s.defaults;
    p.warnings = s.warnings;
    if (profile.transferred_from)
        p.warnings.push_back("no v4.1 calibration for " + gpu.name + "; " + w.name + " compute profile transferred from " +
                             *profile.transferred_from + " by scaling with peak FLOP/s and HBM bandwidth");
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
        base.compute_efficiency_vs_8gpu = false;
        const Prediction reference = evaluate(prepare(base), profile);
        p.efficiency_vs_8gpu = p.per_gpu_throughput / reference.per_gpu_throughput;
    }
    return p;
}

}  // namespace ttsim
