// `scenario: user-model`: a user's own decoder (models/workloads/custom_workload.hpp) on one system at a list of
// GPU counts, each with its fastest layout (models/training/layout_search.hpp):
//
//   scenario: user-model
//   name: "..."
//   model: {...}                 # custom_workload.hpp
//   system: dgx-h100             # a preset or a GPU name, as predict --system
//   gpus: [64, 512, 4096]
//   layout: fastest              # optional: fastest (default) or tp=..,cp=..[,micro=..,...] pins
//   profiles: DIR                # optional: a directory with operator_profiles.yaml (default models/profiles)
//
// Prints a table; with --out, results.csv and results.json (written atomically).
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/compute/profile_files.hpp"
#include "models/training/layout_search.hpp"
#include "models/workloads/custom_workload.hpp"
#include "sim/resource_guard.hpp"
#include "topologies/presets.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/scenario_kinds.hpp"
#include "tools/cli/scenario_profiles.hpp"

namespace ttsim::cli {

namespace {

struct Row {
    int gpus = 0;
    Prediction p;
};

std::string csv(const std::vector<Row>& rows) {
    std::string text =
        "gpus,tp,cp,dp,micro_batch,gradient_accumulation,distributed_optimizer,ttt_minutes,step_ms,memory_per_gpu_gb,"
        "memory_capacity_gb,layouts_fitting,layouts_valid,alternative_layout,alternative_ttt_minutes,"
        "alternative_memory_per_gpu_gb\n";
    for (const Row& r : rows) {
        const ParallelismConfig& c = r.p.layout;
        text += fmt::format("{},{},{},{},{},{},{},{:.3f},{:.3f},{:.2f},{:.2f},{},{},", r.gpus, c.tensor_parallel,
                            c.context_parallel, c.data_parallel, c.samples_per_micro_batch, c.gradient_accumulation,
                            c.distributed_optimizer ? "on" : "off", r.p.ttt_minutes, r.p.step_ms,
                            r.p.memory_per_gpu_bytes / 1e9, r.p.memory_capacity_bytes / 1e9, r.p.layouts_fitting,
                            r.p.layouts_enumerated);
        if (r.p.published)
            text += fmt::format("\"{}\",{:.3f},{:.2f}\n", describe_layout(r.p.published->layout),
                                r.p.published->ttt_minutes, r.p.published->memory_per_gpu_bytes / 1e9);
        else
            text += ",,\n";
    }
    return text;
}

std::string json(const std::string& name, const UserModel& model, const std::vector<Row>& rows) {
    nlohmann::ordered_json j;
    j["name"] = name;
    j["model"] = model.workload->description;
    j["train"] = model.train_note;
    j["global_batch"] = model.global_batch;
    for (const Row& r : rows) {
        nlohmann::ordered_json row;
        row["gpus"] = r.gpus;
        row["layout"] = describe_layout(r.p.layout);
        row["layout_choice"] = r.p.layout_choice;
        row["ttt_minutes"] = r.p.ttt_minutes;
        row["step_ms"] = r.p.step_ms;
        row["memory"] = r.p.memory_summary;
        row["memory_per_gpu_bytes"] = r.p.memory_per_gpu_bytes;
        row["alternative"] = r.p.published ? nlohmann::ordered_json{{"label", r.p.published->label},
                                                                    {"layout", describe_layout(r.p.published->layout)},
                                                                    {"ttt_minutes", r.p.published->ttt_minutes},
                                                                    {"memory_per_gpu_bytes", r.p.published->memory_per_gpu_bytes}}
                                           : nlohmann::ordered_json(nullptr);
        row["warnings"] = r.p.warnings;
        j["results"].push_back(std::move(row));
    }
    return j.dump(2) + "\n";
}

}  // namespace

int run_user_model_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    root.check_keys({"scenario", "name", "model", "system", "gpus", "layout", "profiles", "like", "output"});
    const std::string name = root.required("name").as_string();
    const UserModel model = load_user_model(root.required("model"));
    const ConfigNode system_node = root.required("system");
    const std::string system = system_node.as_string();
    std::vector<int> counts;
    for (const ConfigNode& g : root.required("gpus").items()) {
        counts.push_back(g.feeding([&] { return checked_gpu_request(g.as_int(1, kMaxRequestableGpus)); }));
        if (std::count(counts.begin(), counts.end(), counts.back()) > 1)
            g.fail(std::to_string(counts.back()) + " GPUs are listed twice");
    }
    if (counts.empty()) root.required("gpus").fail("give at least one GPU count");
    LayoutRequest layout{LayoutMode::fastest, {}};
    if (root.has("layout")) {
        const ConfigNode node = root.required("layout");
        layout = node.feeding([&] { return parse_layout_request(node.as_string()); });
        if (layout.mode == LayoutMode::published) node.fail("a user model has no published layout; use fastest or pins");
    }
    std::string format = "table";
    if (root.has("output")) {
        const ConfigNode output = root.required("output");
        output.check_keys({"format"});
        if (output.has("format")) format = output.required("format").as_choice({"table", "csv", "json"});
    }
    if (context.format) format = *context.format;
    const std::string gpu = system_node.feeding([&] { return resolve_system(system).catalog_gpu->name; });
    const ScenarioProfiles chosen = read_scenario_profiles(root, ComputeModel::operator_level, {gpu});
    const ProfileSet& profiles = chosen.profiles;

