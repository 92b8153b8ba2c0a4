#include "models/workloads/layers/layer_graph.hpp"

#include <algorithm>

#include "sim/errors.hpp"

namespace ttsim::layers {

const char* to_string(CudaGraphs mode) {
    switch (mode) {
        case CudaGraphs::none: return "none";
        case CudaGraphs::per_layer: return "per_layer";
        case CudaGraphs::segmented: return "segmented";
        case CudaGraphs::full_iteration: return "full_iteration";
    }
    return "?";
}

const char* to_string(Recompute mode) { return mode == Recompute::full ? "full" : "none"; }

GraphTotals totals(const LayerGraph& graph, LayerRange range) {
    TTSIM_ASSERT(range.first <= range.last && range.last <= graph.layers.size(), "layer range out of bounds");
    GraphTotals t;
    for (std::size_t i = range.first; i < range.last; ++i) {
        const Layer& layer = graph.layers[i];
        t.params += layer.params;
        t.trainable_params += layer.trainable_params;
        t.local_params += layer.local_params;
        t.local_trainable += layer.local_trainable;
        for (const Kernel& k : layer.forward) {
            t.forward_flops += k.flops;
            t.forward_bytes += k.bytes;
        }
        for (const Kernel& k : layer.backward) {
            t.backward_flops += k.flops;
            t.backward_bytes += k.bytes;
        }
        t.forward_kernels += layer.forward.size();
        t.backward_kernels += layer.backward.size();
        t.saved_bytes += layer.saved_bytes;
        if (layer.recomputed)
            t.largest_layer_saved_bytes = std::max(t.largest_layer_saved_bytes, layer.saved_bytes_no_recompute);
    }
    return t;
}

PerSample per_sample(const LayerGraph& graph) {
    const GraphTotals t = totals(graph);
    const double scale = static_cast<double>(graph.options.tensor_parallel) * graph.options.context_parallel /
                         graph.options.micro_batch;
    return PerSample{t.forward_flops * scale, t.train_flops() * scale};
}

void apply_full_recompute(LayerGraph& graph) {
    for (Layer& layer : graph.layers) {
        if (layer.role != LayerRole::block) continue;
        std::vector<Kernel> backward;
        for (Kernel k : layer.forward) {
            k.pass = Pass::recompute;
            k.name += ".recompute";
            backward.push_back(std::move(k));
        }
        backward.insert(backward.end(), layer.backward.begin(), layer.backward.end());
        layer.backward = std::move(backward);
        layer.saved_bytes = layer.input_bytes;
        layer.recomputed = true;
    }
}

}  // namespace ttsim::layers
