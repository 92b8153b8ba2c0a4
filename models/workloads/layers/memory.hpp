// Memory one GPU needs for a layout, from a layer graph built for that layout:
//   weights      this GPU's TP shard: trainable at weight_bytes, frozen at frozen_weight_bytes (workload facts)
//   gradients    trainable parameters only (frozen LoRA bases have none), at grad_bytes
//   optimizer    fp32 master weights + two moments (12 bytes per trainable parameter), split over the
//                DP x CP ranks with a distributed optimizer (Megatron shards over the data-parallel group,
//                which includes the context-parallel ranks)
//   activations  what the layers keep for backward for one micro batch (graph_builder.hpp), x the micro
//                batches in flight (pipeline 1F1B: the first stage holds PP of them), plus, under full
//                recomputation, one layer's full activations while it is recomputed
//   reserve      CUDA context, library workspaces, NCCL buffers and allocator slack (a prior)
// compared with what the driver reports the part has (GpuSpec hbm_reported, else nominal capacity).
#pragma once

#include <string>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workloads/layers/layer_graph.hpp"

namespace ttsim::layers {

struct MemoryLayout {
    int tensor_parallel = 1, context_parallel = 1, pipeline_parallel = 1, data_parallel = 1;
    int virtual_pipeline = 1;              // model chunks per pipeline stage (interleaved 1F1B)
    // Micro batches per pipeline per optimizer step (gradient accumulation): a stage holds no more of them in
    // flight than there are; 0: as many as the schedule would hold.
    int micro_batches = 0;
    // GPipe: every device holds all its micro batches' activations until their backward (all forwards run first;
    // Huang et al. 2019, arXiv:1811.06965), not the 1F1B warm-up's count.
    bool all_micro_batches_in_flight = false;
    int micro_batch = 1;                   // graph rows per micro step (what the graph is built for)
    // The workload's samples in those rows, where rows pack several (BERT: 2 sequences a row); 0: one a row. Only
    // the summary shows it, so a layout's "micro batch 4" does not read as 2 there.
    int samples_per_micro_batch = 0;
    bool sequence_parallel = false;
    bool distributed_optimizer = false;
    bool recompute_override = false;       // true: use `recompute` instead of the workload's own
    Recompute recompute = Recompute::none;
};

// The options to build the layout's graph with.
BuildOptions build_options(const MemoryLayout& layout);

struct MemoryAssumptions {
    double grad_bytes = 2;                 // bf16/fp16 gradients; a workload's own: Workload::gradient_element_bytes
    double optimizer_bytes = 12;           // fp32 master + Adam/LAMB moments per trainable parameter
    // Prior: ~0.5-1 GB CUDA context and cuBLAS/cuDNN workspaces plus NCCL buffers and caching-allocator
    // fragmentation; 2 GB until measured.
    double reserve_bytes = 2e9;
};

struct MemoryEstimate {
    double weights = 0, gradients = 0, optimizer = 0, activations = 0, reserve = 0;
    double total = 0, capacity = 0;
    bool fits = false;
    std::string summary;                   // "weights 17.2 GB + ... = 61.3 GB of 85.5 GB: fits"
};

// `graph` must have been built with build_options(layout) (checked: InputError otherwise). `range`: the
// pipeline stage this GPU holds, with PP micro batches of its activations in flight. Without a range and with
// PP > 1: the fullest pipeline device (pipeline_stages() of PP x VP; InputError where they do not divide the
// blocks), its chunks' weights, gradients and optimizer shards, and the activations the 1F1B schedule keeps in
// flight on it: device d holds min(PP - d, micro batches) micro batches of its stage, interleaved min((PP-d-1) x 2 +
// (VP-1) x PP + 1, VP x micro batches) chunk-micro-batches (Megatron-LM's warm-up; on the first device
// PP x (VP+1) - 1 = L (1 + (PP-1)/(PP VP)) layers' worth, theoretical_memory_usage.py's interleaving penalty); under
// GPipe (all_micro_batches_in_flight) every device all VP x micro batches.
MemoryEstimate memory_per_gpu(const LayerGraph& graph, const MemoryLayout& layout, const GpuSpec& gpu,
                              const MemoryAssumptions& assumptions = {});
MemoryEstimate memory_per_gpu(const LayerGraph& graph, LayerRange range, const MemoryLayout& layout,
                              const GpuSpec& gpu, const MemoryAssumptions& assumptions = {});

}  // namespace ttsim::layers