    std::vector<Row> rows;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        PredictionRequest request;
        request.custom_workload = model.workload;
        request.workload = model.workload->name;
        request.system = system;
        request.gpus = counts[i];
        request.global_batch = model.global_batch;
        request.layout = layout;
        request.compute_efficiency_vs_8gpu = false;
        const ConfigNode at = root.required("gpus").items()[i];
        rows.push_back({counts[i], root.feeding_keys(at, [&] { return predict(request, profiles); })});
    }

    if (context.out_dir) {
        ensure_directory(*context.out_dir);
        write_file_atomically((std::filesystem::path(*context.out_dir) / "results.csv").string(), csv(rows));
        write_file_atomically((std::filesystem::path(*context.out_dir) / "results.json").string(), json(name, model, rows));
    }
    if (format == "csv") {
        out << csv(rows);
        return 0;
    }
    if (format == "json") {
        out << json(name, model, rows);
        return 0;
    }
    out << name << "\n"
        << "  model        " << model.workload->description << "\n"
        << "  training     " << model.train_note << "; " << model.batch_note << "\n"
        << "  system       " << system << ", layouts searched with the operator model ("
        << chosen.source << ")\n";
    for (const std::string& note : all_notes(chosen.notes)) out << "  note         " << note << "\n";
    out << "\n";
    out << fmt::format("{:>6}  {:<72} {:>9} {:>10} {:>13}  {:>9}\n", "GPUs", "fastest layout", "TTT (h)", "step (ms)",
                       "memory (GB)", "fit/valid");
    for (const Row& r : rows)
        out << fmt::format("{:>6}  {:<72} {:>9.2f} {:>10.1f} {:>6.1f} / {:<5.1f} {:>4}/{}\n", r.gpus,
                           describe_layout(r.p.layout), r.p.ttt_minutes / 60, r.p.step_ms, r.p.memory_per_gpu_bytes / 1e9,
                           r.p.memory_capacity_bytes / 1e9, r.p.layouts_fitting, r.p.layouts_enumerated);
    out << "\n";
    for (const Row& r : rows) {
        out << "  " << r.gpus << " GPUs: memory " << r.p.memory_summary << "\n";
        if (r.p.published)
            out << fmt::format("  {} GPUs: {}: {}: {:.2f} h, step {:.1f} ms, {:.1f} GB per GPU\n", r.gpus,
                               r.p.published->label, describe_layout(r.p.published->layout), r.p.published->ttt_minutes / 60,
                               r.p.published->step_ms, r.p.published->memory_per_gpu_bytes / 1e9);
        else
            out << "  " << r.gpus << " GPUs: no conventional (Megatron-style) layout fits\n";
    }
    if (!rows.empty())
        for (const auto& w : rows.front().p.warnings) out << "  warning: " << w << "\n";
    return 0;
}

}  // namespace ttsim::cli
