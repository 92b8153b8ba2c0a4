#include "models/trace/iteration_timeline.hpp"

#include <algorithm>
#include <cstdio>

#include "models/training/comm_model.hpp"
#include "models/training/iteration.hpp"

namespace ttsim::trace {

namespace {
constexpr double kMicrosecondsPerSecond = 1e6;

std::string format_ms(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
    return text;
}
}  // namespace

Trace iteration_trace(const PreparedScenario& s, const ComputeProfile& profile, int gpus_shown, const std::string& title) {
    IterationPlan plan = make_iteration_plan(s, profile);
    plan.record_timeline = true;
    const IterationResult iteration = simulate_iteration(plan);

    // Bytes each gradient bucket moves, and whether the data-parallel group leaves the NVLink domain (as
    // prepare_with_layout() forms the groups).
    const ParallelismConfig& c = s.layout;
    const int domain = std::max(1, std::min(s.gpus, s.gpu->gpus_per_scaleup_domain));
    const int model_split = c.tensor_parallel * c.context_parallel * c.pipeline_parallel;
    const int dp_per_domain = std::max(1, std::min(c.data_parallel, domain / std::min(domain, model_split)));
    const bool crosses_nodes = c.data_parallel > dp_per_domain;
    const std::size_t buckets = std::max<std::size_t>(1, s.bucket_comm_seconds.size());
    const double bucket_bytes = static_cast<double>(s.workload->gradient_bytes) / c.tensor_parallel / buckets;
    const double bus_bytes = 2.0 * (c.data_parallel - 1) / std::max(1, c.data_parallel) * bucket_bytes;
    const AnalyticCommModel links(*s.gpu);

    Trace trace;
    trace.metadata["title"] = title;
    trace.metadata["step_time"] = format_ms(iteration.step_seconds);
    trace.metadata["note"] = "data-parallel ranks are symmetric in the model: every GPU shown has the same timeline; "
                             "link utilisation is estimated from the bus bytes of each gradient collective";
    const int gpus_per_node = domain;
    const double us = kMicrosecondsPerSecond;
    for (int g = 0; g < gpus_shown; ++g) {
        trace.gpu_names[g] = "GPU " + std::to_string(g) + " (node " + std::to_string(g / gpus_per_node) + ")";
        trace.counters.push_back({g, "link utilisation", 0.0, {{"nvlink", 0.0}, {"nic", 0.0}}});
        for (const TimelineSpan& span : iteration.timeline) {
            TraceSpan t{g, span.stream, span.name, span.start.seconds() * us, span.duration.seconds() * us, {}};
            const bool gradient_bucket = span.stream == "comm" && span.name.find("bucket") != std::string::npos;
            if (gradient_bucket) {
                t.args["bytes"] = std::to_string(static_cast<long long>(bucket_bytes));
                t.args["ranks"] = std::to_string(c.data_parallel);
                const double seconds = span.duration.seconds();
                if (seconds > 0) {
                    const double nvlink = std::min(1.0, bus_bytes / links.nvlink_bus_bandwidth() / seconds);
                    const double nic = crosses_nodes ? std::min(1.0, bus_bytes / links.nic_bus_bandwidth() / seconds) : 0.0;
                    trace.counters.push_back({g, "link utilisation", t.start_us, {{"nvlink", nvlink}, {"nic", nic}}});
                    trace.counters.push_back({g, "link utilisation", t.start_us + t.duration_us, {{"nvlink", 0.0}, {"nic", 0.0}}});
                }
            }
            trace.spans.push_back(std::move(t));
        }
    }
    return trace;
}

}  // namespace ttsim::trace
