#include "models/training/layer_plan.hpp"

#include <algorithm>

#include "sim/errors.hpp"

namespace ttsim {

LayerSchedule layer_schedule(const OperatorTable& table, const OperatorStepTimes& step,
                             const std::vector<LayerCollective>& collectives, int collective_layers,
                             double exposed_fraction, std::size_t buckets) {
    const std::size_t n = table.layers.size();
    TTSIM_ASSERT(step.forward_layer_gpu_seconds.size() == n && step.backward_layer_gpu_seconds.size() == n,
                 "operator pricing of another table");
    LayerSchedule out;
    out.layers.resize(n);
    double forward_wait = 0, backward_wait = 0;   // one carrying layer's exposed seconds, per pass
    out.collectives.reserve(collectives.size());
    for (const LayerCollective& c : collectives) {
        out.collectives.push_back({c.name, c.measured.seconds, c.backward});
        (c.backward ? backward_wait : forward_wait) += exposed_fraction * c.measured.seconds;
    }
    if (!collectives.empty()) {
        int blocks = 0;
        for (std::size_t i = 0; i < n; ++i) {
            out.layers[i].collectives = table.layers[i].block;
            blocks += table.layers[i].block ? 1 : 0;
        }
        TTSIM_ASSERT(blocks == collective_layers, "the layer graph has " + std::to_string(blocks) +
                                                      " blocks, the workload's model-parallel data " +
                                                      std::to_string(collective_layers) + " layers");
    }
    out.exposed_forward_seconds = collective_layers * forward_wait;
    out.exposed_backward_seconds = collective_layers * backward_wait;

    // Shares are computed in the passes' GPU-kernel seconds, the waits converted by the pass's host stretch (a
    // launch-bound pass takes longer than its kernels, every layer in proportion), so that without waits the
    // backward shares are exactly operator_step's gradient_ready_fraction (the same sums in the same order).
    auto stretch = [](double pass, double gpu) { return gpu > 0 ? pass / gpu : 1.0; };
    const double forward_stretch = stretch(step.forward_seconds, step.forward_gpu_seconds);
    const double backward_stretch = stretch(step.backward_seconds, step.backward_gpu_seconds);
    const double forward_total = step.forward_gpu_seconds + out.exposed_forward_seconds / forward_stretch;
    const double backward_total = step.backward_gpu_seconds + out.exposed_backward_seconds / backward_stretch;
    auto share = [](double done, double total) { return total > 0 ? done / total : 1.0; };
    double kernels = 0, waits = 0;
    for (std::size_t i = 0; i < n; ++i) {
        kernels += step.forward_layer_gpu_seconds[i];
        out.layers[i].forward_kernels_end = share(kernels + waits, forward_total);
        if (out.layers[i].collectives) waits += forward_wait / forward_stretch;
        out.layers[i].forward_end = i + 1 == n ? 1.0 : share(kernels + waits, forward_total);
    }
    std::vector<double> ready_by_backward_order;
    ready_by_backward_order.reserve(n);
    kernels = waits = 0;
    for (std::size_t i = n; i-- > 0;) {
        kernels += step.backward_layer_gpu_seconds[i];
        out.layers[i].backward_kernels_end = share(kernels + waits, backward_total);
        ready_by_backward_order.push_back(out.layers[i].backward_kernels_end);
        if (out.layers[i].collectives) waits += backward_wait / backward_stretch;
        out.layers[i].backward_end = i == 0 ? 1.0 : share(kernels + waits, backward_total);
    }
    for (std::size_t layer : bucket_completing_layers(step, buckets))
        out.bucket_ready_fractions.push_back(layer < ready_by_backward_order.size() ? ready_by_backward_order[layer] : 1.0);
    return out;
}

}  // namespace ttsim
