// `ttsim predict`: time-to-train of one workload on one system at one scale.
#include <ostream>

#include <fmt/format.h>

#include "models/calibration/like_system.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/training/layout_search.hpp"
#include "models/training/predict.hpp"
#include "models/workloads/workload.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "topologies/presets.hpp"
#include "topologies/yaml_topology.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/cluster_spec.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/model_flag.hpp"
#include "tools/cli/output_dir.hpp"
#include "tools/report/results_report.hpp"
#include "tools/cli/predict_output.hpp"
#include "tools/cli/price_flags.hpp"
#include "tools/cli/reliability_flags.hpp"
#include "tools/cli/scenario_sweep.hpp"
#include "tools/cli/workload_flag.hpp"

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

}  // namespace

int run_predict(const CommandArgs& args, std::ostream& out) {
    ArgParser parser("predict",
                     "--workload W --system S --gpus N [--global-batch B | --batch-per-rank R] [--tp T --cp C] "
                     "[--nic SPEED] [--oversubscription R] [--routing adaptive|static] [--topology FILE] "
                     "[--sharp on|off] [--memory-reserve SIZE] [--profiles DIR] [--model lumped|operator] [--layout L] [--like SUBMITTER/SYSTEM] [--price P] [--currency C] [--allocation rack|tray] [--checkpoint-interval T] [--storage-bandwidth R] [--hot-spares N] [--failure-rates NAME] [--format table|csv|json] [--out DIR]",
                     "Predict MLPerf-style time-to-train, its cost (rented GPU-hours x price per GPU-hour) and energy (the "
                     "model of a plan or sweep row). Unset options default to NVIDIA's v4.1 layout at the nearest "
                     "scale; the output says which defaults were used.");
    parser.option("workload", "W", workload_flag_help())
        .option("system", "S",
                "a preset system: " + join(preset_names()) + "; or a GPU name: " + join(gpu_names()) +
                    " (a preset's GPU selects the preset; any other GPU gets generic 8-GPU nodes of its own NVLink and "
                    "NIC figures). Collectives are simulated on the system's topology")
        .option("gpus", "N", "number of GPUs (with --topology: the file's count when not given)")
        .option("global-batch", "B", "global batch size, samples", "v4.1 at the nearest scale")
        .option("batch-per-rank", "R",
                "samples per data-parallel rank per optimizer step, in place of --global-batch: each layout priced "
                "(published or searched) trains at R x its DP (a sweep's per_rank batch rule)")
        .option("tp", "T", "tensor parallel size", "published")
        .option("cp", "C", "context parallel size", "published")
        .option("layout", "L",
                "fastest (search every valid TP x CP x DP x micro batch x accumulation x distributed optimizer that "
                "fits in HBM, operator model), published (NVIDIA's v4.1 layout at the nearest scale), or pins: "
                "tp=4,cp=2[,micro=1,accumulation=2,distributed_optimizer=on,reduction=overlapped] (searches what they leave open)",
                "fastest with an operator profile, published with a lumped one")
        .option("like", "SUBMITTER/SYSTEM",
                "price the kernels with that system's software-stack speed offset from the profiles (a v4.1 "
                "submitter/system, a user-runs label, or the stack SUBMITTER/GPU; needs operator-model profiles with "
                "offsets)",
                "the pooled value, 1")
        .option("sharp", "on|off",
                "SHARP in-network reduction of the gradients between NVLink domains (refused for a job within one "
                "domain, which has no switch fabric)",
                "on for NVIDIA jobs spanning NVLink domains, as v4.1")
        .option("allocation", "rack|tray",
                "what a rack-scale system (gb200-nvl72) is rented by: whole NVL72 racks or 4-GPU compute trays; the "
                "GPU-hours billed, cost and energy follow it (DGX systems: the node only)",
                "the system's own unit: node (DGX), rack (gb200-nvl72)")
        .option("profiles", "DIR", "directory with the calibrated profiles (profiles.yaml, operator_profiles.yaml)",
                "models/profiles")
        .option("format", "F", "table, csv or json", "table")
        .flag("explain",
              "the table also says where each default and figure comes from (the published layout's source, the "
              "batch rule, the memory breakdown, the cost and energy formulas); the JSON always carries them")
        .option("out", "DIR",
                "also write results.csv, results.json, trace.json (Chrome/Perfetto, one optimizer step) and "
                "report.html (the results as a page) into folder DIR (created if missing, each file atomic)");
    declare_memory_reserve_flag(parser);
    declare_price_flags(parser);
    declare_fabric_flags(parser);
    declare_fabric_shape_flags(parser);
    declare_model_flag(parser);
    declare_reliability_flags(parser);
    declare_round_flag(parser);
    if (!parser.parse(args, out)) return 0;
    PredictionRequest request;
    request.workload = parser.get("workload");
    const std::optional<UserModel> model = user_model_flag(parser);
    require_operator_model(parser, model);
    if (model) {
        // A user model trains its own tokens at its own global batch (--global-batch may change the batch) and
        // has no published layout: the operator model searches the fastest that fits (or the pins).
        request.custom_workload = model->workload;
        request.workload = model->workload->name;
        request.global_batch = model->global_batch;
        request.compute_efficiency_vs_8gpu = false;
    }
    request.system = parser.get("system");
    request.fabric = fabric_flags(parser);
    fabric_shape_flags(parser, request.fabric);
    if (parser.has("gpus") || !request.fabric.topology_file)
        request.gpus = parser.naming_flags([&] { return checked_gpu_request(parser.get_int("gpus", 1, kMaxRequestableGpus)); });
    else
        request.gpus = parser.naming_flags([&] { return load_topology_file(*request.fabric.topology_file).gpu_count(); });
    if (parser.has("global-batch")) request.global_batch = static_cast<int>(parser.get_int("global-batch", 1, 1 << 30));
    if (parser.has("batch-per-rank"))
        request.samples_per_rank = static_cast<int>(parser.get_int("batch-per-rank", 1, 1 << 16));   // as per_rank
    if (parser.has("tp")) request.tensor_parallel = static_cast<int>(parser.get_int("tp", 1, 1024));
    if (parser.has("cp")) request.context_parallel = static_cast<int>(parser.get_int("cp", 1, 1 << 20));
    if (parser.has("sharp")) request.sharp = sharp_flag(parser);
    if (parser.has("memory-reserve")) request.memory_reserve_bytes = memory_reserve_flag(parser);
    request.reliability = reliability_flags(parser);
    if (parser.has("layout"))
        request.layout = parser.naming_flags([&] { return parse_layout_request(parser.get("layout")); });
    const std::string format = parser.get_choice("format", {"table", "csv", "json"});
    const planning::CostParameters prices = parser.naming_flags(
        [&] { return price_flags(parser, {resolve_system(request.system).name}); });
    const planning::EnergyParameters energy;
    std::optional<AllocationUnit> allocation;
    if (parser.has("allocation"))
        allocation = parser.get_parsed("allocation", [](const std::string& s) { return parse_allocation(s); });
    // What the job rents (refused at --allocation where the system has no such unit: a DGX is rented by the node).
    const System rented = parser.naming_flags([&] { return with_allocation(resolve_system(request.system), allocation); });
    std::optional<OutputDir> output;
    if (const auto dir = parser.get_optional("out")) output.emplace(*dir);   // checked now, written after
    parser.naming_flags([&] { check_split_with_default(parser, request); });
    // predict() names the request's fields (Field::gpus, Field::global_batch); the user typed flags.
    std::vector<std::string> like_notes;
    ProfileSet profiles = apply_round_flag(parser, load_model_profiles(parser), like_notes);
    if (parser.has("like")) {
        const std::string gpu = parser.naming_flags([&] { return resolve_request_system(request).catalog_gpu->name; });
        const LikeChoice like =
            parser.get_parsed("like", [&](const std::string& name) { return resolve_like(profiles, name, gpu); });
        profiles = with_stack_speed(profiles, gpu, like);
        like_notes = like.warnings;
        like_notes.push_back(fmt::format("--like {}: kernel times divided by the speed offset {} of stack {} (profiles)",
                                         parser.get("like"), units::format_number(like.speed, 4), like.stack));
    }
    ExplainedPrediction explained = parser.naming_flags([&] { return predict_explained(request, profiles); });
    Prediction& p = explained.prediction;
    p.warnings.insert(p.warnings.end(), like_notes.begin(), like_notes.end());
    // A count that is not whole allocation units is answered, but what it rents is said (system.hpp).
    if (std::string w = partial_allocation_warning(rented, request.gpus); !w.empty())
        p.warnings.push_back(std::move(w));

    // The band: convergence spread, the fit's parameter uncertainty and the model error of this kind of
    // extrapolation (prediction_band.hpp), in place of the convergence spread alone.
    std::string not_quoted;
    const ModelErrors* errors = planning::model_errors_for(
        model_flag(parser) == ComputeModel::lumped, parser.has("profiles") ? parser.get("profiles") : "", not_quoted);
    const planning::PredictionBand band =
        planning::prediction_band(p, explained.profile, errors, {p.gpus, parser.has("like"), false}, not_quoted);
    planning::apply_band(p, band);

    PredictionReport report;
    report.prediction = &p;
    report.band = &band;
    report.prices = &prices;
    report.energy = &energy;
    report.cost = planning::cost_of_prediction(p, request.system, energy, prices, allocation, request.fabric.shape);
    report.explain = parser.get_flag("explain");
    const std::string results_json = format_prediction_json(report), results_csv = format_prediction_csv(report);
    const std::string text = format == "json"  ? results_json
                             : format == "csv" ? results_csv
                                               : format_prediction_table(report);
    if (output) {
        output->write("results.csv", results_csv);
        output->write("results.json", results_json);
        output->write("report.html", ::ttsim::report::results_page(results_json, ::ttsim::report::command_as_typed("ttsim predict", args)));
        // One optimizer step of this prediction: the scenario predict() evaluated (the searched layout's, when it
        // searched), with the profile that priced it.
        write_iteration_trace(explained.scenario, explained.profile,
                              p.workload + " on " + std::to_string(p.gpus) + " GPUs of " + p.system +
                                  (explained.scenario.workload->eval_on_the_clock
                                       ? ", one optimizer step, then one evaluation apart"
                                       : ", one optimizer step"),
                              *output);
        output->keep();
    }
    out << text;
    return 0;
}

}  // namespace ttsim::cli
