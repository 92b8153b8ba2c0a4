#include "models/trace/iteration_timeline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/training/iteration.hpp"
#include "models/training/operator_step.hpp"
#include "sim/errors.hpp"

namespace ttsim::trace {

namespace {
constexpr double kMicrosecondsPerSecond = 1e6;

std::string format_ms(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }

// What a per-layer span shows: the layer's name and its kernels of each pass (count and names), from the layer
// graph the scenario's operator table was built from (rebuilt here: traces only, not the hot path).
struct LayerLabels {
    std::string name;
    std::vector<std::string> forward, backward;   // kernel names, one per kernel, the operator table's order
};

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
}

std::vector<LayerLabels> layer_labels(const PreparedScenario& s) {
    std::vector<LayerLabels> out;
    if (!s.operator_table || !s.workload->layer_model) return out;
    const layers::LayerGraph graph = build_layout_graph(*s.workload, layer_description(*s.workload), s.layout);
    auto names = [](const layers::Layer& layer, const std::vector<layers::Kernel>& kernels) {
        std::vector<std::string> out;
        for (const layers::Kernel& k : kernels) out.push_back(layer.name + "." + k.name);
        return out;
    };
    for (const layers::Layer& layer : graph.layers) out.push_back({layer.name, names(layer, layer.forward), names(layer, layer.backward)});
    return out;
}

// A layer pass's span split into its kernels, each as long as its share of the pass's priced kernel seconds
// (kernel_gpu_seconds: a launch-bound or straggling pass stretches every kernel alike), nested inside the span.
// A backward pass runs its kernels in the reverse of the graph's order (the last forward op's gradients first).
void add_kernel_spans(const TraceSpan& pass, const std::vector<KernelPrice>& prices, const std::vector<std::string>& names,
                      bool backward, const layers::Efficiency& efficiency, std::vector<TraceSpan>& out) {
    TTSIM_ASSERT(prices.size() == names.size(), "operator table and layer graph disagree on layer " + pass.args.at("layer"));
    std::vector<double> seconds;
    double total = 0;
    for (const KernelPrice& k : prices) total += seconds.emplace_back(kernel_gpu_seconds(k, efficiency));
    if (prices.empty() || !(total > 0)) return;
    double at = pass.start_us;
    for (std::size_t n = 0; n < prices.size(); ++n) {
        const std::size_t j = backward ? prices.size() - 1 - n : n;
        // The last kernel ends where the pass does (no rounding gap).
        const double duration =
            n + 1 == prices.size() ? pass.start_us + pass.duration_us - at : pass.duration_us * seconds[j] / total;
        TraceSpan k{pass.gpu, pass.stream, names[j], at, duration, {}};
        k.args["layer"] = pass.args.at("layer");
        k.args["bound"] = compute_bound(prices[j], efficiency) ? "compute" : "memory";
        out.push_back(std::move(k));
        at += duration;
    }
}

// "ring/simple": what NCCL's tuner (auto) chose for a simulated collective.
std::string algorithm_of(const MeasuredCollective& m) {
    return std::string(to_string(m.algorithm)) + "/" + std::string(to_string(m.protocol));
}

std::string describe(const MeasuredCollective& m) {
    return m.op + " " + std::to_string(static_cast<long long>(m.bytes)) + " B over " + std::to_string(m.ranks) +
           " ranks (" + algorithm_of(m) + ")";
}
}  // namespace

