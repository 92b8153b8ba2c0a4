#include "models/workloads/layers/kernel_time.hpp"

#include <algorithm>
#include <limits>

#include "sim/errors.hpp"

namespace ttsim::layers {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int require_sms(const GpuSpec& gpu) {
    if (!gpu.sms) throw InputError("GPU '" + gpu.name + "' has no SM count (gpus.yaml `sms`), needed for wave quantisation");
    return *gpu.sms;
}

double class_efficiency(KernelKind kind, const Efficiency& e) {
    switch (kind) {
        case KernelKind::gemm: return e.gemm;
        case KernelKind::conv: return e.conv;
        case KernelKind::attention: return e.attention;
        default: return 1;   // no FLOP counted for the other kinds
    }
}

}  // namespace

double peak(const Kernel& k, const GpuSpec& gpu) {
    if (k.precision == MathPrecision::fp8 && gpu.fp8_dense_flops) return *gpu.fp8_dense_flops;
    return gpu.bf16_dense_flops;   // parts without FP8 tensor cores run FP8 recipes at the BF16 rate
}

double tile_quantisation(std::int64_t m, std::int64_t n, std::int64_t batch, const Tile& tile, int sms,
                         std::int64_t* tiles_out, std::int64_t* waves_out, std::int64_t split_k) {
    TTSIM_ASSERT(m > 0 && n > 0 && batch > 0 && tile.m > 0 && tile.n > 0 && sms > 0 && split_k > 0, "bad tile problem");
    const std::int64_t tiles = ceil_div(m, tile.m) * ceil_div(n, tile.n) * batch * split_k;
    const std::int64_t waves = ceil_div(tiles, sms);
    if (tiles_out) *tiles_out = tiles;
    if (waves_out) *waves_out = waves;
    // Each wave costs as much as a full wave of full tiles: waves x SMs tile-slots of tile.m x tile.n outputs,
    // each over 1/split_k of the reduction.
    return static_cast<double>(waves) * sms * tile.m * tile.n /
           (static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(batch) * static_cast<double>(split_k));
}

KernelTime kernel_time(const Kernel& k, const GpuSpec& gpu, const Efficiency& e) {
    TTSIM_ASSERT(e.memory > 0 && e.memory <= 1, "memory efficiency must be in (0, 1]");
    KernelTime t;
    t.roof_exponent = e.roof_exponent;
    t.memory_seconds = k.bytes / (gpu.hbm_bandwidth * memory_efficiency(tensor_core_kind(k.kind), e));
    if (k.flops <= 0) return t;
    const double eff = class_efficiency(k.kind, e);
    TTSIM_ASSERT(eff > 0 && eff <= 1, "class efficiency must be in (0, 1]");
    if (k.gemm && k.gemm->m > 0 && k.gemm->n > 0) {
        const int sms = require_sms(gpu);
        t.quantisation = std::numeric_limits<double>::infinity();
        for (const Tile& tile : e.tiles)
            for (std::int64_t split = 1; split <= std::max<std::int64_t>(e.max_split_k, 1); split *= 2) {
                // Libraries split K only for outputs too small to fill the SMs with whole tiles.
                if (split > 1 && (k.gemm->k / split < e.min_k_per_split ||
                                  ceil_div(k.gemm->m, tile.m) * ceil_div(k.gemm->n, tile.n) * k.gemm->batch >= sms))
                    break;
                std::int64_t tiles = 0, waves = 0;
                const double q = tile_quantisation(k.gemm->m, k.gemm->n, k.gemm->batch, tile, sms, &tiles, &waves, split);
                if (q < t.quantisation) {
                    t.quantisation = q;
                    t.tiles = tiles;
                    t.waves = waves;
                }
            }
        TTSIM_ASSERT(!e.tiles.empty(), "no GEMM tile shapes");
    } else if (k.attention) {   // one block per (sequence, head, query tile), each over all its keys
        const int sms = require_sms(gpu);
        const Tile tile{e.attention_query_tile, k.attention->kv_len};
        t.quantisation = tile_quantisation(k.attention->q_len, k.attention->kv_len, k.attention->batch_heads, tile,
                                           sms, &t.tiles, &t.waves);
    }
    t.compute_seconds = k.flops * t.quantisation / (peak(k, gpu) * eff);
    return t;
}

std::optional<Kernel> optimizer_kernel(const Layer& layer, int shards) {
    if (layer.local_trainable == 0) return std::nullopt;
    Kernel k;
    k.name = "optimizer";
    k.kind = KernelKind::optimizer;
    k.pass = Pass::optimizer;
    k.bytes = optimizer_bytes_per_param * static_cast<double>(layer.local_trainable) / std::max(shards, 1);
    return k;
}

StepTime step_time(const LayerGraph& graph, const GpuSpec& gpu, const Efficiency& e, const StepOptions& o) {
    if (o.micro_steps < 1 || o.optimizer_shards < 1) throw InputError("micro steps and optimizer shards must be >= 1");
    StepTime s;
    s.cuda_graphs = o.cuda_graphs.value_or(graph.facts.cuda_graphs);
    std::size_t pass_kernels = 0, block_layers = 0, non_block_kernels = 0, optimizer_kernels = 0;
    double pass_seconds = 0, optimizer_seconds = 0;
    for (const Layer& layer : graph.layers) {
        for (const auto* list : {&layer.forward, &layer.backward})
            for (const Kernel& k : *list) pass_seconds += kernel_seconds(k, gpu, e);
        const std::size_t n = layer.forward.size() + layer.backward.size();
        pass_kernels += n;
        if (layer.role == LayerRole::block) ++block_layers;
        else non_block_kernels += n;
        if (auto k = optimizer_kernel(layer, o.optimizer_shards)) {
            optimizer_seconds += kernel_seconds(*k, gpu, e);
            ++optimizer_kernels;
        }
    }
    const std::size_t micro = static_cast<std::size_t>(o.micro_steps);
    s.gpu_seconds = o.micro_steps * pass_seconds + optimizer_seconds;
    s.kernels = micro * pass_kernels + optimizer_kernels;
    switch (s.cuda_graphs) {
        case CudaGraphs::none:
            s.eager_launches = s.kernels;
            break;
        case CudaGraphs::per_layer:   // each block's forward and backward replayed, the rest eager
            s.graph_launches = micro * 2 * block_layers;
            s.eager_launches = micro * non_block_kernels + optimizer_kernels;
            break;
        case CudaGraphs::segmented:   // forward and backward replayed, the update eager
            s.graph_launches = micro * 2;
            s.eager_launches = optimizer_kernels;
            break;
        case CudaGraphs::full_iteration:
            s.graph_launches = 1;
            break;
    }
    s.host_seconds = s.eager_launches * e.launch_seconds + s.graph_launches * e.graph_launch_seconds;
    s.seconds = std::max(s.gpu_seconds, s.host_seconds);
    return s;
}

}  // namespace ttsim::layers
