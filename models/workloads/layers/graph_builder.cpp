#include "models/workloads/layers/graph_builder.hpp"

namespace ttsim::layers {

Kernel LayerBuilder::make(const std::string& name, KernelKind kind, Pass pass) const {
    Kernel k;
    k.name = name + (pass == Pass::forward ? "" : std::string(".") + to_string(pass));
    k.kind = kind;
    k.pass = pass;
    // Only tensor-core kernels run at the workload's GEMM precision; attention runs at its own, bf16/fp16 unless a
    // submission's layout says FP8 (BuildOptions::attention_precision: FP8 attention is configuration-specific).
    k.precision = (kind == KernelKind::gemm || kind == KernelKind::conv) ? facts_.precision
                  : kind == KernelKind::attention                       ? facts_.attention_precision
                                                                        : MathPrecision::bf16;
    return k;
}

void LayerBuilder::add_weights(std::int64_t local, bool trainable, int shard) {
    layer_.local_params += local;
    layer_.params += local * shard;
    if (trainable) {
        layer_.local_trainable += local;
        layer_.trainable_params += local * shard;
    }
}

void LayerBuilder::add_params(std::int64_t local, bool trainable, int shard) { add_weights(local, trainable, shard); }

void LayerBuilder::keep(const Act& a) {
    if (kept_.insert(a.id).second) layer_.saved_bytes += a.elements * facts_.activation_bytes;
}

void LayerBuilder::keep_mask(const std::string& id, double elements) {
    if (kept_.insert(id).second) layer_.saved_bytes += elements * facts_.dropout_mask_bytes;
}

Act LayerBuilder::linear(const std::string& name, const Act& in, std::int64_t tokens, std::int64_t in_features,
                         std::int64_t out_features, bool bias, bool trainable, int shard, bool tied) {
    const double ab = facts_.activation_bytes;
    const double wb = trainable ? facts_.weight_bytes : facts_.frozen_weight_bytes;
    const double x = static_cast<double>(tokens) * in_features, y = static_cast<double>(tokens) * out_features;
    const double w = static_cast<double>(in_features) * out_features;
    if (!tied) add_weights(in_features * out_features + (bias ? out_features : 0), trainable, shard);
    const double bytes = (x + y) * ab + w * wb;   // the same three tensors move in every pass

    Kernel f = make(name, KernelKind::gemm, Pass::forward);
    f.gemm = GemmShape{tokens, out_features, in_features, 1};
    f.flops = gemm_flops(*f.gemm);
    f.bytes = bytes;
    layer_.forward.push_back(f);
    if (in.grad) {   // dX[tokens, in] = dY[tokens, out] W
        Kernel d = make(name, KernelKind::gemm, Pass::dgrad);
        d.gemm = GemmShape{tokens, in_features, out_features, 1};
        d.flops = gemm_flops(*d.gemm);
        d.bytes = bytes;
        layer_.backward.push_back(d);
    }
    if (trainable) {   // dW[out, in] = dY^T X, reduced over the tokens
        Kernel g = make(name, KernelKind::gemm, Pass::wgrad);
        g.gemm = GemmShape{out_features, in_features, tokens, 1};
        g.flops = gemm_flops(*g.gemm);
        g.bytes = (x + y) * ab + w * facts_.weight_bytes;
        layer_.backward.push_back(g);
        keep(in);
    }
    return Act{layer_.name + "." + name + ".out", y, in.grad || trainable};
}

Act LayerBuilder::conv(const std::string& name, const Act& in, const ConvShape& s, bool bias, bool trainable,
                       bool tied) {
    const double ab = facts_.activation_bytes;
    const double wb = trainable ? facts_.weight_bytes : facts_.frozen_weight_bytes;
    const double x = static_cast<double>(s.images) * s.c_in * s.h_in * s.w_in;
    const double y = static_cast<double>(s.images) * s.c_out * s.h_out * s.w_out;
    const std::int64_t reduction = (s.c_in / s.groups) * s.kernel * s.kernel;
    const double w = static_cast<double>(s.c_out) * reduction;
    if (!tied) add_weights(s.c_out * reduction + (bias ? s.c_out : 0), trainable, 1);
    const double flops = 2.0 * y * reduction;   // every output element: one MAC per reduction element
    const double bytes = (x + y) * ab + w * wb;

    Kernel f = make(name, KernelKind::conv, Pass::forward);
    f.conv = s;
    f.gemm = s.implicit_gemm();
    f.flops = flops;
    f.bytes = bytes;
    layer_.forward.push_back(f);
    if (in.grad) {   // dX: a transposed convolution, one output per input position and input channel
        Kernel d = make(name, KernelKind::conv, Pass::dgrad);
        d.conv = s;
        d.gemm = GemmShape{s.images * s.h_in * s.w_in, s.c_in, (s.c_out / s.groups) * s.kernel * s.kernel, 1};
        d.flops = flops;
        d.bytes = bytes;
        layer_.backward.push_back(d);
    }
    if (trainable) {   // dW[c_out, reduction], reduced over images x output positions
        Kernel g = make(name, KernelKind::conv, Pass::wgrad);
        g.conv = s;
        g.gemm = GemmShape{s.c_out, reduction, s.images * s.h_out * s.w_out, 1};
        g.flops = flops;
        g.bytes = (x + y) * ab + w * facts_.weight_bytes;
        layer_.backward.push_back(g);
        keep(in);
    }
    return Act{layer_.name + "." + name + ".out", y, in.grad || trainable};
}

Act LayerBuilder::attention(const std::string& name, const Act& q, const Act& k, const Act& v,
                            const AttentionShape& s) {
    const double ab = facts_.activation_bytes;
    const double out = static_cast<double>(s.batch_heads) * s.q_len * s.head_dim;
    // Softmax statistics (log-sum-exp), fp32, one per query row and head.
    const double stats_bytes = 4.0 * static_cast<double>(s.batch_heads) * s.q_len;
    Kernel f = make(name, KernelKind::attention, Pass::forward);
    f.attention = s;
    f.flops = attention_forward_flops(s);
    f.bytes = (q.elements + k.elements + v.elements + out) * ab + stats_bytes;
    layer_.forward.push_back(f);
    const bool grad = q.grad || k.grad || v.grad;
    if (grad) {   // reads Q, K, V, O, dO and the statistics; writes dQ, dK, dV
        Kernel b = make(name, KernelKind::attention, Pass::dgrad);
        b.attention = s;
        b.flops = attention_backward_factor * f.flops;
        b.bytes = 2 * (q.elements + k.elements + v.elements + out) * ab + stats_bytes;
        layer_.backward.push_back(b);
        keep(q);
        keep(k);
        keep(v);
        keep(Act{layer_.name + "." + name + ".out", out, true});
        if (kept_.insert(layer_.name + "." + name + ".stats").second) layer_.saved_bytes += stats_bytes;
    }
    return Act{layer_.name + "." + name + ".out", out, grad};
}

Act LayerBuilder::norm(const std::string& name, const Act& in, std::int64_t norm_params, bool trainable,
                       double fused_elements) {
    const double ab = facts_.activation_bytes;
    add_weights(norm_params, trainable, 1);
    Kernel f = make(name, KernelKind::norm, Pass::forward);
    f.bytes = (2 * in.elements + fused_elements) * ab;
    layer_.forward.push_back(f);
    if (in.grad || trainable) {   // reads x and dY, writes dX (and the small affine gradients)
        Kernel b = make(name, KernelKind::norm, Pass::dgrad);
        b.bytes = 3 * in.elements * ab;
        layer_.backward.push_back(b);
        keep(in);
    }
    return Act{layer_.name + "." + name + ".out", in.elements, in.grad || trainable};
}

Act LayerBuilder::elementwise(const std::string& name, const std::vector<Act>& inputs, double out_elements,
                              const std::vector<Act>& keep_for_backward) {
    const double ab = facts_.activation_bytes;
    double in_elements = 0;
    bool grad = false;
    for (const Act& a : inputs) {
        in_elements += a.elements;
        grad = grad || a.grad;
    }
    Kernel f = make(name, KernelKind::elementwise, Pass::forward);
    f.bytes = (in_elements + out_elements) * ab;
    layer_.forward.push_back(f);
    if (grad) {   // reads dY and what it kept, writes one gradient per input
        Kernel b = make(name, KernelKind::elementwise, Pass::dgrad);
        double kept = 0;
        for (const Act& a : keep_for_backward) kept += a.elements;
        b.bytes = (out_elements + kept + in_elements) * ab;
        layer_.backward.push_back(b);
        for (const Act& a : keep_for_backward) keep(a);
    }
    return Act{layer_.name + "." + name + ".out", out_elements, grad};
}

Act LayerBuilder::embedding(const std::string& name, double rows, std::int64_t vocab, std::int64_t width,
                            bool trainable, int shard) {
    const double ab = facts_.activation_bytes;
    add_weights(vocab * width, trainable, shard);
    const double out = rows * static_cast<double>(width);
    Kernel f = make(name, KernelKind::embedding, Pass::forward);
    f.bytes = 2 * out * ab;   // gather the rows, write them
    layer_.forward.push_back(f);
    if (trainable) {   // scatter-add of dY into the table rows: no FLOP by the data's convention
        Kernel g = make(name, KernelKind::embedding, Pass::wgrad);
        g.bytes = out * ab + out * facts_.weight_bytes;
        layer_.backward.push_back(g);
    }
    return Act{layer_.name + "." + name + ".out", out, trainable};
}

void finish_graph(LayerGraph& graph) {
    graph.recompute = graph.options.recompute_override ? graph.options.recompute : graph.facts.recompute;
    for (Layer& layer : graph.layers) layer.saved_bytes_no_recompute = layer.saved_bytes;
    if (graph.recompute == Recompute::full) apply_full_recompute(graph);
}

}  // namespace ttsim::layers
