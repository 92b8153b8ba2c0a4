// The four MLPerf Training v4.1 workloads ttsim models: what one training sample costs (FLOPs), what one step
// communicates (gradient bytes), how big the dataset is, when evaluation happens and whether it is timed, what
// counts as converged, and how NVIDIA parallelised each one in its v4.1 submissions.
// Values are read from models/data/workload_catalog.yaml (each with its source, taken from hardware/params.md §4 /
// params.yaml `workloads:`) once per process, by workload_catalog.cpp. FLOPs are analytic (2 x MACs of
// matmul/conv/attention; norms and elementwise ignored).
//
// Names: "bert" (alias "bert_large"); "llama2_70b_lora" (aliases "lora", "llama2_lora", "llama2"); "retinanet"
// (MLPerf benchmark id "ssd", alias "ssd"); "stable_diffusion" (aliases "sd", "stable_diffusion_v2", "sd2").
// Lookup is case-insensitive and ignores '-', '_' and spaces (the catalog's `aliases`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ttsim {

// What the RCP tables count convergence in: samples, epochs of the training set, or tokens (GPT-3's RCPs; the
// results and run logs count sequences of the workload's tokens_per_sample).
enum class ConvergenceUnit { samples, epochs, tokens };

// When evaluations happen, in training samples consumed (see eval_schedule()).
struct EvalSchedule {
    std::uint64_t first_eval_samples = 0;   // samples trained before the first evaluation
    std::uint64_t interval_samples = 0;     // samples between consecutive evaluations
    bool on_the_clock = true;               // false: evaluated offline, not part of time to train (SD)
};

// One data-parallel-or-more layout, as run (or derived from a run). Batch counts are in samples (sequences,
// images); BERT's packing is separate: NVIDIA packs up to `packing_factor` sequences into one row.
struct ParallelismConfig {
    int tensor_parallel = 1;
    int context_parallel = 1;
    int pipeline_parallel = 1;              // pipeline stages (devices), each a contiguous range of blocks
    // Model chunks per pipeline stage (Megatron-LM's virtual pipeline, interleaved 1F1B); 1: plain 1F1B.
    int virtual_pipeline = 1;
    // Activation recomputation where the layout sets it ("none", "full"); empty: the workload description's own.
    std::string recompute;
    // The pipeline schedule where the layout sets it ("gpipe", "1f1b", "interleaved": pipeline_schedule.hpp);
    // empty: interleaved 1F1B with VP > 1, else 1F1B (Megatron-LM's choice).
    std::string pipeline_schedule;
    int data_parallel = 1;                  // gpus / (TP * CP * PP)
    int samples_per_micro_batch = 1;        // per data-parallel rank per micro step (after unpacking)
    int gradient_accumulation = 1;          // micro steps per optimizer step
    int packing_factor = 1;                 // samples per packed row (BERT on NVIDIA: 2)
    int global_batch = 1;                   // = data_parallel * samples_per_micro_batch * gradient_accumulation
    bool distributed_optimizer = false;     // optimizer state sharded: reduce-scatter grads + all-gather params
    bool sharp = false;                     // InfiniBand SHARP in-network reduction enabled
    bool sequence_parallel = false;
    bool fp8 = false;
    // How the framework launches kernels in this layout (none, per_layer, segmented, full_iteration: the layer
    // graph's CudaGraphs); empty = the workload description's own mode. A fact of each submission.
    std::string cuda_graphs;
    // How this layout's on-the-clock evaluation runs, where it differs from the workload's (EvalPasses): samples
    // per forward pass per rank (0: the workload's; kWholeShard: the rank's whole share in one pass), samples per
    // graph row (0: the workload's) and kernel launch mode (empty: the workload's). A fact of each submission.
    int eval_batch = 0;
    double eval_samples_per_graph_sample = 0;
    std::string eval_cuda_graphs;
    // Facts of this submission that differ from the workload description's (layers::BuildOptions): the GEMM/conv
    // precision (empty: the workload's) and a masked-LM head on every token (NVIDIA's BERT at 3,472 GPUs).
    std::string precision;
    bool head_on_all_tokens = false;
    std::string attention_precision;        // empty: bf16/fp16; "fp8": FP8 dot-product attention (LoRA FP8_DPA=1)
    // The gradient reductions wait for the end of backward instead of running bucket by bucket as backward fills
    // them (apex DistributedFusedLAMB without --dwu-overlap-reductions: NVIDIA's BERT on 1 and 8 nodes). A fact of
    // each submission, inherited by layouts derived from it like its launch mode.
    bool gradient_reduction_after_backward = false;
    // The gradients reduced in this many equal blocks (apex DistributedFusedLAMB --dwu-num-blocks); 0: in buckets
    // of the workload's size (Workload::gradient_bucket_bytes).
    int gradient_buckets = 0;

