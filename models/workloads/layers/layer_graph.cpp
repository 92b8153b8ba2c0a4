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

namespace {
std::vector<bool> block_flags(const LayerGraph& graph) {
    std::vector<bool> out;
    for (const Layer& l : graph.layers) out.push_back(l.role == LayerRole::block);
    return out;
}
}  // namespace

namespace {
// Blocks per stage: even where the stages divide the blocks; else, where they divide the blocks plus two, the
// embedding and the loss each count as a block's worth and the first and last stages hold one block fewer
// (Megatron-LM's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split, NeMo's Llama 3.1
// 405B recipe: 126 blocks over PP 8 x VP 8; Llama 3 405B trained 126 blocks on PP 16 alike). Empty: neither.
std::vector<std::size_t> blocks_per_stage(std::size_t blocks, int stages) {
    const auto n = static_cast<std::size_t>(stages);
    if (stages == 1) return {blocks};
    if (blocks % n == 0) return std::vector<std::size_t>(n, blocks / n);
    if ((blocks + 2) % n == 0 && (blocks + 2) / n >= 2) {
        std::vector<std::size_t> out(n, (blocks + 2) / n);
        out.front() -= 1;
        out.back() -= 1;
        return out;
    }
    return {};
}
}  // namespace

std::string pipeline_stage_problem(const std::vector<bool>& is_block, int stages) {
    const auto blocks = static_cast<std::size_t>(std::count(is_block.begin(), is_block.end(), true));
    if (stages < 1) return "pipeline stages must be >= 1";
    if (blocks == 0 && stages > 1) return "the model has no repeated blocks to split into pipeline stages";
    if (blocks_per_stage(blocks, stages).empty())
        return "PP x VP = " + std::to_string(stages) + " stages divide neither the " + std::to_string(blocks) +
               " transformer blocks nor the blocks plus the embedding and the loss (" + std::to_string(blocks + 2) + ")";
    return {};
}

std::vector<LayerRange> pipeline_stages(const std::vector<bool>& is_block, int stages) {
    if (!pipeline_stage_problem(is_block, stages).empty()) return {};
    if (stages == 1) return {LayerRange{0, is_block.size()}};
    std::vector<std::size_t> block_index;
    for (std::size_t i = 0; i < is_block.size(); ++i)
        if (is_block[i]) block_index.push_back(i);
    const std::vector<std::size_t> per_stage = blocks_per_stage(block_index.size(), stages);
    std::vector<LayerRange> out;
    std::size_t first_block = 0;
    for (int s = 0; s < stages; ++s) {
        const std::size_t next_block = first_block + per_stage[static_cast<std::size_t>(s)];
        const std::size_t first = s == 0 ? 0 : block_index[first_block];
        const std::size_t last = s + 1 == stages ? is_block.size() : block_index[next_block];
        out.push_back({first, last});
        first_block = next_block;
    }
    return out;
}

std::size_t block_count(const LayerGraph& graph) {
    const std::vector<bool> flags = block_flags(graph);
    return static_cast<std::size_t>(std::count(flags.begin(), flags.end(), true));
}

std::string pipeline_stage_problem(const LayerGraph& graph, int stages) {
    return pipeline_stage_problem(block_flags(graph), stages);
}
std::vector<LayerRange> pipeline_stages(const LayerGraph& graph, int stages) {
    return pipeline_stages(block_flags(graph), stages);
}

GraphTotals totals(const LayerGraph& graph, LayerRange range, bool with_kernels) {
    TTSIM_ASSERT(range.first <= range.last && range.last <= graph.layers.size(), "layer range out of bounds");
    GraphTotals t;
    for (std::size_t i = range.first; i < range.last; ++i) {
        const Layer& layer = graph.layers[i];
        t.params += layer.params;
        t.trainable_params += layer.trainable_params;
        t.local_params += layer.local_params;
        t.local_trainable += layer.local_trainable;
        t.saved_bytes += layer.saved_bytes;
        if (layer.recomputed)
            t.largest_layer_saved_bytes = std::max(t.largest_layer_saved_bytes, layer.saved_bytes_no_recompute);
        if (!with_kernels) continue;
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
