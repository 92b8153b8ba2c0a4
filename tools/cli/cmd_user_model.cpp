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
//   cost: {...}                  # optional: prices per GPU-hour, as a sweep's (cost_config.hpp)
//   energy: {...}                # optional: node and switch power, PUE, as a sweep's
//   allocation: tray             # optional: rack | tray, what a rack-scale system is rented by, as a plan's
//   network: {planes: 2}         # optional: one network option, as a plan's (nic, oversubscription, sharp,
//                                #   planes, switch_ports, tiers, spine_oversubscription)
//
// Prints a table; with --out, results.csv and results.json (written atomically).
#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/compute/profile_files.hpp"
#include "models/planning/cost_config.hpp"
#include "models/planning/network_check.hpp"
#include "models/planning/plan_format.hpp"
#include "models/planning/point_prediction.hpp"
#include "models/planning/prediction_cost.hpp"
#include "models/planning/results_format.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/training/layout_search.hpp"
#include "models/workloads/custom_workload.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "topologies/presets.hpp"
#include "tools/cli/output_dir.hpp"
#include "tools/cli/scenario_kinds.hpp"
#include "tools/cli/scenario_profiles.hpp"

namespace ttsim::cli {

namespace {

// One GPU count: its prediction, or why none exists there (no layout valid or fitting at that count), while
// other counts of the list have one.
struct Row {
    int gpus = 0;
    Prediction p;
    planning::PredictionCost cost;   // rented GPU-hours x price, energy: as predict and a sweep row price them
    std::string error;
};

std::string csv(const std::vector<Row>& rows, const std::string& currency) {
    std::string text =
        "gpus,tp,cp,pp,vp,dp,micro_batch,gradient_accumulation,distributed_optimizer,recompute,ttt_minutes,step_ms,"
        "bubble_fraction,memory_per_gpu_gb,"
        "memory_capacity_gb,layouts_fitting,layouts_valid,alternative_layout,alternative_ttt_minutes,"
        "alternative_memory_per_gpu_gb,gpu_hours,rented_gpu_hours,price_per_gpu_hour,price_is_estimate,cost,currency,"
        "energy_kwh,error,mfu,model_tflops_per_gpu," +
        std::string(planning::kReliabilityCsvColumns) + "\n";   // mfu, model_tflops_per_gpu, then reliability, appended
    for (const Row& r : rows) {
        if (!r.error.empty()) {
            text += fmt::format("{},,,,,,,,,,,,,,,,,,,,,,,,,,,{},,,,,,,\n", r.gpus, planning::csv_field(r.error));
            continue;
        }
        const ParallelismConfig& c = r.p.layout;
        // The pipeline's bubble: its idle share of the busiest device's compute (0 without stages).
        text += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.4f},{:.2f},{:.2f},{},{},", r.gpus,
                            c.tensor_parallel, c.context_parallel, c.pipeline_parallel, c.virtual_pipeline,
                            c.data_parallel, c.samples_per_micro_batch, c.gradient_accumulation,
                            c.distributed_optimizer ? "on" : "off", c.recompute.empty() ? "none" : c.recompute,
                            r.p.ttt_minutes, r.p.step_ms, r.p.bubble_fraction,
                            r.p.memory_per_gpu_bytes / 1e9, r.p.memory_capacity_bytes / 1e9, r.p.layouts_fitting,
                            r.p.layouts_enumerated);
        if (r.p.published)
            text += fmt::format("\"{}\",{:.3f},{:.2f},", describe_layout(r.p.published->layout),
                                r.p.published->ttt_minutes, r.p.published->memory_per_gpu_bytes / 1e9);
        else
            text += ",,,";
        text += fmt::format("{:.3f},{:.3f},{:.4f},{},{:.2f},{},{:.3f},,{},{}\n", r.p.gpu_hours, r.cost.rented_gpu_hours,
                            r.cost.price_per_gpu_hour, r.cost.price_is_estimate ? "true" : "false", r.cost.cost,
                            planning::csv_field(currency), r.cost.energy.facility_kwh, planning::mfu_csv_fields(r.p),
                            planning::reliability_csv_fields(r.p));
    }
    return text;
}