    int gpus() const { return model_split() * data_parallel; }
    int model_split() const { return tensor_parallel * context_parallel * pipeline_parallel; }   // GPUs per DP rank
    // The ranks holding the same weights: DP x CP (context parallelism splits the sequence, not the weights).
    // Their gradients are reduced together and a distributed optimizer shards over them (Megatron-core's
    // DistributedDataParallel reduces over its dp_cp_group, get_data_parallel_group(with_context_parallel=True)).
    int weight_replicas() const { return data_parallel * context_parallel; }
};

// The gradient reduction modes as data, flags and outputs name them (workload_catalog.yaml `gradient_reduction`,
// `--layout reduction=`, results' `gradient_reduction`): overlapped (false) or after_backward (true).
inline constexpr std::string_view kGradientReductionNames[] = {"overlapped", "after_backward"};
inline std::string_view gradient_reduction_name(bool after_backward) { return kGradientReductionNames[after_backward ? 1 : 0]; }

// Switches a layout's optimizer. A recipe's gradient reduction (after backward, in its block count) belongs to its
// distributed optimizer (apex DistributedFusedLAMB's --dwu-* flags: NVIDIA's BERT), so a plain data-parallel
// what-if derived from it reduces in overlapped buckets of the workload's size, as PyTorch DDP does.
void set_distributed_optimizer(ParallelismConfig& layout, bool on);
// Sets whether the gradients are reduced after backward; a change of mode drops the recipe's block count (its
// buckets are then the workload's size).
void set_reduction_after_backward(ParallelismConfig& layout, bool after_backward);

// A configuration NVIDIA (or AMD) published: system family and GPU count -> parallelism.
struct PublishedParallelism {
    std::string system_family;              // GPU catalog name: "H100-SXM", "H200-SXM", "B200", "GB200", "MI300X"
    int gpus = 0;
    ParallelismConfig config;
    std::string source;                     // e.g. "MLP41 bert config_DGXH100_8x8x72x1.sh (params.md §4.3)"
};

class ConfigNode;
// One layout in the catalog's form (workload_catalog.yaml `published_parallelism` keys), read strictly: also used
// for the submitters' own layouts of v4.1 results (models/mlperf/submission_layouts.hpp).
PublishedParallelism read_published_layout(const ConfigNode& entry);

// What tensor and context parallelism exchange per transformer layer, for the workloads ttsim has a model of
// them for (predict.cpp prices these collectives on the system's topology). Activations are bf16.
struct ModelParallelComm {
    int layers = 0;
    double hidden = 0;                      // model width, elements per token
    double tokens_per_sample = 0;
    // allreduce: Megatron TP without sequence parallelism, 2 all-reduces of the layer's activations in forward
    // and 2 in backward per layer; sequence_parallel: 4 all-gathers + 4 reduce-scatters per layer.
    enum class TensorStyle { allreduce, sequence_parallel } tensor_style = TensorStyle::allreduce;
    // Context parallelism (ring attention): ~3 all-gathers of K and V per layer, K,V of this width (elements per
    // token); 0: CP is not modelled for the workload.
    double context_kv_width = 0;
    double activation_bytes = 2;
};

