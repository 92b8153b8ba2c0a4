// Roofline kernel time: never faster than either roof, wave quantisation, launch-bound vs graph-replayed steps.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workloads/layers/kernel_time.hpp"
#include "models/workloads/layers/layer_workload.hpp"

using namespace ttsim;
using namespace ttsim::layers;

namespace {

Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, MathPrecision p = MathPrecision::bf16) {
    Kernel g;
    g.name = "gemm";
    g.kind = KernelKind::gemm;
    g.precision = p;
    g.gemm = GemmShape{m, n, k, 1};
    g.flops = gemm_flops(*g.gemm);
    g.bytes = 2.0 * (m * k + k * n + m * n);
    return g;
}

// Both roofs at full efficiency: no kernel may beat them.
void check_roofline(const Kernel& k, const GpuSpec& gpu, const Efficiency& e) {
    const KernelTime t = kernel_time(k, gpu, e);
    const double peak = (k.precision == MathPrecision::fp8 && gpu.fp8_dense_flops) ? *gpu.fp8_dense_flops : gpu.bf16_dense_flops;
    INFO(k.name << " on " << gpu.name);
    CHECK(t.quantisation >= 1.0);
    CHECK(t.seconds() >= k.flops / peak);
    CHECK(t.seconds() >= k.bytes / gpu.hbm_bandwidth);
    CHECK(t.seconds() >= t.memory_seconds);
    CHECK(t.seconds() >= t.compute_seconds);
}

}  // namespace

TEST_CASE("no kernel is faster than its roofline, over random shapes and every shipped kernel", "[layers]") {
    std::mt19937_64 rng(12);
    std::uniform_int_distribution<std::int64_t> dim(1, 20000), small(1, 64);
    const Efficiency e;
    for (const GpuSpec& gpu : gpu_catalog()) {
        for (int i = 0; i < 300; ++i) {
            check_roofline(gemm(dim(rng), dim(rng), dim(rng), i % 2 ? MathPrecision::fp8 : MathPrecision::bf16), gpu, e);
            Kernel a;
            a.name = "attention";
            a.kind = KernelKind::attention;
            a.attention = AttentionShape{small(rng), dim(rng), dim(rng), 64 * (1 + i % 2), i % 3 == 0};
            a.flops = attention_forward_flops(*a.attention);
            a.bytes = 2.0 * a.attention->batch_heads * (2 * a.attention->q_len + 2 * a.attention->kv_len) * a.attention->head_dim;
            check_roofline(a, gpu, e);
        }
    }
    const GpuSpec& h100 = find_gpu("h100");
    for (const std::string& stem : shipped_layer_workloads())
        for (const Layer& l : load_shipped_layer_workload(stem).layers) {
            for (const Kernel& k : l.forward) check_roofline(k, h100, e);
            for (const Kernel& k : l.backward) check_roofline(k, h100, e);
        }
}

// roof-blend and tensor-memory (calibration options): a blended kernel is never below its larger roof and reaches
// the sum at exponent 1; a tensor-core kernel's own memory efficiency moves its memory roof only.
TEST_CASE("blended roofs lie between the larger roof and the sum, tensor memory moves tensor kernels only", "[layers]") {
    CHECK(combined_roofs(3.0, 1.0, 0.0) == 3.0);
    CHECK(combined_roofs(3.0, 1.0, 1.0) == Approx(4.0).epsilon(1e-15));
    CHECK(combined_roofs(3.0, 4.0, 2.0) == Approx(5.0).epsilon(1e-15));
    CHECK(combined_roofs(0.0, 0.0, 2.0) == 0.0);
    CHECK(combined_roofs(1e-300, 2e-300, 8.0) >= 2e-300);   // scaled: no underflow to 0
    const GpuSpec& h100 = find_gpu("h100");
    const Kernel g = gemm(4096, 4096, 1024);
    Efficiency e;
    for (double p : {1.0, 1.5, 4.0, 32.0}) {
        e.roof_exponent = p;
        const KernelTime t = kernel_time(g, h100, e);
        CHECK(t.seconds() >= std::max(t.compute_seconds, t.memory_seconds));
        CHECK(t.seconds() <= t.compute_seconds + t.memory_seconds + 1e-18);
        check_roofline(g, h100, e);
    }
    e = Efficiency{};
    Kernel norm;
    norm.kind = KernelKind::norm;
    norm.bytes = 1e9;
    const double norm_memory = kernel_time(norm, h100, e).memory_seconds;
    const double gemm_memory = kernel_time(g, h100, e).memory_seconds;
    e.tensor_memory = e.memory / 2;
    CHECK(kernel_time(norm, h100, e).memory_seconds == norm_memory);
    CHECK(kernel_time(g, h100, e).memory_seconds == Approx(2 * gemm_memory).epsilon(1e-12));
}