std::string json(const std::string& name, const std::string& system, const UserModel& model, const std::vector<Row>& rows,
                 const std::string& currency) {
    nlohmann::ordered_json j;
    // Named like the other outputs' (docs/results-schema.md): what the file is, and its version.
    j["schema"] = "ttsim.user-model/1";
    j["kind"] = "user-model";
    j["name"] = name;
    j["system"] = system;
    j["model"] = model.workload->description;
    j["train"] = model.train_note;
    j["global_batch"] = model.global_batch;
    for (const Row& r : rows) {
        nlohmann::ordered_json row;
        row["gpus"] = r.gpus;
        if (!r.error.empty()) {
            row["error"] = r.error;
            j["results"].push_back(std::move(row));
            continue;
        }
        row["layout"] = describe_layout(r.p.layout);
        row["layout_choice"] = r.p.layout_choice;
        row["ttt_minutes"] = r.p.ttt_minutes;
        planning::add_reliability_json(row, r.p);   // goodput, interruptions, checkpoint interval (models/reliability)
        row["step_ms"] = r.p.step_ms;
        planning::add_mfu_json(row, r.p);
        row["memory"] = r.p.memory_summary;
        row["memory_per_gpu_bytes"] = r.p.memory_per_gpu_bytes;
        row["alternative"] = r.p.published ? nlohmann::ordered_json{{"label", r.p.published->label},
                                                                    {"layout", describe_layout(r.p.published->layout)},
                                                                    {"ttt_minutes", r.p.published->ttt_minutes},
                                                                    {"memory_per_gpu_bytes", r.p.published->memory_per_gpu_bytes}}
                                           : nlohmann::ordered_json(nullptr);
        row["gpu_hours"] = r.p.gpu_hours;
        row["rented_gpu_hours"] = r.cost.rented_gpu_hours;
        row["cost"] = {{"amount", r.cost.cost}, {"currency", currency},
                       {"price_per_gpu_hour", r.cost.price_per_gpu_hour}, {"price_is_estimate", r.cost.price_is_estimate}};
        row["energy_kwh"] = r.cost.energy.facility_kwh;
        row["warnings"] = r.p.warnings;
        j["results"].push_back(std::move(row));
    }
    return j.dump(2) + "\n";
}

}  // namespace

