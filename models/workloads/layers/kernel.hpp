// One GPU kernel of a training step in the operator-level model: what it is (kind), its shape, the
// work it does (FLOP) and the HBM traffic it causes (bytes read + written). Kernels are made by the layer
// builders (graph_builder.hpp) and priced by kernel_time.hpp; they carry no time of their own.
//
// Conventions (as models/data/models/README.md): FLOP = 2 x multiply-accumulates, counted for GEMMs,
// convolutions and attention matmuls only; norms and elementwise kernels have 0 FLOP and are priced by bytes.
// Shapes are per GPU (after tensor/context-parallel sharding) for one micro batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ttsim::layers {

enum class KernelKind { gemm, conv, attention, norm, elementwise, embedding, optimizer };
// forward; dgrad = gradient w.r.t. the input; wgrad = gradient w.r.t. the weights; recompute = a forward
// re-run during backward (activation recomputation); optimizer = the parameter update.
enum class Pass { forward, dgrad, wgrad, recompute, optimizer };
// The tensor-core rate a kernel runs at (GpuSpec bf16_dense or fp8_dense).
enum class MathPrecision { bf16, fp8 };
// The precisions the data may name (a layer graph's training facts, a published layout's precision and
// attention_precision).
inline constexpr std::string_view kPrecisionNames[] = {"bf16", "fp16", "fp8"};
// The rate of a precision as the data name it (bf16, fp16, fp8): fp16 and bf16 share the 16-bit tensor rate.
inline MathPrecision math_precision_named(std::string_view name) {
    return name == "fp8" ? MathPrecision::fp8 : MathPrecision::bf16;
}

// C[m, n] = A[m, k] x B[k, n], `batch` independent problems of that size (attention heads, conv groups).
struct GemmShape {
    std::int64_t m = 0, n = 0, k = 0, batch = 1;
};

// A convolution, priced as its implicit GEMM: m = images x output positions, n = output channels,
// k = input channels per group x kernel area. Grouped convolutions pack their groups into the n tile
// (cuDNN's grouped kernels do), so the tile grid is m x c_out and k is the per-group reduction.
struct ConvShape {
    std::int64_t images = 0, c_in = 0, c_out = 0, h_in = 0, w_in = 0, h_out = 0, w_out = 0;
    std::int64_t kernel = 1, stride = 1, groups = 1;
    GemmShape implicit_gemm() const {
        return GemmShape{images * h_out * w_out, c_out, (c_in / groups) * kernel * kernel, 1};
    }
};

// One fused (flash) attention call: `batch_heads` = sequences x query heads on this GPU, q_len queries
// against kv_len keys of head_dim; causal masks half of the score matrix.
struct AttentionShape {
    std::int64_t batch_heads = 0, q_len = 0, kv_len = 0, head_dim = 0;
    bool causal = false;
};

struct Kernel {
    std::string name;              // within its layer, e.g. "fc1.dgrad" (layer3's: the trace shows "layer3.fc1.dgrad")
    KernelKind kind = KernelKind::elementwise;
    Pass pass = Pass::forward;
    MathPrecision precision = MathPrecision::bf16;
    std::optional<GemmShape> gemm;          // set for gemm kernels
    std::optional<ConvShape> conv;          // set for conv kernels
    std::optional<AttentionShape> attention;   // set for attention kernels
    double flops = 0;              // FLOP
    double bytes = 0;              // HBM bytes read + written
};

const char* to_string(KernelKind kind);
const char* to_string(Pass pass);

// FLOP of a GEMM shape: 2 m n k batch.
double gemm_flops(const GemmShape& s);
// Forward FLOP of a fused attention: QK^T and PV, 2 x (2 q kv d) per head, halved when causal.
double attention_forward_flops(const AttentionShape& s);
// Flash-attention backward recomputes QK^T and runs dV, dP, dQ, dK: 5 matmuls against the forward's 2, the
// "2.5x forward" of models/data/models/README.md (Dao et al., FlashAttention-2, arXiv:2307.08691, sec. 3).
inline constexpr double attention_backward_factor = 2.5;

}  // namespace ttsim::layers