TEST_CASE("a GEMM one tile past a full wave costs a whole extra wave", "[layers]") {
    const GpuSpec& h100 = find_gpu("h100");
    REQUIRE(h100.sms == 132);
    Efficiency e;
    e.tiles = {{128, 128}};
    e.max_split_k = 1;   // one tile shape, no split-K: the raw wave effect
    // 12 x 11 = 132 tiles of 128 x 128: exactly one wave. K = 8192 keeps it compute-bound.
    const Kernel full = gemm(12 * 128, 11 * 128, 8192);
    const Kernel over = gemm(12 * 128, 11 * 128 + 1, 8192);   // 12 x 12 = 144 tiles: 2 waves
    const KernelTime a = kernel_time(full, h100, e), b = kernel_time(over, h100, e);
    CHECK(a.waves == 1);
    CHECK(b.waves == 2);
    CHECK(a.quantisation == Approx(1.0));
    CHECK(a.compute_seconds > a.memory_seconds);
    CHECK(b.seconds() == Approx(2 * a.seconds()).epsilon(1e-12));   // 0.07 % more work, twice the time
    // Worked example: one wave is 132 tiles x 2 x 128 x 128 x 8192 FLOP at 989.4 TFLOP/s x 0.80.
    CHECK(a.seconds() == Approx(132 * 2.0 * 128 * 128 * 8192 / (989.4e12 * 0.80)).epsilon(1e-9));
    // B200 has 148 SMs: the same 132 tiles fit one wave there too, 149 would not.
    CHECK(kernel_time(gemm(149 * 128, 128, 8192), find_gpu("b200"), e).waves == 2);
    CHECK(kernel_time(gemm(148 * 128, 128, 8192), find_gpu("b200"), e).waves == 1);
    // With several tile shapes the cheapest is taken, never worse than any single one.
    const Efficiency all;
    CHECK(kernel_seconds(over, h100, all) <= b.seconds());
}

TEST_CASE("a tiny per-GPU batch is launch-bound unless the step is a replayed CUDA graph", "[layers]") {
    const GpuSpec& h100 = find_gpu("h100");
    const Efficiency e;
    // BERT-large at one 512-token sequence per GPU: ~1 TFLOP of kernels, hundreds of launches. The LAMB
    // update is sharded over 8 GPUs (NVIDIA's DistributedFusedLAMB on one node); unsharded, its 9.4 GB of
    // state traffic alone would take ~3 ms on H100.
    const LayerGraph tiny = load_shipped_layer_workload("bert_large");
    StepOptions eager;
    eager.cuda_graphs = CudaGraphs::none;
    eager.optimizer_shards = 8;
    StepOptions graph = eager;
    graph.cuda_graphs = CudaGraphs::full_iteration;
    const StepTime a = step_time(tiny, h100, e, eager), b = step_time(tiny, h100, e, graph);
    INFO("eager: gpu " << a.gpu_seconds << " s, host " << a.host_seconds << " s, " << a.eager_launches << " launches");
    CHECK(a.gpu_seconds == Approx(b.gpu_seconds));                 // same kernels on the GPU
    CHECK(a.eager_launches == a.kernels);
    CHECK(a.host_seconds == Approx(a.kernels * e.launch_seconds));
    CHECK(a.launch_bound());
    CHECK(a.seconds == Approx(a.host_seconds));
    CHECK(b.graph_launches == 1);
    CHECK_FALSE(b.launch_bound());
    CHECK(b.seconds == Approx(b.gpu_seconds));
    CHECK(a.seconds / b.seconds == Approx(a.host_seconds / a.gpu_seconds));
    // The workload's own mode (segmented, NVIDIA's 1-node BERT): two graphs + eager optimizer kernels.
    StepOptions own_mode = eager;
    own_mode.cuda_graphs.reset();
    const StepTime own = step_time(tiny, h100, e, own_mode);
    CHECK(own.cuda_graphs == CudaGraphs::segmented);
    CHECK(own.graph_launches == 2);
    CHECK(own.eager_launches == 26);   // one update kernel per layer with trainable parameters
    // At 48 sequences per GPU (NVIDIA's packed 1-node batch, in sequences x 2) the GPU dominates either way.
    BuildOptions big;
    big.micro_batch = 96;
    const LayerGraph large = load_shipped_layer_workload("bert_large", big);
    const StepTime c = step_time(large, h100, e, eager), d = step_time(large, h100, e, graph);
    CHECK_FALSE(c.launch_bound());
    CHECK(c.seconds == Approx(d.seconds));
    CHECK(c.kernels == a.kernels);   // same kernels, 96x the work
}

