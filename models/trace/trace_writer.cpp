#include "models/trace/trace_writer.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace ttsim::trace {

namespace {
// Nanosecond resolution in microsecond fields: finer than anything the models resolve, and it keeps the text
// short and identical run to run.
double round_us(double us) { return std::round(us * 1000.0) / 1000.0; }
}  // namespace

std::string format_trace_json(const Trace& trace) {
    using json = nlohmann::ordered_json;
    json events = json::array();

    // Thread ids: per GPU, streams numbered from 1 in order of first appearance.
    std::map<int, std::vector<std::string>> streams_of_gpu;
    auto tid_of = [&](int gpu, const std::string& stream) {
        auto& streams = streams_of_gpu[gpu];
        for (std::size_t i = 0; i < streams.size(); ++i)
            if (streams[i] == stream) return static_cast<int>(i) + 1;
        streams.push_back(stream);
        return static_cast<int>(streams.size());
    };
    for (const TraceSpan& s : trace.spans) tid_of(s.gpu, s.stream);

    for (const auto& [gpu, name] : trace.gpu_names) {
        events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", gpu}, {"tid", 0}, {"ts", 0}, {"args", {{"name", name}}}});
        events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", gpu}, {"tid", 0}, {"ts", 0},
                          {"args", {{"sort_index", gpu}}}});
    }
    for (const auto& [gpu, streams] : streams_of_gpu)
        for (std::size_t i = 0; i < streams.size(); ++i)
            events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", gpu}, {"tid", static_cast<int>(i) + 1},
                              {"ts", 0}, {"args", {{"name", streams[i]}}}});

    for (const TraceSpan& s : trace.spans) {
        json e = {{"name", s.name}, {"cat", s.stream}, {"ph", "X"}, {"pid", s.gpu}, {"tid", tid_of(s.gpu, s.stream)},
                  {"ts", round_us(s.start_us)},
                  // The end rounded, not the duration: spans that meet or nest in the model still meet or nest.
                  {"dur", round_us(round_us(s.start_us + s.duration_us) - round_us(s.start_us))}};
        if (!s.args.empty()) e["args"] = s.args;
        events.push_back(e);
    }
    for (const TraceCounter& c : trace.counters) {
        json values = json::object();
        for (const auto& [key, value] : c.values) values[key] = std::round(value * 1e4) / 1e4;
        events.push_back({{"name", c.name}, {"ph", "C"}, {"pid", c.gpu}, {"tid", 0}, {"ts", round_us(c.time_us)},
                          {"args", values}});
    }
    json root;
    root["traceEvents"] = events;
    root["displayTimeUnit"] = "ms";
    if (!trace.metadata.empty()) root["otherData"] = trace.metadata;
    return root.dump(1) + "\n";
}

}  // namespace ttsim::trace
