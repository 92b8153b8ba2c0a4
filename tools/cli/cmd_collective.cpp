#include "models/collectives/collective.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/collective_sweep.hpp"
#include "tools/cli/collective_table.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/interrupt.hpp"
#include "tools/cli/output_dir.hpp"
#include "tools/report/results_report.hpp"
#include "tools/cli/progress_bar.hpp"
#include "tools/cli/scenario_kinds.hpp"

namespace ttsim::cli {
namespace {

// Runs the sweep under Ctrl-C (interrupt.hpp: the first SIGINT stops it before the next size) and prints it as
// nccl-tests does: each size's row as soon as it is simulated, flushed, so a long sweep shows its progress on
// stdout and a pipe gets every finished row even if the run is stopped; the table's header comes with the first
// row (an input error found while the cluster is built prints nothing) and its footer (average busbw) at the
// end. JSON, one document, is printed whole at the end. A progress bar runs on stderr when it is a terminal.
CollectiveSweepResult run_streaming(const CollectiveSweepSpec& spec, std::ostream& out) {
    const InterruptGuard interrupt_guard;
    ProgressBar bar(spec.name.empty() ? std::string(to_string(spec.op)) : spec.name, "sizes");
    bool started = false;
    auto start = [&] {
        if (started) return;
        started = true;
        if (spec.format == "table") out << format_collective_table_header(spec);
        if (spec.format == "csv") out << format_sweep_csv_header();
    };
    const CollectiveSweepResult result = run_collective_sweep(
        spec, [] { return interrupted(); },
        [&](const CollectiveSweepRow& row, std::size_t done, std::size_t total) {
            bar.erase();   // the row must not land inside the bar when stdout and stderr share a terminal
            start();
            if (spec.format == "table") out << format_collective_table_row(spec, row);
            if (spec.format == "csv") out << format_sweep_csv_row(row);
            out.flush();
            if (done < total) bar.update(done, total);   // after the last row only the footer follows
        });
    bar.erase();
    start();
    if (spec.format == "table") out << format_collective_table_footer(spec, result);
    if (spec.format == "json") out << format_sweep_json(spec, result);
    out.flush();
    return result;
}

// Exit code of a sweep whose rows have been printed: 0, or for an interrupted one the stderr line and 130.
// An interrupted sweep writes no result file (`not_written` says which), so no file ever holds part of a sweep.
int finish(const CollectiveSweepResult& result, std::ostream& out, const std::string& not_written) {
    if (!result.interrupted) return 0;
    out.flush();
    return report_interrupted(result.rows.size(), result.sizes_requested, "sizes",
                              "only those are printed" + (not_written.empty() ? "" : ", " + not_written));
}

// --out DIR of a finished sweep: results.csv and results.json (the same text as --format csv / json).
int write_and_finish(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result, std::ostream& out,
                     std::optional<OutputDir>& output) {
    if (output && !result.interrupted) {
        output->write("results.csv", format_sweep_csv(result));
        const std::string results_json = format_sweep_json(spec, result);
        output->write("results.json", results_json);
        output->write("report.html", ::ttsim::report::results_page(results_json, "ttsim collective"));
        output->keep();
    }
    return finish(result, out, output ? "no result files written to " + output->path() : "");
}

}  // namespace

int run_collective(const CommandArgs& raw, std::ostream& out) {
    ArgParser args("collective", "--system S --gpus N --op OP [options]",
                   "Sweeps one collective over message sizes on a simulated cluster and prints, per size, the time,\n"
                   "algbw and busbw (nccl-tests' formulas), each row as soon as its size is simulated. Sizes double\n"
                   "from --min-size while they do not exceed --max-size (nccl-tests -f 2: 1MiB..3MiB runs 1 and 2 MiB).\n"
                   "The table has nccl-tests' columns (size, count, type, redop, root, out-of-place and in-place\n"
                   "time/algbw/busbw/#wrong), then ttsim's (algorithm, protocol, lower bound), and ends with\n"
                   "\"# Avg bus bandwidth\" (mean busbw over the sizes, GB/s). The simulation has no buffers: the in-place\n"
                   "figures are the out-of-place ones, #wrong is N/A (nothing is verified) and the type (float)\n"
                   "only sets the count. A progress bar runs on stderr when it is a terminal.");
    args.option("system", "S",
                "preset system: dgx-h100, dgx-h200, dgx-b200, gb200-nvl72 (DGX SuperPOD, 64-port NDR switches), "
                "gb200-nvl72-xdr (XDR 800G, 144-port Quantum-X800), h100-100k (400G Ethernet, 128-port switches)",
                "dgx-h100")
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
                "(1Gb/s to 3.2Tb/s; the switches keep the system's radix)", "the system's (ndr)")
        .option("oversubscription", "R", "leaf downlink:uplink ratio of the fat tree (1 = non-blocking)", "1")
        .option("routing", "R", kRoutingFlagHelp, "adaptive")
        .option("sharp", "on|off",
                "SHARP in-network reduction available on the InfiniBand fabric (only multi-node clusters have one)",
                "on")
        .option("topology", "FILE",
                "a YAML topology file instead of --system/--gpus/--nic/--oversubscription/--routing (the file "
                "sets those)")
        .option("format", "F", "table, csv or json", "table")
        .option("out", "DIR",
                "also write results.csv and results.json into folder DIR (created if missing; each file atomic; "
                "nothing written when Ctrl-C stops the sweep, exit 130)");
    declare_fabric_shape_flags(args);
    if (!args.parse(raw, out)) return 0;

