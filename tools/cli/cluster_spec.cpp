#include "tools/cli/cluster_spec.hpp"

#include <filesystem>
#include <sstream>

#include "sim/resource_guard.hpp"
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

void check_preset_cluster(const ClusterSpec& spec, const ClusterFieldFail& fail) {
    const ResourceLimits limits = ResourceLimits::from_environment();   // a malformed variable names itself
    std::string field, message;
    try {
        check_resources({.gpus = spec.gpus}, limits, "");
        validate_preset(spec.system, spec.gpus, spec.fabric);
        return;
    } catch (const InputError& e) {
        message = e.message();
        field = message.rfind("unknown system", 0) == 0 ? "system" : "gpus";
    }
    fail(field, message);
    throw InternalError("check_preset_cluster: the fail callback returned");
}

std::string ClusterSpec::describe() const {
    std::ostringstream out;
    if (topology_file) {
        out << "topology " << *topology_file;
    } else {
        out << system << ", " << gpus << " GPUs, " << (fabric.nic == NicSpeed::Xdr800 ? "XDR 800G" : "NDR 400G")
            << " NICs";
        if (fabric.oversubscription != 1.0) out << ", " << fabric.oversubscription << ":1 oversubscribed";
    }
    out << ", SHARP " << (sharp ? "on" : "off");
    return out.str();
}

ClusterSpec read_cluster(const ConfigNode& node) {
    node.check_keys({"system", "gpus", "nic", "oversubscription", "sharp", "topology_file"});
    ClusterSpec spec;
    if (auto file = node.optional("topology_file")) {
        for (const char* key : {"system", "gpus", "nic", "oversubscription"})
            if (node.has(key)) node.required(key).fail("cannot be combined with topology_file");
        std::filesystem::path path = file->as_string();
        if (path.is_relative()) {
            const std::filesystem::path base = std::filesystem::path(file->location().file).parent_path();
            if (!std::filesystem::exists(path) && std::filesystem::exists(base / path)) path = base / path;
        }
        if (!std::filesystem::exists(path)) file->fail("topology file '" + path.string() + "' not found");
        spec.topology_file = path.string();
    } else {
        const ConfigNode system = node.required("system");
        spec.system = system.as_string();
        const ConfigNode gpus = node.required("gpus");
        spec.gpus = static_cast<int>(gpus.as_int(1, kMaxPresetGpus));
        if (auto nic = node.optional("nic")) {
            try {
                spec.fabric.nic = parse_nic_speed(nic->as_string());
            } catch (const InputError& e) {
                nic->fail(e.message());
            }
        }
        if (auto over = node.optional("oversubscription")) spec.fabric.oversubscription = over->as_double(1.0, 64.0);
        // Check the preset now (without building it), so the error points at the scenario line.
        check_preset_cluster(spec, [&](const std::string& field, const std::string& message) {
            (field == "system" ? system : gpus).fail(message);
        });
    }
    if (auto sharp = node.optional("sharp")) spec.sharp = sharp->as_bool();
    return spec;
}

}  // namespace ttsim::cli