// Which layer-graph description (models/data/workloads/<file>.yaml) describes a workload, and how many of the
// workload's samples one graph sample stands for (BERT: one 512-token row holds 2 packed sequences).
struct LayerModelRef {
    std::string file;
    double samples_per_graph_sample = 1;
    std::string source;
    // A user's own model (custom_workload.hpp): the description itself, as YAML text (each table build parses
    // its own copy, so threads share nothing mutable); empty: models/data/workloads/<file>.yaml.
    std::string description_yaml;
};

// How one on-the-clock evaluation runs on a data-parallel rank (operator model, operator_step.hpp): forward
// passes of `batch` samples (the framework's evaluation batch, not the training micro batch), each graph row
// holding `samples_per_graph_sample` samples (BERT evaluates unpacked rows padded to 512 tokens where it trains
// packed ones), launched as `cuda_graphs` says (evaluation usually runs eagerly where training replays graphs),
// and `host_kernels_per_sample` eager operations per sample outside the layer graph (RetinaNet's per-image box
// decoding and NMS loop). Unset in the workload data: the training micro batch, rows and launch mode.
struct EvalPasses {
    static constexpr int kWholeShard = -1;  // one pass over the rank's whole share (BERT's graphed evaluation)
    int batch = 0;                          // samples per pass per data-parallel rank; kWholeShard: the whole share
    double samples_per_graph_sample = 1;
    std::string cuda_graphs = "none";       // none, per_layer, segmented, full_iteration
    double host_kernels_per_sample = 0;
    // The last, partial batch: padded to a whole one (NeMo pads the validation batch with dummy samples) or run
    // at its own size (DALI's LastBatchPolicy.PARTIAL, BERT's DataLoader).
    bool pad_last_batch = false;
    // What one iteration of the framework's evaluation loop holds (the unit its per-step cost is paid in,
    // ComputeProfile::eval_step_seconds): one pass per rank (BERT's and RetinaNet's DataLoader loops), or the
    // training global batch, its share of which each rank runs as passes (NeMo's validation_step over a global
    // batch of micro batches).
    enum class Step { pass, global_batch } step = Step::pass;
    std::string source;
};

// When a workload evaluates, by MLPerf's rules (eval_schedule()): the interval between evaluations, in samples, and
// how many intervals pass before the first.
struct EvalRule {
    enum class Interval {
        fixed,        // `samples` samples
        epoch,        // the training set (train_samples)
        batch_linear  // FLOOR(scale x (per_batch x GBS + base), round_to)
    } interval = Interval::fixed;
    double samples = 0;
    double scale = 1, per_batch = 0, base = 0, round_to = 1;
    // The first evaluation comes after (skipped + 1) intervals, skipped = FLOOR(skip_per_batch x GBS + skip_base).
    double skip_per_batch = 0, skip_base = 0;
    // `fixed` only: the interval rounded up to whole steps, CEIL(samples / GBS) x GBS (GPT-3 evaluates every
    // CEIL(24,576 / GBS) steps).
    bool whole_steps = false;
};

struct Workload {
    std::string name;                       // canonical: "bert", "llama2_70b_lora", "retinanet", "stable_diffusion"
    std::string mlperf_benchmark;           // id in MLPerf files: "bert", "llama2_70b_lora", "ssd", "stable_diffusion"
    std::string description;

    std::uint64_t total_params = 0;         // including frozen weights
    std::uint64_t trainable_params = 0;     // what the optimizer updates and data parallelism all-reduces
    std::string gradient_dtype;             // "fp16", "bf16" or "fp32" (a user model's Megatron-style main grads)
    bool gradient_dtype_confirmed = false;  // false: dtype assumed (params.md §7 item 4)
    std::uint64_t gradient_bytes = 0;       // per step, whole model = trainable_params * bytes(gradient_dtype)
    // Bytes of one gradient element as kept and reduced (gradient_dtype): 4 for fp32, else 2.
    double gradient_element_bytes() const { return gradient_dtype == "fp32" ? 4.0 : 2.0; }
    // The framework's gradient bucket (PyTorch DDP bucket_cap_mb, apex DistributedFusedAdam bucket_cap_mb); unset:
    // kGradientBucketBytes (step_collectives.hpp). A layout's gradient_buckets overrides it.
    std::optional<std::uint64_t> gradient_bucket_bytes;

