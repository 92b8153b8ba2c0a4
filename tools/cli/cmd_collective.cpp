#include "models/collectives/collective.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/collective_sweep.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/interrupt.hpp"
#include "tools/cli/scenario_kinds.hpp"

namespace ttsim::cli {
namespace {

// The sweep under Ctrl-C (interrupt.hpp): the first SIGINT stops it before the next size.
CollectiveSweepResult run_interruptible(const CollectiveSweepSpec& spec) {
    const InterruptGuard interrupt_guard;
    return run_collective_sweep(spec, [] { return interrupted(); });
}

// Exit code of a sweep whose rows have been printed: 0, or for an interrupted one the stderr line and 130.
// An interrupted sweep writes no result file (`not_written` says which), so no file ever holds part of a sweep.
int finish(const CollectiveSweepResult& result, std::ostream& out, const std::string& not_written) {
    if (!result.interrupted) return 0;
    out.flush();
    return report_interrupted(result.rows.size(), result.sizes_requested, "sizes",
                              "only those are printed" + (not_written.empty() ? "" : ", " + not_written));
}

}  // namespace

int run_collective(const CommandArgs& raw, std::ostream& out) {
    ArgParser args("collective", "--system S --gpus N --op OP [options]",
                   "Sweeps one collective over message sizes on a simulated cluster and prints, per size, the time,\n"
                   "algbw and busbw (nccl-tests' formulas). Sizes double from --min-size while they do not exceed\n"
                   "--max-size (nccl-tests -f 2: 1MiB..3MiB runs 1 and 2 MiB).");
    args.option("system", "S", "preset system: dgx-h100, dgx-h200, dgx-b200, gb200-nvl72", "dgx-h100")
        .option("gpus", "N", "number of GPUs, at least 2 (whole nodes, or one partial node)", "8")
        .option("op", "OP", "allreduce, reducescatter, allgather, broadcast, alltoall", "allreduce")
        .option("algo", "A",
                "auto, ring, tree, hierarchical, nvls, sharp, direct (tree, hierarchical and sharp run all-reduce "
                "only; nvls all-reduce, reduce-scatter and all-gather; direct is all-to-all)",
                "auto")
        .option("protocol", "P", "NCCL protocol: auto, LL, LL128, Simple", "auto")
        .option("min-size", "SIZE", "smallest message, with unit (e.g. 1MiB)", "1MiB")
        .option("max-size", "SIZE", "largest message, with unit (e.g. 8GiB)", "8GiB")
        .option("nic", "SPEED", "scale-out NIC per GPU: hdr (200Gb/s), ndr (400Gb/s), xdr (800Gb/s) or a bandwidth, e.g. 100Gb/s or 25GB/s "
                "(1Gb/s to 3.2Tb/s; the switches stay 64-port)", "ndr")
        .option("oversubscription", "R", "leaf downlink:uplink ratio of the fat tree (1 = non-blocking)", "1")
        .option("routing", "R", kRoutingFlagHelp, "adaptive")
        .option("sharp", "on|off",
                "SHARP in-network reduction available on the InfiniBand fabric (only multi-node clusters have one)",
                "on")
        .option("topology", "FILE",
                "a YAML topology file instead of --system/--gpus/--nic/--oversubscription/--routing (the file "
                "sets those)")
        .option("format", "F", "table, csv or json", "table")
        .option("out", "FILE",
                "also write the output to FILE (atomically; not written when Ctrl-C stops the sweep, exit 130)");
    if (!args.parse(raw, out)) return 0;

    CollectiveSweepSpec spec;
    if (auto file = args.get_optional("topology")) {
        for (const char* flag : {"system", "gpus", "nic", "oversubscription", "routing"})
            if (args.has(flag))
                args.fail("topology", "cannot be combined with --" + std::string(flag) + " (the topology file sets it)");
        spec.cluster.topology_file = *file;
    } else {
        spec.cluster.system = args.get("system");
        const long long gpus = args.get_int("gpus", 1, kMaxRequestableGpus);
        if (gpus < kMinCollectiveGpus) args.fail("gpus", one_gpu_message(static_cast<int>(gpus)));
        spec.cluster.fabric.nic = args.get_parsed("nic", [](const std::string& s) { return parse_nic_speed(s); });
        spec.cluster.fabric.oversubscription = args.get_double("oversubscription", 1.0, 64.0);
        spec.cluster.fabric.routing = routing_flag(args);
        spec.cluster.gpus =
            args.naming_flags([&] { return check_preset_cluster(spec.cluster.system, gpus, spec.cluster.fabric); });
    }
    spec.cluster.sharp = sharp_flag(args);
    spec.op = args.get_parsed("op", [](const std::string& s) { return parse_collective_op(s); });
    spec.algorithm = args.get_parsed("algo", [](const std::string& s) { return parse_collective_algorithm(s); });
    spec.protocol = args.get_parsed("protocol", [](const std::string& s) { return parse_nccl_protocol(s); });
    spec.min_bytes = args.get_parsed("min-size", [](const std::string& s) { return units::parse_bytes(s); });
    spec.max_bytes = args.get_parsed("max-size", [](const std::string& s) { return units::parse_bytes(s); });
    if (spec.min_bytes == 0) args.fail("min-size", "must be at least 1B");
    if (spec.max_bytes < spec.min_bytes) args.fail("max-size", "is below --min-size");
    if (spec.max_bytes > (1ULL << 40)) args.fail("max-size", "is above 1TiB, beyond any collective buffer");
    spec.format = args.get_choice("format", {"table", "csv", "json"});
    if (const auto problem = applicability_problem(spec, "--sharp on"))
        args.fail(problem->field == "algorithm" ? "algo" : problem->field, problem->message);

    const std::optional<std::string> file = args.get_optional("out");
    const CollectiveSweepResult result = run_interruptible(spec);
    const std::string text = format_sweep(spec, result);
    if (file && !result.interrupted) write_file_atomically(*file, text);
    out << text;
    return finish(result, out, file ? *file + " not written" : "");
}

int run_collective_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    CollectiveSweepSpec spec = read_collective_scenario(root);
    if (context.format) spec.format = *context.format;
    // A Ctrl-C while the scenario was read (caught by `ttsim run`'s guard) stops here, before --out exists.
    if (interrupted()) return report_interrupted_before_start();
    if (context.out_dir) ensure_directory(*context.out_dir);   // an unusable --out fails before the run

    const CollectiveSweepResult result = run_interruptible(spec);
    if (context.out_dir && !result.interrupted) {
        write_file_atomically(*context.out_dir + "/results.csv", format_sweep_csv(result));
        write_file_atomically(*context.out_dir + "/results.json", format_sweep_json(spec, result));
    }
    out << format_sweep(spec, result);
    return finish(result, out, context.out_dir ? "no result files written to " + *context.out_dir : "");
}

}  // namespace ttsim::cli
