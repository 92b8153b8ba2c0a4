// Kernel and step time on one GPU, roofline style. A kernel takes the larger of
//   compute: FLOP x quantisation / (peak x efficiency of its class)
//   memory:  bytes / (HBM bandwidth x memory efficiency)
// where quantisation (>= 1) is the tile and wave loss of GEMMs, convolutions and attention: the output is cut
// into tiles, one tile per SM at a time, so a kernel runs ceil(tiles / SMs) full waves of padded tiles
// (quantisation = waves x SMs x tile area / output area). GEMMs take the cheapest of the tile shapes offered,
// as a library's heuristic would. Peaks: GpuSpec bf16_dense (fp8_dense for FP8 GEMMs where the part has it);
// SM counts: gpus.yaml `sms`.
//
// A step: the GPU runs every kernel back to back (no overlap of kernels, no communication here); the host
// launches them. GPU time = sum of kernel times; host time = eager launches x launch cost + graph launches x
// graph launch cost, with the launches the workload's CUDA-graph mode leaves (layer_graph.hpp CudaGraphs).
// The step takes the larger of the two: the host runs ahead of the GPU until its launches are the bottleneck.
//
// Every efficiency is a prior (below, with reasons), to be calibrated against measured step times later.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workloads/layers/layer_graph.hpp"

