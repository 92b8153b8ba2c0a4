// The operations layer builders are made of. Each call adds one fused forward kernel to a layer, the backward
// kernels autograd would run for it, its parameters, and the activations it keeps for backward.
//
// Which backward kernels run follows gradient flow, tracked per tensor (Act::grad = "requires grad"):
//  - dgrad (gradient w.r.t. the input) only where the input requires grad, i.e. something upstream is
//    trainable: nothing flows into a frozen stem or into the data;
//  - wgrad only for trainable weights (LoRA's frozen base GEMMs have none);
//  - an output requires grad if its input does or its weights are trainable.
// What is kept for backward: a GEMM/conv keeps its input only if it has a wgrad to compute (the dgrad needs the
// weights, not the input; TransformerEngine and Megatron save the input for the weight gradient only), a norm
// keeps its input, a fused attention keeps Q, K, V, its output and its softmax statistics, an activation
// function keeps its input. A tensor kept by several consumers (the norm output read by QKV and by a LoRA A)
// is counted once, by its id.
//
// Bytes: every kernel reads its inputs and writes its outputs once (activations at TrainingFacts::activation_
// bytes, weights at weight_bytes or frozen_weight_bytes); caches are ignored, so bytes are an upper bound on
// HBM traffic for tensors that fit in L2.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "models/workloads/layers/layer_graph.hpp"

namespace ttsim::layers {

// A tensor flowing between operations: an id (for saving it once), its element count on this GPU for the micro
// batch, and whether it requires grad.
struct Act {
    std::string id;
    double elements = 0;
    bool grad = false;
};

class LayerBuilder {
public:
    LayerBuilder(Layer& layer, const TrainingFacts& facts) : layer_(layer), facts_(facts) {}

    // y[tokens, out] = x[tokens, in] W^T (+ bias): a GEMM m = tokens, n = out, k = in (this GPU's shard).
    // `shard` = how many GPUs hold pieces of this weight (TP for column/row-parallel linears, 1 replicated).
    Act linear(const std::string& name, const Act& in, std::int64_t tokens, std::int64_t in_features,
               std::int64_t out_features, bool bias, bool trainable, int shard = 1, bool tied = false);

    // `tied`: the weights (and bias) belong to another layer (BERT's MLM decoder uses the word embeddings,
    // RetinaNet's heads share one set of convs over the FPN levels): kernels and gradients, no new parameters.

    // A convolution on this GPU's images (data parallel only); bias optional.
    Act conv(const std::string& name, const Act& in, const ConvShape& shape, bool bias, bool trainable,
             bool tied = false);

    // Fused attention over q, k, v (ids of the tensors it keeps); output q_len x heads x head_dim elements.
    Act attention(const std::string& name, const Act& q, const Act& k, const Act& v, const AttentionShape& shape);

    // LayerNorm / RMSNorm / GroupNorm over `in` with `norm_params` affine parameters (replicated over TP).
    // `fused_elements`: extra elementwise inputs fused into the kernel (a residual add), read once.
    Act norm(const std::string& name, const Act& in, std::int64_t norm_params, bool trainable,
             double fused_elements = 0);

    // An elementwise kernel reading `inputs` and writing `out_elements`; keeps the inputs listed in `keep`
    // (e.g. an activation function's input) for its backward.
    Act elementwise(const std::string& name, const std::vector<Act>& inputs, double out_elements,
                    const std::vector<Act>& keep = {});

    // A token-embedding gather: `rows` looked up from a [vocab, width] table (this GPU's shard of it).
    Act embedding(const std::string& name, double rows, std::int64_t vocab, std::int64_t width, bool trainable,
                  int shard = 1);

    // Parameters without a kernel of their own (a bias folded into another kernel), whole model and shard.
    void add_params(std::int64_t local, bool trainable, int shard = 1);
    // A dropout mask kept for backward: `elements` x dropout_mask_bytes.
    void keep_mask(const std::string& id, double elements);
    // Keeps a tensor for backward (once per id).
    void keep(const Act& a);

private:
    void add_weights(std::int64_t local, bool trainable, int shard);
    Kernel make(const std::string& name, KernelKind kind, Pass pass) const;
    Layer& layer_;
    const TrainingFacts& facts_;
    std::set<std::string> kept_;
};

// Applies the options to a built graph: full recomputation where in effect; the layers' saved_bytes_no_
// recompute filled in. Every family builder ends with it.
void finish_graph(LayerGraph& graph);

}  // namespace ttsim::layers
