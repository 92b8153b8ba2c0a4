// `ttsim plan`: one planning question in one command, e.g.
//   ttsim plan --workload bert --system dgx-h100 --deadline 1min                 (fewest GPUs)
//   ttsim plan --workload stable_diffusion --budget-gpu-hours 100                (fastest within a budget)
//   ttsim plan --workload stable_diffusion --deadline 10min --minimise cost      (cheapest within a deadline)
#include <algorithm>
#include <sstream>

#include "models/planning/plan_evaluator.hpp"
#include "models/planning/plan_format.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/training/predict.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/cluster_spec.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/interrupt.hpp"
#include "tools/cli/scenario_compute.hpp"
#include "tools/cli/scenario_sweep.hpp"
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
                   "Searches systems and GPU counts (v4.1 default layouts and batches) for the best configuration\n"
                   "that meets a deadline and/or budget. Objective defaults: with a deadline, fewest GPUs; with only\n"
                   "a budget, shortest time-to-train.");
    args.option("workload", "W", "bert, llama2_70b_lora, retinanet, stable_diffusion")
        .option("system", "S[,S...]", "systems to search", "dgx-h100,dgx-h200,dgx-b200")
        .option("sharp", "on|off",
                "SHARP in-network reduction of the gradients: on (for candidates spanning NVLink domains; those "
                "within one run without) or off",
                "on for NVIDIA candidates spanning NVLink domains, as v4.1")
        .option("deadline", "TIME", "time-to-train limit with unit, e.g. 1min, 90s, 2h")
        .option("budget-gpu-hours", "H", "GPU-hours limit")
        .option("budget", "AMOUNT", "money limit, e.g. 5000USD (currency must match --currency)")
        .option("confidence", "p50|p90",
                "percentile of the predicted time-to-train (run-to-run convergence spread) that must meet the deadline "
                "and budgets", "p90")
        .option("margin", "PCT", "safety margin the chosen percentile must beat each limit by, e.g. 10%", "0%")
        .option("minimise", "O", "gpus, time, cost, gpu-hours or energy")
        .option("price", "P | S=P,...", "price per GPU-hour, one for all or per system",
                "dgx-h100=2.5,dgx-h200=3.5,dgx-b200=5,gb200-nvl72=6 (estimates)")
        .option("currency", "C", "currency of prices and --budget", "USD")
        .option("min-gpus", "N", "smallest GPU count searched", "8")
        .option("max-gpus", "N", "largest GPU count searched", "8192")
        .option("node-power", "W", "non-GPU power per node, with unit", "2500W")
        .option("switch-power", "W", "power per network switch, with unit", "1300W")
        .option("pue", "X", "data-centre power usage effectiveness", "1.0")
        .option("threads", "N", "worker threads (0 = all cores)", "0")
        .option("format", "F", "table, csv or json", "table");
    declare_fabric_flags(args);
    if (!args.parse(raw, out)) return 0;

    planning::PlanQuery query;
    planning::CostParameters cost;
    planning::EnergyParameters energy;
    const std::string workload =
        args.get_parsed("workload", [](const std::string& s) { return find_workload(s).name; });
    for (const std::string& system : split(args.get("system"), ','))
        query.systems.push_back(args.get_parsed("system", [&](const std::string&) { return resolve_system(system).name; }));
    if (query.systems.empty()) args.fail("system", "name at least one system");
    const FabricChoice fabric = fabric_flags(args);
    query.routing = fabric.routing.value_or(FabricOptions{}.routing);
    if (fabric.nic) query.network.nic = *fabric.nic;
    if (fabric.oversubscription) query.network.oversubscription = *fabric.oversubscription;
    query.topology_file = fabric.topology_file;
    // A topology file describes its own fabric (with_fabric says which flag cannot join it).
    if (fabric.topology_file)
        args.naming_flags([&] { (void)with_fabric(resolve_system(query.systems.front()), fabric); });

    cost.currency = args.get("currency");
    if (args.has("price")) {
        const std::optional<std::string> price = args.get_optional("price");
        if (price->find('=') == std::string::npos) {
            cost.price_per_gpu_hour.clear();
            cost.default_price = args.get_double("price", 0.0, 1e6);
            cost.default_given_by_user = true;
        } else {
            for (const std::string& entry : split(*price, ',')) {
                const auto eq = entry.find('=');
                if (eq == std::string::npos) args.fail("price", "expected SYSTEM=PRICE, got '" + entry + "'");
                const std::string system =
                    args.get_parsed("price", [&](const std::string&) { return resolve_system(entry.substr(0, eq)).name; });
                const double value =
                    args.get_parsed("price", [&](const std::string&) { return units::parse_number(entry.substr(eq + 1)); });
                if (value < 0) args.fail("price", "must not be negative");
                if (std::find(query.systems.begin(), query.systems.end(), system) == query.systems.end())
                    args.fail("price", "a price for " + system + ", which --system does not search");
                cost.price_per_gpu_hour[system] = value;
                cost.given_by_user.insert(system);
            }
        }
    }
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
    if (max_gpus < min_gpus) args.fail("max-gpus", "is below --min-gpus");
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
    if (query.network.oversubscription != 1.0 && std::none_of(query.systems.begin(), query.systems.end(), [&](const std::string& s) {
            return resolve_system(s).spans_domains(query.gpu_counts.back());
        }))
        args.fail("oversubscription", "no configuration searched spans two NVLink domains, so no leaf switch is "
                                      "used (raise --max-gpus)");
    if (args.has("sharp")) query.sharp = sharp_flag(args);
    if (query.sharp.value_or(false)) {
        const std::string nowhere = planning::sharp_unavailable_everywhere(query.systems, max_gpus);
        if (!nowhere.empty()) args.fail("sharp", nowhere + "; no configuration searched spans two domains (raise --max-gpus)");
    }
    query.gpus_per_node = [](const std::string& system) { return resolve_system(system).gpus_per_node; };
    query.threads = worker_threads(args);
    energy.node_watts = args.get_parsed("node-power", [](const std::string& s) { return units::parse_power(s); });
    energy.switch_watts = args.get_parsed("switch-power", [](const std::string& s) { return units::parse_power(s); });
    energy.pue = args.get_double("pue", 1.0, 3.0);
    const std::string format = args.get("format");
    if (format != "table" && format != "csv" && format != "json") args.fail("format", "expected table, csv or json");

    const ProfileSet profiles = ProfileSet::load_dir(ProfileSet::default_dir());
    const InterruptGuard interrupt_guard;   // Ctrl-C: the answer covers what was evaluated (exit 130)
    query.cancelled = [] { return interrupted(); };
    const std::optional<planning::PlanAnswer> computed =
        compute_plan(query, planning::make_prediction_evaluator(workload, profiles, energy, cost, query));
    if (!computed) return 0;   // an MPI rank other than 0: rank 0 prints
    const planning::PlanAnswer& answer = *computed;
    const planning::PlanReportContext report{workload, &query, &cost, &energy};
    if (format == "json")
        out << planning::format_plan_json("ttsim plan", report, answer);
    else if (format == "csv")
        out << planning::format_plan_csv(report, answer);
    else
        out << planning::format_plan_table(report, answer);
    return finish_plan(answer, out, std::nullopt);   // 1 when no configuration meets it (exit_codes.hpp)
}

}  // namespace ttsim::cli
