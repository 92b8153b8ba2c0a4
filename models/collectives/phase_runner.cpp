// Plan execution on the flow network (phase_runner.hpp).
#include "models/collectives/phase_runner.hpp"

#include <algorithm>
#include <span>

#include "sim/errors.hpp"
#include "sim/event_queue.hpp"
#include "sim/flow_network.hpp"

namespace ttsim {
namespace {

// The plan's links, densely renumbered in order of first use, and their load classes.
struct LinkClasses {
    std::vector<LinkId> used;              // resource (topology link or spray group) of each used link, first-use order
    std::vector<std::int32_t> used_index;  // per resource: index into `used`, or -1
    std::vector<std::uint32_t> network;    // per used link: the network link standing for its class
    std::vector<std::uint8_t> kept;        // per used link: 1 if it is its class's network link
    std::size_t network_links = 0;
};

// Two links of equal capacity that every flow of every phase crosses the same number of times carry the
// same load at every instant of every max-min solve: their constraints are the same inequality, they bind
// at the same level and fix the same flows. Dropping all but one of them (the first used) changes no rate,
// and no drain time, and the flows' paths keep only the kept link of each class. For per-edge flows (ring,
// SHARP) hardly any links merge; for whole-channel flows over a uniform group (tree.cpp) ~10^5 links fall
// into a few hundred classes, which keeps a 16,384-GPU max-min solve at microseconds.
LinkClasses classify_links(const CollectivePlan& plan, const std::vector<double>& capacity) {
    LinkClasses c;
    c.used_index.assign(capacity.size(), -1);
    for (const PlanPhase& phase : plan.phases)
        for (const LinkId id : phase.flows.links)
            if (c.used_index[id] < 0) {
                c.used_index[id] = static_cast<std::int32_t>(c.used.size());
                c.used.push_back(id);
            }
    const std::size_t n = c.used.size();
    // Per used link, the (plan-wide) indices of the flows crossing it, once per crossing, ascending: CSR.
    std::vector<std::uint32_t> begin(n + 1, 0);
    for (const PlanPhase& phase : plan.phases)
        for (const LinkId id : phase.flows.links) ++begin[static_cast<std::size_t>(c.used_index[id]) + 1];
    for (std::size_t l = 0; l < n; ++l) begin[l + 1] += begin[l];
    std::vector<std::uint32_t> flows_of(begin.back());
    std::vector<std::uint32_t> cursor(begin.begin(), begin.end() - 1);
    std::uint32_t flow = 0;
    for (const PlanPhase& phase : plan.phases)
        for (std::size_t f = 0; f < phase.flows.size(); ++f, ++flow)
            for (const LinkId id : phase.flows.path(f)) flows_of[cursor[static_cast<std::size_t>(c.used_index[id])]++] = flow;

    // Classes: links with equal capacity and equal crossing lists. Sorting by the lists themselves compares
    // them element by element, and in a uniform group most links share one long list (every NVLink port of a
    // tree channel group: ~10^4 links x ~200 crossings at 8,192 GPUs), so the sort cost O(n log n x list).
    // Instead: sort by (capacity, list length, a content hash of the list, first use), O(1) per comparison,
    // then split each run of equal keys into classes by comparing each link's list with the leaders found
    // so far in the run (one, unless two lists collide on the hash). The hash is a fixed mix of the flow
    // indices (no std::hash, no addresses), and within a run links come in first-use order, so every class
    // is led by its first-used link, as before: same classes, same kept links, same network.
    auto crossings = [&](std::size_t l) {
        return std::span<const std::uint32_t>(flows_of.data() + begin[l], begin[l + 1] - begin[l]);
    };
    std::vector<std::uint64_t> digest(n);
    for (std::size_t l = 0; l < n; ++l) {
        std::uint64_t h = 0x9E3779B97F4A7C15ull;
        for (const std::uint32_t f : crossings(l)) {
            h ^= f + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
            h *= 0xBF58476D1CE4E5B9ull;
            h ^= h >> 31;
        }
        digest[l] = h;
    }
    std::vector<std::uint32_t> order(n);
    for (std::size_t l = 0; l < n; ++l) order[l] = static_cast<std::uint32_t>(l);
    auto key_less = [&](std::uint32_t a, std::uint32_t b) {
        const double ca = capacity[c.used[a]], cb = capacity[c.used[b]];
        if (ca != cb) return ca < cb;
        const std::uint32_t sa = begin[a + 1] - begin[a], sb = begin[b + 1] - begin[b];
        if (sa != sb) return sa < sb;
        return digest[a] < digest[b];
    };
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        if (key_less(a, b)) return true;
        if (key_less(b, a)) return false;
        return a < b;
    });
    std::vector<std::uint32_t> representative(n);
    std::vector<std::uint32_t> leaders;  // class leaders of the current run
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t l = order[i];
        if (i == 0 || key_less(order[i - 1], l)) leaders.clear();  // a new run of equal keys
        std::uint32_t leader = l;
        for (const std::uint32_t candidate : leaders)
            if (std::ranges::equal(crossings(l), crossings(candidate))) {
                leader = candidate;
                break;
            }
        if (leader == l) leaders.push_back(l);
        representative[l] = leader;
    }
    // Network links in first-use order of the kept links.
    c.network.assign(n, 0);
    c.kept.assign(n, 0);
    for (std::size_t l = 0; l < n; ++l)
        if (representative[l] == l) {
            c.kept[l] = 1;
            c.network[l] = static_cast<std::uint32_t>(c.network_links++);
        }
    for (std::size_t l = 0; l < n; ++l) c.network[l] = c.network[representative[l]];
    return c;
}

}  // namespace