    double train_flops_per_sample = 0;      // forward + backward, FLOP, at the sample size ttsim assumes
    double forward_flops_per_sample = 0;    // FLOP
    std::string flops_note;                 // what sample size / assumption the FLOP figures rest on

    std::optional<std::uint64_t> train_samples;  // dataset size; nullopt when unknown and not needed (BERT)
    std::uint64_t eval_samples = 0;
    ConvergenceUnit convergence_unit = ConvergenceUnit::samples;
    int runs_per_result = 10;               // runs averaged (olympic) into one score
    std::string quality_target;             // human-readable MLPerf closed-division target
    bool eval_on_the_clock = true;
    EvalRule eval_rule;
    std::optional<EvalPasses> evaluation;   // how an evaluation runs; nullopt: as a training micro step's forward

    std::vector<PublishedParallelism> published_parallelism;   // NVIDIA v4.1 (and v5.0 for GB200/MI300X)
    // TP/CP collectives; nullopt: data parallel only (the convolutional RetinaNet and the SD UNet, as in v4.1),
    // and a layout with TP or CP is refused.
    std::optional<ModelParallelComm> model_parallel;
    // The layer graph the operator-level model prices (models/data/workloads/<file>.yaml); unset: lumped only.
    std::optional<LayerModelRef> layer_model;
    // A user-defined model (a scenario's `model:`, custom_workload.hpp): no RCP table, no published layouts, no
    // calibrated profile of its own; it trains a fixed `samples_to_train` (p10 = p90 = mean).
    bool user_defined = false;
    std::optional<double> samples_to_train;
    bool tensor_parallel_modelled() const { return model_parallel.has_value(); }
    bool context_parallel_modelled() const { return model_parallel && model_parallel->context_kv_width > 0; }
    // Pipeline stages split the layer graph's repeated blocks; p2p messages are the blocks' activations.
    bool pipeline_parallel_modelled() const { return model_parallel.has_value() && layer_model.has_value(); }
};

// All workloads in the order of models/data/workload_catalog.yaml: bert, llama2_70b_lora, retinanet,
// stable_diffusion. Loaded on first use; a malformed data file is an InputError (file:line:column and key).
const std::vector<Workload>& workload_catalog();

// A parsed workload_catalog.yaml: the workloads (every layout checked to multiply out to its GPU count, on a GPU
// of the catalog) and each name and alias (normalized as gpu_catalog's are) with the canonical name it stands
// for. Names and aliases are unique.
struct WorkloadCatalogData {
    std::vector<Workload> workloads;
    std::vector<std::pair<std::string, std::string>> aliases;   // (normalized name or alias, canonical name)
};
WorkloadCatalogData load_workload_catalog(const std::filesystem::path& path);
std::vector<std::string> workload_names();

// Looks a workload up by name, MLPerf id or alias; unknown names throw InputError listing the valid names.
const Workload& find_workload(std::string_view name);

// Evaluation cadence at a global batch (MLPerf v4.1 rules, params.md §4.2):
//  - bert: every FLOOR(0.05 * (230.23 * GBS + 3,000,000), 25,000) samples, i.e. rounded down to a multiple of
//    25,000; the first evaluation after one interval; on the clock.
//  - retinanet: every epoch (train_samples); on the clock.
//  - llama2_70b_lora: every 384 samples, the first FLOOR(0.125 * GBS + 2) evaluations skipped, so the first
//    happens after (skipped + 1) * 384 samples; on the clock. (Checked against v4.1 run logs: at GBS 8 a run that
//    converged at 2688 samples logged 4 evaluations: 1536, 1920, 2304, 2688.)
//  - stable_diffusion: a checkpoint every 512,000 samples, evaluated offline (not timed).
// Evaluations happen at the first optimizer-step boundary at or after each point; the caller rounds up to steps.
// global_batch must be >= 1 (InputError otherwise).
EvalSchedule eval_schedule(const Workload& workload, std::int64_t global_batch);

