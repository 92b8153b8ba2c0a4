// Collectives over any group of GPUs, simulated on the flow network over the real topology.
//
//   Topology topo = build_preset("dgx-h100", 1024);
//   CollectiveSimulator sim(topo, {.sharp_enabled = true});
//   CollectiveResult r = sim.run({.op = CollectiveOp::AllReduce, .bytes = 1ull << 30});
//
// duration = NCCL latency term (nccl_params.hpp) + simulated bandwidth time (plan.hpp, phase_runner.hpp),
// scaled by the protocol's bandwidth factor. The simulated part is cached per (op, algorithm, group, bytes),
// so a training model can ask for the same collective thousands of times at the cost of a map lookup. Below
// it, the routed and classified plan is cached per (op, algorithm, group): flow sizes are linear in S, so a
// new size re-runs only the classes' small simulation (phase_runner.hpp simulate_classified), not the
// routing of every rank (a 131,072-GPU tree is ~10^7 link crossings to route and classify).
//
// One-island floor. An all-reduce over a group spanning several islands (NVLink domains) never takes less
// time than the same all-reduce, same S, restricted to the members of its largest island (auto algorithm
// and protocol), because every multi-island algorithm NCCL has (and we model) does that island's
// intra-island work and more: SHARP (CollNetDirect) and hierarchical run a complete intra-island
// reduce-scatter + all-gather, i.e. an intra-island all-reduce, moving the same 2 (q - 1) S / q per GPU over
// NVLink as the one-island ring; the tree runs the one-island chain with network hops added; the ring runs
// the island as a segment of every ring and moves a 1/q share of each GPU's traffic through its NIC
// (48 GB/s) instead of NVLink (370.8 GB/s). (Not a law of physics: an algorithm could offload intra-node
// traffic onto the NICs; NCCL's do not.) The simulated bandwidth part respects this by construction; NCCL's
// latency table does not: CollNetDirect's 2 (3.7 + 0.4 (q - 1)) + 31 = 44 us for q = 8 (NCCL_2223) is less
// than any one-island algorithm pays for the same NVLink traffic (ring Simple 56 us; ring LL128 40.6 us but
// x0.92 bandwidth), so a 2-node SHARP all-reduce of 8-32 MiB came out faster than the 1-node all-reduce it
// contains, and data-parallel training exposed less communication on 16 GPUs than on 8.
// The floor applies to every algorithm's estimate, before the `auto` choice, so auto over n islands is never
// faster than auto over one; candidates lifted to the same floor are ranked by their own estimates, as
// NCCL's tuner would. When it binds, the excess counts as bandwidth time (the intra-island phases, not the
// network, set the pace) and is reported as CollectiveResult::floor_excess. Islands of one topology are
// alike (presets and YAML topologies give every node the same NVLink), so the largest stands for all.
// Not applied to reduce-scatter and all-gather: S is the total size, so a GPU's share shrinks as the group
// grows and the one-island operation is not a part of the multi-island one.
//
// Not thread-safe (the router and the cache are mutable): use one simulator per thread. Identical inputs
// give identical results, bit for bit (ordered containers only, no clocks, no globals).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/collectives/group_layout.hpp"
#include "models/collectives/nccl_params.hpp"
#include "models/collectives/phase_runner.hpp"
#include "topologies/routing.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

struct CollectiveOptions {
    // SHARP turned on (NVIDIA's multi-node MLPerf v4.1 runs do: MLP41). It applies only where the group's NICs
    // attach to InfiniBand switches (tuner.hpp inapplicable_reason), whatever this says.
    bool sharp_enabled = false;
    LinkEfficiency efficiency{};  // NCCL-achievable fraction of each link kind's line rate
    double nvls_efficiency = 0.0;  // 0 = calibrated default (nccl_params.hpp nvls_efficiency)
    double net_overhead_us = 1.0;  // per inter-node ring step: 1 us Intel hosts (DGX H100), 2 us AMD (NCCL_2223)
    // Channels NCCL runs, for its per-channel protocol caps (LL128, tree). 16 on a DGX H100 (2 per NIC);
    // estimate from NCCL_2223 search.cc (per-channel NVLink speeds of ~20-24 GB/s over 370 GB/s).
    int nccl_channels = 16;
    bool check_link_capacities = true;  // FlowNetwork::check_link_capacities after every phase's sharing
    // Every flow simulated on its own instead of one per equivalence class (phase_runner.hpp): the reference
    // the classes are tested against; same results, far slower at scale.
    bool per_flow = false;
    std::size_t max_cache_entries = 1 << 14;  // the cache is cleared when it grows past this
};

class CollectiveSimulator {
public:
    // The topology must outlive the simulator. InputError for invalid options.
    CollectiveSimulator(const Topology& topology, CollectiveOptions options = {});

    // InputError: bad group, an algorithm or protocol that does not apply (the message says why).
    CollectiveResult run(const CollectiveRequest& request);

    const CollectiveOptions& options() const { return options_; }
    std::size_t cache_size() const { return cache_.size(); }
    std::uint64_t cache_hits() const { return cache_hits_; }
    std::uint64_t simulations() const { return simulations_; }

private:
    // (op, algorithm, bytes, broadcast root or -1, group ranks ascending)
    using CacheKey = std::tuple<CollectiveOp, CollectiveAlgorithm, std::uint64_t, int, std::vector<int>>;
    // (op, algorithm, broadcast root or -1, group ranks ascending): a plan whatever its size
    using ShapeKey = std::tuple<CollectiveOp, CollectiveAlgorithm, int, std::vector<int>>;
    // The plan built for S = 1 byte, sprayed and classified (its flow sizes are shares of S).
    const ClassifiedPlan& shape(const GroupLayout& layout, CollectiveOp op, CollectiveAlgorithm algorithm);
    struct CacheEntry {
        SimulatedPlan plan;
        double fill_fraction = 0.0;  // CollectivePlan::pipeline_fill_fraction
    };
    CollectiveResult evaluate(const GroupLayout& layout, const CollectiveRequest& request,
                              CollectiveAlgorithm algorithm, SimTime one_island_floor);
    // Duration of the request's all-reduce on the largest island of `layout` alone (header comment); zero
    // when the floor does not apply.
    SimTime one_island_floor(const GroupLayout& layout, const CollectiveRequest& request);
    const CacheEntry& simulated(const GroupLayout& layout, CollectiveOp op, CollectiveAlgorithm algorithm,
                                std::uint64_t bytes, bool& was_cached);

    const Topology& topology_;
    CollectiveOptions options_;
    GpuGeneration generation_;
    NcclParams params_;
    double sharp_tree_climb_us_ = 0.0;  // sharp_latency.hpp; a property of the topology, computed once
    FlowResources resources_;  // links (and spray groups under adaptive routing) with their capacities
    Router router_;
    std::map<CacheKey, CacheEntry> cache_;
    std::map<ShapeKey, ClassifiedPlan> shapes_;
    std::uint64_t cache_hits_ = 0;
    std::uint64_t simulations_ = 0;
};

}  // namespace ttsim