FlowResources make_flow_resources(const Topology& topology, const std::vector<double>& link_capacity) {
    const std::size_t links = topology.links().size();
    TTSIM_ASSERT(link_capacity.size() == links, "one capacity per topology link");
    FlowResources r;
    r.capacity = link_capacity;
    r.of_link.resize(links);
    for (std::size_t id = 0; id < links; ++id) r.of_link[id] = static_cast<LinkId>(id);
    if (topology.routing() != FabricRouting::Adaptive) return r;
    const auto& groups = topology.spray_groups();
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto resource = static_cast<LinkId>(links + g);
        // Even spraying fills every member at the same rate, so the smallest member caps the group.
        double smallest = link_capacity[groups[g].members.front()];
        for (const LinkId m : groups[g].members) {
            smallest = std::min(smallest, link_capacity[m]);
            r.of_link[m] = resource;
        }
        r.capacity.push_back(smallest * static_cast<double>(groups[g].members.size()));
    }
    return r;
}

void spray_over_groups(CollectivePlan& plan, const FlowResources& resources) {
    for (PlanPhase& phase : plan.phases)
        for (LinkId& id : phase.flows.links) id = resources.of_link[id];
}

std::string resource_name(const Topology& topology, LinkId resource) {
    const std::size_t links = topology.links().size();
    if (resource < links) return topology.link(resource).name.str();
    return topology.spray_groups().at(resource - links).name;
}

SimulatedPlan simulate_plan(const CollectivePlan& plan, const Topology& topology,
                            const std::vector<double>& capacity, bool check_capacities) {
    SimulatedPlan out;
    const LinkClasses classes = classify_links(plan, capacity);
    out.links_used = classes.used.size();
    if (classes.used.empty()) return out;  // nothing moves (e.g. one GPU)

    // Zero latency on every network link: a step lasts until its last flow has DRAINED, and the cut-through
    // latency of each hop is part of NCCL's per-step latency terms (hardware + software, nccl_params.hpp),
    // which the result adds once; counting path latencies here too would count the hops twice. (It also
    // makes the utilisation window exactly the simulated drain time.)
    std::vector<NetworkLink> links;
    links.reserve(classes.network_links);
    for (std::size_t l = 0; l < classes.used.size(); ++l)
        if (classes.kept[l]) {
            const LinkId id = classes.used[l];
            links.push_back(NetworkLink{capacity[id], SimTime::zero(), resource_name(topology, id)});
        }
    FlowNetwork network(std::move(links));
    Simulation sim;
    struct PhaseState {
        Simulation* sim = nullptr;
        SimTime last_drain;
    } state;
    state.sim = &sim;
    std::vector<std::uint32_t> path;
    for (const PlanPhase& phase : plan.phases) {
        const SimTime start = sim.now();
        state.last_drain = start;
        for (std::size_t f = 0; f < phase.flows.size(); ++f) {
            path.clear();
            for (const LinkId id : phase.flows.path(f)) {
                const auto l = static_cast<std::size_t>(classes.used_index[id]);
                if (classes.kept[l]) path.push_back(classes.network[l]);
            }
            PhaseState* st = &state;  // one word: the callback stays in std::function's inline buffer
            network.start_flow(sim, path, phase.flows.bytes[f], [st] { st->last_drain = st->sim->now(); });
        }
        out.flows += phase.flows.size();
        // Queued behind the network's reshare for this instant, so it sees the shared rates.
        if (check_capacities && phase.flows.size() > 0)
            sim.schedule_at(sim.now(), [&network] { network.check_link_capacities(1e-9); });
        sim.run();
        const SimTime step = state.last_drain - start;
        out.step_times.push_back(step);
        out.bandwidth_time += step * phase.repeat;
    }
    network.sync_stats();
    const SimTime window = sim.now();
    out.fingerprint = sim.fingerprint();
    out.events = sim.events_processed();
    // Per resource, in first-use order: a merged link carried exactly what its class's network link did.
    // The name is built once, for the first busiest (a string per new maximum cost ~5 % at 16,384 ranks).
    double sum = 0.0;
    std::size_t busiest = classes.used.size();
    for (std::size_t l = 0; l < classes.used.size(); ++l) {
        const double u = network.link_utilisation(classes.network[l], window);
        sum += u;
        if (u > out.max_link_utilisation) {
            out.max_link_utilisation = u;
            busiest = l;
        }
    }
    if (busiest < classes.used.size()) out.busiest_link = resource_name(topology, classes.used[busiest]);
    out.mean_link_utilisation = sum / static_cast<double>(classes.used.size());
    return out;
}

}  // namespace ttsim
