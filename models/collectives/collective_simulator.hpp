// Collectives over any group of GPUs, simulated on the flow network over the real topology.
//
//   Topology topo = build_preset("dgx-h100", 1024);
//   CollectiveSimulator sim(topo, {.sharp_enabled = true});
//   CollectiveResult r = sim.run({.op = CollectiveOp::AllReduce, .bytes = 1ull << 30});
//
// duration = NCCL latency term (nccl_params.hpp) + simulated bandwidth time (plan.hpp, phase_runner.hpp),
// scaled by the protocol's bandwidth factor. The simulated part is cached per (op, algorithm, group, bytes),
// so a training model can ask for the same collective thousands of times at the cost of a map lookup.
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
    bool sharp_enabled = false;   // the IB fabric runs SHARP (NVIDIA's multi-node MLPerf v4.1 runs do: MLP41)
    LinkEfficiency efficiency{};  // NCCL-achievable fraction of each link kind's line rate
    double nvls_efficiency = 0.0;  // 0 = calibrated default (nccl_params.hpp nvls_efficiency)
    double net_overhead_us = 1.0;  // per inter-node ring step: 1 us Intel hosts (DGX H100), 2 us AMD (NCCL_2223)
    // Channels NCCL runs, for its per-channel protocol caps (LL128, tree). 16 on a DGX H100 (2 per NIC);
    // estimate from NCCL_2223 search.cc (per-channel NVLink speeds of ~20-24 GB/s over 370 GB/s).
    int nccl_channels = 16;
    bool check_link_capacities = true;  // FlowNetwork::check_link_capacities after every phase's sharing
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
    struct CacheEntry {
        SimulatedPlan plan;
        double fill_fraction = 0.0;  // CollectivePlan::pipeline_fill_fraction
    };
    CollectiveResult evaluate(const GroupLayout& layout, const CollectiveRequest& request,
                              CollectiveAlgorithm algorithm);
    const CacheEntry& simulated(const GroupLayout& layout, CollectiveOp op, CollectiveAlgorithm algorithm,
                                std::uint64_t bytes, bool& was_cached);

    const Topology& topology_;
    CollectiveOptions options_;
    GpuGeneration generation_;
    NcclParams params_;
    std::vector<double> capacity_;  // per topology link, bytes/s
    Router router_;
    std::map<CacheKey, CacheEntry> cache_;
    std::uint64_t cache_hits_ = 0;
    std::uint64_t simulations_ = 0;
};

}  // namespace ttsim
