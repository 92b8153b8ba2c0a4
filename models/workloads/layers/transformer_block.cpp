#include "models/workloads/layers/transformer_block.hpp"

#include "sim/errors.hpp"

namespace ttsim::layers {
namespace {

// A base linear plus its LoRA adapter when targeted: y = x W^T + scale x A^T B^T. Under TP the adapters are
// split like NeMo's parallel adapters (models/data/models/llama2_70b_lora.yaml lora.tp_sharding): for a
// column-parallel base, A is split over the rank (output gathered) and B over the outputs; for a row-parallel
// base, A over the inputs and B over the outputs. So every GPU holds 1/TP of the adapter weights. The
// adapter's output is added to the base output in one fused kernel (scale and add, NeMo's adapter).
Act adapted_linear(LayerBuilder& b, const BlockConfig& c, const std::string& name, const Act& in,
                   std::int64_t in_local, std::int64_t out_local, bool column_parallel) {
    const std::int64_t t = c.tokens();
    const Act base = b.linear(name, in, t, in_local, out_local, c.bias, !c.frozen, c.tp);
    if (c.lora.rank == 0 || !c.lora.targets.count(name)) return base;
    if (c.lora.rank % c.tp != 0 || (!column_parallel && out_local % c.tp != 0))
        throw InputError("LoRA rank " + std::to_string(c.lora.rank) + " and the adapted widths must split over TP " +
                         std::to_string(c.tp));
    Act adapter_in = in;
    if (c.lora.dropout > 0) {   // dropout on the adapter input: a new tensor (kept for A's wgrad) and a mask
        adapter_in = b.elementwise("lora_" + name + "_dropout", {in}, static_cast<double>(t) * in_local);
        b.keep_mask(adapter_in.id + ".mask", adapter_in.elements);
    }
    const std::int64_t a_out = column_parallel ? c.lora.rank / c.tp : c.lora.rank;
    const std::int64_t b_out = column_parallel ? out_local : out_local / c.tp;
    const Act a = b.linear("lora_" + name + "_a", adapter_in, t, in_local, a_out, false, true, c.tp);
    const Act bb = b.linear("lora_" + name + "_b", a, t, c.lora.rank, b_out, false, true, c.tp);
    return b.elementwise("lora_" + name + "_add", {base, bb}, base.elements);
}

}  // namespace

Act transformer_block(LayerBuilder& b, Layer& layer, const BlockConfig& c, const Act& x, double activation_bytes) {
    layer.input_bytes = x.elements * activation_bytes;
    const std::int64_t t = c.tokens();
    const std::int64_t heads = c.heads / c.tp, kv = c.kv_heads / c.tp;
    const std::int64_t q_width = heads * c.head_dim, kv_width = kv * c.head_dim;
    const std::int64_t norm_params = c.rms_norm ? c.hidden : 2 * c.hidden;
    const double res = c.residual_elements();
    const bool trainable = !c.frozen;

    // Attention.
    const Act attn_in = c.pre_norm ? b.norm("ln1", x, norm_params, trainable) : x;
    const Act qkv = adapted_linear(b, c, "qkv", attn_in, c.hidden, q_width + 2 * kv_width, true);
    Act q{qkv.id + ".q", static_cast<double>(t) * q_width, qkv.grad};
    Act k{qkv.id + ".k", static_cast<double>(t) * kv_width, qkv.grad};
    const Act v{qkv.id + ".v", static_cast<double>(t) * kv_width, qkv.grad};
    if (c.rope) {   // rotates Q and K in place into new tensors; its backward needs only the angles
        const Act rotated = b.elementwise("rope", {q, k}, q.elements + k.elements);
        q.id = rotated.id + ".q";
        k.id = rotated.id + ".k";
    }
    const AttentionShape shape{c.sequences * heads, c.sequence / c.cp, c.sequence, c.head_dim, c.causal};
    const Act context = b.attention("attention", q, k, v, shape);
    Act proj = adapted_linear(b, c, "proj", context, q_width, c.hidden, false);
    proj.elements = res;   // reduce-scattered to the SP split (or all-reduced, whole)
    if (c.hidden_dropout > 0) b.keep_mask(proj.id + ".mask", res);

    Act mid;
    if (c.pre_norm) {
        mid = b.elementwise("residual1", {x, proj}, res);
    } else {   // post-LN: dropout, residual add and LayerNorm in one kernel, which keeps the sum
        mid = b.norm("add_ln1", Act{layer.name + ".sum1", res, x.grad || proj.grad}, norm_params, trainable, res);
    }

    // Feed-forward.
    const Act ffn_in = c.pre_norm ? b.norm("ln2", mid, norm_params, trainable) : mid;
    const std::int64_t ffn = c.ffn / c.tp;
    const Act up = adapted_linear(b, c, "fc1", ffn_in, c.hidden, (c.gated_ffn ? 2 : 1) * ffn, true);
    Act act;
    if (c.gated_ffn) {
        act = b.elementwise("glu", {up}, static_cast<double>(t) * ffn, {up});
    } else if (c.fused_gemm_gelu) {   // GELU in fc1's epilogue; its backward (fused into fc2's dgrad) needs fc1's output
        act = Act{up.id + ".gelu", static_cast<double>(t) * ffn, up.grad};
        if (up.grad) b.keep(up);
    } else {
        act = b.elementwise("gelu", {up}, static_cast<double>(t) * ffn, {up});
    }
    Act down = adapted_linear(b, c, "fc2", act, ffn, c.hidden, false);
    down.elements = res;
    if (c.hidden_dropout > 0) b.keep_mask(down.id + ".mask", res);
    if (c.pre_norm) return b.elementwise("residual2", {mid, down}, res);
    return b.norm("add_ln2", Act{layer.name + ".sum2", res, mid.grad || down.grad}, norm_params, trainable, res);
}

}  // namespace ttsim::layers
