// Chrome/Perfetto trace JSON: well-formed events (ph, ts, dur, pid, tid, name), metadata naming processes and
// threads, counters; the iteration timeline of a real prediction agrees with its step time.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/compute/compute_profile.hpp"
#include "models/trace/iteration_timeline.hpp"
#include "models/trace/trace_writer.hpp"
#include "models/training/predict.hpp"

using namespace ttsim;

namespace {
void require_well_formed(const nlohmann::json& root) {
    REQUIRE(root.contains("traceEvents"));
    REQUIRE(root["traceEvents"].is_array());
    for (const auto& e : root["traceEvents"]) {
        REQUIRE(e["name"].is_string());
        REQUIRE(e["pid"].is_number_integer());
        REQUIRE(e["tid"].is_number_integer());
        REQUIRE(e["ts"].is_number());
        const std::string ph = e["ph"];
        REQUIRE((ph == "X" || ph == "C" || ph == "M"));
        if (ph == "X") {
            REQUIRE(e["dur"].is_number());
            REQUIRE(e["dur"].get<double>() >= 0);
        }
        if (ph == "C") REQUIRE(e["args"].is_object());
    }
}
}  // namespace

TEST_CASE("trace writer: complete, counter and metadata events", "[trace]") {
    trace::Trace t;
    t.gpu_names[0] = "GPU 0";
    t.gpu_names[1] = "GPU 1";
    t.spans.push_back({0, "compute", "forward", 0.0, 10.5, {}});
    t.spans.push_back({0, "comm", "allreduce", 5.0, 2.0, {{"bytes", "64"}}});
    t.spans.push_back({1, "compute", "forward", 0.0, 10.5, {}});
    t.counters.push_back({0, "link utilisation", 5.0, {{"nvlink", 0.5}}});
    const auto root = nlohmann::json::parse(trace::format_trace_json(t));
    require_well_formed(root);
    int complete = 0, counters = 0, thread_names = 0, process_names = 0;
    for (const auto& e : root["traceEvents"]) {
        if (e["ph"] == "X") ++complete;
        if (e["ph"] == "C") ++counters;
        if (e["name"] == "thread_name") ++thread_names;
        if (e["name"] == "process_name") ++process_names;
        if (e["ph"] == "X" && e["name"] == "allreduce") {
            REQUIRE(e["tid"] == 2);   // second stream of GPU 0
            REQUIRE(e["ts"] == 5.0);
            REQUIRE(e["dur"] == 2.0);
            REQUIRE(e["args"]["bytes"] == "64");
        }
    }
    REQUIRE(complete == 3);
    REQUIRE(counters == 1);
    REQUIRE(thread_names == 3);   // GPU 0: compute, comm; GPU 1: compute
    REQUIRE(process_names == 2);
    REQUIRE(trace::format_trace_json(t) == trace::format_trace_json(t));
}

TEST_CASE("iteration trace of a real prediction spans exactly one step", "[trace]") {
    const ProfileSet profiles = ProfileSet::load_dir(ProfileSet::default_dir());
    PredictionRequest request;
    request.workload = "bert";
    request.system = "dgx-h100";
    request.gpus = 16;
    request.compute_efficiency_vs_8gpu = false;
    const PreparedScenario s = prepare(request);
    const ComputeProfile profile = profiles.find(*s.workload, *s.gpu);
    const Prediction p = evaluate(s, profile);
    const trace::Trace t = trace::iteration_trace(s, profile, 8, "bert 16 GPUs");
    REQUIRE(t.gpu_names.size() == 8);
    const auto root = nlohmann::json::parse(trace::format_trace_json(t));
    require_well_formed(root);
    // The step (everything but an evaluation span) ends at the predicted step time.
    double end_us = 0;
    bool has_comm = false;
    for (const auto& span : t.spans) {
        if (span.gpu != 0 || span.name == "eval") continue;
        end_us = std::max(end_us, span.start_us + span.duration_us);
        has_comm = has_comm || span.stream == "comm";
    }
    REQUIRE(has_comm);
    REQUIRE(end_us == Approx(p.step_ms * 1e3).epsilon(1e-6));
    for (const auto& c : t.counters)
        for (const auto& [link, value] : c.values) REQUIRE((value >= 0.0 && value <= 1.0));
}
