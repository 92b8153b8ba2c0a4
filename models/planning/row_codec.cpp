#include "models/planning/row_codec.hpp"

#include <cmath>

#include "sim/errors.hpp"

// The plain structs, field by field under their own names (from_json: every field required).
namespace ttsim {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ParallelismConfig, tensor_parallel, context_parallel, pipeline_parallel,
                                   virtual_pipeline, recompute, pipeline_schedule, data_parallel, samples_per_micro_batch,
                                   gradient_accumulation, packing_factor,
                                   global_batch, distributed_optimizer, sharp, sequence_parallel, fp8, cuda_graphs,
                                   eval_batch, eval_samples_per_graph_sample, eval_cuda_graphs, precision,
                                   head_on_all_tokens, gradient_reduction_after_backward, gradient_buckets,
                                   attention_precision)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Prediction::Alternative, basis, label, layout, ttt_minutes, step_ms, memory_per_gpu_bytes,
                                   memory_fits)
namespace reliability {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunDistribution, mean_wall_seconds, p10_wall_seconds, p50_wall_seconds,
                                   p90_wall_seconds, mean_interruptions, mean_checkpoints, goodput, trials)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunReliability, failure_rates, mttf_hours, checkpoint_bytes, checkpoint_write_seconds,
                                   restart_seconds, checkpoint_interval_minutes, interval_pinned, runs,
                                   wall_p90_at_p90_minutes)
}  // namespace reliability
namespace planning {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PlanEvaluation, ok, error, ttt_minutes, ttt_p10_minutes, ttt_p90_minutes, gpu_hours,
                                   cost, energy_kwh, rented_gpus, allocation, layout, global_batch, warnings, band, band_kind)
}  // namespace planning
}  // namespace ttsim