int run_user_model_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    root.check_keys({"scenario", "name", "model", "system", "gpus", "layout", "profiles", "like", "round", "output",
                     "memory_reserve", "cost", "energy", "allocation", "reliability", "network"});
    const std::string name = root.required("name").as_string();
    const UserModel model = load_user_model(root.required("model"));
    const ConfigNode system_node = root.required("system");
    const std::string system = system_node.as_string();
    // As a sweep's: a list, one count, or {from, to} doubling (ascending, each once).
    const ConfigNode gpus_node = root.required("gpus");
    const std::vector<int> counts = planning::read_gpu_counts(gpus_node);
    // Where a count's own error points: its list item, else the key.
    auto count_node = [&](int n) {
        if (gpus_node.is_sequence())
            for (const ConfigNode& item : gpus_node.items())
                if (item.as_int(1, kMaxRequestableGpus) == n) return item;
        return gpus_node;
    };
    LayoutRequest layout{LayoutMode::fastest, {}};
    if (root.has("layout")) {
        // As a sweep's: a string (fastest, tp=4,cp=2) or a mapping of pins ({tp: 4, cp: 2}).
        const ConfigNode node = root.required("layout");
        layout = planning::read_layout(node, ComputeModel::operator_level);
        if (layout.mode == LayoutMode::published) node.fail("a user model has no published layout; use fastest or pins");
    }
    // GPU memory each GPU keeps free besides the model state (PredictionRequest::memory_reserve_bytes).
    std::optional<double> memory_reserve;
    if (root.has("memory_reserve")) memory_reserve = static_cast<double>(root.required("memory_reserve").as_bytes());
    // Failures and checkpoints over each count's run (job_reliability.hpp).
    reliability::ReliabilityRequest reliability;
    if (auto node = root.optional("reliability")) reliability = reliability::read_reliability_request(*node);
    std::string format = "table";
    if (root.has("output")) {
        const ConfigNode output = root.required("output");
        output.check_keys({"format"});
        if (output.has("format")) format = output.required("format").as_choice({"table", "csv", "json"});
    }
    if (context.format) format = *context.format;
    // --out is checked before the predictions and created after them; a failure leaves no folder (OutputDir).
    std::optional<OutputDir> output;
    if (context.out_dir) output.emplace(*context.out_dir);
    // Prices and power as a sweep reads them (a price not given is the prices.yaml estimate, and the report says so).
    planning::CostParameters cost;
    planning::EnergyParameters energy;
    const System resolved = system_node.feeding([&] { return resolve_system(system); });
    const std::string gpu = resolved.catalog_gpu->name;
    // After the system is known good, so a mistyped one is refused at its own key.
    if (auto node = root.optional("cost")) planning::read_cost_section(*node, cost, {system}, "this scenario does not run");
    if (auto node = root.optional("energy")) planning::read_energy_section(*node, energy);
    std::optional<AllocationUnit> allocation;
    if (auto node = root.optional("allocation")) allocation = parse_allocation(node->as_choice({"rack", "tray"}));
    // What the job rents (refused at `allocation` where the system has no such unit: a DGX is rented by the node).
    const System rented = allocation ? root.required("allocation").feeding([&] { return with_allocation(resolved, allocation); })
                                     : resolved;
    // A pin no count can take (TP beyond the system's NVLink domain) is refused at the key, not a row per count.
    if (layout.mode == LayoutMode::pinned) {
        const ConfigNode node = root.required("layout");
        node.feeding([&] {
            check_pins_apply(*model.workload, resolved, layout.pins);
            // A split no count or the model's shapes can take fails at every count: the pin is the mistake.
            check_pins_split_model(*model.workload, layout.pins, counts);
            return 0;
        });
    }
    // The fabric every count runs on (`network:`, one option as a plan's: nic, oversubscription, planes,
    // switch_ports, tiers, spine_oversubscription, sharp); counts within one NVLink domain use none of it.
    planning::NetworkOption network;
    if (auto node = root.optional("network")) {
        if (node->is_sequence()) node->fail("a user model runs on one network option; compare several with a sweep");
        if (auto name = node->optional("name"))
            name->fail("a user model runs on one network option, which no name labels (a sweep names its options)");
        network = planning::read_network(*node);
        if (planning::network_option_unused(network, {resolved}, counts.back()))
            node->fail("no count spans two NVLink domains (largest " + std::to_string(counts.back()) +
                       " GPUs), so no NIC or switch is used: the option would change nothing");
        node->feeding_keys(*node, [&] {
            planning::check_network_option_holds(network, {resolved}, counts.back());
            return 0;
        });
    }
    const ScenarioProfiles chosen = read_scenario_profiles(root, ComputeModel::operator_level, {gpu});
    const ProfileSet& profiles = chosen.profiles;

    std::vector<Row> rows;
    std::size_t refused = 0;   // counts without a layout
    for (std::size_t i = 0; i < counts.size(); ++i) {
        PredictionRequest request;
        request.custom_workload = model.workload;
        request.workload = model.workload->name;
        request.system = system;
        request.gpus = counts[i];
        request.global_batch = model.global_batch;
        request.layout = layout;
        request.memory_reserve_bytes = memory_reserve;
        request.reliability = reliability;
        request.compute_efficiency_vs_8gpu = false;
        const bool one_domain = !resolved.spans_domains(counts[i]);
        request.fabric = planning::network_choice(network, FabricOptions{}.routing, one_domain);
        if (network.sharp) request.sharp = *network.sharp && !one_domain;   // no SHARP within one domain, as a sweep's
        const ConfigNode at = count_node(counts[i]);
        // A count where no layout is valid or fits is a row saying why.
        Row row;
        row.gpus = counts[i];
        try {
            row.p = predict(request, profiles);
            row.cost = planning::cost_of_prediction(row.p, system, energy, cost, allocation, network.shape);
        } catch (const InputError& e) {
            // Only a layout refusal (refuse_layouts: no split valid or fitting) is a row; anything else, such as a
            // count that is not whole nodes, is bad input at its key.
            const bool layout_refusal = e.field() && (*e.field() == Field::layout || *e.field() == Field::global_batch ||
                                                      *e.field() == Field::tensor_parallel);
            if (!layout_refusal) root.feeding_keys(at, [&]() -> int { throw; });
            ++refused;
            row.error = e.message();
        }
        rows.push_back(std::move(row));
    }
    // Every count refused for its layout: nothing feasible (exit 1, as a sweep whose every point failed), the
    // report still printed with each count's reason.
    const int status = refused == counts.size() ? 1 : 0;

    if (output) {
        output->write("results.csv", csv(rows, cost.currency));
        output->write("results.json", json(name, system, model, rows, cost.currency));
        output->keep();
    }
    if (format == "csv") {
        out << csv(rows, cost.currency);
        return status;
    }
    if (format == "json") {
        out << json(name, system, model, rows, cost.currency);
        return status;
    }
    out << name << "\n"
        << "  model        " << model.workload->description << "\n"
        << "  training     " << model.train_note << "; " << model.batch_note << "\n"
        << "  system       " << system << ", layouts searched with the operator model ("
        << chosen.source << ")\n";
    if (!network.is_default()) {
        std::string fabric = network.nic != NicSpeed::Ndr400 ? network.nic.description() + " NICs" : "the system's NICs";
        if (network.oversubscription != 1.0) fabric += ", " + units::format_number(network.oversubscription) + ":1 oversubscribed";
        if (network.shape.any()) fabric += ", " + network.shape.describe();
        if (network.sharp) fabric += std::string(", SHARP ") + (*network.sharp ? "on" : "off");
        out << "  network      " << fabric << " (counts spanning NVLink domains)\n";
    }
    for (const std::string& note : all_notes(chosen.notes)) out << "  note         " << note << "\n";
    out << "  cost         rented GPU-hours x price per GPU-hour: " << cost.describe_prices({resolved.name})
        << "; GPU-hours are billed in whole allocation units"
        << (allocation ? std::string(" (") + to_string(*allocation) + "s, as the scenario's allocation)" : std::string()) << "\n";
    out << "  energy       " << planning::describe_energy_model(energy) << "\n";
    out << "\n";
    const std::string cost_header = "cost (" + cost.currency + ")";
    // Whole units where they are large, cents and hundredths where they are not (a small job's 0.32 USD is not 0).
    // kWh to three significant figures, MWh from a thousand.
    const auto energy_text = [](double kwh) {
        return kwh >= 999.5 ? planning::three_significant(kwh / 1e3) + " MWh" : planning::three_significant(kwh) + " kWh";
    };
    const auto amount = [](double v) { return fmt::format("{:.{}f}", v, v >= 100 ? 0 : v >= 1 ? 2 : 3); };
    // Times and energy to three significant figures (format_duration: s, min or h), as every other table.
    // MFU: model FLOPs utilisation (Prediction::model_flops_utilisation), as predict's table and every CSV/JSON.
    const auto mfu_text = [](const Prediction& p) {
        return p.model_flops_utilisation > 0 ? fmt::format("{:.1f}%", 100 * p.model_flops_utilisation) : std::string("-");
    };
    out << fmt::format("{:>6}  {:<72} {:>9} {:>10} {:>6} {:>13}  {:>9} {:>10} {:>12} {:>12}\n", "GPUs", "fastest layout",
                       "TTT", "step (ms)", "MFU", "memory (GB)", "fit/valid", "GPU-h", cost_header, "energy");
    for (const Row& r : rows)
        if (!r.error.empty())
            out << fmt::format("{:>6}  no prediction (below)\n", r.gpus);
        else
            out << fmt::format("{:>6}  {:<72} {:>9} {:>10.1f} {:>6} {:>6.1f} / {:<5.1f} {:>4}/{:<4} {:>10} {:>12} {:>12}\n",
                               r.gpus, describe_layout(r.p.layout), planning::format_duration(r.p.ttt_minutes), r.p.step_ms,
                               mfu_text(r.p),
                               r.p.memory_per_gpu_bytes / 1e9, r.p.memory_capacity_bytes / 1e9, r.p.layouts_fitting,
                               r.p.layouts_enumerated, amount(r.cost.rented_gpu_hours), amount(r.cost.cost),
                               energy_text(r.cost.energy.facility_kwh));
    out << "\n";
    for (const Row& r : rows) {
        if (!r.error.empty()) {
            out << "  " << r.gpus << " GPUs: " << r.error << "\n";
            continue;
        }
        out << "  " << r.gpus << " GPUs: memory " << r.p.memory_summary << "\n";
        if (r.cost.rented_gpu_hours > r.p.gpu_hours * (1 + 1e-9))
            out << "  " << r.gpus << " GPUs: rents " << rented.describe_allocation(r.gpus)
                << ", which the cost and GPU-hours bill whole\n";
        if (r.p.published)
            out << fmt::format("  {} GPUs: {}: {}: {}, step {:.1f} ms, {:.1f} GB per GPU\n", r.gpus,
                               r.p.published->label, describe_layout(r.p.published->layout),
                               planning::format_duration(r.p.published->ttt_minutes),
                               r.p.published->step_ms, r.p.published->memory_per_gpu_bytes / 1e9);
        else
            out << "  " << r.gpus << " GPUs: no Megatron-style layout (TP <= 8 within the NVLink domain, no CP, micro "
                                     "batch 1) is valid and fits here\n";
    }
    // More GPUs that train slower: the global batch caps the data-parallel replicas, so past that count the extra
    // GPUs only split each replica further (TP x CP), adding communication. Said at the first count it happens.
    std::vector<const Row*> by_count;
    for (const Row& r : rows)
        if (r.error.empty()) by_count.push_back(&r);
    std::sort(by_count.begin(), by_count.end(), [](const Row* a, const Row* b) { return a->gpus < b->gpus; });
    const Row* fastest_so_far = nullptr;
    for (const Row* row : by_count) {
        const Row& r = *row;
        if (fastest_so_far && r.p.ttt_minutes > fastest_so_far->p.ttt_minutes) {
            const ParallelismConfig& l = r.p.layout;
            const bool batch_bound = l.data_parallel == model.global_batch;
            out << fmt::format("  note: {} GPUs train slower than {} ({} against {}): {}\n", r.gpus,
                               fastest_so_far->gpus, planning::format_duration(r.p.ttt_minutes),
                               planning::format_duration(fastest_so_far->p.ttt_minutes),
                               batch_bound ? fmt::format("a global batch of {} sequences allows at most {} data-parallel "
                                                         "replicas of one sequence, so more GPUs split each replica "
                                                         "further (here TP {} x CP {}), which adds communication",
                                                         model.global_batch, model.global_batch, l.tensor_parallel,
                                                         l.context_parallel)
                                           : std::string("its communication grows faster than its compute shrinks"));
            break;
        }
        if (!fastest_so_far || r.p.ttt_minutes < fastest_so_far->p.ttt_minutes) fastest_so_far = &r;
    }
    // Every count's warnings, each once (the user-model note is on every count; a big-replica one on some).
    std::vector<std::string> warnings;
    for (const Row& r : rows)
        for (const std::string& w : r.p.warnings)
            if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    for (const std::string& w : warnings) out << "  warning: " << w << "\n";
    return status;
}

}  // namespace ttsim::cli
