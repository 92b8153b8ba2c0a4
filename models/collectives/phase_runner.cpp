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
    std::vector<std::uint32_t> path;
    for (const PlanPhase& phase : plan.phases) {
        const SimTime start = sim.now();
        SimTime last_end = start;
        for (std::size_t f = 0; f < phase.flows.size(); ++f) {
            path.clear();
            for (const LinkId id : phase.flows.path(f)) path.push_back(static_cast<std::uint32_t>(local[id]));
            network.start_flow(sim, path, phase.flows.bytes[f], [&sim, &last_end] { last_end = sim.now(); });
        }
        out.flows += phase.flows.size();
        // Queued behind the network's reshare for this instant, so it sees the shared rates.
        if (check_capacities && phase.flows.size() > 0)
            sim.schedule_at(sim.now(), [&network] { network.check_link_capacities(1e-9); });
        sim.run();
        out.step_times.push_back(last_end - start);
        out.bandwidth_time += (last_end - start) * phase.repeat;
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