TEST_CASE("gradient accumulation repeats forward and backward, not the update", "[layers]") {
    const GpuSpec& h200 = find_gpu("h200");
    const LayerGraph g = load_shipped_layer_workload("retinanet");
    StepOptions one, four;
    four.micro_steps = 4;
    const StepTime a = step_time(g, h200, {}, one), b = step_time(g, h200, {}, four);
    double update = 0;
    for (const Layer& l : g.layers)
        if (auto k = optimizer_kernel(l, 1)) update += kernel_seconds(*k, h200, {});
    CHECK(update > 0);
    CHECK(b.gpu_seconds == Approx(4 * (a.gpu_seconds - update) + update));
    StepOptions sharded;
    sharded.optimizer_shards = 8;
    CHECK(step_time(g, h200, {}, sharded).gpu_seconds == Approx(a.gpu_seconds - update + update / 8));
    GpuSpec no_sms = make_variant(h200, "no-sms");
    no_sms.sms.reset();
    CHECK_THROWS_AS(step_time(g, no_sms, {}), InputError);
}

TEST_CASE("worked example: Llama2-70B's FFN-up GEMM at TP 4 on H100", "[layers]") {
    // One 8192-token sequence, fc1 (gate + up) split over 4 GPUs: [8192 x 8192] x [8192 x 14336] in FP8.
    const LayerGraph g = load_shipped_layer_workload("llama2_70b_lora", BuildOptions{.tensor_parallel = 4, .sequence_parallel = true});
    const Kernel* fc1 = nullptr;
    for (const Kernel& k : g.layers[1].forward)
        if (k.name == "fc1") fc1 = &k;
    REQUIRE(fc1 != nullptr);
    CHECK(fc1->gemm->m == 8192);
    CHECK(fc1->gemm->n == 14336);
    CHECK(fc1->gemm->k == 8192);
    const KernelTime t = kernel_time(*fc1, find_gpu("h100"), {});
    // 128 x 128 tiles: 64 x 112 = 7168 tiles, 55 waves of 132 (the 128 x 256 shapes: 3584 tiles, 28 waves);
    // quantisation 55 x 132 / 7168 = 1.0128; 1.924 TFLOP at 1978.9 TFLOP/s x 0.80: 1.231 ms.
    CHECK(t.tiles == 7168);
    CHECK(t.waves == 55);
    CHECK(t.quantisation == Approx(55.0 * 132 / 7168));
    CHECK(t.compute_seconds == Approx(2.0 * 8192 * 14336 * 8192 * (55.0 * 132 / 7168) / (1978.9e12 * 0.80)));
    CHECK(t.compute_seconds > t.memory_seconds);
    CHECK(t.seconds() == Approx(1.231e-3).epsilon(1e-3));
}
