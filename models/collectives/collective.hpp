// Vocabulary of the collective-communication model: operations, algorithms, protocols, the request a caller
// makes and the result it gets back. The simulator itself is in collective_simulator.hpp.
//
// Conventions (those of nccl-tests, NCCLT_PERF doc/PERFORMANCE.md, params.md section 3.1):
//  - `bytes` is S, the total size: the all-reduce / broadcast buffer, the full output of an all-gather, the
//    full input of a reduce-scatter, the full send buffer of one rank in an all-to-all.
//  - algbw = S / t; busbw = algbw x factor, factor = 2(n-1)/n (all-reduce), (n-1)/n (reduce-scatter,
//    all-gather, all-to-all), 1 (broadcast).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace ttsim {

enum class CollectiveOp : std::uint8_t { AllReduce, ReduceScatter, AllGather, Broadcast, AllToAll };

enum class CollectiveAlgorithm : std::uint8_t {
    Auto,          // the tuner picks (tuner.hpp)
    Ring,          // NCCL ring, one ring per rail (channel), rail-aligned
    Tree,          // NCCL double binary tree across nodes, chain inside a node (all-reduce only)
    Hierarchical,  // intra-node reduce-scatter, inter-node all-reduce per rail, intra-node all-gather
    Nvls,          // reduction inside the NVSwitch (NVLink SHARP), one NVLink domain only
    Sharp,         // reduction inside the InfiniBand switches (NCCL CollNet), multi-node all-reduce only
    Direct,        // point-to-point to every peer (NCCL's all-to-all)
};

enum class NcclProtocol : std::uint8_t { Auto, LL, LL128, Simple };

// Parsing accepts the canonical names below plus common spellings ("all-reduce", "all_reduce"); anything
// else is an InputError listing the valid names.
std::string_view to_string(CollectiveOp op);              // "allreduce", "reducescatter", ...
std::string_view to_string(CollectiveAlgorithm algorithm);  // "auto", "ring", "tree", ...
std::string_view to_string(NcclProtocol protocol);        // "auto", "LL", "LL128", "Simple"
CollectiveOp parse_collective_op(std::string_view text);
CollectiveAlgorithm parse_collective_algorithm(std::string_view text);
NcclProtocol parse_nccl_protocol(std::string_view text);

// nccl-tests bus-bandwidth factor for n ranks (0 for n < 2).
double bus_bandwidth_factor(CollectiveOp op, int n);

struct CollectiveRequest {
    CollectiveOp op = CollectiveOp::AllReduce;
    std::uint64_t bytes = 0;       // S, see the conventions above
    std::vector<int> group;        // global GPU ranks, distinct; empty = every GPU. Broadcast root = group[0]
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
    NcclProtocol protocol = NcclProtocol::Auto;  // Auto = NCCL-like choice by predicted time
};

// Time per algorithm considered by the tuner (for reports and for the `auto` decision's audit trail).
struct AlgorithmEstimate {
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
    NcclProtocol protocol = NcclProtocol::Simple;
    SimTime duration;
};

struct CollectiveResult {
    SimTime duration;                  // whole collective, latency + bandwidth terms
    SimTime latency;                   // NCCL latency-model part (params.md 3.2)
    SimTime bandwidth_time;            // simulated bandwidth part, after the protocol's efficiency
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;  // the one used (never Auto)
    NcclProtocol protocol = NcclProtocol::Simple;               // the one used (never Auto)
    int ranks = 0;                     // n
    int islands = 0;                   // NVLink domains (nodes) spanned: NCCL's nNodes
    double algbw_bytes_per_s = 0.0;    // S / duration
    double busbw_bytes_per_s = 0.0;    // algbw x bus_bandwidth_factor
    SimTime lower_bound;               // physical lower bound (lower_bound.hpp); duration >= lower_bound
    // All-reduce over several islands: the same all-reduce (same S, auto) on the group's largest island alone,
    // which bounds it from below (collective_simulator.hpp); zero otherwise. duration >= one_island_floor.
    SimTime one_island_floor;
    SimTime floor_excess;  // what the floor added to the estimate (included in bandwidth_time); 0 when it did not bind
    double max_link_utilisation = 0.0;   // busiest link: carried bytes / (NCCL-achievable capacity x window)
    std::string busiest_link;            // its name (a spray group's, e.g. "su0.rail3.leaf->spines", under adaptive routing)
    double mean_link_utilisation = 0.0;  // over the links the collective used
    std::size_t links_used = 0;          // links, or spray groups under adaptive routing, counted once each
    // The scale-out fabric's busiest link (InfiniBand or Ethernet; "" when the group crosses none), its utilisation,
    // and the bytes the group's NICs sent into the fabric in the simulated bandwidth part. A fabric of P planes is
    // simulated as one tree of the NIC's rate (FabricOptions::planes): each plane carries 1/P of these bytes, and
    // its copy of this link is the busiest at the same utilisation.
    double max_fabric_link_utilisation = 0.0;
    std::string busiest_fabric_link;
    double nic_bytes_sent = 0.0;
    std::uint64_t flows_simulated = 0;   // flows in the simulated phases (one step of each phase)
    std::uint64_t flow_classes = 0;      // flows the network ran: one per equivalence class (phase_runner.hpp)
    std::uint64_t events = 0;            // events processed by the phase simulations
    std::uint64_t fingerprint = 0;       // Simulation::fingerprint() of the phase simulation
    bool cached = false;                 // bandwidth part came from the cache
    std::vector<AlgorithmEstimate> considered;  // filled when the algorithm was Auto
};

// One plane of a multi-plane fabric in a collective's report. The planes are identical trees with every connection
// striped evenly over them (topologies/presets.hpp FabricOptions::planes), simulated as one tree of the NIC's rate:
// each plane's NICs send 1/P of the bytes, and its copy of the fabric's busiest link ("plane1:su0.rail3.leaf->
// spines") is its busiest, at the same utilisation (1/P of the bytes over 1/P of the capacity).
struct PlaneLoad {
    int plane = 0;
    std::string busiest_link;   // "" when the collective crosses no fabric link
    double utilisation = 0.0;
    double nic_bytes_sent = 0.0;
};
// The `planes` planes of `result`'s fabric, plane 0 first.
std::vector<PlaneLoad> plane_loads(const CollectiveResult& result, int planes);

}  // namespace ttsim