namespace ttsim::layers {

struct Tile {
    std::int64_t m = 128, n = 128;
};

struct Efficiency {
    // Fractions of the dense tensor-core peak a large, wave-aligned kernel of the class reaches. Priors: cuBLAS
    // BF16 GEMMs at large square shapes run ~700-800 of H100's 989 TFLOP/s in public benchmarks; cuDNN
    // implicit-GEMM convolutions and fused attention sit lower (more data movement per FLOP, softmax).
    double gemm = 0.80;
    double conv = 0.65;
    double attention = 0.60;
    // Fraction of the vendor HBM bandwidth a streaming kernel reaches (STREAM on H200: 4.0-4.48 of 4.8 TB/s,
    // hardware/params.yaml AZ_H200, i.e. 0.83-0.93).
    double memory = 0.85;
    // Output tiles a GEMM/conv kernel may use (CUTLASS/cuBLAS Hopper kernels: 128x128, 128x256, 256x128).
    std::vector<Tile> tiles = {{128, 128}, {128, 256}, {256, 128}};
    // Split-K: a GEMM whose output has fewer tiles than the GPU has SMs splits its reduction over up to this
    // many thread blocks per tile (cuBLAS/CUTLASS split-K), keeping at least min_k_per_split of K each.
    std::int64_t max_split_k = 16;
    std::int64_t min_k_per_split = 256;
    std::int64_t attention_query_tile = 128;   // queries per thread block in flash attention (FA2/cuDNN)
    // Host cost of one eager kernel launch, seconds: the CUDA launch (~2-4 us) plus the framework's dispatch
    // per op; prior 5 us. One cudaGraphLaunch of a captured graph: prior 10 us.
    double launch_seconds = 5e-6;
    double graph_launch_seconds = 10e-6;
    // Host cost per kernel of an eager evaluation loop (no_grad forwards in the framework's validation loop), where
    // fitted apart from the training launch (the operator calibration fits it); 0: the same as launch_seconds.
    double eval_launch_seconds = 0;
    // GPU time every kernel costs beyond its roofline, seconds: block scheduling, ramp-up and the tail of its
    // last wave, and the gap to the next kernel on the stream (a few microseconds even when replayed from a CUDA
    // graph). 0 in the priors; the operator calibration fits it.
    double kernel_overhead_seconds = 0;
    // The streaming kernels' (norms, elementwise, embeddings, the optimizer's update: no tensor-core work) own GPU
    // overhead per kernel, where set apart from the tensor-core kernels' (a profile file may; the calibration does not):
    // a GEMM's or convolution's tail wave and ramp-up differ from a one-pass elementwise kernel's. 0: the same as
    // kernel_overhead_seconds.
    double streaming_overhead_seconds = 0;
    // How a kernel's two roofs combine: 0 takes the larger (a kernel that overlaps its loads with its math
    // perfectly); p > 0 takes (compute^p + memory^p)^(1/p), which is never below the larger and reaches the sum at
    // p = 1 (no overlap): near its ridge point a kernel runs slower than either roof alone (a profile file may set
    // p; the calibration does not fit it).
    double roof_exponent = 0;
    // Fraction of the HBM bandwidth the tensor-core kernels (GEMM, convolution, attention) reach, where fitted apart
    // from the streaming kernels' (a profile file may set it; the calibration does not); 0: the same as `memory`.
    double tensor_memory = 0;
};

// The kinds that run on tensor cores (a FLOP count and a class efficiency); the others only stream memory.
inline bool tensor_core_kind(KernelKind kind) {
    return kind == KernelKind::gemm || kind == KernelKind::conv || kind == KernelKind::attention;
}

// The memory efficiency a kernel of a kind runs at (Efficiency::tensor_memory for the tensor-core kinds where set).
inline double memory_efficiency(bool tensor_kind, const Efficiency& e) {
    return tensor_kind && e.tensor_memory > 0 ? e.tensor_memory : e.memory;
}

// The GPU overhead per kernel of a kind (Efficiency::streaming_overhead_seconds for the streaming kinds where set).
inline double kernel_overhead(bool tensor_kind, const Efficiency& e) {
    return !tensor_kind && e.streaming_overhead_seconds > 0 ? e.streaming_overhead_seconds : e.kernel_overhead_seconds;
}

// A kernel's time from its two roofs (Efficiency::roof_exponent): max(compute, memory) at exponent 0, else their
// p-norm, which is at least the larger.
inline double combined_roofs(double compute_seconds, double memory_seconds, double exponent) {
    if (exponent <= 0) return compute_seconds > memory_seconds ? compute_seconds : memory_seconds;
    const double larger = compute_seconds > memory_seconds ? compute_seconds : memory_seconds;
    if (larger <= 0) return 0;
    // Scaled by the larger roof so the powers stay within double range at any exponent.
    return larger * std::pow(std::pow(compute_seconds / larger, exponent) + std::pow(memory_seconds / larger, exponent),
                             1.0 / exponent);
}

// Bytes an Adam/LAMB update moves per parameter it updates: reads the 2-byte gradient and the fp32 master
// weight and two moments (12), writes the three back (12) and the 2-byte working weight: 28.
inline constexpr double optimizer_bytes_per_param = 28;

struct KernelTime {
    double compute_seconds = 0;      // quantised FLOP / (peak x efficiency)
    double memory_seconds = 0;       // bytes / (bandwidth x memory efficiency)
    double quantisation = 1;         // >= 1; 1 for kernels without tiles
    std::int64_t tiles = 0, waves = 0;
    double roof_exponent = 0;        // Efficiency::roof_exponent
    double seconds() const { return combined_roofs(compute_seconds, memory_seconds, roof_exponent); }
};

// Time of one kernel (no launch cost). A GPU without an SM count is an InputError for tiled kernels.
KernelTime kernel_time(const Kernel& kernel, const GpuSpec& gpu, const Efficiency& efficiency);
inline double kernel_seconds(const Kernel& kernel, const GpuSpec& gpu, const Efficiency& efficiency) {
    return kernel_time(kernel, gpu, efficiency).seconds();
}

// The dense tensor-core rate `k` runs at on `gpu` (FLOP/s): FP8 where the kernel computes in FP8 and the GPU has
// FP8 tensor cores, else BF16 (a kernel's compute roof is its FLOPs over this, before efficiency and tiles).
double peak(const Kernel& k, const GpuSpec& gpu);

// The tile/wave factor of an [m, n] x batch output on `sms` SMs with one tile shape, the reduction split in
// `split_k` parts (each tile then runs split_k blocks of 1/split_k of the work).
double tile_quantisation(std::int64_t m, std::int64_t n, std::int64_t batch, const Tile& tile, int sms,
                         std::int64_t* tiles = nullptr, std::int64_t* waves = nullptr, std::int64_t split_k = 1);

struct StepOptions {
    int micro_steps = 1;                   // gradient accumulation: forward + backward this many times
    int optimizer_shards = 1;              // distributed optimizer: ranks the update is split over (DP x CP)
    std::optional<CudaGraphs> cuda_graphs; // override the workload's own mode
};

struct StepTime {
    double gpu_seconds = 0, host_seconds = 0;
    double seconds = 0;                    // max(gpu, host)
    std::size_t kernels = 0;               // kernels the GPU runs
    std::size_t eager_launches = 0, graph_launches = 0;
    CudaGraphs cuda_graphs = CudaGraphs::none;
    bool launch_bound() const { return host_seconds > gpu_seconds; }
};

// One optimizer step over the graph's layers on this GPU: micro_steps x (forward + backward) + the update.
StepTime step_time(const LayerGraph& graph, const GpuSpec& gpu, const Efficiency& efficiency,
                   const StepOptions& options = {});

// The update kernel of one layer (local trainable parameters / shards), or nullopt for a frozen layer.
std::optional<Kernel> optimizer_kernel(const Layer& layer, int shards);

}  // namespace ttsim::layers
