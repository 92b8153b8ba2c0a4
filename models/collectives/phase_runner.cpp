// Plan execution on the flow network (phase_runner.hpp).
#include "models/collectives/phase_runner.hpp"

#include <algorithm>

#include "sim/errors.hpp"
#include "sim/event_queue.hpp"
#include "sim/flow_network.hpp"

namespace ttsim {

SimulatedPlan simulate_plan(const CollectivePlan& plan, const Topology& topology,
                            const std::vector<double>& capacity, bool check_capacities) {
    SimulatedPlan out;
    // Dense renumbering of the links the plan touches, in order of first use.
    std::vector<std::int32_t> local(topology.links().size(), -1);
    std::vector<LinkId> global;
    for (const PlanPhase& phase : plan.phases)
        for (const LinkId id : phase.flows.links)
            if (local[id] < 0) {
                local[id] = static_cast<std::int32_t>(global.size());
                global.push_back(id);
            }
    std::vector<NetworkLink> links;
    links.reserve(global.size());
    for (const LinkId id : global) {
        const LinkSpec& spec = topology.link(id);
        links.push_back(NetworkLink{capacity[id], spec.latency, spec.name});
    }
    out.links_used = links.size();
    if (links.empty()) return out;  // nothing moves (e.g. one GPU)

    FlowNetwork network(std::move(links));
    Simulation sim;
    // A step lasts until its last flow has DRAINED: the cut-through latency of each hop is part of NCCL's
    // per-step latency terms (hardware + software, nccl_params.hpp), which the result adds once; counting
    // the flow's path latency here too would count the hops twice.
    struct PhaseState {
        Simulation* sim = nullptr;
        SimTime start, last_drain;
        std::vector<SimTime> path_latency;  // per flow of the phase
    } state;
    state.sim = &sim;
    std::vector<std::uint32_t> path;
    for (const PlanPhase& phase : plan.phases) {
        state.start = state.last_drain = sim.now();
        state.path_latency.assign(phase.flows.size(), SimTime::zero());
        for (std::size_t f = 0; f < phase.flows.size(); ++f) {
            path.clear();
            for (const LinkId id : phase.flows.path(f)) path.push_back(static_cast<std::uint32_t>(local[id]));
            state.path_latency[f] = network.path_latency(path);
            const auto index = static_cast<std::uint32_t>(f);
            PhaseState* st = &state;  // two words: the callback stays in std::function's inline buffer
            network.start_flow(sim, path, phase.flows.bytes[f], [st, index] {
                st->last_drain = std::max(st->last_drain, st->sim->now() - st->path_latency[index]);
            });
        }
        out.flows += phase.flows.size();
        // Queued behind the network's reshare for this instant, so it sees the shared rates.
        if (check_capacities && phase.flows.size() > 0)
            sim.schedule_at(sim.now(), [&network] { network.check_link_capacities(1e-9); });
        sim.run();
        const SimTime step = state.last_drain - state.start;
        out.step_times.push_back(step);
        out.bandwidth_time += step * phase.repeat;
    }
    network.sync_stats();
    const SimTime window = sim.now();
    out.fingerprint = sim.fingerprint();
    out.events = sim.events_processed();
    double sum = 0.0;
    for (std::uint32_t l = 0; l < network.link_count(); ++l) {
        const double u = network.link_utilisation(l, window);
        sum += u;
        if (u > out.max_link_utilisation) {
            out.max_link_utilisation = u;
            out.busiest_link = network.link(l).name;
        }
    }
    out.mean_link_utilisation = sum / static_cast<double>(network.link_count());
    return out;
}

}  // namespace ttsim
