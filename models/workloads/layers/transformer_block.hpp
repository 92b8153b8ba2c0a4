// One transformer layer (attention + feed-forward), shared by the encoder and decoder families, with Megatron
// tensor parallelism (QKV and FFN-up column-parallel, attention-out and FFN-down row-parallel: heads and FFN
// width split over TP), sequence parallelism (norms, residuals and their activations split over TP) and
// context parallelism (each GPU holds sequence/CP queries; with load-balanced causal ring attention every GPU
// does 1/CP of the score work, its queries meeting all keys). Optional LoRA adapters on the linears.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "models/workloads/layers/graph_builder.hpp"

namespace ttsim::layers {

struct LoraConfig {
    std::int64_t rank = 0;                 // 0: no adapters
    std::set<std::string> targets;         // of: qkv, proj, fc1, fc2
    double dropout = 0;                    // adapter input dropout (kept mask and dropped input)
};

struct BlockConfig {
    std::int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0;
    bool gated_ffn = false;                // SwiGLU/GEGLU: FFN-up is 2 x ffn wide
    bool fused_gemm_gelu = false;          // GELU in the FFN-up GEMM epilogue (no kernel of its own)
    bool bias = true;
    bool causal = false;
    bool pre_norm = true;                  // false: post-LN (BERT: residual add then LayerNorm, one kernel)
    bool rms_norm = false;                 // RMSNorm: `hidden` parameters; LayerNorm: 2 x hidden
    bool rope = false;                     // rotary embedding on Q and K (one elementwise kernel)
    double hidden_dropout = 0;             // dropout after attention-out and FFN-down (masks kept)
    bool frozen = false;                   // base weights frozen (LoRA fine-tuning)
    LoraConfig lora;
    std::int64_t sequence = 0;             // tokens per sequence
    std::int64_t sequences = 0;            // sequences on this GPU per micro batch
    int tp = 1, cp = 1;
    bool sp = false;

    std::int64_t tokens() const { return sequences * sequence / cp; }
    // Elements of a [tokens, hidden] tensor as norms and residuals hold it (split over TP under SP).
    double residual_elements() const {
        return static_cast<double>(tokens()) * hidden / (sp ? tp : 1);
    }
};

// Adds the layer's kernels to `b` (building `layer`), reading `x` (residual_elements() elements); returns the
// layer output. Sets layer.input_bytes.
Act transformer_block(LayerBuilder& b, Layer& layer, const BlockConfig& c, const Act& x, double activation_bytes);

}  // namespace ttsim::layers
