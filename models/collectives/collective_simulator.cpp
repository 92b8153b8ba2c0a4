// The collective simulator: request -> layout -> plan -> flow simulation (cached) -> NCCL latency and
// protocol -> result (collective_simulator.hpp).
#include "models/collectives/collective_simulator.hpp"

#include <algorithm>
#include <cmath>

#include "models/collectives/lower_bound.hpp"
#include "models/collectives/plan.hpp"
#include "models/collectives/sharp_latency.hpp"
#include "models/collectives/tuner.hpp"
#include "sim/errors.hpp"

namespace ttsim {
namespace {

void check_fraction(double value, const char* key, bool zero_means_default) {
    if (zero_means_default && value == 0.0) return;
    if (!(std::isfinite(value) && value > 0.0 && value <= 1.0))
        throw InputError("must be in (0, 1], got " + std::to_string(value), {}, key);
}

}  // namespace

CollectiveSimulator::CollectiveSimulator(const Topology& topology, CollectiveOptions options)
    : topology_(topology), options_(options), generation_(gpu_generation_of(topology)),
      params_(nccl_params(generation_)), sharp_tree_climb_us_(sharp_tree_climb_us(topology)), router_(topology) {
    check_fraction(options_.efficiency.nvlink, "nvlink_efficiency", true);
    check_fraction(options_.efficiency.infiniband, "infiniband_efficiency", false);
    check_fraction(options_.efficiency.pcie, "pcie_efficiency", false);
    check_fraction(options_.efficiency.ethernet, "ethernet_efficiency", false);
    check_fraction(options_.nvls_efficiency, "nvls_efficiency", true);
    if (!(std::isfinite(options_.net_overhead_us) && options_.net_overhead_us >= 0.0))
        throw InputError("must be >= 0 microseconds", {}, "net_overhead_us");
    if (options_.nccl_channels < 1) throw InputError("must be >= 1", {}, "nccl_channels");
    std::vector<double> capacity;
    capacity.reserve(topology.links().size());
    for (const LinkSpec& link : topology.links())
        capacity.push_back(link_capacity(link, generation_, options_.efficiency));
    resources_ = make_flow_resources(topology, capacity);
}

const CollectiveSimulator::CacheEntry& CollectiveSimulator::simulated(const GroupLayout& layout, CollectiveOp op,
                                                                      CollectiveAlgorithm algorithm,
                                                                      std::uint64_t bytes, bool& was_cached) {
    CacheKey key{op, algorithm, bytes, op == CollectiveOp::Broadcast ? layout.root() : -1, layout.ranks()};
    if (const auto it = cache_.find(key); it != cache_.end()) {
        ++cache_hits_;
        was_cached = true;
        return it->second;
    }
    was_cached = false;
    const double s = static_cast<double>(bytes);
    CacheEntry entry;
    entry.plan = simulate_classified(shape(layout, op, algorithm), s, topology_, resources_.capacity,
                                     options_.check_link_capacities);
    entry.fill_fraction = algorithm == CollectiveAlgorithm::Nvls ? nvls_pipeline_fill_fraction(op, s) : 0.0;
    ++simulations_;
    if (cache_.size() >= options_.max_cache_entries) cache_.clear();
    return cache_.emplace(std::move(key), std::move(entry)).first->second;
}

const ClassifiedPlan& CollectiveSimulator::shape(const GroupLayout& layout, CollectiveOp op,
                                                 CollectiveAlgorithm algorithm) {
    ShapeKey key{op, algorithm, op == CollectiveOp::Broadcast ? layout.root() : -1, layout.ranks()};
    if (const auto it = shapes_.find(key); it != shapes_.end()) return it->second;
    constexpr double kUnit = 1.0;  // S = 1 byte: flow sizes come out as shares of S
    CollectivePlan plan;
    switch (algorithm) {
        case CollectiveAlgorithm::Ring: plan = build_ring_plan(layout, op, kUnit, router_); break;
        case CollectiveAlgorithm::Tree: plan = build_tree_plan(layout, kUnit, router_); break;
        case CollectiveAlgorithm::Hierarchical: plan = build_hierarchical_plan(layout, kUnit, router_); break;
        case CollectiveAlgorithm::Nvls:
            plan = build_nvls_plan(layout, op, kUnit,
                                   options_.nvls_efficiency > 0.0 ? options_.nvls_efficiency
                                                                  : nvls_efficiency(generation_));
            break;
        case CollectiveAlgorithm::Sharp: plan = build_sharp_plan(layout, kUnit, router_, kSharpEfficiency); break;
        case CollectiveAlgorithm::Direct: plan = build_direct_plan(layout, kUnit, router_); break;
        case CollectiveAlgorithm::Auto: TTSIM_ASSERT(false, "auto must be resolved before simulation");
    }
    // Adaptive routing sprays every flow the router gave a static path over its spray groups; SHARP's
    // aggregation trees are fixed link sets (phase_runner.hpp spray_over_groups).
    if (algorithm != CollectiveAlgorithm::Sharp) spray_over_groups(plan, resources_);
    if (shapes_.size() >= options_.max_cache_entries) shapes_.clear();
    return shapes_.emplace(std::move(key), classify_plan(plan, resources_.capacity, options_.per_flow, &resources_.role))
        .first->second;
}

SimTime CollectiveSimulator::one_island_floor(const GroupLayout& layout, const CollectiveRequest& request) {
    if (request.op != CollectiveOp::AllReduce || layout.island_count() < 2 || layout.max_per_island() < 2)
        return SimTime::zero();
    const auto& islands = layout.islands();
    const auto largest = std::find_if(islands.begin(), islands.end(), [&](const GroupIsland& island) {
        return static_cast<int>(island.ranks.size()) == layout.max_per_island();
    });
    CollectiveRequest alone;
    alone.op = CollectiveOp::AllReduce;
    alone.bytes = request.bytes;
    alone.group = largest->ranks;  // one island: run() applies no floor to it, so this does not recurse
    return run(alone).duration;
}

CollectiveResult CollectiveSimulator::evaluate(const GroupLayout& layout, const CollectiveRequest& request,
                                               CollectiveAlgorithm algorithm, SimTime one_island_floor) {
    bool cached = false;
    const CacheEntry& entry = simulated(layout, request.op, algorithm, request.bytes, cached);
    const SimulatedPlan& sp = entry.plan;
    const double bytes = static_cast<double>(request.bytes);
    const LatencyShape shape{request.op, layout.size(), layout.island_count(), layout.max_per_island(),
                             options_.net_overhead_us, sharp_tree_climb_us_};
    const double simple_seconds = sp.bandwidth_time.seconds() * (1.0 + entry.fill_fraction);
    const ProtocolChoice choice = choose_protocol(params_, algorithm, request.protocol, shape, bytes, simple_seconds,
                                                  options_.nccl_channels);
    CollectiveResult r;
    r.algorithm = algorithm;
    r.protocol = choice.protocol;
    r.ranks = layout.size();
    r.islands = layout.island_count();
    r.latency = SimTime::from_microseconds(choice.latency_us);
    r.bandwidth_time = SimTime::from_seconds(choice.bandwidth_seconds);
    r.duration = r.latency + r.bandwidth_time;
    r.one_island_floor = one_island_floor;
    if (r.duration < one_island_floor) {
        r.floor_excess = one_island_floor - r.duration;
        r.bandwidth_time += r.floor_excess;
        r.duration = one_island_floor;
    }
    if (r.duration > SimTime::zero()) {
        r.algbw_bytes_per_s = bytes / r.duration.seconds();
        r.busbw_bytes_per_s = r.algbw_bytes_per_s * bus_bandwidth_factor(request.op, layout.size());
    }
    r.lower_bound = collective_lower_bound(layout, request.op, bytes);
    r.max_link_utilisation = sp.max_link_utilisation;
    r.busiest_link = sp.busiest_link;
    r.mean_link_utilisation = sp.mean_link_utilisation;
    r.links_used = sp.links_used;
    r.max_fabric_link_utilisation = sp.max_fabric_utilisation;
    r.busiest_fabric_link = sp.busiest_fabric_link;
    r.nic_bytes_sent = sp.nic_bytes_sent;
    r.flows_simulated = sp.flows;
    r.flow_classes = sp.flow_classes;
    r.events = sp.events;
    r.fingerprint = sp.fingerprint;
    r.cached = cached;
    return r;
}

CollectiveResult CollectiveSimulator::run(const CollectiveRequest& request) {
    const GroupLayout layout(topology_, request.group);
    if (request.algorithm != CollectiveAlgorithm::Auto) {
        const std::string reason = inapplicable_reason(request.algorithm, request.op, layout, options_.sharp_enabled);
        if (!reason.empty())
            throw InputError("algorithm '" + std::string(to_string(request.algorithm)) + "' cannot run " +
                             std::string(to_string(request.op)) + " here: " + reason);
    }
    std::vector<CollectiveAlgorithm> candidates;
    if (request.algorithm == CollectiveAlgorithm::Auto) {
        // A forced protocol narrows `auto` to the algorithms that run it (those the model gives a bandwidth:
        // ring and tree for LL and LL128, direct for LL too; choose_protocol's test).
        const LatencyShape shape{request.op, layout.size(), layout.island_count(), layout.max_per_island(),
                                 options_.net_overhead_us};
        for (const CollectiveAlgorithm a : candidate_algorithms(request.op, layout, options_.sharp_enabled))
            if (request.protocol == NcclProtocol::Auto ||
                protocol_busbw(params_, a, request.protocol, shape, 1.0, options_.nccl_channels) > 0.0)
                candidates.push_back(a);
        if (candidates.empty())
            throw InputError("no algorithm runs " + std::string(to_string(request.op)) + " with protocol " +
                             std::string(to_string(request.protocol)));
    } else {
        candidates.push_back(request.algorithm);
    }

    if (layout.size() < 2 || request.bytes == 0) {
        // Nothing crosses a link: NCCL returns after a local copy at most. Zero time, zero bandwidth.
        CollectiveResult r;
        r.algorithm = candidates.front();
        r.protocol = request.protocol == NcclProtocol::Auto ? NcclProtocol::Simple : request.protocol;
        r.ranks = layout.size();
        r.islands = layout.island_count();
        return r;
    }
    // Computed before any evaluate(): it may run (and cache) collectives of its own.
    const SimTime floor = one_island_floor(layout, request);
    if (candidates.size() == 1) return evaluate(layout, request, candidates.front(), floor);

    CollectiveResult best;
    SimTime best_estimate;  // its duration before the floor
    std::vector<AlgorithmEstimate> considered;
    for (const CollectiveAlgorithm a : candidates) {
        CollectiveResult r = evaluate(layout, request, a, floor);
        const SimTime estimate = r.duration - r.floor_excess;
        considered.push_back({a, r.protocol, r.duration});
        // Candidates the floor lifts to the same duration: the one NCCL's tuner would rank first wins.
        if (considered.size() == 1 || r.duration < best.duration ||
            (r.duration == best.duration && estimate < best_estimate)) {
            best = std::move(r);
            best_estimate = estimate;
        }
    }
    best.considered = std::move(considered);
    return best;
}

}  // namespace ttsim
