#include "models/workloads/layers/memory.hpp"

#include <fmt/format.h>

#include "sim/errors.hpp"

namespace ttsim::layers {

BuildOptions build_options(const MemoryLayout& layout) {
    BuildOptions o;
    o.micro_batch = layout.micro_batch;
    o.tensor_parallel = layout.tensor_parallel;
    o.context_parallel = layout.context_parallel;
    o.sequence_parallel = layout.sequence_parallel;
    o.recompute_override = layout.recompute_override;
    o.recompute = layout.recompute;
    return o;
}

MemoryEstimate memory_per_gpu(const LayerGraph& graph, const MemoryLayout& layout, const GpuSpec& gpu,
                              const MemoryAssumptions& assumptions) {
    return memory_per_gpu(graph, LayerRange::all(graph), layout, gpu, assumptions);
}

MemoryEstimate memory_per_gpu(const LayerGraph& graph, LayerRange range, const MemoryLayout& layout,
                              const GpuSpec& gpu, const MemoryAssumptions& a) {
    const BuildOptions want = build_options(layout);
    const BuildOptions& have = graph.options;
    if (have.micro_batch != want.micro_batch || have.tensor_parallel != want.tensor_parallel ||
        have.context_parallel != want.context_parallel || have.sequence_parallel != want.sequence_parallel ||
        have.recompute_override != want.recompute_override || (want.recompute_override && have.recompute != want.recompute))
        throw InputError("graph '" + graph.name + "' was not built for this layout; build it with build_options(layout)");
    if (layout.pipeline_parallel < 1 || layout.data_parallel < 1) throw InputError("PP and DP must be >= 1");

    const GraphTotals t = totals(graph, range);
    const double trainable = static_cast<double>(t.local_trainable);
    const double frozen = static_cast<double>(t.local_params - t.local_trainable);
    MemoryEstimate m;
    m.weights = trainable * graph.facts.weight_bytes + frozen * graph.facts.frozen_weight_bytes;
    m.gradients = trainable * a.grad_bytes;
    const double shards = layout.distributed_optimizer ? static_cast<double>(layout.data_parallel) * layout.context_parallel : 1;
    m.optimizer = trainable * a.optimizer_bytes / shards;
    m.activations = t.saved_bytes * layout.pipeline_parallel + t.largest_layer_saved_bytes;
    m.reserve = a.reserve_bytes;
    m.total = m.weights + m.gradients + m.optimizer + m.activations + m.reserve;
    m.capacity = gpu.usable_memory_bytes();
    m.fits = m.total <= m.capacity;
    m.summary = fmt::format(
        "{} on {} (TP {} CP {} PP {} DP {}, micro batch {}, {}distributed optimizer, recompute {}): weights {:.1f} GB"
        " + gradients {:.1f} GB + optimizer {:.1f} GB + activations {:.1f} GB + reserve {:.1f} GB = {:.1f} GB of"
        " {:.1f} GB: {}",
        graph.name, gpu.name, layout.tensor_parallel, layout.context_parallel, layout.pipeline_parallel,
        layout.data_parallel,
        layout.samples_per_micro_batch > 0 && layout.samples_per_micro_batch != layout.micro_batch
            ? fmt::format("{} in {} packed rows", layout.samples_per_micro_batch, layout.micro_batch)
            : std::to_string(layout.micro_batch),
        layout.distributed_optimizer ? "" : "no ", to_string(graph.recompute),
        m.weights / 1e9, m.gradients / 1e9, m.optimizer / 1e9, m.activations / 1e9, m.reserve / 1e9, m.total / 1e9,
        m.capacity / 1e9, m.fits ? "fits" : "does not fit");
    return m;
}

}  // namespace ttsim::layers
