#include <map>

#include "tools/cli/args.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/interrupt.hpp"
#include "tools/cli/scenario_kinds.hpp"
#include "tools/cli/scenario_sweep.hpp"

namespace ttsim::cli {

namespace {

using Handler = int (*)(const ConfigNode&, const ScenarioContext&, std::ostream&);

struct ScenarioKind {
    Handler run;
    const char* summary;   // one line for `ttsim run --help`
};

// Every scenario kind, its handler and its one-line description. A kind is added here and nowhere else.
const std::map<std::string, ScenarioKind>& scenario_kinds() {
    static const std::map<std::string, ScenarioKind> kinds = {
        {"collective", {run_collective_scenario, "an nccl-tests-like size sweep of one collective"}},
        {"scaling-study",
         {run_scaling_study_scenario, "workloads x GPU counts on one system, against the published v4.1 results"}},
        {"sweep", {run_sweep_scenario, "workloads x systems x hardware/network what-ifs x batch rules x GPU counts"}},
        {"plan", {run_plan_scenario, "fewest GPUs / fastest / cheapest configuration within a deadline or budget"}},
        {"user-model", {run_user_model_scenario, "a user's own decoder at a list of GPU counts, each at its fastest layout"}},
    };
    return kinds;
}

std::string kinds_help() {
    std::string text;
    for (const auto& [name, kind] : scenario_kinds()) {
        text += "  " + name;
        text += std::string(name.size() < 16 ? 16 - name.size() : 1, ' ');
        text += std::string(kind.summary) + "\n";
    }
    return text;
}

}  // namespace

int run_scenario(const CommandArgs& raw, std::ostream& out) {
    ArgParser args("run", "SCENARIO.yaml [--out DIR] [--threads N] [--format F] [--shard I/N]",
                   "Runs a YAML scenario. Its `scenario:` key says what it is:\n" + kinds_help() +
                       "Examples of each are in scenarios/; the keys are in docs/results-schema.md. The whole file is "
                       "validated before anything runs.");
    args.positional("SCENARIO", "the scenario file (YAML)")
        .option("out", "DIR",
                "also write results.csv / results.json (the csv and json outputs; and trace.json, plots where the "
                "kind makes them) into folder DIR (created after the run, never left partial or empty on error)")
        .option("threads", "N", "worker threads for sweeps (0 = all cores)", "0")
        .option("format", "F", "override the scenario's output format: table, csv or json")
        .flag("explain", "plans: the table also says what the percentiles mean, the billing rule and the energy "
                         "formula (the JSON always carries them)")
        .option("shard", "I/N",
                "sweeps: compute only shard I of N (every N-th point) into DIR/shard-I-of-N.cbor; join the N "
                "shards with `ttsim merge` (for job arrays without MPI)");
    if (!args.parse(raw, out)) return 0;
    // Ctrl-C from here on is caught: while the scenario is read it stops the run before anything is written.
    const InterruptGuard interrupt_guard;

    ScenarioContext context;
    context.file = *args.positional_value("SCENARIO");
    context.out_dir = args.get_optional("out");
    context.threads = worker_threads(args);
    if (args.has("format")) context.format = args.get_choice("format", {"table", "csv", "json"});
    context.explain = args.get_flag("explain");
    if (args.has("shard")) {
        context.shard = args.get_parsed("shard", parse_shard);
        if (!context.out_dir) args.fail("shard", "needs --out DIR, where the shard's file goes");
    }

    const ConfigNode root = ConfigNode::load_file(context.file);
    if (!root.is_map()) root.fail("a scenario is a mapping with a 'scenario:' key");
    const ConfigNode kind = root.required("scenario");
    const std::string name = kind.as_string();
    const auto& kinds = scenario_kinds();
    const auto it = kinds.find(name);
    if (it == kinds.end()) {
        std::string valid;
        for (const auto& [known, handler] : kinds) valid += " " + known;
        kind.fail("unknown scenario kind '" + name + "'; valid kinds:" + valid);
    }
    if (context.shard && name != "sweep" && name != "scaling-study")
        args.fail("shard", "shards split sweeps (scenario: sweep or scaling-study), not a " + name + " scenario");
    return it->second.run(root, context, out);
}

}  // namespace ttsim::cli
