// Chrome / Perfetto trace files (the "Trace Event Format", JSON object form {"traceEvents": [...]}), readable by
// ui.perfetto.dev and chrome://tracing. Timestamps and durations are in microseconds, as the format requires.
//   - "X" complete events: one span of work on one stream (pid = GPU, tid = stream);
//   - "C" counter events: a sampled value (link utilisation 0..1) on a process;
//   - "M" metadata events: process_name / thread_name, and sort indices so GPUs appear in order.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ttsim::trace {

struct TraceSpan {
    int gpu = 0;                 // becomes pid
    std::string stream;          // becomes a tid (streams numbered in order of first appearance per GPU)
    std::string name;
    double start_us = 0, duration_us = 0;
    std::map<std::string, std::string> args;   // shown in the UI's details pane
};

struct TraceCounter {
    int gpu = 0;
    std::string name;            // e.g. "link utilisation"
    double time_us = 0;
    std::map<std::string, double> values;      // series of the counter, e.g. {"nvlink": 0.8, "nic": 0.4}
};

struct Trace {
    std::map<int, std::string> gpu_names;      // pid -> process name (e.g. "GPU 0 (node 0)")
    std::vector<TraceSpan> spans;
    std::vector<TraceCounter> counters;
    std::map<std::string, std::string> metadata;   // written as top-level "otherData"
};

// The JSON text, deterministic (events in a fixed order, numbers with fixed precision).
std::string format_trace_json(const Trace& trace);

}  // namespace ttsim::trace
