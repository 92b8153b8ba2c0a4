// `ttsim plan`: one planning question in one command, e.g.
//   ttsim plan --workload bert --system dgx-h100 --deadline 1min                 (fewest GPUs)
//   ttsim plan --workload stable_diffusion --budget-gpu-hours 100                (fastest within a budget)
//   ttsim plan --workload stable_diffusion --deadline 10min --minimise cost      (cheapest within a deadline)
#include <algorithm>
#include <sstream>

#include "models/calibration/like_system.hpp"
#include "models/planning/plan_evaluator.hpp"
#include "models/planning/network_check.hpp"
#include "models/planning/plan_format.hpp"
#include "models/planning/prediction_band.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/training/layout_search.hpp"
#include "models/training/predict.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "tools/report/results_report.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/model_flag.hpp"
#include "tools/cli/cluster_spec.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/interrupt.hpp"
#include "tools/cli/output_dir.hpp"
#include "tools/cli/price_flags.hpp"
#include "tools/cli/reliability_flags.hpp"
#include "tools/cli/scenario_compute.hpp"
#include "tools/cli/scenario_sweep.hpp"
#include "tools/cli/workload_flag.hpp"
#include "topologies/yaml_topology.hpp"

namespace ttsim::cli {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::stringstream stream(text);
    for (std::string part; std::getline(stream, part, separator);)
        if (!part.empty()) parts.push_back(part);
    return parts;
}


}  // namespace

