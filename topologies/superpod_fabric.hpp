// The scale-out InfiniBand fabric of an NVIDIA DGX SuperPOD: a rail-optimised fat tree of 64-port
// switches (Quantum-2 QM9700: 64 x NDR 400G, params.md section 2 "QM9700").
// The wiring rules and how they reproduce the published switch counts are in superpod_fabric.cpp.
#pragma once

#include "sim/time.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

struct SuperPodFabricSpec {
    double port_bandwidth_bytes_per_s = 50e9;  // one IB port, per direction (NDR 400 Gb/s = 50 GB/s)
    double oversubscription = 1.0;             // leaf downlink : uplink capacity; 1 = non-blocking
    double spine_oversubscription = 1.0;       // spine downlink : uplink (three tiers; fewer spine-core cables)
    LinkKind link_kind = LinkKind::InfiniBand; // Ethernet: no SHARP in its switches
    SimTime switch_latency;                    // forwarding latency of one switch traversal
    SimTime cable_latency;                     // propagation over one cable
    int nodes_per_unit = 32;                   // scalable unit (SU) = leaf downlinks per rail
    int switch_ports = 64;                     // switch radix
    // Adaptive (the SuperPOD default: Quantum-2 switches run AR, SPOD_H100 network-fabrics) or static ECMP.
    // The spray groups are declared either way (they describe the fabric); routing decides whether they act.
    FabricRouting routing = FabricRouting::Adaptive;
};

// How many switches of each tier a fabric for `nodes` nodes of `rails` NICs gets, and how they group.
struct SuperPodShape {
    int units = 0;             // scalable units (the last one may be partial)
    int rails = 0;             // NICs per node
    int tiers = 0;             // 0 (no fabric), 2 or 3
    int leaves = 0;            // units * rails: one leaf per rail per unit
    int spines = 0;
    int cores = 0;
    int pods = 0;              // 3 tiers: groups of up to 32 units sharing per-rail spine groups
    int spines_per_group = 0;  // 2 tiers: all spines form one group; 3 tiers: spines per (pod, rail)
    int cores_per_plane = 0;   // 3 tiers: cores reached by spine number g of every group
    int cables_leaf_to_spine = 0;  // parallel cables in each leaf-spine trunk (before oversubscription)
    int cables_spine_to_core = 0;
};

// Throws InternalError if the shape needs more than three tiers (callers cap the GPU count first).
SuperPodShape superpod_shape(int nodes, int rails, int nodes_per_unit = 32, int switch_ports = 64);

// Switch equivalents a job of `gpus` GPUs on nodes of `gpus_per_node` (one rail per GPU) occupies in that fat
// tree: each NIC takes one leaf port down and, per tier above, one port up and one down, so 2 tiers - 1 switch
// ports per GPU, over `switch_ports` ports a switch (0 inside one node: no scale-out fabric). What a job's energy
// is charged for and what its switch failures scale with.
double superpod_switch_equivalents(int gpus, int gpus_per_node, int nodes_per_unit = 32, int switch_ports = 64);

// What build_superpod_fabric adds for `nics` NICs on a fabric of this shape (for Topology::reserve).
struct SuperPodSize {
    std::size_t switches = 0;
    std::size_t directed_links = 0;
};
SuperPodSize superpod_size(const SuperPodShape& shape, int nics);

// Largest number of nodes a three-tier fabric of this radix holds: 2 * (ports/2)^3 NIC ports in total.
int superpod_max_nodes(int rails, int nodes_per_unit = 32, int switch_ports = 64);

// Adds the leaf/spine/core switches and links for all GPUs already in `topology` (their NICs, by node and
// rail), declares its spray groups and sets the topology's routing to spec.routing. Must run before
// topology.finalize(). Returns its non-blocking shape (an oversubscribed fabric builds fewer leaf uplink cables,
// reaching fewer spines where it has fewer cables than spines: superpod_fabric.cpp).
SuperPodShape build_superpod_fabric(Topology& topology, const SuperPodFabricSpec& spec);

}  // namespace ttsim
