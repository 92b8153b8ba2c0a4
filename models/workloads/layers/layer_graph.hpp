// A workload as a list of layers: each layer has its forward and backward kernels, its
// parameters (all, trainable, and this GPU's tensor-parallel shard of them) and the activations it keeps from
// forward to backward. Layers are in execution order, so a pipeline stage is a contiguous LayerRange.
//
// A graph is built for one GPU's share of one micro batch (BuildOptions: micro batch, TP, CP, SP,
// recomputation) from a workload description (layer_workload.hpp). Whole-model figures per sample (what the
// reference data in models/data/models/ states) come from a graph built with TP = CP = 1: per_sample().
#pragma once

#include <cstddef>
#include <cstdint>
#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "models/workloads/layers/kernel.hpp"

namespace ttsim::layers {

// How the framework launches kernels (a per-workload fact, from its YAML with a source):
//  none: every kernel is launched by the host;
//  per_layer: each block layer's forward and backward are one captured graph each, the rest launched eagerly;
//  segmented: the model's forward and its backward are one graph each, the optimizer launched eagerly;
//  full_iteration: the whole step (forward, backward, optimizer) is one graph.
enum class CudaGraphs { none, per_layer, segmented, full_iteration };
// none: every activation a backward kernel needs is kept; full: only each block layer's input is kept and the
// layer's forward is re-run in backward (Megatron "full" recomputation, HF gradient checkpointing).
enum class Recompute { none, full };

const char* to_string(CudaGraphs mode);
const char* to_string(Recompute mode);

// The embedding and head run once; blocks are the repeated (recomputable, pipeline-splittable) layers.
enum class LayerRole { embedding, block, head };

struct Layer {
    std::string name;
    LayerRole role = LayerRole::block;
    std::int64_t params = 0;               // whole model (all TP shards)
    std::int64_t trainable_params = 0;     // whole model
    std::int64_t local_params = 0;         // this GPU's tensor-parallel shard (replicated norms counted whole)
    std::int64_t local_trainable = 0;
    std::int64_t local_frozen() const { return local_params - local_trainable; }
    std::vector<Kernel> forward;
    std::vector<Kernel> backward;          // dgrad and wgrad kernels (and recompute kernels first, if any)
    double saved_bytes = 0;                // activations kept from forward to backward, bytes (this GPU)
    double saved_bytes_no_recompute = 0;   // what it would keep without recomputation
    double input_bytes = 0;                // the layer's input tensor, bytes (kept under full recomputation)
    bool recomputed = false;
};

struct BuildOptions {
    int micro_batch = 1;                   // samples per GPU per micro step
    int tensor_parallel = 1;
    int context_parallel = 1;
    bool sequence_parallel = false;        // norms/elementwise and their activations split over TP as well
    bool recompute_override = false;       // use `recompute` below instead of the workload's own
    Recompute recompute = Recompute::none;
    // Facts of one submission that differ from the workload description's (a published layout's `precision` and
    // `head_tokens`): the GEMM/conv precision, and a masked-LM head run on every token instead of the masked
    // ones only (NVIDIA's BERT without --dense_seq_output; transformer_encoder only).
    std::optional<MathPrecision> precision{};
    bool head_on_all_tokens = false;
    // The attention kernels' precision where a submission runs them in FP8 (Transformer Engine's FP8 dot-product
    // attention, NVIDIA's Llama2-70B LoRA FP8_DPA=1); unset: bf16/fp16, the tensor rate every other run uses.
    std::optional<MathPrecision> attention_precision{};
    // Every field, in order: a graph is a function of its description and these (LayerGraphCache keys by them).
    auto operator<=>(const BuildOptions&) const = default;
};

// Facts about how a workload is trained that are not layer shapes; each is in the workload YAML with a source.
struct TrainingFacts {
    MathPrecision precision = MathPrecision::bf16;   // tensor-core rate of GEMM and conv kernels
    MathPrecision attention_precision = MathPrecision::bf16;   // of the attention kernels (BuildOptions)
    double activation_bytes = 2;           // bytes per activation element (fp16/bf16)
    double weight_bytes = 2;               // bytes per trainable weight as the kernels read it
    double frozen_weight_bytes = 2;        // bytes per frozen weight (1 where frozen weights are held in FP8)
    double dropout_mask_bytes = 1;         // bytes per element of a saved dropout mask (uint8/bool)
    CudaGraphs cuda_graphs = CudaGraphs::none;
    Recompute recompute = Recompute::none;
    std::string cuda_graphs_source, recompute_source;   // where the facts above come from
};

struct LayerGraph {
    std::string name;                      // the description file's name, e.g. "bert_large"
    std::string family;                    // e.g. "transformer_encoder"
    std::string sample_unit;               // what one sample is, in words
    TrainingFacts facts;
    BuildOptions options;                  // what the graph was built for
    Recompute recompute = Recompute::none; // in effect (options override or facts)
    std::vector<Layer> layers;
};

// Layers [first, last) of a graph: a pipeline stage.
struct LayerRange {
    std::size_t first = 0, last = 0;
    static LayerRange all(const LayerGraph& g) { return {0, g.layers.size()}; }
};

// The `stages` contiguous ranges a pipeline splits the graph into (virtual stage order: with PP devices and VP
// chunks, stage s = chunk x PP + device): the blocks evenly, the layers before the first block (embedding) with
// the first stage and those after the last (head, loss) with the last, as Megatron-LM assigns them by default.
// Empty where the blocks do not divide evenly (pipeline_stage_problem says why).
std::vector<LayerRange> pipeline_stages(const LayerGraph& graph, int stages);
std::string pipeline_stage_problem(const LayerGraph& graph, int stages);
std::size_t block_count(const LayerGraph& graph);
// The same over the layers' roles given as "is a block" flags (an operator table's layers).
std::vector<LayerRange> pipeline_stages(const std::vector<bool>& is_block, int stages);
std::string pipeline_stage_problem(const std::vector<bool>& is_block, int stages);

// Sums over a range of layers, for this GPU and one micro batch.
struct GraphTotals {
    std::int64_t params = 0, trainable_params = 0, local_params = 0, local_trainable = 0;
    double forward_flops = 0;              // forward kernels (no recompute)
    double backward_flops = 0;             // dgrad + wgrad + recompute kernels
    double forward_bytes = 0, backward_bytes = 0;
    double saved_bytes = 0;                // activations kept across the range
    double largest_layer_saved_bytes = 0;  // one layer's full activations, live while it is recomputed
    std::size_t forward_kernels = 0, backward_kernels = 0;
    double train_flops() const { return forward_flops + backward_flops; }
};
// `with_kernels` false leaves the kernels' sums (FLOPs, bytes, counts) at 0: a memory estimate reads the parameters
// and activations alone, and a layout search makes thousands.
GraphTotals totals(const LayerGraph& graph, LayerRange range, bool with_kernels = true);
inline GraphTotals totals(const LayerGraph& graph) { return totals(graph, LayerRange::all(graph)); }

// Whole-model FLOP per sample: this GPU's share scaled by TP x CP and divided by the micro batch. Exact for a
// graph built with TP = CP = 1 (what the reference data states); with TP/CP it adds back the shards.
struct PerSample {
    double forward_flops = 0, train_flops = 0;
};
PerSample per_sample(const LayerGraph& graph);

// Applies full recomputation to the block layers (called by the builders when it is in effect): each keeps
// only its input, and its forward kernels are re-run (Pass::recompute) ahead of its backward kernels.
void apply_full_recompute(LayerGraph& graph);

}  // namespace ttsim::layers
