// Runs a collective plan on the flow network: each phase's flows start together on a FlowNetwork built
// from only the links the plan uses (so the cost follows the group, not the cluster), the phase's step time
// is when its last flow has drained (its bandwidth time; hop latencies belong to NCCL's latency terms, so
// the network's links get none), and phases run back to back on one Simulation. Links that every flow
// crosses equally often and that have equal capacities are one constraint and become one network link
// (exact: same rates, same drain times; phase_runner.cpp). Deterministic: flows start in plan order, links
// are renumbered in first-use order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/plan.hpp"
#include "sim/time.hpp"

namespace ttsim {

struct SimulatedPlan {
    std::vector<SimTime> step_times;   // per phase, one step: drain time of its last flow
    SimTime bandwidth_time;            // sum of repeat x step time, before pipeline fill/drain
    std::uint64_t fingerprint = 0;
    std::uint64_t events = 0;
    std::uint64_t flows = 0;
    std::size_t links_used = 0;
    double max_link_utilisation = 0.0;  // over the simulated window (one step of every phase)
    double mean_link_utilisation = 0.0;
    std::string busiest_link;
};

// `capacity[id]` is the bytes/s the flow network gives topology link `id` (nccl_params.hpp link_capacity).
// With `check_capacities`, FlowNetwork::check_link_capacities runs right after each phase's flows are
// shared (InternalError if any link is over-allocated).
SimulatedPlan simulate_plan(const CollectivePlan& plan, const Topology& topology,
                            const std::vector<double>& capacity, bool check_capacities);

}  // namespace ttsim
