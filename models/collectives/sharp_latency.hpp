// How much latency the switch tiers of a fat tree add to a SHARP (NCCL CollNet Direct) all-reduce.
//
// NCCL's tuner has one CollNetDirect latency for every fabric (hwLat NET Simple 31 us, NCCL_2223 tuning.cc,
// params.md 3.2): it never sees how many switch tiers the aggregation climbs. params.md has no SHARP per-tier
// figure either, so ttsim assumes (documented assumption, not a measurement):
//  - NCCL's constant is the cost of the smallest SHARP tree, rooted at the leaf switch the NICs plug into;
//  - every tier above the leaf adds one traversal of its links on the way up (partial results travel toward
//    the root) and one on the way down (the result travels back): for each such tier, the latency of a link
//    entering it from below plus that of a link leaving it downwards, as the topology gives them (presets:
//    300 ns switch forwarding + 50 ns cable per link, from params.md section 2 "IB switch hop latency",
//    ~330 ns / <400 ns for Quantum-2), i.e. 0.7 us per tier;
//  - the trees are rooted at the fabric's top tier whatever the group's span: sharp_am builds its trees from
//    the fabric's "root switches" (NVIDIA SHARP documentation, "Operating NVIDIA SHARP in Dynamic Trees
//    Allocation Mode", docs.nvidia.com/networking/display/SHARPv320), the top tier of a fat tree.
// A SuperPOD fabric of 2 tiers (leaf/spine, up to 2,048 GPUs) thus adds 0.7 us, one of 3 tiers (leaf/spine/
// core) 1.4 us, one of 4 tiers 2.1 us. The in-switch aggregation work itself has no published figure and is not added.
#pragma once

#include "topologies/topology.hpp"

namespace ttsim {

// Microseconds; 0 for a topology without tiered switches (no leaf above which to climb: no fabric, or the
// untiered switches of a YAML topology, whose tier structure is unknown).
double sharp_tree_climb_us(const Topology& topology);

}  // namespace ttsim
