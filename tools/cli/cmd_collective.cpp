#include "models/collectives/collective.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/collective_sweep.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/scenario_kinds.hpp"

namespace ttsim::cli {

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
        .option("nic", "SPEED", "scale-out NIC: ndr (400Gb/s) or xdr (800Gb/s)", "ndr")
        .option("oversubscription", "R", "leaf downlink:uplink ratio of the fat tree (1 = non-blocking)", "1")
        .option("sharp", "on|off",
                "SHARP in-network reduction available on the InfiniBand fabric (only multi-node clusters have one)",
                "on")
        .option("topology", "FILE", "a YAML topology file instead of --system/--gpus")
        .option("format", "F", "table, csv or json", "table")
        .option("out", "FILE", "also write the output to FILE (atomically)");
    if (!args.parse(raw, out)) return 0;

    CollectiveSweepSpec spec;
    if (auto file = args.get_optional("topology")) {
        if (args.has("system") || args.has("gpus")) args.fail("topology", "cannot be combined with --system/--gpus");
        spec.cluster.topology_file = *file;
    } else {
        spec.cluster.system = args.get("system");
        const long long gpus = args.get_int("gpus", 1, kMaxRequestableGpus);
        if (gpus < kMinCollectiveGpus) args.fail("gpus", one_gpu_message(static_cast<int>(gpus)));
        spec.cluster.fabric.nic = args.get_parsed("nic", [](const std::string& s) { return parse_nic_speed(s); });
        spec.cluster.fabric.oversubscription = args.get_double("oversubscription", 1.0, 64.0);
        spec.cluster.gpus = check_preset_cluster(spec.cluster.system, gpus, spec.cluster.fabric,
                                                 [&](const std::string& field, const std::string& message) {
                                                     args.fail(field, message);
                                                 });
    }
    const std::string sharp = args.get("sharp");
    if (sharp != "on" && sharp != "off") args.fail("sharp", "expected on or off, got '" + sharp + "'");
    spec.cluster.sharp = sharp == "on";
    spec.op = args.get_parsed("op", [](const std::string& s) { return parse_collective_op(s); });
    spec.algorithm = args.get_parsed("algo", [](const std::string& s) { return parse_collective_algorithm(s); });
    spec.protocol = args.get_parsed("protocol", [](const std::string& s) { return parse_nccl_protocol(s); });
    spec.min_bytes = args.get_parsed("min-size", [](const std::string& s) { return units::parse_bytes(s); });
    spec.max_bytes = args.get_parsed("max-size", [](const std::string& s) { return units::parse_bytes(s); });
    if (spec.min_bytes == 0) args.fail("min-size", "must be at least 1B");
    if (spec.max_bytes < spec.min_bytes) args.fail("max-size", "is below --min-size");
    if (spec.max_bytes > (1ULL << 40)) args.fail("max-size", "is above 1TiB, beyond any collective buffer");
    spec.format = args.get("format");
    if (spec.format != "table" && spec.format != "csv" && spec.format != "json")
        args.fail("format", "expected table, csv or json, got '" + spec.format + "'");
    if (const auto problem = applicability_problem(spec))
        args.fail(problem->field == "algorithm" ? "algo" : problem->field, problem->message);

    const std::string text = format_sweep(spec, run_collective_sweep(spec));
    if (auto file = args.get_optional("out")) write_file_atomically(*file, text);
    out << text;
    return 0;
}

int run_collective_scenario(const ConfigNode& root, const ScenarioContext& context, std::ostream& out) {
    CollectiveSweepSpec spec = read_collective_scenario(root);
    if (context.format) spec.format = *context.format;
    if (context.out_dir) ensure_directory(*context.out_dir);   // an unusable --out fails before the run

    const auto rows = run_collective_sweep(spec);
    if (context.out_dir) {
        write_file_atomically(*context.out_dir + "/results.csv", format_sweep_csv(rows));
        write_file_atomically(*context.out_dir + "/results.json", format_sweep_json(spec, rows));
    }
    out << format_sweep(spec, rows);
    return 0;
}

}  // namespace ttsim::cli