int run_plan(const CommandArgs& raw, std::ostream& out) {
    ArgParser args("plan", "--workload W (--deadline T | --budget-gpu-hours H | --budget AMOUNT) [options]",
                   "Searches systems and GPU counts (each at its fastest layout, or --layout, and batches) for the best configuration\n"
                   "that meets a deadline and/or budget. Objective defaults: with a deadline, fewest GPUs; with only\n"
                   "a budget, shortest time-to-train.");
    args.option("workload", "W", workload_flag_help())
        .option("system", "S[,S...]", "systems to search", "dgx-h100,dgx-h200,dgx-b200")
        .option("sharp", "on|off",
                "SHARP in-network reduction of the gradients: on (for candidates spanning NVLink domains; those "
                "within one run without) or off",
                "on for NVIDIA candidates spanning NVLink domains, as v4.1")
        .option("deadline", "TIME", "time-to-train limit with unit, e.g. 1min, 90s, 2h, 14d")
        .option("budget-gpu-hours", "H", "GPU-hours limit")
        .option("budget", "AMOUNT", "money limit, e.g. 5000USD (currency must match --currency)")
        .option("confidence", "p50|p90",
                "percentile of the predicted time-to-train (run-to-run convergence spread) that must meet the deadline "
                "and budgets", "p90")
        .option("margin", "PCT", "safety margin the chosen percentile must beat each limit by, e.g. 10%", "0%")
        .option("minimise", "O", "gpus, time, cost, gpu-hours or energy")
        .option("allocation", "rack|tray",
                "what a rack-scale system (gb200-nvl72) is rented by: whole NVL72 racks or 4-GPU compute trays; "
                "counts searched, GPU-hours billed and energy follow it (a DGX searched beside it keeps its node; "
                "refused where no system searched is rack-scale)",
                "each system's own unit: node (DGX), rack (gb200-nvl72)")
        .option("min-gpus", "N", "smallest GPU count searched", "8")
        .option("max-gpus", "N", "largest GPU count searched", "8192")
        .option("node-power", "W",
                "non-GPU power per node of a node-rented system (DGX), with unit; a GB200 NVL72 rack's is its published "
                "figure (models/data/prices.yaml power.rack)",
                "2500W")
        .option("switch-power", "W", "power per network switch, with unit", "1300W")
        .option("pue", "X", "data-centre power usage effectiveness", "1.0")
        .option("layout", "L",
                "the layout of every candidate, as 'ttsim predict --layout': published, fastest or pins "
                "tp=4,cp=2[,micro=1,accumulation=2,distributed_optimizer=on,reduction=overlapped] (fastest and pins need the operator model)",
                "fastest with an operator profile, published with a lumped one")
        .option("profiles", "DIR", "directory with the calibrated profiles (a 'ttsim calibrate --out' folder)",
                "models/profiles")
        .option("like", "SUBMITTER/SYSTEM",
                "price the kernels of every candidate's GPU with that software stack's speed offset from the profiles "
                "(as 'ttsim predict --like'; needs operator-model profiles with offsets)",
                "the pooled value, 1")
        .option("threads", "N", "worker threads (0 = all cores)", "0")
        .option("format", "F", "table, csv or json", "table")
        .flag("explain", "the table also says what the percentiles mean, the prices and the cost and energy formulas "
                         "(the JSON always carries them)")
        .option("out", "DIR", "also write results.csv and results.json into folder DIR (created if missing, each file "
                              "atomic; after Ctrl-C they list what was evaluated)");
    declare_memory_reserve_flag(args);
    declare_price_flags(args);
    declare_fabric_flags(args);
    declare_fabric_shape_flags(args);
    declare_model_flag(args);
    declare_reliability_flags(args);
    declare_round_flag(args);
    if (!args.parse(raw, out)) return 0;

    planning::PlanQuery query;
    planning::CostParameters cost;
    planning::EnergyParameters energy;
    const std::optional<UserModel> user_model = user_model_flag(args);
    const std::string workload = user_model ? user_model->workload->name
                                            : args.get_parsed("workload", [](const std::string& s) { return find_workload(s).name; });
    require_operator_model(args, user_model);
    if (user_model) {
        // Every candidate trains the model's tokens at its global batch, at the fastest layout that fits.
        query.custom_workload = user_model->workload;
        query.batch = {planning::BatchRule::fixed_global, user_model->global_batch};
    }
    for (const std::string& system : split(args.get("system"), ',')) {
        query.systems.push_back(args.get_parsed("system", [&](const std::string&) { return resolve_system(system).name; }));
        if (std::count(query.systems.begin(), query.systems.end(), query.systems.back()) > 1)
            args.fail("system", query.systems.back() + " is listed twice");
    }
    if (query.systems.empty()) args.fail("system", "name at least one system");
    FabricChoice fabric = fabric_flags(args);
    fabric_shape_flags(args, fabric);
    query.routing = fabric.routing.value_or(FabricOptions{}.routing);
    if (fabric.nic) query.network.nic = *fabric.nic;
    if (fabric.oversubscription) query.network.oversubscription = *fabric.oversubscription;
    query.network.shape = fabric.shape;
    query.topology_file = fabric.topology_file;
    // A topology file describes its own fabric (with_fabric says which flag cannot join it).
    if (fabric.topology_file)
        args.naming_flags([&] { (void)with_fabric(resolve_system(query.systems.front()), fabric); });

    cost = price_flags(args, query.systems);
    if (args.has("deadline")) {
        query.constraints.deadline_minutes =
            args.get_parsed("deadline", [](const std::string& s) { return units::parse_time_seconds(s); }) / 60.0;
        if (*query.constraints.deadline_minutes <= 0) args.fail("deadline", "must be positive");
    }
    if (args.has("budget-gpu-hours")) query.constraints.budget_gpu_hours = args.get_double("budget-gpu-hours", 1e-9, 1e12);
    if (args.has("budget")) {
        const planning::Money money = args.get_parsed("budget", [](const std::string& s) { return planning::parse_money(s); });
        if (!money.currency.empty() && money.currency != cost.currency)
            args.fail("budget", "is in " + money.currency + " but prices are in " + cost.currency + " (see --currency)");
        query.constraints.budget_money = money.amount;
    }
    if (!query.constraints.deadline_minutes && !query.constraints.budget_gpu_hours && !query.constraints.budget_money)
        args.fail("deadline", "give --deadline, --budget-gpu-hours or --budget");
    query.constraints.confidence =
        args.get_parsed("confidence", [](const std::string& s) { return planning::parse_confidence(s); });
    query.constraints.margin = args.get_parsed("margin", [](const std::string& s) { return planning::parse_margin(s); });
    query.objective = query.constraints.deadline_minutes ? planning::Objective::gpus : planning::Objective::time;
    if (args.has("minimise"))
        query.objective = args.get_parsed("minimise", [](const std::string& s) { return planning::parse_objective(s); });
    const int min_gpus = args.naming_flags(
        [&] { return checked_gpu_request(args.get_int("min-gpus", 1, kMaxRequestableGpus), Field::min_gpus); });
    const int max_gpus = args.naming_flags(
        [&] { return checked_gpu_request(args.get_int("max-gpus", 1, kMaxRequestableGpus), Field::max_gpus); });
    if (max_gpus < min_gpus)
        args.fail("max-gpus", "is below --min-gpus (" + std::to_string(min_gpus) +
                                  (args.has("min-gpus") ? ")" : ", its default)"));
    query.gpu_counts = planning::plan_gpu_grid(min_gpus, max_gpus);
    if (query.topology_file) {
        // The file fixes the GPU count: the search is over systems (their GPUs) on that one fabric.
        const int file_gpus = args.naming_flags([&] { return load_topology_file(*query.topology_file).gpu_count(); });
        if (args.has("min-gpus") || args.has("max-gpus"))
            args.fail(args.has("min-gpus") ? "min-gpus" : "max-gpus",
                      "a plan on --topology runs the file's " + std::to_string(file_gpus) + " GPUs only");
        query.gpu_counts = {file_gpus};
        query.refine = false;
    }
    // Unlike a plan scenario's `network:`, the command line has never refused a NIC that no candidate uses: the NIC
    // is left out of the check.
    planning::NetworkOption without_nic = query.network;
    without_nic.nic = planning::NetworkOption{}.nic;
    std::vector<System> systems;
    for (const std::string& s : query.systems) systems.push_back(resolve_system(s));
    if (planning::network_option_unused(without_nic, systems, query.gpu_counts.back()))
        args.fail(query.network.oversubscription != 1.0 ? "oversubscription" : std::string(flag_name(query.network.shape.first_field())),
                  "no configuration searched spans two NVLink domains, so no NIC or switch is used (raise --max-gpus)");
    if (args.has("sharp")) query.sharp = sharp_flag(args);
    if (args.has("memory-reserve")) query.memory_reserve_bytes = memory_reserve_flag(args);
    query.reliability = reliability_flags(args);
    if (query.sharp.value_or(false)) {
        const std::string nowhere = planning::sharp_unavailable_everywhere(query.systems, max_gpus);
        if (!nowhere.empty()) args.fail("sharp", nowhere + "; no configuration searched spans two domains (raise --max-gpus)");
    }
    if (args.has("allocation")) {
        const AllocationUnit unit = args.get_parsed("allocation", [](const std::string& s) { return parse_allocation(s); });
        // Applies to the rack-scale systems searched (each DGX keeps its node); refused where there is none.
        args.naming_flags([&] { check_allocation_applies_somewhere(query.systems, unit); });
        query.allocation = unit;
    }
    query.unit_of = [unit = query.allocation](const std::string& system) {
        return planning::plan_unit(with_allocation_where_applicable(resolve_system(system), unit));
    };
    args.naming_flags([&] { planning::check_plan_range(query); });
    query.threads = worker_threads(args);
    // Node power applies to node-rented systems only: refused where it would change nothing.
    if (args.has("node-power") && std::none_of(query.systems.begin(), query.systems.end(), [](const std::string& s) {
            return !resolve_system(s).rack_scale;
        }))
        args.fail("node-power", "no system searched is rented by the node; a rack-scale system's non-GPU power is its "
                                "rack's published figure less its GPUs' TDP (models/data/prices.yaml power.rack)");
    energy.node_watts = args.get_parsed("node-power", [](const std::string& s) { return units::parse_power(s); });
    energy.switch_watts = args.get_parsed("switch-power", [](const std::string& s) { return units::parse_power(s); });
    energy.pue = args.get_double("pue", 1.0, 3.0);
    const std::string format = args.get_choice("format", {"table", "csv", "json"});
    std::optional<OutputDir> output;
    if (const auto dir = args.get_optional("out")) output.emplace(*dir);   // checked now, created after the search

    if (args.has("layout")) {
        query.layout = args.naming_flags([&] { return parse_layout_request(args.get("layout")); });
        if (user_model && query.layout.mode == LayoutMode::published)
            args.fail("layout", "a user model has no published layout; use fastest or pins (tp=..,pp=..)");
        if (query.layout.searches() && model_flag(args) != ComputeModel::operator_level)
            args.fail("layout", "a searched layout (fastest or pins) is priced by the operator model: add --model "
                                "operator, or use --layout published");
        // A pin no system searched can take at any count (TP beyond every NVLink domain, a split the workload does
        // not model) is bad input, not a plan whose every row failed. Each system as the search runs it: a topology
        // file sets its own NVLink domains (with_fabric).
        if (query.layout.mode == LayoutMode::pinned) {
            std::vector<System> searched;
            for (const std::string& system : query.systems)
                searched.push_back(fabric.topology_file ? with_fabric(resolve_system(system), fabric) : resolve_system(system));
            args.naming_flags([&] {
                check_pins_apply_somewhere(planning::trained_workload(query.custom_workload, workload), searched,
                                           query.layout.pins);
            });
        }
    }
    std::vector<std::string> round_notes;
    ProfileSet profiles = apply_round_flag(args, load_model_profiles(args, true), round_notes);
    LikeNotes like_notes;
    if (!round_notes.empty()) like_notes[""] = round_notes;
    if (args.has("like"))
        profiles = args.get_parsed("like", [&](const std::string& like) {
            return with_like(profiles, like, planning::catalog_gpus(query.systems, query.variants), like_notes);
        });
    // The band's model term (prediction_band.hpp): the measured errors where they describe these profiles.
    query.model_errors = planning::model_errors_for(model_flag(args) == ComputeModel::lumped,
                                                    args.has("profiles") ? args.get("profiles") : "",
                                                    query.model_error_not_quoted);
    query.stack_named = args.has("like");
    const InterruptGuard interrupt_guard;   // Ctrl-C: the answer covers what was evaluated (exit 130)
    query.cancelled = [] { return interrupted(); };
    planning::add_published_counts(query, workload);
    const std::optional<planning::PlanAnswer> computed = compute_plan(
        query, with_plan_progress(with_notes(planning::make_prediction_evaluator(workload, profiles, energy, cost, query),
                                             all_notes(like_notes)),
                                  query));
    if (!computed) return 0;   // an MPI rank other than 0: rank 0 prints
    const planning::PlanAnswer& answer = *computed;
    const ComputeModel model = model_flag(args);
    planning::PlanReportContext report{workload, &query, &cost, &energy, model == ComputeModel::operator_level};
    report.explain = args.get_flag("explain");
    return print_plan("ttsim plan", ::ttsim::report::command_as_typed("ttsim plan", raw), format, report, answer, out,
                      output);   // 1 when nothing meets it (exit_codes.hpp)
}

}  // namespace ttsim::cli
