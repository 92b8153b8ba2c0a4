#include <map>

#include "tools/cli/args.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/scenario_kinds.hpp"

namespace ttsim::cli {

namespace {

using Handler = int (*)(const ConfigNode&, const ScenarioContext&, std::ostream&);

// Every scenario kind and its handler. A kind is added here and nowhere else.
const std::map<std::string, Handler>& scenario_handlers() {
    static const std::map<std::string, Handler> handlers = {
        {"collective", run_collective_scenario},
        {"scaling-study", run_scaling_study_scenario},
        {"sweep", run_sweep_scenario},
        {"plan", run_plan_scenario},
    };
    return handlers;
}

}  // namespace

int run_scenario(const CommandArgs& raw, std::ostream& out) {
    ArgParser args("run", "SCENARIO.yaml [--out DIR] [--threads N] [--format F]",
                   "Runs a YAML scenario. Its `scenario:` key says what it is:\n"
                   "  collective      an nccl-tests-like size sweep of one collective\n"
                   "and so on for each kind listed in the README. The whole file is validated before anything runs.");
    args.positional("SCENARIO", "the scenario file (YAML)")
        .option("out", "DIR", "write results.csv / results.json (and plots, traces where the kind makes them) into DIR")
        .option("threads", "N", "worker threads for sweeps (0 = all cores)", "0")
        .option("format", "F", "override the scenario's output format: table, csv or json");
    if (!args.parse(raw, out)) return 0;

    ScenarioContext context;
    context.file = *args.positional_value("SCENARIO");
    context.out_dir = args.get_optional("out");
    context.threads = static_cast<int>(args.get_int("threads", 0, 1024));
    context.format = args.get_optional("format");
    if (context.format && *context.format != "table" && *context.format != "csv" && *context.format != "json")
        args.fail("format", "expected table, csv or json, got '" + *context.format + "'");

    const ConfigNode root = ConfigNode::load_file(context.file);
    if (!root.is_map()) root.fail("a scenario is a mapping with a 'scenario:' key");
    const ConfigNode kind = root.required("scenario");
    const std::string name = kind.as_string();
    const auto& handlers = scenario_handlers();
    const auto it = handlers.find(name);
    if (it == handlers.end()) {
        std::string valid;
        for (const auto& [known, handler] : handlers) valid += " " + known;
        kind.fail("unknown scenario kind '" + name + "'; valid kinds:" + valid);
    }
    return it->second(root, context, out);
}

}  // namespace ttsim::cli
