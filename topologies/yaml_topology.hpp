// Topologies written in YAML. Two forms.
//
// 1. A preset with options:
//      preset: {system: dgx-h100, gpus: 256, nic: ndr, oversubscription: 2.0, routing: static}
//    routing: adaptive (default: every flow sprayed over all equal-cost up-links) or static (hashed ECMP).
//    nic: hdr, ndr (default), xdr or a bandwidth such as 200Gb/s or 25GB/s (parse_nic_speed, presets.hpp).
//
// 2. An explicit description: nodes of GPUs (each GPU gets its own NIC, and optionally a port on an NVLink
//    switch domain), groups of network switches, and groups of links between them:
//
//      name: two-dgx-h100
//      gpus: 16                      # optional; must equal nodes.count x nodes.gpus_per_node
//      nodes:
//        count: 2
//        gpus_per_node: 8
//        nvlink:                     # optional; without it, GPUs of one node talk through their NICs
//          bandwidth: 450GB/s        # per GPU, per direction
//          latency: 250ns            # each GPU <-> NVLink switch crossing
//          switch_latency: 500ns     # optional (0): added to links entering the NVLink switch
//          gpus_per_domain: 8        # optional (gpus_per_node); a whole number of nodes, e.g. 72 for NVL72
//        nic: {bandwidth: 63GB/s, latency: 500ns}   # GPU <-> its own NIC (PCIe), per direction
//      switches:                     # groups; switch i of group "leaf" is leaf[i]
//        - {name: leaf, count: 8, tier: leaf, latency: 300ns}   # tier: leaf|spine|core|switch
//        - {name: spine, count: 4, tier: spine, latency: 300ns} # latency: forwarding, added on entry
//      links:                        # every link is full duplex; bandwidth is per direction
//        - {from: nic, to: leaf, pattern: rail, bandwidth: 400Gb/s, latency: 50ns}
//        - {from: leaf, to: spine, bandwidth: 400Gb/s, cables: 8, latency: 50ns}
//
//    Endpoints: "nic" (every GPU's NIC, indexed by global rank) or a switch group, optionally narrowed to
//    one member "leaf[3]" or a range "nic[0-7]". Patterns: all-to-all (default: every `from` to every `to`),
//    rail (NIC k of each node to switch k of its unit: the `to` group is split into units of
//    gpus_per_node switches and the nodes evenly into as many contiguous units), block (contiguous,
//    equal-size blocks of the larger side map onto the members of the smaller side; one-to-one when the
//    sizes are equal). `cables` bundles parallel cables into one trunk of cables x bandwidth.
//    Explicit topologies route by static ECMP: which links adaptive routing would load evenly depends on
//    the wiring, and declaring spray groups from a description is not supported (topology.hpp SprayGroup).
//
// Checks at load, each failing with file:line and key: units and physical ranges of every value (each link's or
// port's bandwidth 1Gb/s to 100Tb/s, each latency 0s to 1s: sim/physical_range.hpp), unknown keys, endpoint names and indices, the GPU count, and connectivity: every GPU
// must reach every other one under the routing rules (topologies/routing.hpp): in its NVLink domain, or
// from its own NIC through network switches to the other GPU's NIC.
#pragma once

#include <string>

#include "sim/config.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

// Builds and finalizes the topology described by `node` (the file's root, or a `topology:` section).
Topology load_topology(const ConfigNode& node);
// A `routing:` value (kFabricRoutingNames), wherever a preset fabric is described (YAML topology presets,
// scenarios' `cluster:`, training scenarios); anything else fails at the node (file:line:col, its key).
FabricRouting read_fabric_routing(const ConfigNode& node);
Topology load_topology_file(const std::string& path);
// The path a scenario's `topology_file:` value names: as written when it exists, else relative to the scenario
// file's folder; fails at the node when neither exists (every scenario kind that takes a topology file).
std::string topology_file_path(const ConfigNode& node);

}  // namespace ttsim
