// A flow-level network on the event engine: data moves as fluid flows sharing directed links max-min
// fairly (sim/maxmin.hpp), not as packets.
//
// Model.
//  - A link is one direction of a physical link: {bandwidth in bytes/s, latency, name}. Full-duplex cables
//    are two links, built by the topology, so opposite directions never interfere.
//  - A flow carries `bytes` along a path of link ids, starting at sim.now(). Its bytes drain at its fair
//    rate from the start; it is cut-through: on_complete fires at (drain end + sum of the path's link
//    latencies). The latency is paid once, never store-and-forward per hop. A zero-byte flow completes
//    after the path latency alone and never enters the sharing.
//  - Rates are recomputed when the set of flows changes, batched: all the starts and drain ends at one
//    picosecond cause one re-solve, in a single "reshare" event scheduled at that picosecond (it runs after
//    the events already queued for that instant, by the Simulation's deterministic order).
//  - Between re-solves each flow drains at a constant rate. Its drain end is rounded UP to a whole
//    picosecond, so no flow ever finishes faster than its bandwidth allows.
//
// Cost per re-solve: O(nnz log L) for the solve plus O(flows + nnz + links) bookkeeping, where nnz is the
// sum of path lengths. The next drain end is found by one scan, and all flows draining at the same
// picosecond are retired by one event, so n symmetric flows cost O(n) events, not O(n^2) work.
//
// Determinism: flows are kept and visited in id (start) order; the callbacks of flows completing at the
// same picosecond run in id order, inside one event per completion time (one queue entry instead of
// 131,072 for a symmetric collective); nothing depends on addresses or hash order.
//
// Lifetime: events scheduled on the Simulation refer to this network, so the network must outlive every
// run of that Simulation; one network serves one Simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/maxmin.hpp"
#include "sim/time.hpp"

namespace ttsim {

// One direction of a physical link.
struct NetworkLink {
    double bandwidth_bytes_per_s = 0.0;  // > 0
    SimTime latency;                     // >= 0; propagation + switching, paid once per flow crossing it
    std::string name;                    // for messages and reports
};

// Counters of one link since the network was built.
struct LinkStats {
    double bytes_carried = 0.0;         // bytes of completed flows that crossed the link (counted at drain end)
    double rate_integral_bytes = 0.0;   // integral over time of the rate allocated on the link (bytes/s * s)
    double allocated_rate_bytes_per_s = 0.0;  // current sum of the rates of the flows crossing it
};

using FlowId = std::uint64_t;

class FlowNetwork {
public:
    // Throws InputError for a link with a non-positive or non-finite bandwidth, or a negative latency.
    explicit FlowNetwork(std::vector<NetworkLink> links);

    FlowNetwork(const FlowNetwork&) = delete;  // scheduled events hold `this`
    FlowNetwork& operator=(const FlowNetwork&) = delete;

    // Starts a flow of `bytes` (finite, >= 0) along `path` at sim.now(). `on_complete` runs at drain end +
    // path latency. A non-empty path is required when bytes > 0 (an empty path would mean infinite
    // bandwidth). Bad link ids or byte counts are caller bugs: InternalError.
    FlowId start_flow(Simulation& sim, std::span<const std::uint32_t> path, double bytes,
                      std::function<void()> on_complete);
    FlowId start_flow(Simulation& sim, std::initializer_list<std::uint32_t> path, double bytes,
                      std::function<void()> on_complete) {
        return start_flow(sim, std::span<const std::uint32_t>(path.begin(), path.size()), bytes,
                          std::move(on_complete));
    }

    std::size_t link_count() const { return links_.size(); }
    const NetworkLink& link(std::uint32_t link_id) const { return links_.at(link_id); }
    SimTime path_latency(std::span<const std::uint32_t> path) const;

    // Statistics. Rate integrals cover time up to the last event the network handled; sync_stats() brings
    // them up to the bound Simulation's now() (call it from an event or after a run, before reading).
    void sync_stats();
    const LinkStats& link_stats(std::uint32_t link_id) const { return stats_.at(link_id); }
    // Time-weighted utilisation of a link over [0, window]: rate integral / (bandwidth * window), in [0, 1]
    // up to floating-point rounding. 0 for an empty window.
    double link_utilisation(std::uint32_t link_id, SimTime window) const;
    double max_link_utilisation(SimTime window) const;

    // Throws InternalError naming the link if the rates of the flows crossing any link add up to more than
    // its bandwidth * (1 + relative_tolerance). Recomputed from the flows, not from cached sums.
    void check_link_capacities(double relative_tolerance = 1e-9) const;

    // Current rate (bytes/s) of an active flow; nullopt once it has drained (or for an unknown id).
    std::optional<double> flow_rate(FlowId id) const;

    std::uint64_t solve_count() const { return solve_count_; }  // max-min solves so far
    std::size_t active_flow_count() const { return flows_.size() - drained_pending_removal_; }
    std::uint64_t started_flow_count() const { return next_flow_id_; }
    std::uint64_t drained_flow_count() const { return drained_flow_count_; }
    const MaxMinSolver& solver() const { return solver_; }

private:
    struct ActiveFlow {
        FlowId id = 0;
        double total_bytes = 0.0;
        double remaining_bytes = 0.0;
        double rate_bytes_per_s = 0.0;        // from the last solve; 0 before its first solve
        std::int64_t drain_end_ps = 0;        // from the last solve; only meaningful when rate > 0
        SimTime path_latency;
        std::function<void()> on_complete;
        bool drained = false;                 // retired, waiting to be compacted away at the next reshare
    };

    void bind(Simulation& sim);
    void request_reshare();
    void reshare();
    void on_drain_event(std::uint64_t generation);
    void schedule_completions();  // queues the callbacks of the flows in retired_
    void advance_to(SimTime now);  // drains bytes and accumulates rate integrals since last_advance_

    std::vector<NetworkLink> links_;
    std::vector<LinkStats> stats_;
    Simulation* sim_ = nullptr;

    // Active flows in id order; flow i's path is problem_.flow_path(i).
    std::vector<ActiveFlow> flows_;
    MaxMinProblem problem_;
    MaxMinProblem compacted_problem_;  // spare buffer, swapped with problem_ when drained flows are dropped
    MaxMinSolver solver_;
    std::vector<double> rates_;
    std::vector<std::uint32_t> retired_;  // indices into flows_ of the flows retired by one drain event

    FlowId next_flow_id_ = 0;
    std::size_t drained_pending_removal_ = 0;
    std::uint64_t drained_flow_count_ = 0;
    std::uint64_t solve_count_ = 0;
    std::uint64_t generation_ = 0;  // bumped by each reshare; older drain events are stale
    bool reshare_pending_ = false;
    SimTime last_advance_ = SimTime::zero();
};

}  // namespace ttsim
