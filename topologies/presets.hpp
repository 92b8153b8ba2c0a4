// Named systems: a node type (DGX H100/H200/B200, GB200 NVL72 compute tray) replicated to a GPU count,
// joined by the DGX SuperPOD InfiniBand fabric (topologies/superpod_fabric.hpp).
//
//   Topology t = build_preset("dgx-h100", 1024);                   // 128 DGX, 4 SU, 2-tier NDR fabric
//   Topology x = build_preset("dgx-b200", 16384, {.nic = NicSpeed::Xdr800, .oversubscription = 2.0});
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

enum class NicSpeed { Ndr400, Xdr800 };

struct FabricOptions {
    NicSpeed nic = NicSpeed::Ndr400;
    double oversubscription = 1.0;  // leaf downlink : uplink; 1.0 = non-blocking, 2.0 halves the uplinks
    // Adaptive: every flow sprayed over all equal-cost up-links (Quantum-2 AR, on by default in a DGX
    // SuperPOD's subnet manager); StaticEcmp: one hashed path per flow (topology.hpp FabricRouting).
    FabricRouting routing = FabricRouting::Adaptive;
};

// "ndr" / "ndr400" / "xdr" / "xdr800" (what the CLI and YAML accept); InputError otherwise.
NicSpeed parse_nic_speed(std::string_view text);

struct PresetInfo {
    std::string name;
    int gpus_per_node;        // per DGX, or per GB200 compute tray
    int gpus_per_nvlink_domain;
};
const std::vector<PresetInfo>& preset_systems();

// Largest GPU count any preset accepts: a three-tier fat tree of 64-port switches has 65,536 ports.
inline constexpr int kMaxPresetGpus = 65'536;

// A GPU count as a user asked for it (any whole number up to kMaxRequestableGpus, sim/resource_guard.hpp):
// refused by the resource guard, with its estimate, when it is absurd (10^8 GPUs), then when it is above
// kMaxPresetGpus. InputError keyed `what` (a flag, or empty for a scenario reader to add its location).
int checked_gpu_request(std::int64_t gpus, std::string_view what);

// Builds and finalizes a preset. InputError for an unknown system, a GPU count that does not fit (not
// positive, not a whole number of nodes unless it is one partial node, above the cap), or bad options.
Topology build_preset(std::string_view system, int gpus, const FabricOptions& options = {});
// The same checks as build_preset, without building anything (for validating input before a run).
void validate_preset(std::string_view system, int gpus, const FabricOptions& options = {});

}  // namespace ttsim
