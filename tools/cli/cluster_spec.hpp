// Which cluster a command or scenario runs on: a preset system with a GPU count and fabric options, or a
// topology file. One declaration shared by the command-line flags and the `cluster:` section of scenarios.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "sim/config.hpp"
#include "topologies/presets.hpp"
#include "topologies/topology.hpp"

namespace ttsim::cli {

struct ClusterSpec {
    std::string system = "dgx-h100";    // preset name (topologies/presets.hpp)
    int gpus = 8;
    FabricOptions fabric{};
    bool sharp = true;                  // SHARP available on the IB fabric (NVIDIA's v4.1 multi-node runs had it)
    std::optional<std::string> topology_file;  // when set, replaces system/gpus/fabric

    Topology build() const;
    std::string describe() const;       // one line for reports
};

// Checks a preset cluster (system, gpus, fabric) without building it (validate_preset) and against the resource
// guard (sim/resource_guard.hpp). The first problem goes to `fail(field, message)`, field "system" or "gpus",
// which must throw (a scenario reader names the key's line, a command names the flag).
using ClusterFieldFail = std::function<void(const std::string& field, const std::string& message)>;
void check_preset_cluster(const ClusterSpec& spec, const ClusterFieldFail& fail);

// Reads a `cluster:` mapping: {system, gpus, nic, oversubscription, sharp} or {topology_file, sharp}.
// Relative topology_file paths are resolved against the scenario file's directory.
ClusterSpec read_cluster(const ConfigNode& node);

}  // namespace ttsim::cli
