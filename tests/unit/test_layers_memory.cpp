// Memory per GPU for a layout: a full fine-tune of Llama2-70B does not fit 8 H100s and fits with more
// sharding; NVIDIA's published LoRA layouts fit; the breakdown adds up.
#include <catch2/catch.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workloads/layers/layer_workload.hpp"
#include "models/workloads/layers/memory.hpp"
#include "sim/config.hpp"

using namespace ttsim;
using namespace ttsim::layers;

namespace {

// Llama2-70B as models/data/workloads/llama2_70b_lora.yaml, every weight trainable (no LoRA).
const char* const llama70b_full =
    "family: transformer_decoder\n"
    "architecture: {layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn: 28672, sequence: 8192, vocab: 32000,"
    " vocab_multiple: 128}\n";

MemoryEstimate estimate(const char* text, const MemoryLayout& layout, const char* gpu) {
    const LayerGraph g = build_layer_graph(ConfigNode::load_string(text, "user"), "llama2_70b_full", build_options(layout));
    return memory_per_gpu(g, layout, find_gpu(gpu));
}

}  // namespace

TEST_CASE("a Llama2-70B full fine-tune does not fit 8 H100s and fits with enough sharding", "[layers]") {
    MemoryLayout eight{.tensor_parallel = 8, .sequence_parallel = true, .distributed_optimizer = true};
    const MemoryEstimate m = estimate(llama70b_full, eight, "h100");
    INFO(m.summary);
    CHECK_FALSE(m.fits);
    // 69.0 B parameters / 8: 2-byte weights and gradients and 12 bytes of optimizer state each: ~138 GB.
    CHECK(m.weights == Approx(68.98e9 * 2 / 8).epsilon(0.01));
    CHECK(m.optimizer == Approx(68.98e9 * 12 / 8).epsilon(0.01));
    CHECK(m.total > m.capacity);
    CHECK(m.summary.find("does not fit") != std::string::npos);
    CHECK(m.total == Approx(m.weights + m.gradients + m.optimizer + m.activations + m.reserve));

    // 64 GPUs: TP 8 x DP 8 with the optimizer state sharded over DP, and full recomputation.
    MemoryLayout sixty_four = eight;
    sixty_four.data_parallel = 8;
    sixty_four.recompute_override = true;
    sixty_four.recompute = Recompute::full;
    const MemoryEstimate s = estimate(llama70b_full, sixty_four, "h100");
    INFO(s.summary);
    CHECK(s.fits);
    CHECK(s.optimizer == Approx(m.optimizer / 8));
    CHECK(s.activations < m.activations / 5);
    // Without sharding the optimizer it would not: the state alone is 103 GB per GPU.
    MemoryLayout replicated = sixty_four;
    replicated.distributed_optimizer = false;
    CHECK_FALSE(estimate(llama70b_full, replicated, "h100").fits);
}

TEST_CASE("NVIDIA's published Llama2-70B LoRA layouts fit their GPUs", "[layers]") {
    // 1x8 H100: TP 4, SP, CP 1, DP 2, micro batch 1 (models/data/models/llama2_70b_lora.yaml parallel_configs).
    MemoryLayout h100{.tensor_parallel = 4, .data_parallel = 2, .sequence_parallel = true, .distributed_optimizer = true};
    const LayerGraph g = load_shipped_layer_workload("llama2_70b_lora", build_options(h100));
    const MemoryEstimate a = memory_per_gpu(g, h100, find_gpu("h100"));
    INFO(a.summary);
    CHECK(a.fits);
    CHECK(a.gradients == Approx(44'564'480.0 * 2 / 4).epsilon(0.01));   // adapters only, TP-sharded
    CHECK(a.weights == Approx(68.98e9 / 4).epsilon(0.01));               // frozen base in FP8, 1 byte
    // 1x8 H200: TP 1, CP 2, DP 4: the whole FP8 base (69 GB) and half a sequence of activations per GPU.
    MemoryLayout h200{.context_parallel = 2, .data_parallel = 4, .distributed_optimizer = true};
    const LayerGraph g2 = load_shipped_layer_workload("llama2_70b_lora", build_options(h200));
    const MemoryEstimate b = memory_per_gpu(g2, h200, find_gpu("h200"));
    INFO(b.summary);
    CHECK(b.fits);
    CHECK_FALSE(memory_per_gpu(g2, h200, find_gpu("h100")).fits);   // the same layout on 80 GB parts
    // A graph built for another layout is refused.
    CHECK_THROWS_AS(memory_per_gpu(g2, h100, find_gpu("h100")), InputError);
}

TEST_CASE("frozen weights have no gradients or optimizer state, and pipeline stages hold their share", "[layers]") {
    const MemoryLayout one{};
    const LayerGraph g = load_shipped_layer_workload("llama2_70b_lora");
    const MemoryEstimate m = memory_per_gpu(g, one, find_gpu("b200"));
    CHECK(m.gradients == Approx(44'564'480.0 * 2));
    CHECK(m.optimizer == Approx(44'564'480.0 * 12));
    // A stage of 20 blocks under PP 4 holds 4 micro batches of its own activations (1F1B, first stage).
    MemoryLayout pp{.pipeline_parallel = 4};
    const MemoryEstimate stage = memory_per_gpu(g, LayerRange{1, 21}, pp, find_gpu("b200"));
    CHECK(stage.activations == Approx(4 * totals(g, {1, 21}).saved_bytes));
    const GraphTotals t = totals(g, {1, 21});
    CHECK(stage.weights == Approx(2.0 * t.local_trainable + 1.0 * (t.local_params - t.local_trainable)));
    CHECK(t.local_params * 4 < totals(g).local_params);   // a quarter of the blocks, no embedding or head
}
