// The scale-out fabric of an NVIDIA DGX SuperPOD, generalised: a fat tree of 2 to 4 tiers of K-port switches
// (Quantum-2 QM9700: 64 x NDR 400G, params.md section 2 "QM9700"; any even radix), rail-optimised leaves or not,
// and an oversubscription ratio per tier boundary. The wiring rules and how they reproduce the published switch
// counts are in superpod_fabric.cpp.
#pragma once

#include <array>
#include <cstdint>

#include "sim/time.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

// Tiers a fat tree may have: two (leaf, spine), three (leaf, spine, core), four (leaf, spine, super-spine, core).
inline constexpr int kMinFabricTiers = 2;
inline constexpr int kMaxFabricTiers = 4;

struct SuperPodFabricSpec {
    double port_bandwidth_bytes_per_s = 50e9;  // one IB port, per direction (NDR 400 Gb/s = 50 GB/s)
    // Downlink : uplink capacity of the switches of tier t (1 leaf, 2 spine, 3 super-spine), index t - 1; 1 =
    // non-blocking. The top tier has no uplinks; a ratio for a tier at or above the top changes nothing.
    std::array<double, kMaxFabricTiers - 1> oversubscription = {1.0, 1.0, 1.0};
    LinkKind link_kind = LinkKind::InfiniBand; // Ethernet: no SHARP in its switches
    SimTime switch_latency;                    // forwarding latency of one switch traversal
    SimTime cable_latency;                     // propagation over one cable
    int nodes_per_unit = 32;                   // scalable unit (SU) = leaf downlinks per rail
    int switch_ports = 64;                     // switch radix
    int tiers = 0;                             // 2-4; 0: the fewest of 2 and 3 that hold the nodes
    // NIC k of every node on leaf k of its unit (the SuperPOD's rails), or a node's NICs on one leaf.
    bool rail_optimized = true;
    // Adaptive (the SuperPOD default: Quantum-2 switches run AR, SPOD_H100 network-fabrics) or static ECMP.
    // The spray groups are declared either way (they describe the fabric); routing decides whether they act.
    FabricRouting routing = FabricRouting::Adaptive;
};

// How many switches of each tier a non-blocking fabric for `nodes` nodes of `rails` NICs gets, and how they group.
// Arrays are indexed by tier, 1 (leaves) to `tiers`; index 0 is unused.
struct SuperPodShape {
    int units = 0;             // scalable units of nodes_per_unit nodes (the last one may be partial)
    int rails = 0;             // NICs per node
    int tiers = 0;             // 0 (no fabric), 2, 3 or 4
    bool rail_optimized = true;
    // Rail-optimised, three or more tiers: groups of up to nodes_per_unit units; the leaves of one rail in one pod
    // form a spine group. Not rail-optimised: each run of nodes_per_unit leaves forms one.
    int pods = 0;
    std::array<int, kMaxFabricTiers + 1> switches{};   // per tier
    // Blocks of tier t (below the top): the groups of tier-t switches that share the switches of tier t + 1 above
    // them. Tier 1: every leaf; tier 2: the spine groups; tier 3: the zones of a four-tier fabric.
    std::array<int, kMaxFabricTiers + 1> blocks{};
    // Tier t >= 2: the switches of tier t that each switch of tier t - 1 connects to (one "plane" of tier t), and
    // the parallel cables in each such trunk.
    std::array<int, kMaxFabricTiers + 1> per_plane{};
    std::array<int, kMaxFabricTiers + 1> cables{};
    int leaves() const { return switches[1]; }
    int spines() const { return switches[2]; }
    int cores() const { return tiers >= 3 ? switches[static_cast<std::size_t>(tiers)] : 0; }
};

// The shape for `nodes` nodes at `tiers` (0: the fewest of 2 and 3 that hold them). Throws InternalError if the
// tiers cannot hold the nodes (callers check superpod_max_nodes first).
SuperPodShape superpod_shape(int nodes, int rails, int nodes_per_unit = 32, int switch_ports = 64, int tiers = 0,
                             bool rail_optimized = true);

// Switch equivalents a job of `gpus` GPUs on nodes of `gpus_per_node` (one rail per GPU) occupies in that fat
// tree: each NIC takes one leaf port down and, per tier above, one port up and one down, so 2 tiers - 1 switch
// ports per GPU, over `switch_ports` ports a switch (0 inside one node: no scale-out fabric). What a job's energy
// is charged for and what its switch failures scale with.
double superpod_switch_equivalents(int gpus, int gpus_per_node, int nodes_per_unit = 32, int switch_ports = 64,
                                  int tiers = 0, bool rail_optimized = true);

// What build_superpod_fabric adds for `nics` NICs on a fabric of this shape (for Topology::reserve).
struct SuperPodSize {
    std::size_t switches = 0;
    std::size_t directed_links = 0;
};
SuperPodSize superpod_size(const SuperPodShape& shape, int nics);

// Largest number of nodes `tiers` tiers of this radix hold (2 (ports/2)^tiers NIC ports, in whole pods when
// rail-optimised). 0 tiers: three.
std::int64_t superpod_max_nodes(int rails, int nodes_per_unit = 32, int switch_ports = 64, int tiers = 0,
                                bool rail_optimized = true);

// Adds the switches and links for all GPUs already in `topology` (their NICs, by node and rail), declares its
// spray groups and sets the topology's routing to spec.routing. Must run before topology.finalize(). Returns its
// non-blocking shape (an oversubscribed fabric builds fewer uplink cables, reaching fewer switches above where it
// has fewer cables than switches: superpod_fabric.cpp).
SuperPodShape build_superpod_fabric(Topology& topology, const SuperPodFabricSpec& spec);

}  // namespace ttsim
