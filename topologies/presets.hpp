// Named systems: a node type (DGX H100/H200/B200, GB200 NVL72 compute tray) replicated to a GPU count,
// joined by the DGX SuperPOD InfiniBand fabric (topologies/superpod_fabric.hpp).
//
//   Topology t = build_preset("dgx-h100", 1024);                   // 128 DGX, 4 SU, 2-tier NDR fabric
//   Topology x = build_preset("dgx-b200", 16384, {.nic = NicSpeed::Xdr800, .oversubscription = 2.0});
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/fields.hpp"
#include "sim/physical_range.hpp"
#include "sim/time.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

// The line rate of one scale-out NIC port (one per GPU on every preset), per direction. Named InfiniBand
// generations, or any rate a planner wants to try (a what-if nobody measured). The fabric model is the same
// for every rate: the 64-port switch radix of Quantum-2 (today's NDR and XDR presets alike; params.md has no
// figures for HDR Quantum or the 144-port Quantum-X800), the same latencies, every fabric link at this rate.
struct NicSpeed {
    double bytes_per_second = 50e9;

    // IB HDR 200 Gb/s (DGX A100, NCCL_812), NDR 400 Gb/s (MLP41 systems, SPOD_H100), XDR 800 Gb/s (CX8).
    static const NicSpeed Hdr200, Ndr400, Xdr800;
    // Accepted rates (sim/physical_range.hpp): outside, a value is a typo, and would break the model rather than
    // answer a question.
    static constexpr double kMinBytesPerSecond = kNicBandwidthRange.min;
    static constexpr double kMaxBytesPerSecond = kNicBandwidthRange.max;

    double gigabits_per_second() const { return bytes_per_second * 8 / 1e9; }
    // How outputs name it: "hdr", "ndr" or "xdr" for those rates, else the rate, e.g. "100Gb/s" (which
    // parse_nic_speed reads back as the same speed).
    std::string label() const;
    // For headers: "HDR 200G", "NDR 400G", "XDR 800G", else the rate ("100Gb/s").
    std::string description() const;
    friend bool operator==(const NicSpeed&, const NicSpeed&) = default;
};
inline const NicSpeed NicSpeed::Hdr200{25e9};
inline const NicSpeed NicSpeed::Ndr400{50e9};
inline const NicSpeed NicSpeed::Xdr800{100e9};

struct FabricOptions {
    NicSpeed nic = NicSpeed::Ndr400;
    double oversubscription = 1.0;  // leaf downlink : uplink; 1.0 = non-blocking, 2.0 halves the uplinks
    // Adaptive: every flow sprayed over all equal-cost up-links (Quantum-2 AR, on by default in a DGX
    // SuperPOD's subnet manager); StaticEcmp: one hashed path per flow (topology.hpp FabricRouting).
    FabricRouting routing = FabricRouting::Adaptive;
    // NVLink line rate per GPU per direction (bytes/s) in place of the node type's: a what-if GPU's scale-up
    // link (models/hardware/system.hpp passes its GPU's figure). nullopt: the node type's own rate.
    std::optional<double> nvlink_bandwidth = std::nullopt;
    // Switch radix: ports per switch, each at the line rate of one plane (below). 64: Quantum-2 QM9700, 64 x NDR
    // 400G (SPOD_H100); 144: Quantum-X800 Q3400, 144 x XDR 800G (NVIDIA Quantum-X800 announcement, GTC 2024:
    // "144 ports of 800Gb/s"); 128: Spectrum-4 SN5600, 64 x 800GbE split as 128 x 400GbE (SN5600 datasheet). Two
    // tiers of radix k hold k^2/2 NICs, three tiers k^3/4, four k^4/8 (superpod_fabric.cpp); leaves put k/2 ports
    // down.
    int switch_ports = 64;
    // Switch tiers of the fat tree, 2 to 4 (kMinFabricTiers..kMaxFabricTiers); 0: the fewest of two and three that
    // hold the job, as the SuperPOD designs build it. A fourth tier is built only when asked for.
    int tiers = 0;
    // Planes per NIC: the NIC's line rate split over this many parallel, identical fat trees, one port per plane
    // (a ConnectX-8 800G as 2 x 400G on two planes). Every connection is striped evenly over the planes (NCCL
    // spreads its channels over a NIC's ports), so the planes are one equivalence class: simulated as one tree
    // whose links carry the planes together (the NIC's rate), its shape that of one plane at the radix above.
    // Planes multiply the switches (energy, switch failures), not the tiers; per-plane traffic is 1/planes.
    int planes = 1;
    // Spine (second-tier) downlink : uplink of a three-tier fabric, as `oversubscription` is the leaves': fewer
    // spine-core cables (Llama 3's 24k-GPU clusters: full bisection inside a 3,072-GPU pod, 1:7 between pods,
    // arXiv 2407.21783 section 3.3.1). Two-tier fabrics have no core: it changes nothing there.
    double spine_oversubscription = 1.0;
    // Super-spine (third-tier) downlink : uplink of a four-tier fabric, likewise; fewer tiers: it changes nothing.
    double superspine_oversubscription = 1.0;
    // Rail-optimised leaves (the DGX SuperPOD's): NIC k of every node of a scalable unit on leaf k, so same-rail
    // traffic between nodes crosses one leaf. False: a node's NICs share a leaf (each leaf takes the next K/2 NICs
    // in node order, as top-of-rack switches; Meta's RoCE clusters put two 8-GPU servers under one ToR, arXiv
    // 2407.21783 section 3.3.1), so GPU i of one node and GPU j of another meet at one leaf when their nodes share
    // it. superpod_fabric.cpp.
    bool rail_optimized = true;
    // The switches are InfiniBand (SHARP can reduce in them); false for an Ethernet fabric (Spectrum-X), where
    // SHARP is refused. Ethernet links run at Spectrum-X's effective share of their line rate under load
    // (models/data/nccl.yaml link_efficiency.ethernet, 95 %, where InfiniBand's NCCL ceiling is 96 %); with static
    // ECMP their flow collisions are simulated as on InfiniBand. No Spectrum-4 hop latency is published: the hop
    // latency is InfiniBand's estimate (presets.cpp).
    bool infiniband = true;
};

