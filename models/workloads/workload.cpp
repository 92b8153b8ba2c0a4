#include "models/workloads/workload.hpp"

#include <limits>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace ttsim {
namespace {

// ---- published parallelism (params.md §4.3, params.yaml workloads.*.nvidia_parallelism) ---------------------

struct LayoutSpec {
    int tp = 1, cp = 1, pp = 1, dp = 1;
    int micro = 1, accumulation = 1, packing = 1;
    bool distributed_optimizer = false, sharp = false, sequence_parallel = false, fp8 = false;
};

PublishedParallelism published(std::string family, int gpus, LayoutSpec s, std::string source) {
    ParallelismConfig c;
    c.tensor_parallel = s.tp;
    c.context_parallel = s.cp;
    c.pipeline_parallel = s.pp;
    c.data_parallel = s.dp;
    c.samples_per_micro_batch = s.micro;
    c.gradient_accumulation = s.accumulation;
    c.packing_factor = s.packing;
    c.global_batch = s.dp * s.micro * s.accumulation;
    c.distributed_optimizer = s.distributed_optimizer;
    c.sharp = s.sharp;
    c.sequence_parallel = s.sequence_parallel;
    c.fp8 = s.fp8;
    TTSIM_ASSERT(c.gpus() == gpus, "published layout does not multiply out to its GPU count");
    return PublishedParallelism{std::move(family), gpus, c, std::move(source)};
}

// SHARP: params.md §2 says NVIDIA's multi-node v4.1 runs enable it (SBATCH_NETWORK=sharp, SHARP=True); §4.3
// lists it explicitly for BERT 3472, RetinaNet 2528, SD 1024 and LoRA 64/1024 GPUs. We mark every multi-node
// NVIDIA v4.1 configuration as SHARP on.
std::vector<PublishedParallelism> bert_layouts() {
    const std::string src = "MLP41 bert configs (params.md §4.3)";
    // 1 node: 48 packed rows x packing 2 = 96 sequences per GPU -> GBS 768; DDP on one node.
    LayoutSpec one_node{.dp = 8, .micro = 96, .packing = 2};
    // 8 nodes: 72 unpacked sequences per GPU -> 4608; apex DistributedFusedLAMB multi-node (params.yaml note).
    LayoutSpec eight_nodes{.dp = 64, .micro = 72, .distributed_optimizer = true, .sharp = true};
    // 434 nodes: 2 packed rows x 2 = 4 sequences per GPU -> 13,888; SHARP, DistributedFusedLAMB.
    LayoutSpec max_scale{.dp = 3472, .micro = 4, .packing = 2, .distributed_optimizer = true, .sharp = true};
    return {published("H100-SXM", 8, one_node, src), published("H100-SXM", 64, eight_nodes, src),
            published("H100-SXM", 3472, max_scale, src), published("H200-SXM", 8, one_node, src),
            published("B200", 8, one_node, src)};
}

std::vector<PublishedParallelism> retinanet_layouts() {
    const std::string src = "MLP41 ssd configs (params.md §4.3)";
    LayoutSpec one_node{.dp = 8, .micro = 32};                       // 32 images/GPU -> 256
    LayoutSpec eight_nodes{.dp = 64, .micro = 4, .sharp = true};     // 4 images/GPU -> 256
    LayoutSpec max_scale{.dp = 2528, .micro = 1, .sharp = true};     // 1 image/GPU -> 2528
    return {published("H100-SXM", 8, one_node, src), published("H100-SXM", 64, eight_nodes, src),
            published("H100-SXM", 2528, max_scale, src), published("H200-SXM", 8, one_node, src),
            published("B200", 8, one_node, src)};
}

std::vector<PublishedParallelism> stable_diffusion_layouts() {
    const std::string src = "MLP41 stable_diffusion configs (params.md §4.3; USE_DIST_OPTIMIZER=True)";
    LayoutSpec one_node{.dp = 8, .micro = 32, .distributed_optimizer = true};                     // -> 256
    LayoutSpec n8{.dp = 64, .micro = 16, .distributed_optimizer = true, .sharp = true};          // -> 1024
    LayoutSpec n64{.dp = 512, .micro = 4, .distributed_optimizer = true, .sharp = true};         // -> 2048
    LayoutSpec n128{.dp = 1024, .micro = 2, .distributed_optimizer = true, .sharp = true};       // -> 2048
    return {published("H100-SXM", 8, one_node, src), published("H100-SXM", 64, n8, src),
            published("H100-SXM", 512, n64, src),   published("H100-SXM", 1024, n128, src),
            published("H200-SXM", 8, one_node, src), published("B200", 8, one_node, src)};
}

std::vector<PublishedParallelism> lora_layouts() {
    // configs/config_common.sh: PP=1, SP=1, MBS=1, FP8=True, NCCL_NVLS_ENABLE=0 (params.yaml).
    const std::string src = "MLP41 llama2_70b_lora configs (params.md §4.3)";
    const std::string src_v50 = "MLP50 (v5.0) llama2_70b_lora configs (params.md §4.3)";
    LayoutSpec h100_1{.tp = 4, .dp = 2, .accumulation = 4, .sequence_parallel = true, .fp8 = true};
    LayoutSpec h100_8{.tp = 4, .cp = 2, .dp = 8, .sharp = true, .sequence_parallel = true, .fp8 = true};
    LayoutSpec h100_128{.tp = 4, .cp = 2, .dp = 128, .sharp = true, .sequence_parallel = true, .fp8 = true};
    LayoutSpec h200_1{.cp = 2, .dp = 4, .accumulation = 2, .fp8 = true};   // also the B200 v4.1 preview
    // GB200 NVL72 (v5.0): CP 1/8/8/8 at 8/72/144/512 GPUs, GBS 8/9/18/64; SHARP not stated, left off.
    LayoutSpec gb200_8{.dp = 8, .fp8 = true};
    LayoutSpec gb200_72{.cp = 8, .dp = 9, .fp8 = true};
    LayoutSpec gb200_144{.cp = 8, .dp = 18, .fp8 = true};
    LayoutSpec gb200_512{.cp = 8, .dp = 64, .fp8 = true};
    LayoutSpec mi300x_8{.dp = 8, .fp8 = true};                               // AMD v5.0
    return {published("H100-SXM", 8, h100_1, src),       published("H100-SXM", 64, h100_8, src),
            published("H100-SXM", 1024, h100_128, src),  published("H200-SXM", 8, h200_1, src),
            published("B200", 8, h200_1, src),           published("GB200", 8, gb200_8, src_v50),
            published("GB200", 72, gb200_72, src_v50),   published("GB200", 144, gb200_144, src_v50),
            published("GB200", 512, gb200_512, src_v50), published("MI300X", 8, mi300x_8, src_v50)};
}

// ---- workloads (params.yaml workloads:, params.md §4.1-4.2) -------------------------------------------------

Workload bert() {
    Workload w;
    w.name = "bert";
    w.mlperf_benchmark = "bert";
    w.description = "BERT-large pre-training (24 layers, hidden 1024, seq 512), Wikipedia 2020-01-01";
    w.total_params = 336'226'108;                  // src: DERIVED (params.yaml bert_large.params)
    w.trainable_params = w.total_params;
    w.gradient_dtype = "fp16";                     // src: params.yaml bert_large.grad_bytes_per_step note (apex, fp16)
    w.gradient_dtype_confirmed = true;
    w.gradient_bytes = 672'452'216;                // src: DERIVED (fp16)
    // ~256 real tokens per 512-token sequence (>50% padding, PACKING); conf estimate. At full length the train
    // cost would be 1,019,758,866,432 FLOP (params.yaml train_flops_per_seq_512).
    w.train_flops_per_sample = 490'555'232'256.0;  // src: DERIVED train_flops_per_seq_avg_len_256 (estimate)
    w.forward_flops_per_sample = w.train_flops_per_sample / 3;   // train = 3 x forward (params.md §4.1)
    w.flops_note = "per sequence at ~256 real tokens (estimate; NVIDIA packs 2 sequences per 512-token row); "
                   "1.02 TFLOP at full length 512";
    w.train_samples = std::nullopt;                // not sourced; BERT converges in samples, so not needed
    w.eval_samples = 10'000;                       // src: REF bert/README.md; MLP41 logs eval_samples
    w.convergence_unit = ConvergenceUnit::samples; // src: RCP rcps_bert.json (samples)
    w.runs_per_result = 10;                        // src: RULES
    w.quality_target = "masked-LM accuracy >= 0.720";   // src: RULES
    w.eval_on_the_clock = true;                    // src: RULES
    // RULES: every FLOOR(0.05 * (230.23 * GBS + 3,000,000), 25,000) samples, the first after one interval.
    w.eval_rule = EvalRule{.interval = EvalRule::Interval::batch_linear, .scale = 0.05, .per_batch = 230.23,
                           .base = 3'000'000.0, .round_to = 25'000.0};
    w.published_parallelism = bert_layouts();
    // BERT-large (Devlin et al. 2019, "BERT_LARGE": 24 layers, hidden 1024) at MLPerf's 512-token sequences; with
    // packing 2 samples share a 512-token row, so a sample is 256 tokens on average (params.md §7 item 5). No
    // v4.1 submission used TP: a what-if, Megatron-style.
    w.model_parallel = ModelParallelComm{.layers = 24, .hidden = 1024, .tokens_per_sample = 256,
                                         .tensor_style = ModelParallelComm::TensorStyle::allreduce};
    return w;
}

Workload llama2_70b_lora() {
    Workload w;
    w.name = "llama2_70b_lora";
    w.mlperf_benchmark = "llama2_70b_lora";
    w.description = "Llama2-70B LoRA fine-tuning (rank 16 on QKV and attention out-proj), SCROLLS GovReport, "
                    "8192-token sequences";
    w.total_params = 68'976'648'192ULL + 44'564'480ULL;   // src: DERIVED base_params + lora_trainable_params
    w.trainable_params = 44'564'480;               // src: DERIVED 80 x 16 x [(8192+10240) + (8192+8192)]
    w.gradient_dtype = "bf16";                     // dtype unconfirmed (params.md §7 item 4)
    w.gradient_dtype_confirmed = false;
    w.gradient_bytes = 89'128'960;                 // src: DERIVED (bf16, whole model; TP shards it further)
    w.train_flops_per_sample = 2'561'647'344'353'280.0;   // src: DERIVED train_flops_per_seq_8192
    w.forward_flops_per_sample = 1'214e12;         // src: params.md §4.1 (1,214 TFLOP per 8192-token sequence)
    w.flops_note = "per 8192-token sequence: forward + dgrad (frozen base has no wgrad), causal flash attention "
                   "backward ~2.5x forward, no recompute";
    w.train_samples = 3'901;                       // src: MLP41 result logs train_samples
    w.eval_samples = 173;                          // src: MLP41 result logs eval_samples
    w.convergence_unit = ConvergenceUnit::samples; // src: RCP rcps_llama2_70b_lora.json ("samples to converge")
    w.runs_per_result = 10;                        // src: RULES
    w.quality_target = "eval loss <= 0.925";       // src: RULES
    w.eval_on_the_clock = true;                    // src: RULES
    // RULES: every 384 samples, the first FLOOR(0.125 * GBS + 2) evaluations skipped.
    w.eval_rule = EvalRule{.interval = EvalRule::Interval::fixed, .samples = 384, .skip_per_batch = 0.125, .skip_base = 2};
    w.published_parallelism = lora_layouts();
    // Llama2-70B (Llama 2 paper, Table 1 / HF config: 80 layers, hidden 8192, 8 KV heads of 128), 8192 tokens per
    // sequence (params.md §4.1); v4.1 ran TP with sequence parallelism and CP (params.md §4.3).
    w.model_parallel = ModelParallelComm{.layers = 80, .hidden = 8192, .tokens_per_sample = 8192,
                                         .tensor_style = ModelParallelComm::TensorStyle::sequence_parallel,
                                         .context_kv_width = 8 * 128};
    return w;
}

Workload retinanet() {
    Workload w;
    w.name = "retinanet";
    w.mlperf_benchmark = "ssd";
    w.description = "RetinaNet (ResNeXt50-32x4d + FPN), OpenImages-v6 MLPerf subset, 800x800";
    w.total_params = 37'060'652;                   // src: DERIVED params_total
    w.trainable_params = 36'849'004;               // src: DERIVED params_trainable (conv1+layer1 and BN frozen)
    w.gradient_dtype = "fp16";                     // src: params.yaml note (--master-weights, likely fp16); unconfirmed
    w.gradient_dtype_confirmed = false;
    w.gradient_bytes = 73'698'008;                 // src: DERIVED (fp16)
    w.train_flops_per_sample = 1'168'870'848'512.0;     // src: DERIVED train_flops_per_image_800
    w.forward_flops_per_sample = 402'416'789'504.0;     // src: DERIVED fwd_flops_per_image_800
    w.flops_note = "per 800x800 image; no backward through the frozen stem";
    w.train_samples = 1'170'301;                   // src: REF single_stage_detector/README.md
    w.eval_samples = 24'781;                       // src: REF single_stage_detector/README.md
    w.convergence_unit = ConvergenceUnit::epochs;  // src: RCP rcps_ssd.json (epochs)
    w.runs_per_result = 5;                         // src: RULES
    w.quality_target = "mAP >= 34.0%";             // src: RULES
    w.eval_on_the_clock = true;                    // src: RULES
    w.eval_rule = EvalRule{.interval = EvalRule::Interval::epoch};   // RULES: every epoch
    w.published_parallelism = retinanet_layouts();
    return w;
}

Workload stable_diffusion() {
    Workload w;
    w.name = "stable_diffusion";
    w.mlperf_benchmark = "stable_diffusion";
    w.description = "Stable Diffusion v2 UNet training on precomputed latents, LAION-400M CC-BY subset";
    w.total_params = 865'910'724;                  // src: DERIVED unet_params (VAE and text encoder not trained)
    w.trainable_params = w.total_params;
    w.gradient_dtype = "bf16";                     // unconfirmed (params.md §7 item 4)
    w.gradient_dtype_confirmed = false;
    w.gradient_bytes = 1'731'821'448;              // src: DERIVED (bf16)
    w.train_flops_per_sample = 2'412'605'276'160.0;     // src: DERIVED train_flops_per_sample (3 x forward)
    w.forward_flops_per_sample = 804'201'758'720.0;     // src: DERIVED fwd_flops_per_sample
    w.flops_note = "per image: UNet on a 64x64x4 latent with 77x1024 text context (latents precomputed)";
    w.train_samples = 6'513'144;                   // src: MLP41 result logs train_samples (params.md says ~6.1M)
    w.eval_samples = 30'000;                       // src: REF stable_diffusion/README.md (COCO-2014 val captions)
    w.convergence_unit = ConvergenceUnit::samples; // src: RCP rcps_stable_diffusion.json
    w.runs_per_result = 10;                        // src: RULES
    w.quality_target = "FID <= 90 and CLIP >= 0.15";    // src: RULES
    w.eval_on_the_clock = false;                   // src: RULES appendix (offline evaluation of checkpoints)
    // RULES appendix: a checkpoint every 512,000 samples, evaluated offline.
    w.eval_rule = EvalRule{.interval = EvalRule::Interval::fixed, .samples = 512'000};
    w.published_parallelism = stable_diffusion_layouts();
    return w;
}

std::vector<Workload> build_catalog() { return {bert(), llama2_70b_lora(), retinanet(), stable_diffusion()}; }

struct Alias {
    std::string_view alias;
    std::string_view canonical;
};
constexpr std::array kAliases{
    Alias{"bert", "bert"},           Alias{"bert_large", "bert"},
    Alias{"llama2_70b_lora", "llama2_70b_lora"}, Alias{"lora", "llama2_70b_lora"},
    Alias{"llama2_lora", "llama2_70b_lora"},     Alias{"llama2", "llama2_70b_lora"},
    Alias{"retinanet", "retinanet"}, Alias{"ssd", "retinanet"},
    Alias{"stable_diffusion", "stable_diffusion"}, Alias{"sd", "stable_diffusion"},
    Alias{"stable_diffusion_v2", "stable_diffusion"}, Alias{"sd2", "stable_diffusion"},
};

std::uint64_t checked_global_batch(std::int64_t global_batch) {
    if (global_batch < 1)
        throw InputError("global batch must be at least 1 (got " + std::to_string(global_batch) + ")",
                         Field::global_batch);
    return static_cast<std::uint64_t>(global_batch);
}

}  // namespace

const char* to_string(ConvergenceUnit unit) { return unit == ConvergenceUnit::samples ? "samples" : "epochs"; }

const std::vector<Workload>& workload_catalog() {
    static const std::vector<Workload> catalog = build_catalog();  // immutable after first use
    return catalog;
}

std::vector<std::string> workload_names() {
    std::vector<std::string> names;
    for (const Workload& w : workload_catalog()) names.push_back(w.name);
    return names;
}

const Workload& find_workload(std::string_view name) {
    const std::string key = name_key(name);
    for (const Alias& a : kAliases)
        if (name_key(a.alias) == key)
            for (const Workload& w : workload_catalog())
                if (w.name == a.canonical) return w;
    std::string valid;
    for (const std::string& n : workload_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError("unknown workload '" + std::string(name) + "'; valid workloads: " + valid +
                     " (aliases: ssd = retinanet, sd = stable_diffusion, lora = llama2_70b_lora)",
                     Field::workload);
}

std::uint64_t bert_eval_interval_samples(std::int64_t global_batch) {
    return eval_schedule(find_workload("bert"), global_batch).interval_samples;
}

EvalSchedule eval_schedule(const Workload& workload, std::int64_t global_batch) {
    const std::uint64_t gbs = checked_global_batch(global_batch);
    const EvalRule& rule = workload.eval_rule;
    EvalSchedule s;
    s.on_the_clock = workload.eval_on_the_clock;
    switch (rule.interval) {
        case EvalRule::Interval::fixed: s.interval_samples = static_cast<std::uint64_t>(rule.samples); break;
        case EvalRule::Interval::epoch:
            TTSIM_ASSERT(workload.train_samples.has_value(), workload.name + " evaluates per epoch but has no dataset size");
            s.interval_samples = *workload.train_samples;
            break;
        case EvalRule::Interval::batch_linear: {
            const double raw = rule.scale * (rule.per_batch * static_cast<double>(gbs) + rule.base);
            s.interval_samples =
                static_cast<std::uint64_t>(std::floor(raw / rule.round_to)) * static_cast<std::uint64_t>(rule.round_to);
            break;
        }
    }
    const std::uint64_t skipped =
        static_cast<std::uint64_t>(std::floor(rule.skip_per_batch * static_cast<double>(gbs) + rule.skip_base));
    s.first_eval_samples = (skipped + 1) * s.interval_samples;
    return s;
}

// How the default is derived (see the header): nearest published GPU count of the same family (or of H100-SXM
// when the family has nothing within 2x), keep model parallelism, rescale data parallelism, hold the global
// batch when it splits evenly.
ParallelismChoice default_parallelism(const Workload& workload, std::string_view system_family, int gpus) {
    if (gpus < 1) throw InputError("GPU count must be at least 1 (got " + std::to_string(gpus) + ")", Field::gpus);
    const GpuSpec& gpu = find_gpu(system_family);   // InputError for unknown families
    ParallelismChoice choice;

    // Nearest published GPU count in log scale; ties go to the requested family, then to the smaller count.
    auto nearest_of = [&](bool include_reference_platform) -> const PublishedParallelism* {
        const PublishedParallelism* best = nullptr;
        double best_distance = 0;
        for (const PublishedParallelism& p : workload.published_parallelism) {
            const bool own = p.system_family == gpu.name;
            if (!own && !(include_reference_platform && p.system_family == reference_gpu().name)) continue;
            const double distance = std::abs(std::log(static_cast<double>(gpus) / p.gpus));
            bool better = best == nullptr || distance < best_distance - 1e-12;
            if (!better && std::abs(distance - best_distance) <= 1e-12) {
                const bool best_own = best->system_family == gpu.name;
                better = (own && !best_own) || (own == best_own && p.gpus < best->gpus);
            }
            if (better) {
                best = &p;
                best_distance = distance;
            }
        }
        return best;
    };
    // The family's own layouts if one is within 2x of the requested count; otherwise NVIDIA's H100-SXM layouts
    // (its reference platform, published up to thousands of GPUs) compete too.
    const PublishedParallelism* nearest = nearest_of(false);
    if (nearest == nullptr || std::abs(std::log(static_cast<double>(gpus) / nearest->gpus)) > std::log(2.0) + 1e-12)
        nearest = nearest_of(true);
    TTSIM_ASSERT(nearest != nullptr, "workload without published H100 parallelism");
    if (nearest->system_family != gpu.name)
        choice.notes.push_back("no published " + workload.name + " layout for " + gpu.name + " near " +
                               std::to_string(gpus) + " GPUs; derived from " + nearest->system_family + " at " +
                               std::to_string(nearest->gpus) + " GPUs");
    choice.basis = *nearest;
    choice.exact_match = nearest->gpus == gpus && nearest->system_family == gpu.name;

    ParallelismConfig c = nearest->config;
    const int model_parallel = c.tensor_parallel * c.context_parallel * c.pipeline_parallel;
    if (gpus % model_parallel != 0)
        throw InputError(std::to_string(gpus) + " GPUs cannot hold " + workload.name + "'s published layout (TP " +
                             std::to_string(c.tensor_parallel) + " x CP " + std::to_string(c.context_parallel) +
                             " x PP " + std::to_string(c.pipeline_parallel) + " = " + std::to_string(model_parallel) +
                             " GPUs per replica); use a multiple of " + std::to_string(model_parallel),
                         Field::gpus);
    c.data_parallel = gpus / model_parallel;

    // The batch v4.1 suggests here: interpolated in log(batch) over log(GPUs) between the published scales of the
    // basis family around the requested count (batches grew with scale in v4.1 roughly as a power law).
    {
        const PublishedParallelism* below = nullptr;
        const PublishedParallelism* above = nullptr;
        for (const PublishedParallelism& p : workload.published_parallelism) {
            if (p.system_family != nearest->system_family) continue;
            if (p.gpus <= gpus && (!below || p.gpus > below->gpus)) below = &p;
            if (p.gpus >= gpus && (!above || p.gpus < above->gpus)) above = &p;
        }
        const std::string family = " " + nearest->system_family + " GPUs";
        if (below && above && below->gpus != above->gpus &&
            below->config.global_batch == above->config.global_batch) {
            choice.batch_target = below->config.global_batch;
            choice.batch_source = "v4.1's at " + std::to_string(below->gpus) + " and " + std::to_string(above->gpus) + family;
        } else if (below && above && below->gpus != above->gpus) {
            const double t = std::log(static_cast<double>(gpus) / below->gpus) / std::log(static_cast<double>(above->gpus) / below->gpus);
            const double logb = std::log(below->config.global_batch) +
                                t * std::log(static_cast<double>(above->config.global_batch) / below->config.global_batch);
            choice.batch_target = static_cast<int>(std::lround(std::exp(logb)));
            choice.batch_source = "interpolated between v4.1's " + std::to_string(below->config.global_batch) + " at " +
                                  std::to_string(below->gpus) + " and " + std::to_string(above->config.global_batch) +
                                  " at " + std::to_string(above->gpus) + family;
        } else {
            choice.batch_target = nearest->config.global_batch;
            choice.batch_source = "v4.1's at " + std::to_string(nearest->gpus) + family;
        }
    }
    if (!choice.exact_match) {
        const BatchChoice batch = default_global_batch(choice.batch_target, largest_published_micro_batch(workload),
                                                       c.data_parallel, BatchBounds{}, choice.batch_source);
        c.global_batch = batch.global_batch;
        c.samples_per_micro_batch = batch.samples_per_micro_batch;
        c.gradient_accumulation = batch.gradient_accumulation;
        choice.batch_note = batch.note;
        if (c.packing_factor > 1 && c.samples_per_micro_batch % c.packing_factor != 0) {
            c.packing_factor = 1;
            choice.notes.push_back("micro batch not a multiple of the packing factor; packing off");
        }
        // NVIDIA enables SHARP on multi-node runs (params.md §2) and has nothing to reduce in-network on one node.
        // (Stated once by the caller that decides the final switch, e.g. predict.)
        const bool multi_node = gpus > gpu.gpus_per_scaleup_domain;
        if (gpu.vendor == "NVIDIA") c.sharp = multi_node;
    }
    TTSIM_ASSERT(c.gpus() == gpus, "derived parallelism does not cover the requested GPUs");
    choice.config = c;
    return choice;
}

BatchChoice default_global_batch(int published_batch, int published_micro, int data_parallel,
                                 const BatchBounds& bounds, const std::string& source) {
    TTSIM_ASSERT(published_batch > 0 && published_micro > 0 && data_parallel > 0, "batch rule needs positive sizes");
    BatchChoice b;
    const long long dp = data_parallel;
    long long target = published_batch;
    std::vector<std::string> why;
    if (bounds.largest_rcp > 0 && target > bounds.largest_rcp) {
        target = bounds.largest_rcp;
        why.push_back("capped at the largest RCP batch " + std::to_string(bounds.largest_rcp));
    }
    if (bounds.smallest_rcp > 0 && target < bounds.smallest_rcp) {
        target = bounds.smallest_rcp;
        why.push_back("raised to the smallest RCP batch " + std::to_string(bounds.smallest_rcp));
    }
    if (bounds.at_fewer_gpus > target) {
        target = bounds.at_fewer_gpus;
        why.push_back("raised to " + std::to_string(target) + ", v4.1's batch at fewer GPUs (a default never falls below it)");
    }
    const long long batch = std::max(dp, (target + dp - 1) / dp * dp);
    if (batch != target)
        why.push_back("rounded up to a multiple of " + std::to_string(data_parallel) + " data-parallel ranks");
    if (bounds.largest_rcp > 0 && batch > bounds.largest_rcp)
        why.push_back("beyond the largest RCP batch " + std::to_string(bounds.largest_rcp) + ": convergence extrapolated");
    b.note = "global batch " + std::to_string(batch) + " (" +
             (batch == published_batch ? source : std::to_string(published_batch) + ", " + source);
    for (const std::string& reason : why) b.note += "; " + reason;
    b.note += ")";
    TTSIM_ASSERT(batch <= std::numeric_limits<int>::max(), "global batch overflows");
    const long long share = batch / dp;
    const int accumulation = fewest_micro_steps(share, published_micro);
    b.global_batch = static_cast<int>(batch);
    b.samples_per_micro_batch = static_cast<int>(share / accumulation);
    b.gradient_accumulation = static_cast<int>(accumulation);
    return b;
}

int fewest_micro_steps(long long share, int micro_limit) {
    TTSIM_ASSERT(share > 0 && micro_limit > 0, "micro-step split needs positive sizes");
    long long steps = (share + micro_limit - 1) / micro_limit;
    while (share % steps != 0) ++steps;
    return static_cast<int>(steps);
}

int largest_published_micro_batch(const Workload& workload) {
    int largest = 1;
    for (const PublishedParallelism& p : workload.published_parallelism)
        largest = std::max(largest, p.config.samples_per_micro_batch);
    return largest;
}

double model_state_bytes_per_gpu(const Workload& workload, const ParallelismConfig& layout) {
    const double model_split = static_cast<double>(layout.tensor_parallel) * layout.pipeline_parallel;
    const double shards = layout.distributed_optimizer ? layout.data_parallel : 1.0;
    const double weights = 2.0 * static_cast<double>(workload.total_params) / model_split;
    const double gradients = 2.0 * static_cast<double>(workload.trainable_params) / model_split;
    const double optimizer = 12.0 * static_cast<double>(workload.trainable_params) / model_split / shards;
    return weights + gradients + optimizer;
}

}  // namespace ttsim
