#include "models/planning/row_codec.hpp"

#include "sim/errors.hpp"

namespace ttsim::planning {

using nlohmann::json;

namespace {

json layout_to_json(const ParallelismConfig& l) {
    return {{"tp", l.tensor_parallel}, {"cp", l.context_parallel}, {"pp", l.pipeline_parallel},
            {"dp", l.data_parallel}, {"micro", l.samples_per_micro_batch}, {"ga", l.gradient_accumulation},
            {"packing", l.packing_factor}, {"batch", l.global_batch}, {"dist_opt", l.distributed_optimizer},
            {"sharp", l.sharp}, {"seq_par", l.sequence_parallel}, {"fp8", l.fp8}};
}

ParallelismConfig layout_from_json(const json& j) {
    ParallelismConfig l;
    j.at("tp").get_to(l.tensor_parallel);
    j.at("cp").get_to(l.context_parallel);
    j.at("pp").get_to(l.pipeline_parallel);
    j.at("dp").get_to(l.data_parallel);
    j.at("micro").get_to(l.samples_per_micro_batch);
    j.at("ga").get_to(l.gradient_accumulation);
    j.at("packing").get_to(l.packing_factor);
    j.at("batch").get_to(l.global_batch);
    j.at("dist_opt").get_to(l.distributed_optimizer);
    j.at("sharp").get_to(l.sharp);
    j.at("seq_par").get_to(l.sequence_parallel);
    j.at("fp8").get_to(l.fp8);
    return l;
}

json prediction_to_json(const Prediction& p) {
    json j = {{"workload", p.workload}, {"system", p.system}, {"gpu", p.gpu}, {"gpus", p.gpus},
              {"layout", layout_to_json(p.layout)}, {"routing", static_cast<int>(p.routing)}, {"fabric", p.fabric},
              {"comm_topology", p.comm_topology}, {"ttt", p.ttt_minutes}, {"ttt_p10", p.ttt_p10_minutes},
              {"ttt_p90", p.ttt_p90_minutes}, {"samples", p.samples_to_converge}, {"batch", p.global_batch},
              {"steps", p.steps}, {"step_ms", p.step_ms}, {"compute_ms", p.compute_ms},
              {"exposed_comm_ms", p.exposed_comm_ms}, {"comm_total_ms", p.comm_total_ms}, {"fixed_ms", p.fixed_ms},
              {"tp_cp_comm_ms", p.tp_cp_comm_ms}, {"tp_cp_exposed_ms", p.tp_cp_exposed_ms},
              {"eval_minutes", p.eval_minutes}, {"evaluations", p.evaluations},
              {"run_overhead_minutes", p.run_overhead_minutes}, {"per_gpu_throughput", p.per_gpu_throughput},
              {"gpu_hours", p.gpu_hours}, {"compute_only_bound_minutes", p.compute_only_bound_minutes},
              {"defaults", p.defaults}, {"warnings", p.warnings}};
    if (p.efficiency_vs_8gpu) j["efficiency_vs_8gpu"] = *p.efficiency_vs_8gpu;
    return j;
}

Prediction prediction_from_json(const json& j) {
    Prediction p;
    j.at("workload").get_to(p.workload);
    j.at("system").get_to(p.system);
    j.at("gpu").get_to(p.gpu);
    j.at("gpus").get_to(p.gpus);
    p.layout = layout_from_json(j.at("layout"));
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
    j.at("eval_minutes").get_to(p.eval_minutes);
    j.at("evaluations").get_to(p.evaluations);
    j.at("run_overhead_minutes").get_to(p.run_overhead_minutes);
    j.at("per_gpu_throughput").get_to(p.per_gpu_throughput);
    j.at("gpu_hours").get_to(p.gpu_hours);
    j.at("compute_only_bound_minutes").get_to(p.compute_only_bound_minutes);
    j.at("defaults").get_to(p.defaults);
    j.at("warnings").get_to(p.warnings);
    if (const auto e = j.find("efficiency_vs_8gpu"); e != j.end()) p.efficiency_vs_8gpu = e->get<double>();
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
            {"catalog_gpu", o.catalog_gpu}, {"notes", o.notes}};
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
        row.at("catalog_gpu").get_to(o.catalog_gpu);
        row.at("notes").get_to(o.notes);
        return o;
    });
}

json evaluation_to_json(const PlanEvaluation& e) {
    return {{"ok", e.ok}, {"error", e.error}, {"ttt", e.ttt_minutes}, {"ttt_p10", e.ttt_p10_minutes},
            {"ttt_p90", e.ttt_p90_minutes}, {"gpu_hours", e.gpu_hours}, {"cost", e.cost},
            {"energy_kwh", e.energy_kwh}, {"warnings", e.warnings}};
}

PlanEvaluation evaluation_from_json(const json& row, const std::string& what) {
    return decoding(what, "not a row ttsim wrote", [&] {
        PlanEvaluation e;
        row.at("ok").get_to(e.ok);
        row.at("error").get_to(e.error);
        row.at("ttt").get_to(e.ttt_minutes);
        row.at("ttt_p10").get_to(e.ttt_p10_minutes);
        row.at("ttt_p90").get_to(e.ttt_p90_minutes);
        row.at("gpu_hours").get_to(e.gpu_hours);
        row.at("cost").get_to(e.cost);
        row.at("energy_kwh").get_to(e.energy_kwh);
        row.at("warnings").get_to(e.warnings);
        return e;
    });
}

std::string to_bytes(const json& value) {
    const std::vector<std::uint8_t> bytes = json::to_cbor(value);
    return std::string(bytes.begin(), bytes.end());
}

json from_bytes(const std::string& bytes, const std::string& what) {
    return decoding(what, "not a file or message ttsim wrote", [&] { return json::from_cbor(bytes); });
}

}  // namespace ttsim::planning