// A generation, "hdr" / "hdr200" / "ndr" / "ndr400" / "xdr" / "xdr800", or a bandwidth parsed by
// units::parse_bandwidth ("200Gb/s", "25GB/s") within [kMinBytesPerSecond, kMaxBytesPerSecond] (what the CLI
// and YAML accept); InputError (without location: the caller names the flag or key) otherwise.
NicSpeed parse_nic_speed(std::string_view text);

struct PresetInfo {
    std::string name;
    int gpus_per_node;        // per DGX, or per GB200 compute tray
    int gpus_per_nvlink_domain;
    double nvlink_bandwidth;  // per GPU per direction, bytes/s (the node's NVLink generation)
    FabricOptions fabric = {};   // the scale-out fabric the system is built with (NIC, radix, planes, ...)
    std::string fabric_source = "";   // where that fabric's figures come from ("" for the DGX SuperPOD default)
};
const std::vector<PresetInfo>& preset_systems();

// Largest GPU count any preset accepts: 262,144 (a quarter of a three-tier fat tree of 128-port switches); each
// system's own limit is its fabric's (max_cluster_gpus): 65,536 for three tiers of 64-port switches, 262,144 (the
// cap) for four.
inline constexpr int kMaxPresetGpus = 262'144;

// A GPU count as a user asked for it (any whole number up to kMaxRequestableGpus, sim/resource_guard.hpp):
// refused by the resource guard, with its estimate, when it is absurd (10^8 GPUs), then when it is above
// kMaxPresetGpus. InputError naming `field` (the GPU count, or a bound of a range of them).
int checked_gpu_request(std::int64_t gpus, Field field = Field::gpus);

// What a fabric has beyond the DGX SuperPOD of 64-port InfiniBand switches, for headers: ", Ethernet, 128-port
// switches, 4 tiers, 2 planes, spines 7:1 oversubscribed, super-spines 7:1 oversubscribed, leaves not
// rail-optimised"; "" for that fabric (NIC, leaf oversubscription and routing are
// described by their callers, as before).
std::string fabric_shape_note(const FabricOptions& options);
// The NIC as headers name it: the InfiniBand generation ("NDR 400G", NicSpeed::description), or on Ethernet the
// rate ("400GbE").
std::string nic_description(const FabricOptions& options);

// Switch equivalents a job of `gpus` GPUs occupies on this fabric (superpod_switch_equivalents at its radix),
// times its planes: each plane is a fat tree of its own switches. What energy and switch failures scale with.
double fabric_switch_equivalents(int gpus, int gpus_per_node, const FabricOptions& options);

// The fabric a preset is built with (PresetInfo::fabric); InputError for an unknown system. What a command's
// fabric options start from.
FabricOptions preset_fabric(std::string_view system);

// Builds and finalizes a preset. InputError for an unknown system, a GPU count that does not fit (not
// positive, not a whole number of nodes unless it is one partial node, above the cap), or bad options.
Topology build_preset(std::string_view system, int gpus, const FabricOptions& options);
// On the preset's own fabric (preset_fabric).
Topology build_preset(std::string_view system, int gpus);
// The same checks as build_preset, without building anything (for validating input before a run).
void validate_preset(std::string_view system, int gpus, const FabricOptions& options);
void validate_preset(std::string_view system, int gpus);

// "8 GPUs fit in one dgx-h100 NVLink domain (up to 8 GPUs)", the phrase every refusal of a scale-out option for a
// job within one NVLink domain starts with (`name`: the system or node type).
std::string within_one_domain(std::string_view name, int gpus_per_domain, int gpus);

// A job of `gpus` within one NVLink domain of `gpus_per_domain` crosses no NIC and no switch, so the scale-out
// options it is asked to run with (`asked`) cannot apply unless they are what it runs with anyway (`runs_with`: the
// system's own NIC and routing): InputError naming oversubscription (other than 1), the NIC or the routing. No
// check for a job that spans NVLink domains.
void check_fabric_applies(std::string_view name, int gpus_per_domain, int gpus, const FabricOptions& asked,
                          const FabricOptions& runs_with);

// The same cluster for any node shape: `node.gpus_per_nvlink_domain` GPUs per NVSwitch domain at
// `node.nvlink_bandwidth` (or options.nvlink_bandwidth), one NIC per GPU, and beyond one domain the DGX SuperPOD
// fabric. build_preset is this with a preset's shape; models/hardware/system.hpp also builds it for GPUs that have
// no preset (a generic node of the GPU's own figures). `node.name` names the topology.
Topology build_cluster(const PresetInfo& node, int gpus, const FabricOptions& options = {});
void validate_cluster(const PresetInfo& node, int gpus, const FabricOptions& options = {});

// "three tiers": the most tiers `options` allows (its tiers, or three when they are not set), for messages. Tiers
// outside 2-4 are check_cluster's to refuse; this is not called on them.
std::string fabric_tiers_phrase(const FabricOptions& options);

// The most GPUs a cluster of this node shape holds on a fabric of `options`' radix and tiers (three when the tiers
// are not set), capped at kMaxPresetGpus.
int max_cluster_gpus(const PresetInfo& node, const FabricOptions& options);

}  // namespace ttsim
