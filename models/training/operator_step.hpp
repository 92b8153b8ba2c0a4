// The operator-level compute model of a training step: the workload's layer graph (models/workloads/
// layers) built for one GPU's share of a layout, every kernel priced by its roofline (kernel_time.hpp) with
// efficiencies calibrated per GPU, the host's launches against the GPU's work per pass, and each layer's
// gradients in the order backward produces them, so the gradient buckets are released when their last layer's
// backward ends (iteration.hpp) instead of at even intervals.
//
// Calibration re-prices the same step thousands of times with other efficiencies, so the graph is reduced once
// per layout to an OperatorTable: every kernel's compute seconds at efficiency 1 (FLOP x tile/wave quantisation /
// peak) and memory seconds at efficiency 1 (bytes / HBM bandwidth); a pricing is then one pass over the
// kernels (max of the two roofs divided by their efficiencies), no graph, no allocation beyond the result.
//
// The lumped curve (compute_profile.hpp) stays the other named model; predictions use this one when the profile
// carries operator efficiencies (ComputeProfile::operator_efficiency) and the workload has a layer graph.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "models/hardware/system.hpp"
#include "models/workloads/layers/kernel_time.hpp"
#include "models/workloads/layers/memory.hpp"
#include "models/workloads/layers/layer_graph.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config.hpp"

