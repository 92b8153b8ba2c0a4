#include "models/workloads/layers/memory.hpp"

#include <algorithm>
#include <optional>

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

namespace {

void check_built_for(const LayerGraph& graph, const MemoryLayout& layout) {
    const BuildOptions want = build_options(layout);
    const BuildOptions& have = graph.options;
    if (have.micro_batch != want.micro_batch || have.tensor_parallel != want.tensor_parallel ||
        have.context_parallel != want.context_parallel || have.sequence_parallel != want.sequence_parallel ||
        have.recompute_override != want.recompute_override || (want.recompute_override && have.recompute != want.recompute))
        throw InputError("graph '" + graph.name + "' was not built for this layout; build it with build_options(layout)");
    if (layout.pipeline_parallel < 1 || layout.data_parallel < 1 || layout.virtual_pipeline < 1)
        throw InputError("PP, VP and DP must be >= 1");
}

// One device holding `ranges` (its chunks) with `in_flight` of its chunk-micro-batches' activations kept.
MemoryEstimate estimate(const LayerGraph& graph, const std::vector<LayerRange>& ranges, double in_flight,
                        const MemoryLayout& layout, const GpuSpec& gpu, const MemoryAssumptions& a,
                        const std::string& where, bool with_summary = true) {
    GraphTotals t;
    double largest = 0;
    for (const LayerRange& range : ranges) {
        const GraphTotals r = totals(graph, range, false);
        t.local_params += r.local_params;
        t.local_trainable += r.local_trainable;
        t.saved_bytes += r.saved_bytes;
        largest = std::max(largest, r.largest_layer_saved_bytes);
    }
    const double trainable = static_cast<double>(t.local_trainable);
    const double frozen = static_cast<double>(t.local_params - t.local_trainable);
    MemoryEstimate m;
    m.weights = trainable * graph.facts.weight_bytes + frozen * graph.facts.frozen_weight_bytes;
    m.gradients = trainable * a.grad_bytes;
    const double shards = layout.distributed_optimizer ? static_cast<double>(layout.data_parallel) * layout.context_parallel : 1;
    m.optimizer = trainable * a.optimizer_bytes / shards;
    // The chunks' activations averaged over the chunks, times the chunk-micro-batches in flight.
    m.activations = t.saved_bytes / static_cast<double>(ranges.size()) * in_flight + largest;
    m.reserve = a.reserve_bytes;
    m.total = m.weights + m.gradients + m.optimizer + m.activations + m.reserve;
    m.capacity = gpu.usable_memory_bytes();
    m.fits = m.total <= m.capacity;
    if (!with_summary) return m;
    m.summary = fmt::format(
        "{} on {} (TP {} CP {} PP {}{} DP {}, micro batch {}, {}distributed optimizer, recompute {}{}): weights {:.1f} GB"
        " + gradients {:.1f} GB + optimizer {:.1f} GB + activations {:.1f} GB + reserve {:.1f} GB = {:.1f} GB of"
        " {:.1f} GB: {}",
        graph.name, gpu.name, layout.tensor_parallel, layout.context_parallel, layout.pipeline_parallel,
        layout.virtual_pipeline > 1 ? fmt::format(" VP {}", layout.virtual_pipeline) : std::string(),
        layout.data_parallel,
        layout.samples_per_micro_batch > 0 && layout.samples_per_micro_batch != layout.micro_batch
            ? fmt::format("{} in {} packed rows", layout.samples_per_micro_batch, layout.micro_batch)
            : std::to_string(layout.micro_batch),
        layout.distributed_optimizer ? "" : "no ", to_string(graph.recompute), where,
        m.weights / 1e9, m.gradients / 1e9, m.optimizer / 1e9, m.activations / 1e9, m.reserve / 1e9, m.total / 1e9,
        m.capacity / 1e9, m.fits ? "fits" : "does not fit");
    return m;
}

}  // namespace

MemoryEstimate memory_per_gpu(const LayerGraph& graph, const MemoryLayout& layout, const GpuSpec& gpu,
                              const MemoryAssumptions& a) {
    check_built_for(graph, layout);
    const int p = layout.pipeline_parallel, v = layout.virtual_pipeline;
    if (p == 1 && v == 1) return memory_per_gpu(graph, LayerRange::all(graph), layout, gpu, a);
    const std::vector<LayerRange> stages = pipeline_stages(graph, p * v);
    if (stages.empty()) throw InputError(pipeline_stage_problem(graph, p * v));
    const int m = layout.micro_batches > 0 ? layout.micro_batches : p * v;
    auto chunks_of = [&](int d) {
        std::vector<LayerRange> mine;
        for (int c = 0; c < v; ++c) mine.push_back(stages[static_cast<std::size_t>(c * p + d)]);
        return mine;
    };
    auto in_flight_of = [&](int d) {
        if (layout.all_micro_batches_in_flight) return v * m;
        return v == 1 ? std::min(p - d, m) : std::min((p - d - 1) * 2 + (v - 1) * p + 1, v * m);
    };
    // The fullest device's figures first; only its summary is written (a search estimates thousands of layouts).
    int worst = 0;
    double worst_total = 0;
    for (int d = 0; d < p; ++d) {
        const double total = estimate(graph, chunks_of(d), in_flight_of(d), layout, gpu, a, "", false).total;
        if (d == 0 || total > worst_total) worst = d, worst_total = total;
    }
    return estimate(graph, chunks_of(worst), in_flight_of(worst), layout, gpu, a, fmt::format(", pipeline device {}", worst));
}

MemoryEstimate memory_per_gpu(const LayerGraph& graph, LayerRange range, const MemoryLayout& layout,
                              const GpuSpec& gpu, const MemoryAssumptions& a) {
    check_built_for(graph, layout);
    return estimate(graph, {range}, layout.pipeline_parallel, layout, gpu, a, "");
}

}  // namespace ttsim::layers
