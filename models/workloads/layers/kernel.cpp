#include "models/workloads/layers/kernel.hpp"

namespace ttsim::layers {

const char* to_string(KernelKind kind) {
    switch (kind) {
        case KernelKind::gemm: return "gemm";
        case KernelKind::conv: return "conv";
        case KernelKind::attention: return "attention";
        case KernelKind::norm: return "norm";
        case KernelKind::elementwise: return "elementwise";
        case KernelKind::embedding: return "embedding";
        case KernelKind::optimizer: return "optimizer";
    }
    return "?";
}

const char* to_string(Pass pass) {
    switch (pass) {
        case Pass::forward: return "forward";
        case Pass::dgrad: return "dgrad";
        case Pass::wgrad: return "wgrad";
        case Pass::recompute: return "recompute";
        case Pass::optimizer: return "optimizer";
    }
    return "?";
}

double gemm_flops(const GemmShape& s) {
    return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
           static_cast<double>(s.batch);
}

double attention_forward_flops(const AttentionShape& s) {
    const double full = 4.0 * static_cast<double>(s.batch_heads) * static_cast<double>(s.q_len) *
                        static_cast<double>(s.kv_len) * static_cast<double>(s.head_dim);
    return s.causal ? full / 2 : full;
}

}  // namespace ttsim::layers
