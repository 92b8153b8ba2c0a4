#include "tools/cli/cluster_spec.hpp"

#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "models/workloads/layers/memory.hpp"
#include "sim/file_reading.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "tools/cli/args.hpp"
#include "topologies/yaml_topology.hpp"

namespace ttsim::cli {

Topology ClusterSpec::build() const {
    // Resource guard (sim/resource_guard.hpp): refuse before building what would not fit.
    if (topology_file) {
        Topology topology = load_topology_file(*topology_file);
        check_resources({.gpus = topology.gpu_count()}, "topology " + *topology_file);
        return topology;
    }
    check_resources({.gpus = gpus}, "gpus");
    return build_preset(system, gpus, fabric);
}

int check_preset_cluster(const std::string& system, std::int64_t gpus, const FabricOptions& fabric,
                         const FabricShape& asked) {
    const int count = checked_gpu_request(gpus);   // the resource guard first: 10^8 GPUs, with the estimate
    // A radix or tiers asked for that cannot hold the count: their fault (an unknown system is validate_preset's).
    if (asked.sets_capacity())
        for (const PresetInfo& node : preset_systems())
            if (node.name == system) check_radix_holds(node, count, fabric);
    validate_preset(system, count, fabric);        // an unknown system before the count it cannot hold
    return count;
}

std::string ClusterSpec::describe(bool sharp_switches) const {
    std::ostringstream out;
    if (topology_file) {
        out << "topology " << *topology_file;
    } else {
        out << system << ", " << gpus << " GPUs, " << nic_description(fabric) << " NICs";
        if (fabric.oversubscription != 1.0) out << ", " << fabric.oversubscription << ":1 oversubscribed";
        if (fabric.routing != FabricOptions{}.routing) out << ", " << routing_note(fabric.routing);
        out << fabric_shape_note(fabric);
    }
    // "SHARP on" only where SHARP can run: an option without switches to run it would mislead.
    if (sharp_switches)
        out << ", SHARP " << (sharp ? "on" : "off");
    else
        out << ", no SHARP (no InfiniBand switches)";
    return out.str();
}

void declare_fabric_flags(ArgParser& args) {
    args.option("nic", "SPEED",
                "NIC line rate: hdr (200Gb/s), ndr (400Gb/s), xdr (800Gb/s) or a bandwidth such as 100Gb/s or 25GB/s",
                "the system's (ndr)")
        .option("oversubscription", "R",
                "leaf downlink:uplink ratio of the fat tree, 1 (non-blocking) to 64; refused for a job within one "
                "NVLink domain",
                "1")
        .option("routing", "R", std::string(kRoutingFlagHelp), "adaptive")
        .option("topology", "FILE",
                "a YAML topology (topologies/examples/) in place of the system's fabric: the job runs on the file's GPUs "
                "(a --gpus, where the command takes one, must be their count; a plan searches that count only)");
}

FabricChoice fabric_flags(const ArgParser& args) {
    FabricChoice choice;
    if (args.has("nic")) choice.nic = args.get_parsed("nic", [](const std::string& s) { return parse_nic_speed(s); });
    if (args.has("oversubscription")) choice.oversubscription = args.get_double("oversubscription", 1.0, 64.0);
    if (args.has("routing")) choice.routing = routing_flag(args);
    if (args.has("topology")) {
        const std::string path = args.get("topology");
        if (!path_exists(path)) args.fail("topology", "topology file '" + path + "' not found");
        choice.topology_file = path;
    }
    return choice;
}

void declare_fabric_shape_flags(ArgParser& args) {
    args.option("planes", "P",
                "parallel fat trees per NIC, the NIC's rate split evenly over them (2: an 800G ConnectX-8 as 2 x 400G "
                "ports on two planes); 1 to 8",
                "the system's (1)")
        .option("switch-ports", "K",
                "switch radix, ports per switch at one plane's rate: 64 (Quantum-2), 128 (Spectrum-4 as 400GbE), 144 "
                "(Quantum-X800); two tiers hold K^2/2 NICs per plane, three K^3/4, four K^4/8",
                "the system's (64)")
        .option("tiers", "T",
                "switch tiers of the fat tree, 2 to 4; a job the tiers cannot hold is refused", "the fewest of 2 and 3 that hold the job")
        .option("spine-oversubscription", "R",
                "spine downlink:uplink ratio of a three- or four-tier fat tree (e.g. 7 for 1:7 between pods on three "
                "tiers), 1 to 64; two tiers have no core and are unchanged",
                "1")
        .option("superspine-oversubscription", "R",
                "super-spine downlink:uplink ratio of a four-tier fat tree (its top boundary), 1 to 64; fewer tiers "
                "are unchanged",
                "1")
        .option("rail-optimized", "on|off",
                "rail-optimised leaves (NIC k of every node on leaf k) or off: a node's NICs share a leaf",
                "the system's (on)");
}

void fabric_shape_flags(const ArgParser& args, FabricChoice& choice) {
    if (args.has("planes")) choice.shape.planes = static_cast<int>(args.get_int("planes", 1, kMaxPlanes));
    if (args.has("switch-ports")) {
        choice.shape.switch_ports = static_cast<int>(args.get_int("switch-ports", kMinSwitchPorts, kMaxSwitchPorts));
        if (*choice.shape.switch_ports % 2 != 0)
            args.fail("switch-ports", "a switch's ports split half down, half up at a leaf: give an even radix");
    }
    if (args.has("tiers")) choice.shape.tiers = static_cast<int>(args.get_int("tiers", kMinFabricTiers, kMaxFabricTiers));
    if (args.has("spine-oversubscription"))
        choice.shape.spine_oversubscription = args.get_double("spine-oversubscription", 1.0, kMaxSpineOversubscription);
    if (args.has("superspine-oversubscription"))
        choice.shape.superspine_oversubscription =
            args.get_double("superspine-oversubscription", 1.0, kMaxSpineOversubscription);
    if (args.has("rail-optimized")) choice.shape.rail_optimized = args.get_choice("rail-optimized", {"on", "off"}) == "on";
}

bool sharp_flag(const ArgParser& args) { return args.get_choice("sharp", {"on", "off"}) == "on"; }

void declare_memory_reserve_flag(ArgParser& args) {
    args.option("memory-reserve", "SIZE",
                "GPU memory each GPU keeps free besides weights, gradients, optimizer state and activations (CUDA "
                "context, workspaces, NCCL buffers, fragmentation), with its unit: 6GB, 4GiB; layouts that do not fit "
                "beside it are refused or skipped",
                fmt::format("{:.0f}GB", layers::MemoryAssumptions{}.reserve_bytes / 1e9));
}

double memory_reserve_flag(const ArgParser& args) {
    return static_cast<double>(
        args.get_parsed("memory-reserve", [](const std::string& text) { return units::parse_bytes(text); }));
}

FabricRouting routing_flag(const ArgParser& args) {
    return parse_fabric_routing(args.get_choice("routing", kFabricRoutingNames));
}

ClusterSpec read_cluster(const ConfigNode& node) {
    std::vector<std::string> keys = {"system", "gpus", "nic", "oversubscription", "routing", "sharp", "topology_file"};
    keys.insert(keys.end(), std::begin(kFabricShapeKeys), std::end(kFabricShapeKeys));
    node.check_keys(keys);
    ClusterSpec spec;
    if (auto file = node.optional("topology_file")) {
        std::vector<std::string> fabric_keys = {"system", "gpus", "nic", "oversubscription", "routing"};
        fabric_keys.insert(fabric_keys.end(), std::begin(kFabricShapeKeys), std::end(kFabricShapeKeys));
        for (const std::string& key : fabric_keys)
            if (node.has(key)) node.required(key).fail("cannot be combined with topology_file");
        spec.topology_file = topology_file_path(*file);
    } else {
        spec.system = node.required("system").as_string();
        spec.fabric = node.required("system").feeding([&] { return preset_fabric(spec.system); });
        const ConfigNode gpus = node.required("gpus");
        const std::int64_t requested = gpus.as_int(1, kMaxRequestableGpus);
        if (auto nic = node.optional("nic"))
            spec.fabric.nic = nic->feeding([&] { return parse_nic_speed(nic->as_string()); });
        if (auto over = node.optional("oversubscription")) spec.fabric.oversubscription = over->as_double(1.0, 64.0);
        if (auto routing = node.optional("routing")) spec.fabric.routing = read_fabric_routing(*routing);
        const FabricShape shape = read_fabric_shape(node);
        spec.fabric = shape.applied_to(spec.fabric);
        // Check the preset now (without building it), so the error points at the scenario line.
        spec.gpus = node.feeding_keys(gpus, [&] { return check_preset_cluster(spec.system, requested, spec.fabric, shape); });
    }
    if (auto sharp = node.optional("sharp")) spec.sharp = sharp->as_bool();
    return spec;
}

}  // namespace ttsim::cli
