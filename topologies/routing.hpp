// Routes between GPUs as lists of directed link ids, with deterministic ECMP.
//
// Rules (those of NCCL on a rail-optimised fabric without PXN):
//  - Same NVLink domain: GPU -> NVLink switch -> GPU (2 links), never the network.
//  - Otherwise: GPU -> its own NIC (PCIe) -> network switches only -> the destination GPU's own NIC -> GPU.
//    GPUs and NICs never forward traffic, so a path like GPU->NVSwitch->GPU->NIC is impossible by
//    construction, and inter-node traffic always leaves and enters through the GPUs' own rails.
//  - Among the switch paths, only shortest ones (fewest hops) are used. At every hop where several next
//    switches are equally short, one is chosen by a hash of (source rank, destination rank, flow key, hop),
//    so different flows between the same pair, or different pairs, spread over the spines/cores, and the
//    same inputs always give the same path on every machine.
//  - That is static ECMP. Under adaptive routing (Topology::routing()) the path is a representative of the
//    flow's shortest paths: the collective layer replaces each hop that lies in a spray group by the group
//    (models/collectives/phase_runner.hpp spray_over_groups), so which member the hash named does not matter.
//
// Cost. We do not BFS per pair. Distances are needed only TO a destination, and a destination NIC is reached
// through the switch(es) it attaches to, so the Router keeps one distance map per destination attachment
// (the destination NIC's leaf switch on every preset), computed lazily by one Boost.Graph multi-source BFS
// over the switch-only graph (S vertices: 1,280 for 16,384 GPUs) and cached. A route is then a greedy walk
// down the distance gradient, O(path length x switch degree).
//
// Twins. Two switches u != v with the same set of neighbour switches (the leaves of one rail in one
// scalable unit or pod: they all reach the same spines) are at the same distance from every other switch x:
// a shortest path x -> v ends with a neighbour w of v, which is a neighbour of u too, so d(x, u) <= d(x, v),
// and symmetrically. (They are not neighbours of each other: v in N(v) would be a self-loop.) So v's map is
// u's with d(v) = 0 and d(u) = 2, read from u's map instead of a BFS of its own: one BFS and one map per
// twin class (64 for the 2,048 leaves of 131,072 GPUs on 128-port switches) instead of one per leaf, the
// same distances bit for bit.
//
// Thread safety: route() fills the cache, so a Router is not thread-safe; use one Router per thread (each
// only reads the shared, immutable Topology). The Topology must outlive its Routers and must not be moved
// while they exist (they refer to its switch index).
#pragma once

#include <cstdint>
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "topologies/topology.hpp"

namespace ttsim {

class Router {
public:
    explicit Router(const Topology& topology);

    // Directed link ids from GPU src_rank to GPU dst_rank; empty when src == dst. Bad ranks: InternalError.
    std::vector<LinkId> route(int src_rank, int dst_rank, std::uint64_t flow_key);
    // Same, appending to `path` after clearing it (no allocation once `path` has grown).
    void route_into(int src_rank, int dst_rank, std::uint64_t flow_key, std::vector<LinkId>& path);

    std::size_t cached_distance_maps() const { return distance_maps_.size(); }
    const Topology& topology() const { return topology_; }

private:
    static constexpr std::uint16_t kUnreachable = 0xFFFF;
    // Hop distances to the switches a destination NIC attaches to: a BFS map, or a twin's map read with the
    // two entries that differ (header comment), so twins share one map instead of holding copies.
    struct Distances {
        const std::uint16_t* map = nullptr;
        std::uint32_t target = UINT32_MAX;  // read as 0
        std::uint32_t twin = UINT32_MAX;    // the map's own switch, read as 2
        std::uint16_t operator[](std::uint32_t s) const { return s == target ? 0 : (s == twin ? 2 : map[s]); }
    };
    Distances distances_to_nic_of(int dst_rank);
    std::vector<std::uint16_t> bfs_distances(const std::vector<std::size_t>& sources);
    struct Slot {
        std::int32_t map = -1;  // index into distance_maps_; -1 until computed
        std::uint32_t target = UINT32_MAX, twin = UINT32_MAX;
    };
    // twin_leader_[s]: the lowest-indexed switch with s's neighbour set (s itself when none is lower, or
    // when s has no neighbours). Built on the first BFS.
    void find_twins();

    const Topology& topology_;
    const SwitchFabric& fabric_;
    std::vector<std::vector<std::uint16_t>> distance_maps_;
    // Cache slots: by the single switch a NIC attaches to (the usual case), or by rank for a NIC attached to
    // several switches (possible in YAML topologies).
    std::vector<Slot> slot_by_switch_;
    std::vector<std::uint32_t> twin_leader_;
    std::unordered_map<int, Slot> slot_by_multihomed_rank_;
    // Scratch, reused between calls: BFS colours and the equal-cost candidates of one hop.
    std::vector<boost::default_color_type> bfs_colors_;
    std::vector<std::uint32_t> candidates_;
};

}  // namespace ttsim
