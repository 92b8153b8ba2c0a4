// `ttsim merge SHARD... [--out DIR] [--format F]`: joins the files of `ttsim run SWEEP.yaml --shard I/N` runs
// into what one whole run of the sweep writes and prints (shard_file.hpp says what is refused).
#include "models/planning/results_format.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/interrupt.hpp"
#include "tools/cli/scenario_kinds.hpp"
#include "tools/cli/shard_file.hpp"

namespace ttsim::cli {

int run_merge(const CommandArgs& raw, std::ostream& out) {
    ArgParser args("merge", "SHARD... [--out DIR] [--format F]",
                   "Joins the N shard files of `ttsim run SWEEP.yaml --shard I/N --out DIR` (I = 1..N) into the\n"
                   "results one run of the whole sweep writes: the same files in --out DIR, the same report on\n"
                   "stdout. Refuses shards of different scenarios, a shard given twice and an incomplete set.");
    args.positional_list("SHARD", "a shard file (shard-I-of-N.cbor) or the --out directory of a shard run")
        .option("out", "DIR", "write results.csv / results.json (and plots, trace) into DIR, as `ttsim run` does")
        .option("format", "F", "override the scenario's output format: table, csv or json");
    if (!args.parse(raw, out)) return 0;
    const InterruptGuard interrupt_guard;
    const MergedShards merged = merge_shards(args.positional_list_values());
    ScenarioContext context;
    context.file = merged.scenario_file;
    context.out_dir = args.get_optional("out");
    if (args.has("format")) context.format = args.get_choice("format", {"table", "csv", "json"});
    context.merged = &merged;
    // The scenario as the shards ran it: its text from the shards, its relative paths from its own directory.
    const ConfigNode root = ConfigNode::load_string(merged.scenario_text, merged.scenario_file);
    const std::string kind = root.required("scenario").as_string();
    if (kind == "sweep") return run_sweep_scenario(root, context, out);
    if (kind == "scaling-study") return run_scaling_study_scenario(root, context, out);
    throw InputError(merged.scenario_file + ": a " + kind + " scenario; only sweeps are sharded");
}

}  // namespace ttsim::cli
