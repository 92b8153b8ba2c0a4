// A user-defined decoder built from a plain YAML mapping (no sources needed): parameter count, the 6 N T rule,
// pipeline stages as layer ranges, tensor parallel shards and full recomputation.
#include <algorithm>

#include <catch2/catch.hpp>

#include "models/workloads/layers/layer_workload.hpp"
#include "sim/config.hpp"

using namespace ttsim;
using namespace ttsim::layers;

namespace {

// Llama-7B-shaped (Touvron et al. 2023, Table 2: 32 layers, 4096 wide, 32 heads); FFN 11008 and vocab 32000
// as its released config. The brief's example: sequence 4096.
const char* const seven_b =
    "family: transformer_decoder\n"
    "architecture: {layers: 32, hidden: 4096, heads: 32, kv_heads: 32, ffn: 11008, sequence: 4096, vocab: 32000}\n";

LayerGraph build(const char* text, BuildOptions options = {}) {
    return build_layer_graph(ConfigNode::load_string(text, "user"), "user", options);
}

}  // namespace

TEST_CASE("a user-defined 7B decoder has ~6.7B parameters and ~6 N T training FLOPs", "[layers]") {
    const LayerGraph g = build(seven_b);
    const GraphTotals t = totals(g);
    const double h = 4096, f = 11008, v = 32000, layers = 32, s = 4096;
    // Embedding and untied output (2 V h), per layer QKVO (4 h^2), SwiGLU (3 h f) and two RMSNorms (2 h), final norm.
    const double embedding = v * h, norms = layers * 2 * h + h;
    const double n = 2 * v * h + layers * (4 * h * h + 3 * h * f + 2 * h) + h;
    CHECK(static_cast<double>(t.params) == n);
    CHECK(t.params == Approx(6.7e9).epsilon(0.01));
    CHECK(t.trainable_params == t.params);
    CHECK(g.layers.size() == 34);

    // Every weight but the embedding table and the norm gains does 2 FLOP per token forward, 4 backward (all
    // trainable, and the trainable embedding makes every input need a gradient): 6 (N - embedding - norms) T,
    // plus causal attention, 2 s^2 h per layer forward, 2.5x that backward.
    const double gemm = 6 * (n - embedding - norms) * s;
    const double attention = 3.5 * layers * 2 * s * s * h;
    const PerSample p = per_sample(g);
    CHECK(p.train_flops == Approx(gemm + attention).epsilon(1e-12));
    CHECK(p.forward_flops == Approx(gemm / 3 + attention / 3.5).epsilon(1e-12));
    const double six_nt = 6 * n * s;
    CHECK(p.train_flops / six_nt > 1.0);    // attention adds more than the embedding's missing FLOPs take away
    CHECK(p.train_flops / six_nt < 1.1);    // ~7 % above 6 N T at this sequence length
}

TEST_CASE("decoder layers split into pipeline stages as contiguous ranges", "[layers]") {
    const LayerGraph g = build(seven_b);
    const GraphTotals whole = totals(g);
    // Four stages: embedding + 8 blocks, 8, 8, 8 blocks + head.
    const std::vector<LayerRange> stages = {{0, 9}, {9, 17}, {17, 25}, {25, 34}};
    std::int64_t params = 0;
    double flops = 0;
    for (const LayerRange& r : stages) {
        const GraphTotals t = totals(g, r);
        params += t.params;
        flops += t.train_flops();
    }
    CHECK(params == whole.params);
    CHECK(flops == Approx(whole.train_flops()).epsilon(1e-12));
    CHECK(totals(g, {1, 2}).params == totals(g, {2, 3}).params);   // identical blocks
}

TEST_CASE("tensor parallelism shards the weights and keeps the per-sample work", "[layers]") {
    const LayerGraph one = build(seven_b);
    BuildOptions tp4;
    tp4.tensor_parallel = 4;
    tp4.sequence_parallel = true;
    const LayerGraph four = build(seven_b, tp4);
    CHECK(totals(four).params == totals(one).params);
    // Norm gains are replicated: every GPU holds 1/4 of the rest.
    const double norms = 32 * 2 * 4096 + 4096;
    CHECK(static_cast<double>(totals(four).local_params) == Approx((totals(one).params - norms) / 4 + norms));
    CHECK(per_sample(four).train_flops == Approx(per_sample(one).train_flops).epsilon(1e-12));
    CHECK(totals(four).saved_bytes == Approx(totals(one).saved_bytes / 4).epsilon(1e-9));   // SP splits the rest
    BuildOptions uneven;
    uneven.tensor_parallel = 3;   // 32 heads over 3 GPUs
    CHECK_THROWS_AS(build(seven_b, uneven), InputError);
}