namespace ttsim::planning {

using nlohmann::json;

namespace {

json prediction_to_json(const Prediction& p) {
    json j = {{"workload", p.workload}, {"system", p.system}, {"gpu", p.gpu}, {"gpus", p.gpus},
              {"layout", p.layout}, {"routing", static_cast<int>(p.routing)}, {"fabric", p.fabric},
              {"comm_topology", p.comm_topology}, {"ttt", p.ttt_minutes}, {"ttt_p10", p.ttt_p10_minutes},
              {"ttt_p90", p.ttt_p90_minutes}, {"samples", p.samples_to_converge}, {"batch", p.global_batch},
              {"steps", p.steps}, {"step_ms", p.step_ms}, {"compute_ms", p.compute_ms},
              {"exposed_comm_ms", p.exposed_comm_ms}, {"comm_total_ms", p.comm_total_ms}, {"fixed_ms", p.fixed_ms},
              {"tp_cp_comm_ms", p.tp_cp_comm_ms}, {"tp_cp_exposed_ms", p.tp_cp_exposed_ms},
              {"bubble_ms", p.bubble_ms}, {"bubble_fraction", p.bubble_fraction},
              {"eval_minutes", p.eval_minutes}, {"evaluations", p.evaluations},
              {"run_overhead_minutes", p.run_overhead_minutes}, {"per_gpu_throughput", p.per_gpu_throughput},
              {"mfu", p.model_flops_utilisation}, {"model_flops_per_gpu", p.model_flops_per_gpu},
              {"gpu_hours", p.gpu_hours}, {"compute_only_bound_minutes", p.compute_only_bound_minutes},
              {"defaults", p.defaults}, {"warnings", p.warnings}, {"compute_model", p.compute_model},
              {"launch_bound", p.launch_bound}, {"memory_bytes", p.memory_per_gpu_bytes},
              {"memory_capacity", p.memory_capacity_bytes}, {"memory_fits", p.memory_fits},
              {"memory_summary", p.memory_summary}, {"layout_choice", p.layout_choice},
              {"layouts_enumerated", p.layouts_enumerated}, {"layouts_fitting", p.layouts_fitting},
              {"layouts_priced", p.layouts_priced}};
    if (p.efficiency_vs_8gpu) j["efficiency_vs_8gpu"] = *p.efficiency_vs_8gpu;
    if (p.published) j["published"] = *p.published;
    if (p.reliability) j["reliability"] = *p.reliability;
    return j;
}

Prediction prediction_from_json(const json& j) {
    Prediction p;
    j.at("workload").get_to(p.workload);
    j.at("system").get_to(p.system);
    j.at("gpu").get_to(p.gpu);
    j.at("gpus").get_to(p.gpus);
    j.at("layout").get_to(p.layout);
    const int routing = j.at("routing").get<int>();
    if (routing != static_cast<int>(FabricRouting::StaticEcmp) && routing != static_cast<int>(FabricRouting::Adaptive))
        throw json::other_error::create(501, "routing " + std::to_string(routing) + " is not a known routing", &j);
    p.routing = static_cast<FabricRouting>(routing);
    j.at("fabric").get_to(p.fabric);
    j.at("comm_topology").get_to(p.comm_topology);
    j.at("ttt").get_to(p.ttt_minutes);
    j.at("ttt_p10").get_to(p.ttt_p10_minutes);
    j.at("ttt_p90").get_to(p.ttt_p90_minutes);
    j.at("samples").get_to(p.samples_to_converge);
    j.at("batch").get_to(p.global_batch);
    j.at("steps").get_to(p.steps);
    j.at("step_ms").get_to(p.step_ms);
    j.at("compute_ms").get_to(p.compute_ms);
    j.at("exposed_comm_ms").get_to(p.exposed_comm_ms);
    j.at("comm_total_ms").get_to(p.comm_total_ms);
    j.at("fixed_ms").get_to(p.fixed_ms);
    j.at("tp_cp_comm_ms").get_to(p.tp_cp_comm_ms);
    j.at("tp_cp_exposed_ms").get_to(p.tp_cp_exposed_ms);
    j.at("bubble_ms").get_to(p.bubble_ms);
    j.at("bubble_fraction").get_to(p.bubble_fraction);
    j.at("eval_minutes").get_to(p.eval_minutes);
    j.at("evaluations").get_to(p.evaluations);
    j.at("run_overhead_minutes").get_to(p.run_overhead_minutes);
    j.at("per_gpu_throughput").get_to(p.per_gpu_throughput);
    j.at("mfu").get_to(p.model_flops_utilisation);
    j.at("model_flops_per_gpu").get_to(p.model_flops_per_gpu);
    j.at("gpu_hours").get_to(p.gpu_hours);
    j.at("compute_only_bound_minutes").get_to(p.compute_only_bound_minutes);
    j.at("defaults").get_to(p.defaults);
    j.at("warnings").get_to(p.warnings);
    j.at("compute_model").get_to(p.compute_model);
    j.at("launch_bound").get_to(p.launch_bound);
    j.at("memory_bytes").get_to(p.memory_per_gpu_bytes);
    j.at("memory_capacity").get_to(p.memory_capacity_bytes);
    j.at("memory_fits").get_to(p.memory_fits);
    j.at("memory_summary").get_to(p.memory_summary);
    j.at("layout_choice").get_to(p.layout_choice);
    j.at("layouts_enumerated").get_to(p.layouts_enumerated);
    j.at("layouts_fitting").get_to(p.layouts_fitting);
    j.at("layouts_priced").get_to(p.layouts_priced);
    if (const auto e = j.find("efficiency_vs_8gpu"); e != j.end()) p.efficiency_vs_8gpu = e->get<double>();
    if (const auto e = j.find("published"); e != j.end()) {
        Prediction::Alternative published;   // from_json by name: clang does not see it through get<T>() here
        from_json(*e, published);
        p.published = std::move(published);
    }
    if (const auto e = j.find("reliability"); e != j.end()) {
        reliability::RunReliability r;
        reliability::from_json(*e, r);
        p.reliability = std::move(r);
    }
    return p;
}

// nlohmann's own exceptions (missing key, wrong type) become the InputError of a damaged file or message.
template <typename Decode>
auto decoding(const std::string& what, const char* expected, Decode decode) {
    try {
        return decode();
    } catch (const json::exception& e) {
        throw InputError(what + ": " + expected + " (" + e.what() + ")");
    }
}

}  // namespace

json outcome_to_json(const PointOutcome& o) {
    return {{"ok", o.ok}, {"error", o.error}, {"prediction", prediction_to_json(o.prediction)},
            {"tdp_w", o.gpu_tdp_watts}, {"idle_w", o.gpu_idle_watts}, {"gpus_per_node", o.gpus_per_node},
            {"rented_gpus", o.rented_gpus}, {"allocation", o.allocation}, {"catalog_gpu", o.catalog_gpu},
            {"notes", o.notes}};
}

PointOutcome outcome_from_json(const json& row, const std::string& what) {
    return decoding(what, "not a row ttsim wrote", [&] {
        PointOutcome o;
        row.at("ok").get_to(o.ok);
        row.at("error").get_to(o.error);
        o.prediction = prediction_from_json(row.at("prediction"));
        row.at("tdp_w").get_to(o.gpu_tdp_watts);
        row.at("idle_w").get_to(o.gpu_idle_watts);
        row.at("gpus_per_node").get_to(o.gpus_per_node);
        row.at("rented_gpus").get_to(o.rented_gpus);
        row.at("allocation").get_to(o.allocation);
        row.at("catalog_gpu").get_to(o.catalog_gpu);
        row.at("notes").get_to(o.notes);
        return o;
    });
}

void require_possible_outcome(const PointOutcome& outcome, const std::string& what) {
    const Prediction& p = outcome.prediction;
    if (outcome.ok && !(p.gpus >= 1 && std::isfinite(p.ttt_minutes) && p.ttt_minutes > 0 && std::isfinite(p.step_ms) &&
                        p.step_ms > 0 && std::isfinite(p.gpu_hours) && p.gpu_hours >= 0))
        throw InputError(what + ": not a row ttsim wrote (a row marked ok holds an impossible prediction: " +
                         std::to_string(p.gpus) + " GPUs, time to train " + std::to_string(p.ttt_minutes) +
                         " min, step " + std::to_string(p.step_ms) + " ms)");
}

json evaluation_to_json(const PlanEvaluation& evaluation) { return evaluation; }

PlanEvaluation evaluation_from_json(const json& row, const std::string& what) {
    return decoding(what, "not a row ttsim wrote", [&] { return row.get<PlanEvaluation>(); });
}

std::string to_bytes(const json& value) {
    const std::vector<std::uint8_t> bytes = json::to_cbor(value);
    return std::string(bytes.begin(), bytes.end());
}

json from_bytes(const std::string& bytes, const std::string& what) {
    return decoding(what, "not a file or message ttsim wrote", [&] { return json::from_cbor(bytes); });
}

}  // namespace ttsim::planning