namespace ttsim {

// One kernel at efficiency 1. kind_class: 0 gemm, 1 conv, 2 attention, 3 memory-only (no FLOP counted).
struct KernelPrice {
    std::uint8_t kind_class = 3;
    double compute_seconds = 0;
    double memory_seconds = 0;
    // The same kernel's roofs on the reference GPU, where this GPU is at least it on every roof (reference_floor):
    // a kernel never takes longer than there. Negative: no such bound.
    double reference_compute_seconds = -1;
    double reference_memory_seconds = -1;
};

struct LayerPrices {
    std::string name;
    bool block = true;                     // a repeated block (one captured graph each under per_layer)
    std::vector<KernelPrice> forward, backward;
    double gradient_bytes = 0;             // this GPU's gradients of the layer (trainable parameters x
                                           // Workload::gradient_element_bytes)
    // Whether a pass's kernels price as the previous layer's (a repeated block): every pricing takes that layer's
    // seconds instead of summing the kernels again (an 80-layer decoder sums 2 of its 160 passes; a layout search
    // prices thousands of tables).
    bool forward_as_previous = false, backward_as_previous = false;
};

struct OperatorTable {
    std::string graph;                     // the layer description, e.g. "bert_large"
    double graph_micro_batch = 1;          // graph samples per GPU per micro step the table was built for
    double samples_per_graph_sample = 1;   // workload samples one graph sample stands for
    std::vector<LayerPrices> layers;       // execution order (forward)
    double optimizer_memory_seconds = 0;   // every layer's update on this GPU's optimizer shard, efficiency 1
    double optimizer_reference_memory_seconds = 0;   // the same on the reference GPU where it bounds this one (reference_floor)
    std::size_t optimizer_kernels = 0;
    layers::CudaGraphs cuda_graphs = layers::CudaGraphs::none;
    layers::MemoryEstimate memory;         // per GPU for this layout (weights, gradients, optimizer, activations)
    std::size_t kernels_per_micro_step = 0;
    // This GPU's forward and backward FLOPs per micro step, recomputation left out: the model FLOPs of MFU
    // (Prediction::model_flops_utilisation), the FLOPs the kernels above are priced for; and the same FLOPs each
    // over its kernel's dense peak (layers::peak: FP8 kernels at the FP8 rate), seconds: MFU's ideal time.
    double model_flops_per_micro_step = 0;
    double model_flops_peak_seconds_per_micro_step = 0;
};

// The table for `workload` (which must have a layer_model) on `gpu` with `layout` (its micro batch per rank,
// TP, CP, SP, distributed optimizer over `optimizer_shards` ranks). Throws InputError for a micro batch that is
// not a whole number of graph samples. `memory`: what the memory estimate assumes besides the graph (the
// system's reserve: memory_assumptions_of).
std::shared_ptr<const OperatorTable> build_operator_table(const Workload& workload, const GpuSpec& gpu,
                                                          const ParallelismConfig& layout, int optimizer_shards,
                                                          const layers::MemoryAssumptions& memory = {});
// The memory model's assumptions on `system`: its reserve where the request set one, else the prior.
layers::MemoryAssumptions memory_assumptions_of(const System& system);

// The same in steps, for a caller that builds many layouts of one workload (layout_search.hpp): the workload's
// layer description parsed once, the graph for a layout's micro batch, TP, CP and SP (layouts that differ only in
// their optimizer sharding share it), and the table from that graph.
ConfigNode layer_description(const Workload& workload);
// The build options of `layout`'s graph: its micro batch in graph rows, split, recomputation and precisions.
layers::BuildOptions layout_graph_options(const Workload& workload, const ParallelismConfig& layout);
layers::LayerGraph build_layout_graph(const Workload& workload, const ConfigNode& description,
                                      const ParallelismConfig& layout);
std::shared_ptr<const OperatorTable> build_operator_table(const Workload& workload, const layers::LayerGraph& graph,
                                                          const GpuSpec& gpu, const ParallelismConfig& layout,
                                                          int optimizer_shards, const layers::MemoryAssumptions& memory = {});
// `layout`'s memory per GPU from `graph` (built for it: build_layout_graph), gradients held as the workload keeps
// them (Workload::gradient_dtype): what a table built for `layout` carries.
layers::MemoryEstimate layout_memory(const Workload& workload, const layers::LayerGraph& graph, const GpuSpec& gpu,
                                     const ParallelismConfig& layout, const layers::MemoryAssumptions& memory = {});
// `table` (built from `graph` for another layout with the same graph and optimizer shards: one that differs in PP,
// VP or DP) with `layout`'s memory: the kernels' prices are the graph's and the shards', so nothing is priced again.
std::shared_ptr<const OperatorTable> table_with_layout_memory(const OperatorTable& table, const Workload& workload,
                                                              const layers::LayerGraph& graph, const GpuSpec& gpu,
                                                              const ParallelismConfig& layout,
                                                              const layers::MemoryAssumptions& memory = {});

// The step as the operator model prices it, per micro step unless said otherwise.
struct OperatorStepTimes {
    double forward_seconds = 0, backward_seconds = 0;   // max(GPU kernels, host launches) of each pass
    double forward_gpu_seconds = 0, backward_gpu_seconds = 0;
    double host_seconds_per_micro_step = 0;             // launches of forward + backward
    double optimizer_seconds = 0;                       // per optimizer step (kernels and their launches)
    double graph_launch_seconds = 0;                    // per optimizer step, full-iteration graphs only
    // Cumulative share of backward's time at which each layer's gradients are ready, in backward order (last
    // layer first), and the gradient bytes of each, same order.
    std::vector<double> gradient_ready_fraction, gradient_bytes;
    // Each layer's kernels on the GPU, forward and backward pass, in forward order (the layer-granular iteration,
    // layer_plan.hpp); they sum to forward_gpu_seconds and backward_gpu_seconds.
    std::vector<double> forward_layer_gpu_seconds, backward_layer_gpu_seconds;
    bool launch_bound = false;                          // the host, not the GPU, sets a pass's time
};

// One kernel's GPU seconds at `efficiency` (speed 1): the longer of its two roofs over their efficiencies, plus the
// per-kernel overhead. A pass is the sum over its kernels (price_operator_step); traces split a layer's span by it.
double kernel_gpu_seconds(const KernelPrice& kernel, const layers::Efficiency& efficiency);
// Whether its compute roof (not its memory roof) sets that time.
bool compute_bound(const KernelPrice& kernel, const layers::Efficiency& efficiency);
// The share of a micro step's kernel roof time (forward and backward, over the family's `speed`, per-kernel
// overheads left out) in kernels whose memory roof sets their time: what a FLOP/s what-if cannot move.
double memory_bound_share(const OperatorTable& table, const layers::Efficiency& efficiency, double speed = 1.0);

// Each layer's kernels summed per pass at `efficiency` and the GPU family's `speed`, per-kernel overheads included,
// before a software stack's offset divides them: the sums price_operator_step and eval_pass_seconds make, in the
// same order. They depend on the kernels' prices, the efficiency and the speed alone, so a caller that prices many
// jobs with equal tables under one profile (the calibration's objective, operator_fit.cpp) sums each distinct
// table once and passes the sums in: the prices are the same to the bit.
struct LayerKernelSums {
    std::vector<double> forward, backward;   // per layer, execution order
    // Per layer, the largest software-stack offset at which the sum holds: no kernel of the pass at its roof
    // (operator_step.cpp roof_over_speed); a larger offset is priced kernel by kernel.
    std::vector<double> forward_up_to, backward_up_to;
};
LayerKernelSums layer_kernel_sums(const std::vector<LayerPrices>& layers, const layers::Efficiency& efficiency,
                                  double speed);
// Whether two tables' layers price alike: the same kernel prices and repeats, so equal sums at any efficiency.
bool same_kernel_prices(const std::vector<LayerPrices>& a, const std::vector<LayerPrices>& b);

// Prices the table with `efficiency`; `speed` (> 0, the GPU family's offset) divides every kernel's roofs, not its
// per-kernel overhead, and `stack_speed` (> 0, a software stack's offset) divides both (pass_seconds in
// operator_step.cpp says why).
// `host_seconds_per_pass` is host work besides the launches that each pass's launches wait behind (the fixed
// per-step cost spread over the passes, ComputeProfile::operator_host_overlap; 0 otherwise).
// `sums`: the table's layer_kernel_sums at `efficiency` and `speed`, where the caller has them.
OperatorStepTimes price_operator_step(const OperatorTable& table, const layers::Efficiency& efficiency,
                                      double speed = 1.0, double host_seconds_per_pass = 0.0,
                                      double stack_speed = 1.0, const LayerKernelSums* sums = nullptr);

// One on-the-clock evaluation on a data-parallel rank (Workload::evaluation, EvalPasses): forward passes of the
// evaluation batch, each the layer graph's forward kernels at the pass's rows, launched as the evaluation
// launches them (eagerly where training replays graphs), plus the eager host operations per sample outside the
// graph (post-processing). A pass takes the longer of its GPU kernels and its host work, as a training pass does.
struct EvalTable {
    std::vector<LayerPrices> layers;       // forward kernels only, execution order
    layers::CudaGraphs cuda_graphs = layers::CudaGraphs::none;
    double samples_per_pass = 1;           // workload samples per pass per rank
    double rows_per_pass = 1;              // graph samples (rows) per pass
    double host_kernels_per_pass = 0;      // eager operations outside the layer graph, per pass
    bool pad_last_batch = true;            // the last, partial pass costs a whole one (else its share of one)
};

// One evaluation's samples on each data-parallel rank: ceil(eval samples / DP) (the slowest rank sets the time).
double eval_samples_per_rank(const Workload& workload, const ParallelismConfig& layout);
// The evaluation's samples per pass on a rank holding `samples_per_rank` evaluation samples.
double eval_samples_per_pass(const Workload& workload, const ParallelismConfig& layout, double samples_per_rank);
// One evaluation's iterations of the framework's evaluation loop on a rank holding `samples_per_rank` evaluation
// samples (EvalPasses::step): ceil(share / samples per pass), or ceil(share / the rank's share of the global batch)
// where a step is a global batch; a workload without an `evaluation` steps by its training micro batch.
double eval_steps_per_evaluation(const Workload& workload, const ParallelismConfig& layout, double samples_per_rank);
// The evaluation table of `workload` (with a layer_model) for `layout` on `gpu`, its rank holding
// `samples_per_rank` evaluation samples; `training` is the layout's training table (its rows and launch mode are
// the defaults where the workload describes no evaluation).
std::shared_ptr<const EvalTable> build_eval_table(const Workload& workload, const ConfigNode& description,
                                                  const GpuSpec& gpu, const ParallelismConfig& layout,
                                                  double samples_per_rank, const OperatorTable& training);
// The graph rows one evaluation pass holds (what an EvalTable is built at). The layout search caches tables by
// TP, CP and samples per pass: within one search the rest of what a table depends on (sequence parallelism, the
// launch mode, the evaluation's rows per sample, the layout's precision and MLM-head tokens) comes from the job's
// switches and does not change.
int eval_rows_per_pass(const Workload& workload, const ParallelismConfig& layout, double samples_per_rank);

// One pass of the table at `efficiency` and `speed` (as price_operator_step), holding `fill` (0-1] of its batch:
// a partial pass runs its share of the kernels' GPU time and of the host operations per sample, and all of its
// launches.
double eval_pass_seconds(const EvalTable& table, const layers::Efficiency& efficiency, double speed = 1.0,
                         double fill = 1.0, double stack_speed = 1.0, double fitted_host_kernels_per_pass = 0.0,
                         const LayerKernelSums* sums = nullptr);
// One evaluation: floor(samples_per_rank / samples per pass) whole passes and the rest as one partial pass
// (a whole one where the framework pads it, EvalPasses::pad_last_batch), each also waiting `exposed_fraction` of half
// the TP/CP collectives of a training micro step (`tp_cp_seconds_per_micro_step`, at `training_rows` graph rows),
// scaled to the pass's rows.
// Half is exact for TP (its forward and backward collectives mirror each other) and an approximation for CP,
// whose forward issues one of its three K/V exchanges (step_collectives.cpp).
double operator_eval_seconds(const EvalTable& table, const layers::Efficiency& efficiency, double speed,
                             double samples_per_rank, double exposed_fraction, double tp_cp_seconds_per_micro_step,
                             double training_rows, double stack_speed = 1.0,
                             double fitted_host_kernels_per_sample = 0.0, const LayerKernelSums* sums = nullptr);
// (fitted_host_kernels_per_sample: the calibration's eager host operations per sample beyond the catalog's,
// ComputeProfile::eval_host_kernels_per_sample; sums: the evaluation table's layer_kernel_sums, as in
// price_operator_step.)

// The same priced as training micro steps' forward passes (the default; profiles without operator_eval_passes):
// `samples_per_rank` at the table's micro batch, with the same share of the TP/CP collectives per pass.
double operator_eval_seconds_at_training_batch(const OperatorTable& table, const OperatorStepTimes& step,
                                               double samples_per_rank, double exposed_fraction,
                                               double tp_cp_seconds_per_micro_step);

// Gradient buckets' ready points as fractions of the last backward: bucket b of `buckets` equal shares of the
// gradient bytes is ready when the layer that completes it has finished its backward (the last bucket at 1).
std::vector<double> bucket_ready_fractions(const OperatorStepTimes& step, std::size_t buckets);
// The layer that completes each of those buckets, as an index into the backward order (gradient_ready_fraction);
// gradient_ready_fraction.size() where none does (the last bucket, or no gradients: ready at backward's end).
std::vector<std::size_t> bucket_completing_layers(const OperatorStepTimes& step, std::size_t buckets);

}  // namespace ttsim