TEST_CASE("full recomputation re-runs each block's forward and keeps only its input", "[layers]") {
    BuildOptions recompute;
    recompute.recompute_override = true;
    recompute.recompute = Recompute::full;
    const LayerGraph plain = build(seven_b), re = build(seven_b, recompute);
    double block_forward = 0, block_inputs = 0, largest = 0;
    for (const Layer& l : plain.layers)
        if (l.role == LayerRole::block) {
            for (const Kernel& k : l.forward) block_forward += k.flops;
            block_inputs += l.input_bytes;
            largest = std::max(largest, l.saved_bytes);
        }
    CHECK(totals(re).train_flops() == Approx(totals(plain).train_flops() + block_forward).epsilon(1e-12));
    CHECK(totals(re).forward_flops == Approx(totals(plain).forward_flops).epsilon(1e-12));
    const double non_block = plain.layers.front().saved_bytes + plain.layers.back().saved_bytes;
    CHECK(totals(re).saved_bytes == Approx(block_inputs + non_block).epsilon(1e-12));
    CHECK(totals(re).largest_layer_saved_bytes == Approx(largest));
    CHECK(block_inputs == Approx(32.0 * 4096 * 4096 * 2));   // one [s, h] bf16 tensor per block
}

TEST_CASE("a frozen decoder's first block has no input gradient, the blocks after it are alike", "[layers]") {
    // LoRA on a frozen base: nothing upstream of block 0 is trainable, so its first kernels get no dgrad; from
    // block 1 on every block's input requires grad (the adapters), and add_blocks copies the block built for it.
    const char* const lora_7b =
        "family: transformer_decoder\n"
        "architecture: {layers: 6, hidden: 4096, heads: 32, ffn: 11008, sequence: 4096, vocab: 32000, frozen_base: true,\n"
        "               lora: {rank: 16, targets: [qkv, proj, fc1, fc2]}}\n";
    const LayerGraph g = build(lora_7b, BuildOptions{.micro_batch = 2, .tensor_parallel = 2, .sequence_parallel = true});
    REQUIRE(g.layers.size() == 8);
    const Layer &first = g.layers[1], &second = g.layers[2];
    CHECK(first.backward.size() < second.backward.size());
    auto same_kernels = [](const std::vector<Kernel>& a, const std::vector<Kernel>& b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a[i].name != b[i].name || a[i].kind != b[i].kind || a[i].pass != b[i].pass || a[i].flops != b[i].flops ||
                a[i].bytes != b[i].bytes || (a[i].gemm.has_value() != b[i].gemm.has_value()) ||
                (a[i].gemm && (a[i].gemm->m != b[i].gemm->m || a[i].gemm->n != b[i].gemm->n || a[i].gemm->k != b[i].gemm->k)))
                return false;
        return true;
    };
    CHECK(same_kernels(first.forward, second.forward));
    for (std::size_t i = 2; i <= 6; ++i) {
        const Layer& l = g.layers[i];
        CHECK(l.name == "layer" + std::to_string(i - 1));
        CHECK(l.role == LayerRole::block);
        CHECK(same_kernels(l.forward, second.forward));
        CHECK(same_kernels(l.backward, second.backward));
        CHECK(l.saved_bytes == second.saved_bytes);
        CHECK(l.local_trainable == second.local_trainable);
        CHECK(l.params == second.params);
    }
    // The adapters' wgrads only: 4 targets x (A, B).
    std::size_t wgrads = 0;
    for (const Kernel& k : second.backward) wgrads += k.pass == Pass::wgrad;
    CHECK(wgrads == 8);
}

TEST_CASE("malformed decoder descriptions are refused with the key", "[layers]") {
    CHECK_THROWS_AS(build("family: transformer_decoder\narchitecture: {layers: 2, hidden: 64}\n"), InputError);
    CHECK_THROWS_AS(build("family: transformer_decoderz\narchitecture: {}\n"), InputError);
    CHECK_THROWS_AS(build("family: transformer_decoder\narchitecture: {layers: 2, hidden: 64, heads: 4, ffn: 128,"
                          " sequence: 16, vocab: 100, depth: 3}\n"),
                    InputError);
    CHECK_THROWS_AS(build("family: unet\narchitecture: {}\n"), InputError);
    // A description without sources is fine for a user; shipped files must cite them.
    CHECK_THROWS_AS(require_sourced_leaves(ConfigNode::load_string("a: {value: 1}\n", "x")), InputError);
    CHECK_NOTHROW(require_sourced_leaves(ConfigNode::load_string("a: {value: 1, source: K}\nb: {c: {value: 2, source: K}}\n", "x")));
}