// On-the-clock evaluations for a run that converges at `samples`: the run stops at the first evaluation at or
// after convergence, so every evaluation point up to and including that one is counted (0 off the clock).
long long evaluations_until(const EvalSchedule& schedule, double samples);

// BERT's interval formula on its own (samples), for tests and reports.
std::uint64_t bert_eval_interval_samples(std::int64_t global_batch);

// The parallelism ttsim assumes by default for `gpus` GPUs of `system_family`, derived from the nearest published
// configuration. Rule: the published GPU count nearest in log scale among the family's own layouts if one is
// within 2x of `gpus`, else among the family's and H100-SXM's (NVIDIA's reference platform; ties prefer the
// family, then the smaller count); keep its
// TP/CP/PP and switches; DP = gpus / (TP*CP*PP). Then hold the published global batch if it splits evenly over DP
// without a bigger per-GPU micro batch than published; otherwise keep the published per-GPU micro batch and set
// global batch = DP * micro batch (no accumulation). gpus not divisible by TP*CP*PP is an InputError.
struct ParallelismChoice {
    ParallelismConfig config;               // scaled to the requested GPU count
    PublishedParallelism basis;             // the published configuration it was derived from
    bool exact_match = false;               // same family and same GPU count as published
    // The global batch v4.1 suggests at this GPU count: the published one at an exact match, else interpolated
    // log-linearly in GPU count between the two published H100-SXM scales around it (the reference platform's
    // ladder whatever the GPU, so GPU types compare at one batch), or the nearest end outside their range; and
    // where it came from, in words.
    int batch_target = 0;
    std::string batch_source;
    std::string batch_note;                 // how the global batch was derived (empty for an exact match)
    std::vector<std::string> notes;         // what was assumed or changed, for reports
};
ParallelismChoice default_parallelism(const Workload& workload, std::string_view system_family, int gpus);

// The default global batch for `data_parallel` ranks, derived from a published (or interpolated) one, so that
// defaults behave as a planner expects when the GPU count grows:
//  1. the target is kept within the RCPs, where convergence is measured: no more than `largest_rcp` and no less
//     than `smallest_rcp` (each when > 0); below the smallest the RCPs only clamp, above the largest they
//     extrapolate;
//  2. it is at least `at_fewer_gpus`, the largest batch v4.1 published at fewer GPUs (0: none;
//     scaled_default_batch below), so a default never falls below what v4.1 ran with a smaller job;
//  3. it is rounded to the nearest multiple of data_parallel, up where rounding down would fall below
//     `at_fewer_gpus` or the smallest RCP batch (SD: 2064 at 688 GPUs, not 1376, since v4.1 ran 2048 at 512),
//     unless rounding up is the farther and passes the largest RCP batch: the measured convergence outranks the
//     floor (SD: 2040 at 680 GPUs and 2000 at 1000, not 2720 and 3000; the note says it falls below the batch at
//     fewer GPUs for that reason).
// Each rank's share is split into the fewest micro steps whose micro batch is no larger than `published_micro`.
// `source` says where `published_batch` came from; `note` says which rules applied, in words for the output.
struct BatchChoice {
    int global_batch = 0;
    int samples_per_micro_batch = 0;
    int gradient_accumulation = 1;
    std::string note;
};
struct BatchBounds {
    int smallest_rcp = 0, largest_rcp = 0;   // 0: no bound
    int at_fewer_gpus = 0;                   // the largest batch v4.1 published at fewer GPUs; 0: none
};
BatchChoice default_global_batch(int published_batch, int published_micro, int data_parallel,
                                 const BatchBounds& bounds, const std::string& source);
// A batch target as a whole number of samples per data-parallel rank: the nearest multiple of `data_parallel`
// (ties up), never below one sample per rank or `smallest_rcp`, and, rounding down, not below `floor` (then up)
// unless up is the farther and passes `largest_rcp` (> 0): the RCPs' measured convergence outranks the floor
// (SD at 1,000 GPUs: 2,000, not 3,000; at 688: 2,064 just past 2,048 rather than 1,376). Always rounding up could
// nearly double the batch (RetinaNet's 2,217 at 2,048 GPUs became 4,096), and with it the samples to converge.
long long round_to_data_parallel(long long target, long long data_parallel, long long floor, long long smallest_rcp,
                                 long long largest_rcp);