    CollectiveSweepSpec spec;
    if (auto file = args.get_optional("topology")) {
        for (const char* flag : {"system", "gpus", "nic", "oversubscription", "routing", "planes", "switch-ports",
                                 "tiers", "spine-oversubscription", "superspine-oversubscription", "rail-optimized"})
            if (args.has(flag))
                args.fail("topology", "cannot be combined with --" + std::string(flag) + " (the topology file sets it)");
        spec.cluster.topology_file = *file;
    } else {
        spec.cluster.system = args.get("system");
        const long long gpus = args.get_int("gpus", 1, kMaxRequestableGpus);
        if (gpus < kMinCollectiveGpus) args.fail("gpus", one_gpu_message(static_cast<int>(gpus)));
        // The preset's own fabric (NIC, radix, planes), then what the flags change.
        spec.cluster.fabric = args.get_parsed("system", [](const std::string& s) { return preset_fabric(s); });
        FabricChoice choice;
        if (args.has("nic")) choice.nic = args.get_parsed("nic", [](const std::string& s) { return parse_nic_speed(s); });
        if (args.has("oversubscription")) choice.oversubscription = args.get_double("oversubscription", 1.0, 64.0);
        if (args.has("routing")) choice.routing = routing_flag(args);
        fabric_shape_flags(args, choice);
        spec.cluster.fabric = with_choice(spec.cluster.fabric, choice);
        spec.cluster.gpus =
            args.naming_flags([&] { return check_preset_cluster(spec.cluster.system, gpus, spec.cluster.fabric, choice.shape); });
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

    std::optional<OutputDir> output;
    if (const auto dir = args.get_optional("out")) output.emplace(*dir);   // checked now, created after the run
    const CollectiveSweepResult result = run_streaming(spec, out);
    return write_and_finish(spec, result, out, output);
}

int run_collective_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    CollectiveSweepSpec spec = read_collective_scenario(root);
    if (context.format) spec.format = *context.format;
    // A Ctrl-C while the scenario was read (caught by `ttsim run`'s guard) stops here, before --out exists.
    if (interrupted()) return report_interrupted_before_start();
    std::optional<OutputDir> output;
    if (context.out_dir) output.emplace(*context.out_dir);   // an unusable --out fails before the run

    const CollectiveSweepResult result = run_streaming(spec, out);
    return write_and_finish(spec, result, out, output);
}

}  // namespace ttsim::cli
