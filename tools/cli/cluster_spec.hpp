// Which cluster a command or scenario runs on: a preset system with a GPU count and fabric options, or a
// topology file. One declaration shared by the command-line flags and the `cluster:` section of scenarios.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "models/hardware/system.hpp"
#include "sim/config.hpp"
#include "topologies/presets.hpp"
#include "topologies/topology.hpp"

namespace ttsim::cli {

class ArgParser;

// The --routing option of `ttsim collective`, `predict` and `plan`: its help text, and its value (exits 2
// naming the flag on anything but kFabricRoutingNames).
inline constexpr const char* kRoutingFlagHelp =
    "fat-tree routing: adaptive (every flow sprayed over all equal-cost up-links, the SuperPOD default) "
    "or static (one hashed ECMP path per flow)";
FabricRouting routing_flag(const ArgParser& args);
// The --sharp option of the same commands: true for "on", false for "off"; exits 2 naming the flag otherwise.
bool sharp_flag(const ArgParser& args);
// --memory-reserve SIZE (predict, plan): GPU memory each GPU keeps free besides the model state, bytes.
void declare_memory_reserve_flag(ArgParser& args);
double memory_reserve_flag(const ArgParser& args);

// The fabric options of `ttsim predict` and `plan` (--nic, --oversubscription, --routing, --topology), as the
// request's FabricChoice (models/hardware/system.hpp); each unset flag keeps the system's default. Exits 2
// naming the flag on a malformed value; whether an option applies is the library's to say (keyed by the field,
// which names the same flag).
void declare_fabric_flags(ArgParser& args);
FabricChoice fabric_flags(const ArgParser& args);
// The fabric's shape (predict, plan, collective): --planes, --switch-ports, --tiers, --spine-oversubscription,
// --superspine-oversubscription, --rail-optimized, on top of the system's (a preset's own radix and planes); each
// unset flag keeps it.
void declare_fabric_shape_flags(ArgParser& args);
void fabric_shape_flags(const ArgParser& args, FabricChoice& choice);

struct ClusterSpec {
    std::string system = "dgx-h100";    // preset name (topologies/presets.hpp)
    int gpus = 8;
    FabricOptions fabric{};
    bool sharp = true;                  // SHARP available on the IB fabric (NVIDIA's v4.1 multi-node runs had it)
    std::optional<std::string> topology_file;  // when set, replaces system/gpus/fabric

    Topology build() const;
    // One line for reports; `sharp_switches`: the built cluster's GPUs sit on InfiniBand switches
    // (GroupLayout::infiniband_fabric), else SHARP is reported as absent whatever `sharp` says.
    std::string describe(bool sharp_switches) const;
};

// Checks a preset cluster as requested — `gpus` as the user wrote it, up to kMaxRequestableGpus — against the
// resource guard first (sim/resource_guard.hpp: 10^8 GPUs is refused with its estimate), then the preset
// itself without building it (validate_preset: system, whole nodes, at most kMaxPresetGpus). The first
// problem is an InputError naming its Field (system, gpus, nic, oversubscription), for the front end to name
// as its user wrote it. Returns the GPU count. `asked`: the shape the user set on top of the preset's (`fabric`
// has it applied); a radix in it that three tiers of cannot hold the count is refused naming switch_ports.
int check_preset_cluster(const std::string& system, std::int64_t gpus, const FabricOptions& fabric,
                         const FabricShape& asked = {});

// Reads a `cluster:` mapping: {system, gpus, nic, oversubscription, routing, planes, switch_ports,
// spine_oversubscription, sharp} or {topology_file, sharp}.
// Relative topology_file paths are resolved against the scenario file's directory.
ClusterSpec read_cluster(const ConfigNode& node);

}  // namespace ttsim::cli