// The default global batch at a GPU count, as the sequence over GPU counts a capacity planner walks
// (default_global_batch above has the rules for one count; implemented in default_batch.cpp). The target is v4.1's
// batch here (interpolated between published scales, within the RCPs), raised to the largest batch v4.1 published
// at a smaller count, so a default never falls below what v4.1 ran with fewer GPUs; it is then rounded to the
// nearest multiple of the data-parallel size, up where down would fall below that published batch. (Why not the
// largest interpolated target at any smaller count as the floor: it rises node by node, so rounding down would
// almost never be allowed, and RetinaNet would run 4,096 at 2,048 GPUs, slower than 1,024 GPUs at 2,048.)
// Why not strictly non-decreasing batches: with the data-parallel size growing by a node's worth of ranks per
// step, a non-decreasing sequence of multiples can never lower its per-rank share once the ranks outnumber a
// node's (k x dp(n) <= j x (dp(n) + d) forces j >= k when dp(n) > d (k - 1)), so every default would scale
// weakly, its batch growing linearly with GPUs past the RCPs (SD would be refused beyond 336 GPUs instead of
// 4096). What may fall, then, is only a rounding overshoot: the batch at n is within dp(n) / 2 of target(n) where
// rounding down is allowed, below target(n) + dp(n) otherwise, and a count that splits the target evenly runs it
// exactly (SD: 3048 at 1016 GPUs, 2048 at 1024).
struct DefaultBatchRequest {
    const Workload* workload = nullptr;
    std::string_view system_family;    // GPU name, as default_parallelism takes it
    int gpus_per_node = 8;             // allowed counts below `gpus`: multiples of this
    int gpus = 0;
    int data_parallel = 0;             // of the layout actually used at `gpus` (TP/CP may be the user's)
    int target = 0;                    // v4.1's batch at `gpus` (ParallelismChoice::batch_target)
    std::string source;                // where `target` came from, for the note
    int smallest_rcp = 0, largest_rcp = 0;   // the RCP table's smallest record and largest kept record
};

// The default at `gpus` (note included), from the default layouts at the smaller whole-node counts.
BatchChoice scaled_default_batch(const DefaultBatchRequest& request);

// The walk: at every whole-node count below `gpus` that the default layout holds, ascending, its data-parallel
// size, target (v4.1's batch there within the RCPs, raised to the largest published at a smaller count) and
// default batch; and the largest batch v4.1 published below `gpus` (0 when none): BatchBounds::at_fewer_gpus.
struct CountBatch {
    int gpus = 0, data_parallel = 0, target = 0, global_batch = 0;
};
std::vector<CountBatch> default_batches_below(const DefaultBatchRequest& request);
int default_target_below(const DefaultBatchRequest& request);

// The fewest micro steps (gradient accumulation) that split `share` samples per rank evenly into micro batches
// of at most `micro_limit` samples.
int fewest_micro_steps(long long share, int micro_limit);

// The largest per-rank micro batch any published layout of the workload ran (samples): what fits in memory
// without gradient accumulation, by v4.1's own evidence. Default splits use micro steps no larger than this.
int largest_published_micro_batch(const Workload& workload);

// Model state one GPU holds (bytes): weights (bf16, 2 bytes per parameter, split over TP x PP), gradients of the
// trainable parameters (2 bytes, same split) and mixed-precision optimizer state (fp32 master + two moments,
// 12 bytes per trainable parameter, also sharded over the data-parallel ranks with the distributed optimizer).
// Activations are not counted, so this is a lower bound on what the layout needs.
double model_state_bytes_per_gpu(const Workload& workload, const ParallelismConfig& layout);

const char* to_string(ConvergenceUnit unit);

}  // namespace ttsim
