#include "models/trace/iteration_timeline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/training/iteration.hpp"

namespace ttsim::trace {

namespace {
constexpr double kMicrosecondsPerSecond = 1e6;

std::string format_ms(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }
}  // namespace

Trace iteration_trace(const PreparedScenario& s, const ComputeProfile& profile, int gpus_shown, const std::string& title) {
    IterationPlan plan = make_iteration_plan(s, profile);
    plan.record_timeline = true;
    const IterationResult iteration = simulate_iteration(plan);

    // What the simulation measured for a gradient bucket's collectives (every bucket alike): sizes, groups, the
    // algorithm `auto` chose, and the busiest link's utilisation.
    const int domain = std::max(1, std::min(s.gpus, s.system.gpus_per_nvlink_domain));
    std::string bucket_collectives, busiest;
    double busiest_utilisation = 0;
    for (const MeasuredCollective& m : s.bucket_collectives) {
        bucket_collectives += (bucket_collectives.empty() ? "" : " + ") + m.op + " " +
                              std::to_string(static_cast<long long>(m.bytes)) + " B over " + std::to_string(m.ranks) +
                              " ranks (" + std::string(to_string(m.algorithm)) + "/" + std::string(to_string(m.protocol)) + ")";
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
    const int gpus_per_node = domain;
    const double us = kMicrosecondsPerSecond;
    for (int g = 0; g < gpus_shown; ++g) {
        trace.gpu_names[g] = "GPU " + std::to_string(g) + " (node " + std::to_string(g / gpus_per_node) + ")";
        trace.counters.push_back({g, "busiest link utilisation", 0.0, {{"utilisation", 0.0}}});
        for (const TimelineSpan& span : iteration.timeline) {
            TraceSpan t{g, span.stream, span.name, span.start.seconds() * us, span.duration.seconds() * us, {}};
            const bool gradient_bucket = span.stream == "comm" && span.name.find("bucket") != std::string::npos;
            if (gradient_bucket) {
                t.args["collectives"] = bucket_collectives;
                t.args["busiest link"] = busiest;
                if (span.duration.seconds() > 0) {
                    trace.counters.push_back({g, "busiest link utilisation", t.start_us, {{"utilisation", busiest_utilisation}}});
                    trace.counters.push_back({g, "busiest link utilisation", t.start_us + t.duration_us, {{"utilisation", 0.0}}});
                }
            }
            trace.spans.push_back(std::move(t));
        }
    }
    return trace;
}

}  // namespace ttsim::trace
