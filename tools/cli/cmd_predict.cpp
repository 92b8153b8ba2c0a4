// `ttsim predict`: time-to-train of one workload on one system at one scale.
#include <iomanip>
#include <ostream>

#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "models/training/layout_search.hpp"
#include "models/training/predict.hpp"
#include "models/workloads/workload.hpp"
#include "sim/resource_guard.hpp"
#include "topologies/presets.hpp"
#include "topologies/yaml_topology.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/cluster_spec.hpp"
#include "tools/cli/command_list.hpp"

namespace ttsim::cli {

namespace {

std::string join(const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
}

std::vector<std::string> preset_names() {
    std::vector<std::string> names;
    for (const PresetInfo& preset : preset_systems()) names.push_back(preset.name);
    return names;
}

// With only one of --tp / --cp given, the other comes from the published layout: when their product does not
// divide the GPUs, say which default was applied (predict() only knows the product), naming the flag given.
void check_split_with_default(const ArgParser& parser, const PredictionRequest& request) {
    if (request.tensor_parallel.has_value() == request.context_parallel.has_value()) return;
    ParallelismConfig layout;
    try {
        const System system = resolve_system(request.system);
        layout = default_parallelism(find_workload(request.workload), system.gpu->name, request.gpus).config;
    } catch (const InputError&) {
        return;   // no published layout to default from: predict() reports what is wrong
    }
    const int tp = request.tensor_parallel.value_or(layout.tensor_parallel);
    const int cp = request.context_parallel.value_or(layout.context_parallel);
    const int split = tp * cp * layout.pipeline_parallel;
    if (tp < 1 || cp < 1 || request.gpus % split == 0) return;
    const bool tp_given = request.tensor_parallel.has_value();
    parser.fail(tp_given ? "tp" : "cp",
                std::to_string(request.gpus) + " GPUs are not divisible by TP x CP = " + std::to_string(tp) + " x " +
                    std::to_string(cp) + " = " + std::to_string(split) + " (" + (tp_given ? "CP " : "TP ") +
                    std::to_string(tp_given ? cp : tp) + " is the default from the published layout; set " +
                    (tp_given ? "--cp" : "--tp") + " too)");
}

// What the layout search adds to a prediction (only when it chose the layout, so published predictions print as
// they always have).
void add_layout_search_json(nlohmann::ordered_json& j, const Prediction& p) {
    j["layout_choice"] = p.layout_choice;
    j["layouts_valid"] = p.layouts_enumerated;
    j["layouts_fitting"] = p.layouts_fitting;
    j["layout_search_seconds"] = p.layout_search_seconds;
    j["memory_per_gpu_bytes"] = p.memory_per_gpu_bytes;
    j["memory_capacity_bytes"] = p.memory_capacity_bytes;
    j["memory"] = p.memory_summary;
    if (p.published) {
        const Prediction::Alternative& a = *p.published;
        j["published"] = {{"basis", a.label},
                          {"layout", describe_layout(a.layout)},
                          {"ttt_minutes", a.ttt_minutes},
                          {"step_ms", a.step_ms},
                          {"memory_per_gpu_bytes", a.memory_per_gpu_bytes},
                          {"memory_fits", a.memory_fits}};
    } else {
        j["published"] = nullptr;
    }
}

void print_layout_search(std::ostream& out, const Prediction& p) {
    out << "  layout choice      " << p.layout_choice << ", searched in " << p.layout_search_seconds << " s\n"
        << "  memory per GPU     " << p.memory_summary << "\n";
    if (p.published) {
        const Prediction::Alternative& a = *p.published;
        out << "  published layout   " << describe_layout(a.layout) << ": " << a.ttt_minutes << " min, step " << a.step_ms
            << " ms, " << a.memory_per_gpu_bytes / 1e9 << " GB per GPU" << (a.memory_fits ? "" : " (over HBM)") << " ("
            << a.label << ")\n";
    } else {
        out << "  published layout   none at this scale\n";
    }
}

}  // namespace

int run_predict(const CommandArgs& args, std::ostream& out) {
    ArgParser parser("predict",
                     "--workload W --system S --gpus N [--global-batch B] [--tp T --cp C] "
                     "[--nic SPEED] [--oversubscription R] [--routing adaptive|static] [--topology FILE] "
                     "[--sharp on|off] [--profiles DIR] [--format table|json]",
                     "Predict MLPerf-style time-to-train. Unset options default to NVIDIA's v4.1 layout at the nearest "
                     "scale; the output says which defaults were used.");
    parser.option("workload", "W", "bert, llama2_70b_lora, retinanet, stable_diffusion")
        .option("system", "S",
                "a preset system: " + join(preset_names()) + "; or a GPU name: " + join(gpu_names()) +
                    " (a preset's GPU selects the preset; any other GPU gets generic 8-GPU nodes of its own NVLink and "
                    "NIC figures). Collectives are simulated on the system's topology")
        .option("gpus", "N", "number of GPUs (with --topology: the file's count when not given)")
        .option("global-batch", "B", "global batch size, samples", "v4.1 at the nearest scale")
        .option("tp", "T", "tensor parallel size", "published")
        .option("cp", "C", "context parallel size", "published")
        .option("layout", "L",
                "fastest (search every valid TP x CP x DP x micro batch x accumulation x distributed optimizer that "
                "fits in HBM, operator model), published (NVIDIA's v4.1 layout at the nearest scale), or pins: "
                "tp=4,cp=2[,micro=1,accumulation=2,distributed_optimizer=on] (searches what they leave open)",
                "fastest with an operator profile, published with a lumped one")
        .option("sharp", "on|off",
                "SHARP in-network reduction of the gradients between NVLink domains (refused for a job within one "
                "domain, which has no switch fabric)",
                "on for NVIDIA jobs spanning NVLink domains, as v4.1")
        .option("profiles", "DIR", "directory with calibrated profiles.yaml", "models/profiles")
        .option("format", "F", "table or json", "table");
    declare_fabric_flags(parser);
    if (!parser.parse(args, out)) return 0;
    PredictionRequest request;
    request.workload = parser.get("workload");
    request.system = parser.get("system");
    request.fabric = fabric_flags(parser);
    if (parser.has("gpus") || !request.fabric.topology_file)
        request.gpus = parser.naming_flags([&] { return checked_gpu_request(parser.get_int("gpus", 1, kMaxRequestableGpus)); });
    else
        request.gpus = parser.naming_flags([&] { return load_topology_file(*request.fabric.topology_file).gpu_count(); });
    if (parser.has("global-batch")) request.global_batch = static_cast<int>(parser.get_int("global-batch", 1, 1 << 30));
    if (parser.has("tp")) request.tensor_parallel = static_cast<int>(parser.get_int("tp", 1, 1024));
    if (parser.has("cp")) request.context_parallel = static_cast<int>(parser.get_int("cp", 1, 1 << 20));
    if (parser.has("sharp")) request.sharp = sharp_flag(parser);
    if (parser.has("layout")) request.layout = parser.naming_flags([&] { return parse_layout_request(parser.get("layout")); });
    const std::string format = parser.get("format");
    if (format != "table" && format != "json") parser.fail("format", "must be 'table' or 'json'");
    parser.naming_flags([&] { check_split_with_default(parser, request); });
    // predict() names the request's fields (Field::gpus, Field::global_batch); the user typed flags.
    const Prediction p = parser.naming_flags([&] {
        const ProfileSet profiles = ProfileSet::load_dir(
            parser.has("profiles") ? std::filesystem::path(parser.get("profiles")) : ProfileSet::default_dir());
        return predict(request, profiles);
    });

    if (format == "json") {
        nlohmann::ordered_json j;
        j["workload"] = p.workload;
        j["system"] = p.system;
        j["gpu"] = p.gpu;
        j["gpus"] = p.gpus;
        if (p.routing != FabricOptions{}.routing) j["routing"] = to_string(p.routing);   // only when not the default
        j["fabric"] = p.fabric;
        j["comm_topology"] = p.comm_topology;
        j["layout"] = {{"tp", p.layout.tensor_parallel}, {"cp", p.layout.context_parallel},
                       {"pp", p.layout.pipeline_parallel}, {"dp", p.layout.data_parallel},
                       {"micro_batch", p.layout.samples_per_micro_batch},
                       {"gradient_accumulation", p.layout.gradient_accumulation},
                       {"distributed_optimizer", p.layout.distributed_optimizer}, {"sharp", p.layout.sharp}};
        if (!p.layout_choice.empty()) add_layout_search_json(j, p);
        j["ttt_minutes"] = p.ttt_minutes;
        j["ttt_p10_minutes"] = p.ttt_p10_minutes;
        j["ttt_p90_minutes"] = p.ttt_p90_minutes;
        j["samples_to_converge"] = p.samples_to_converge;
        j["global_batch"] = p.global_batch;
        j["steps"] = p.steps;
        j["step_ms"] = p.step_ms;
        j["compute_ms"] = p.compute_ms;
        j["exposed_comm_ms"] = p.exposed_comm_ms;
        j["comm_total_ms"] = p.comm_total_ms;
        j["tp_cp_comm_ms"] = p.tp_cp_comm_ms;
        j["tp_cp_exposed_ms"] = p.tp_cp_exposed_ms;
        j["fixed_ms"] = p.fixed_ms;
        j["eval_minutes"] = p.eval_minutes;
        j["evaluations"] = p.evaluations;
        j["run_overhead_minutes"] = p.run_overhead_minutes;
        j["per_gpu_throughput"] = p.per_gpu_throughput;
        // Throughput efficiency (per-GPU samples/s relative to 8 GPUs), not the time-to-train efficiency of
        // `ttsim run` (speedup / GPU ratio, which includes convergence): named so the two are never confused.
        j["throughput_efficiency_vs_8gpu"] =
            p.efficiency_vs_8gpu ? nlohmann::ordered_json(*p.efficiency_vs_8gpu) : nullptr;
        j["gpu_hours"] = p.gpu_hours;
        j["compute_only_bound_minutes"] = p.compute_only_bound_minutes;
        j["defaults"] = p.defaults;
        j["warnings"] = p.warnings;
        out << j.dump(2) << "\n";
        return 0;
    }
    out << std::fixed << std::setprecision(3);
    // The header states the fabric choices: a non-default routing, and SHARP either way (on by default across
    // NVLink domains, so whether it ran is not obvious from the request).
    out << p.workload << " on " << p.gpus << " x " << p.gpu << " (" << p.system << ", " << p.fabric
        << (p.layout.sharp ? ", SHARP on" : ", SHARP off") << ")\n"
        << "  layout             TP " << p.layout.tensor_parallel << " CP " << p.layout.context_parallel << " DP "
        << p.layout.data_parallel << ", micro batch " << p.layout.samples_per_micro_batch << " x "
        << p.layout.gradient_accumulation << " micro steps" << (p.layout.distributed_optimizer ? ", distributed optimizer" : "")
        << "\n";
    if (!p.layout_choice.empty()) print_layout_search(out, p);
    out << "  time to train      " << p.ttt_minutes << " min (p10 " << p.ttt_p10_minutes << ", p90 " << p.ttt_p90_minutes
        << ")\n"
        << "  global batch       " << p.global_batch << ", samples to converge " << std::setprecision(0)
        << p.samples_to_converge << ", steps " << p.steps << std::setprecision(3) << "\n"
        << "  step               " << p.step_ms << " ms = compute " << p.compute_ms << " + exposed comm "
        << p.exposed_comm_ms << " + fixed " << p.fixed_ms << " (gradient comm total " << p.comm_total_ms << ")\n";
    if (p.tp_cp_comm_ms > 0)
        out << "  TP/CP comm         " << p.tp_cp_comm_ms << " ms per step, " << p.tp_cp_exposed_ms
            << " ms of it exposed (counted in compute)\n";
    out
        << "  evaluation         " << p.eval_minutes << " min on the clock (" << p.evaluations << " evaluations)\n"
        << "  per-run overhead   " << p.run_overhead_minutes
        << " min (once per run; time to train = steps x step + evaluation + this)\n"
        << "  per-GPU throughput " << p.per_gpu_throughput << " samples/s";
    out << "\n";
    if (p.efficiency_vs_8gpu)
        out << "  throughput eff.    " << *p.efficiency_vs_8gpu
            << " (per-GPU samples/s relative to 8 GPUs; convergence not included, unlike the time-to-train "
               "efficiency of `ttsim run`)\n";
    out << "  GPU hours          " << p.gpu_hours << "\n";
    for (const auto& d : p.defaults) out << "  default: " << d << "\n";
    for (const auto& w : p.warnings) out << "  warning: " << w << "\n";
    return 0;
}

}  // namespace ttsim::cli