Trace iteration_trace(const PreparedScenario& s, const ComputeProfile& profile, int gpus_shown, const std::string& title) {
    IterationPlan plan = make_iteration_plan(s, profile);
    plan.record_timeline = true;
    const IterationResult iteration = simulate_iteration(plan);

    // What the simulation measured for a gradient bucket's collectives (every bucket alike): sizes, groups, the
    // algorithm `auto` chose, and the busiest link's utilisation.
    const int domain = std::max(1, std::min(s.gpus, s.system.gpus_per_nvlink_domain));
    std::string bucket_collectives, bucket_bytes, bucket_algorithms, busiest;
    double busiest_utilisation = 0;
    for (const MeasuredCollective& m : s.bucket_collectives) {
        const char* plus = bucket_collectives.empty() ? "" : " + ";
        bucket_collectives += plus + describe(m);
        bucket_bytes += plus + std::to_string(static_cast<long long>(m.bytes));
        bucket_algorithms += plus + algorithm_of(m);
        if (m.max_link_utilisation >= busiest_utilisation) {
            busiest_utilisation = std::min(1.0, m.max_link_utilisation);
            busiest = m.busiest_link;
        }
    }

    Trace trace;
    trace.metadata["title"] = title;
    trace.metadata["step_time"] = format_ms(iteration.step_seconds);
    trace.metadata["note"] = "data-parallel ranks are symmetric in the model: every GPU shown has the same timeline; "
                             "link utilisation is the busiest link's, as the collective simulation measured it";
    trace.metadata["collectives"] = s.comm_topology;
    const std::vector<LayerLabels> labels = plan.layers.empty() ? std::vector<LayerLabels>{} : layer_labels(s);
    if (!plan.layers.empty()) {
        trace.metadata["layers"] = std::to_string(plan.layers.size()) + " layers; the last micro step is drawn layer by layer";
        if (plan.micro_steps > 1)
            trace.metadata["micro steps"] = "micro steps 0-" + std::to_string(plan.micro_steps - 2) +
                                            " repeat the last one's layers and are drawn as one span per pass (and one "
                                            "span for their TP/CP collectives)";
        if (!s.layer_collectives.empty())
            trace.metadata["tp/cp collectives"] =
                std::to_string(s.layer_collectives.size()) + " per block x " + std::to_string(s.collective_layers) +
                " blocks per micro step, " + format_ms(s.tp_cp_comm_seconds_per_micro_step) + " per micro step; " +
                fmt::format("{:g}", profile.tp_comm_exposed_fraction) +
                " of each waited on the compute stream (tp_comm_exposed_fraction)";
    }
    if (!labels.empty() && profile.operator_efficiency)
        trace.metadata["kernels"] = "GPU 0's layer spans of the last micro step hold one span per kernel, each its share "
                                    "of the layer's priced kernel seconds (args: layer, compute- or memory-bound)";
    std::vector<TraceSpan> kernel_spans;
    const int gpus_per_node = domain;
    const double us = kMicrosecondsPerSecond;
    for (int g = 0; g < gpus_shown; ++g) {
        trace.gpu_names[g] = "GPU " + std::to_string(g) + " (node " + std::to_string(g / gpus_per_node) + ")";
        trace.counters.push_back({g, "busiest link utilisation", 0.0, {{"utilisation", 0.0}}});
        for (const TimelineSpan& span : iteration.timeline) {
            TraceSpan t{g, span.stream, span.name, span.start.seconds() * us, span.duration.seconds() * us, {}};
            if (span.layer >= 0 && static_cast<std::size_t>(span.layer) < labels.size()) {
                // "forward L12" -> "forward layers.12" (the layer graph's name), with its kernels.
                const LayerLabels& layer = labels[static_cast<std::size_t>(span.layer)];
                t.name = span.name.substr(0, span.name.rfind(" L") + 1) + layer.name;
                t.args["layer"] = layer.name;
                const bool forward = span.name.rfind("forward", 0) == 0, backward = span.name.rfind("backward", 0) == 0;
                if (forward || backward) {
                    const std::vector<std::string>& kernels = forward ? layer.forward : layer.backward;
                    t.args["kernels"] = std::to_string(kernels.size());
                    t.args["kernel names"] = joined(kernels);
                    if (g == 0 && profile.operator_efficiency) {
                        const LayerPrices& prices = s.operator_table->layers[static_cast<std::size_t>(span.layer)];
                        add_kernel_spans(t, forward ? prices.forward : prices.backward, kernels, backward,
                                         *profile.operator_efficiency, kernel_spans);
                    }
                }
            }
            if (span.collective >= 0 && static_cast<std::size_t>(span.collective) < s.layer_collectives.size()) {
                const LayerCollective& c = s.layer_collectives[static_cast<std::size_t>(span.collective)];
                t.args["collective"] = describe(c.measured);
                t.args["bytes"] = std::to_string(static_cast<long long>(c.measured.bytes));
                t.args["algorithm"] = algorithm_of(c.measured);
                t.args["pass"] = c.backward ? "backward" : "forward";
            }
            const bool gradient_bucket = span.stream == "comm" && span.name.find("bucket") != std::string::npos;
            if (gradient_bucket) {
                t.args["collectives"] = bucket_collectives;
                t.args["bytes"] = bucket_bytes;
                t.args["algorithm"] = bucket_algorithms;
                t.args["busiest link"] = busiest;
                if (span.duration.seconds() > 0) {
                    trace.counters.push_back({g, "busiest link utilisation", t.start_us, {{"utilisation", busiest_utilisation}}});
                    trace.counters.push_back({g, "busiest link utilisation", t.start_us + t.duration_us, {{"utilisation", 0.0}}});
                }
            }
            trace.spans.push_back(std::move(t));
            for (TraceSpan& k : kernel_spans) trace.spans.push_back(std::move(k));
            kernel_spans.clear();
        }
    }
    return trace;
}

}  // namespace ttsim::trace
