// Plan execution on the flow network (phase_runner.hpp).
#include "models/collectives/phase_runner.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <unordered_map>
#include <utility>

#include "sim/errors.hpp"
#include "sim/event_queue.hpp"
#include "sim/flow_network.hpp"

namespace ttsim {
namespace {

// SplitMix64 finaliser: a fixed mix (no std::hash, no addresses), so classes never depend on the platform.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Vertices of one side of the flow-link incidence graph (flows, or used links) with the other side's
// members they touch, once per crossing: vertex v touches adjacent[begin[v] .. begin[v + 1]).
struct Incidence {
    std::vector<std::uint32_t> begin{0};
    std::vector<std::uint32_t> adjacent;
};

// Splits the classes of `colors` (dense ids) by the multiset of the colours their members touch
// (`adjacent_colors`, with multiplicity; nullptr: the other side's members are their own colours and each
// vertex's list is ascending already) and renumbers them in order of their first member. Returns the new
// number of classes. Equal keys are found by a hash of (old colour, sorted colours touched), then compared
// exactly with the classes found so far under that hash, so a collision never merges two classes.
std::uint32_t refine(std::vector<std::uint32_t>& colors, const Incidence& incidence,
                     const std::vector<std::uint32_t>* adjacent_colors) {
    const std::size_t n = colors.size();
    std::vector<std::uint32_t> signature;
    std::uint32_t palette = 0;  // number of colours on the other side
    if (adjacent_colors != nullptr) {
        signature.resize(incidence.adjacent.size());
        for (std::size_t i = 0; i < signature.size(); ++i) signature[i] = (*adjacent_colors)[incidence.adjacent[i]];
        for (const std::uint32_t c : *adjacent_colors) palette = std::max(palette, c + 1);
    }
    const std::vector<std::uint32_t>& sorted = adjacent_colors != nullptr ? signature : incidence.adjacent;
    std::vector<std::uint32_t> histogram(palette, 0);
    // Sorts one vertex's colours: by counting when the list is long against the palette (a flow crossing
    // ~10^5 links of a few dozen classes), else by comparison.
    auto sort_colours = [&](std::vector<std::uint32_t>::iterator b, std::vector<std::uint32_t>::iterator e) {
        if (std::is_sorted(b, e)) return;
        if (static_cast<std::size_t>(e - b) < 4 * static_cast<std::size_t>(palette)) {
            std::sort(b, e);
            return;
        }
        for (auto it = b; it != e; ++it) ++histogram[*it];
        for (std::uint32_t c = 0; c < palette; ++c) {
            b = std::fill_n(b, histogram[c], c);
            histogram[c] = 0;
        }
    };
    auto touched = [&](std::size_t v) {
        return std::span<const std::uint32_t>(sorted.data() + incidence.begin[v],
                                              incidence.begin[v + 1] - incidence.begin[v]);
    };
    std::unordered_map<std::uint64_t, std::uint32_t> first_with_hash;  // hash -> first vertex carrying it
    first_with_hash.reserve(1024);
    std::vector<std::uint32_t> next_with_hash(n, UINT32_MAX);  // chain of class leaders sharing a hash
    std::vector<std::uint32_t> fresh(n);
    std::uint32_t classes = 0;
    for (std::size_t v = 0; v < n; ++v) {
        if (adjacent_colors != nullptr)
            sort_colours(signature.begin() + incidence.begin[v], signature.begin() + incidence.begin[v + 1]);
        // A polynomial hash (one multiply per colour: the lists run to ~10^6 entries), mixed at the end.
        std::uint64_t h = colors[v];
        for (const std::uint32_t c : touched(v)) h = (h + c + 1) * 0x9E3779B97F4A7C15ull;
        h = mix(h);
        const auto [slot, inserted] = first_with_hash.try_emplace(h, static_cast<std::uint32_t>(v));
        if (!inserted) {
            std::uint32_t leader = slot->second;
            for (;;) {
                if (colors[leader] == colors[v] && std::ranges::equal(touched(leader), touched(v))) break;
                if (next_with_hash[leader] == UINT32_MAX) {
                    next_with_hash[leader] = static_cast<std::uint32_t>(v);
                    leader = static_cast<std::uint32_t>(v);
                    break;
                }
                leader = next_with_hash[leader];
            }
            if (leader != v) {
                fresh[v] = fresh[leader];
                continue;
            }
        }
        fresh[v] = classes++;
    }
    colors = std::move(fresh);
    return classes;
}

// Dense ids for values in order of first appearance.
template <typename Key>
std::uint32_t number_by_first_appearance(const std::vector<Key>& keys, std::vector<std::uint32_t>& ids) {
    std::map<Key, std::uint32_t> seen;
    ids.resize(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
        ids[i] = seen.try_emplace(keys[i], static_cast<std::uint32_t>(seen.size())).first->second;
    return static_cast<std::uint32_t>(seen.size());
}

// The plan's links, densely renumbered in order of first use, and the classes of links and flows.
struct PlanClasses {
    std::vector<LinkId> used;              // resource (topology link or spray group) of each used link, first-use order
    std::vector<std::uint32_t> link_class;  // per used link; classes numbered in first-use order of their first link
    std::vector<std::uint32_t> leader;      // per link class: its first used link
    std::vector<std::uint32_t> flow_class;  // per plan flow (plan-wide index, phase by phase)
    std::vector<std::uint32_t> representative;  // per flow class: its first flow
    // Per flow class, the link classes its path loads, each once per crossing of the class's flows over the
    // class's leader link: the class's row of the quotient problem.
    Incidence quotient;
};

constexpr std::size_t kFewFlows = 64;

// Equivalence classes (header comment). Colour refinement on the bipartite flow-link incidence multigraph:
// start from flows coloured by (phase, bytes) and links by capacity; split links by the multiset of flow
// colours crossing them, flows by the multiset of link colours they cross; repeat until nothing splits.
// The result is an equitable partition: every link of a class is crossed the same number of times by the
// flows of each flow class, and every flow of a class crosses the same number of links of each link class.
// That is all progressive filling looks at, so max-min rates are equal within a flow class and link
// loads within a link class, round after round (by induction: equal rates give equal loads, a class of
// links binds as one, and the flows it fixes are whole classes), and so are drain times: a class drains as
// one and leaves an equitable partition of the rest. One flow per class, loading each link class's leader
// as often as the class's flows cross it, therefore has the rates, drain times and link loads of the whole
// set. `per_flow`: every flow its own class (no flow merged), the reference the classes are tested against;
// its link classes are the links with identical crossing lists.
PlanClasses classify(const CollectivePlan& plan, const std::vector<double>& capacity, bool per_flow) {
    PlanClasses c;
    std::size_t incidences = 0, flows = 0;
    for (const PlanPhase& phase : plan.phases) {
        incidences += phase.flows.links.size();
        flows += phase.flows.size();
    }
    // A few flows (a tree's 2 per rail) gain nothing from classes; finding them would cost passes over their
    // ~10^7 incidences at 131,072 GPUs. They stay their own classes (exact either way).
    const bool flows_alone = per_flow || flows <= kFewFlows;
    std::vector<std::int32_t> used_index(capacity.size(), -1);
    Incidence flow_links;  // per plan flow: used links crossed, in path order (for the flows' refinement)
    if (!flows_alone) {
        flow_links.adjacent.reserve(incidences);
        flow_links.begin.reserve(flows + 1);
    }
    std::vector<std::uint32_t> crossings;  // per used link: number of crossings
    for (const PlanPhase& phase : plan.phases)
        for (std::size_t f = 0; f < phase.flows.size(); ++f) {
            for (const LinkId id : phase.flows.path(f)) {
                if (used_index[id] < 0) {
                    used_index[id] = static_cast<std::int32_t>(c.used.size());
                    c.used.push_back(id);
                    crossings.push_back(0);
                }
                const auto l = static_cast<std::uint32_t>(used_index[id]);
                ++crossings[l];
                if (!flows_alone) flow_links.adjacent.push_back(l);
            }
            if (!flows_alone) flow_links.begin.push_back(static_cast<std::uint32_t>(flow_links.adjacent.size()));
        }
    const std::size_t links = c.used.size();
    // Transposed: per used link, the flows crossing it, once per crossing, ascending.
    Incidence link_flows;
    link_flows.begin.assign(links + 1, 0);
    for (std::size_t l = 0; l < links; ++l) link_flows.begin[l + 1] = link_flows.begin[l] + crossings[l];
    link_flows.adjacent.resize(incidences);
    {
        std::vector<std::uint32_t>& cursor = crossings;  // reused: the next free slot of each link
        for (std::size_t l = 0; l < links; ++l) cursor[l] = link_flows.begin[l];
        std::uint32_t flow = 0;
        for (const PlanPhase& phase : plan.phases)
            for (std::size_t f = 0; f < phase.flows.size(); ++f, ++flow)
                for (const LinkId id : phase.flows.path(f))
                    link_flows.adjacent[cursor[static_cast<std::size_t>(used_index[id])]++] = flow;
    }

    std::vector<double> link_capacity(links);
    for (std::size_t l = 0; l < links; ++l) link_capacity[l] = capacity[c.used[l]];
    std::uint32_t link_classes = number_by_first_appearance(link_capacity, c.link_class);
    std::uint32_t flow_classes = 0;
    if (flows_alone) {
        c.flow_class.resize(flows);
        for (std::size_t f = 0; f < flows; ++f) c.flow_class[f] = static_cast<std::uint32_t>(f);
        flow_classes = static_cast<std::uint32_t>(flows);
        link_classes = refine(c.link_class, link_flows, nullptr);
    } else {
        std::vector<std::pair<std::size_t, double>> flow_keys;  // (phase, bytes)
        flow_keys.reserve(flows);
        for (std::size_t p = 0; p < plan.phases.size(); ++p)
            for (const double bytes : plan.phases[p].flows.bytes) flow_keys.emplace_back(p, bytes);
        flow_classes = number_by_first_appearance(flow_keys, c.flow_class);
        // Each pass refines the last, so the counts only grow; when one side stops splitting, the other's
        // next pass would see the colours it last saw, so nothing splits any more.
        for (bool first = true;; first = false) {
            const std::uint32_t l = refine(c.link_class, link_flows, &c.flow_class);
            if (l == link_classes && !first) break;
            link_classes = l;
            const std::uint32_t f = refine(c.flow_class, flow_links, &c.link_class);
            if (f == flow_classes) break;
            flow_classes = f;
        }
    }
    c.leader.assign(link_classes, UINT32_MAX);
    for (std::size_t l = links; l-- > 0;) c.leader[c.link_class[l]] = static_cast<std::uint32_t>(l);
    c.representative.assign(flow_classes, UINT32_MAX);
    for (std::size_t f = flows; f-- > 0;) c.representative[c.flow_class[f]] = static_cast<std::uint32_t>(f);
    // Quotient rows, link classes ascending within each row.
    c.quotient.begin.assign(flow_classes + 1, 0);
    for (std::uint32_t k = 0; k < link_classes; ++k)
        for (std::uint32_t i = link_flows.begin[c.leader[k]]; i < link_flows.begin[c.leader[k] + 1]; ++i)
            ++c.quotient.begin[c.flow_class[link_flows.adjacent[i]] + 1];
    for (std::size_t k = 0; k < flow_classes; ++k) c.quotient.begin[k + 1] += c.quotient.begin[k];
    c.quotient.adjacent.resize(c.quotient.begin.back());
    std::vector<std::uint32_t> cursor(c.quotient.begin.begin(), c.quotient.begin.end() - 1);
    for (std::uint32_t k = 0; k < link_classes; ++k)
        for (std::uint32_t i = link_flows.begin[c.leader[k]]; i < link_flows.begin[c.leader[k] + 1]; ++i)
            c.quotient.adjacent[cursor[c.flow_class[link_flows.adjacent[i]]]++] = k;
    return c;
}

}  // namespace

FlowResources make_flow_resources(const Topology& topology, const std::vector<double>& link_capacity) {
    const std::size_t links = topology.links().size();
    TTSIM_ASSERT(link_capacity.size() == links, "one capacity per topology link");
    FlowResources r;
    r.capacity = link_capacity;
    r.of_link.resize(links);
    r.role = resource_roles(topology);
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

ClassifiedPlan classify_plan(const CollectivePlan& plan, const std::vector<double>& capacity, bool per_flow,
                             const std::vector<std::uint8_t>* roles) {
    PlanClasses classes = classify(plan, capacity, per_flow);
    ClassifiedPlan out;
    out.links_used = classes.used.size();
    out.class_path_begin = std::move(classes.quotient.begin);
    out.class_path = std::move(classes.quotient.adjacent);
    for (const std::uint32_t l : classes.leader) out.link_resource.push_back(classes.used[l]);
    out.link_members.assign(classes.leader.size(), 0);
    for (const std::uint32_t k : classes.link_class) ++out.link_members[k];
    if (roles) {
        out.nic_uplinks.assign(classes.leader.size(), 0);
        out.fabric_member.assign(classes.leader.size(), kNoLink);
        for (std::size_t l = 0; l < classes.used.size(); ++l) {
            const std::uint8_t role = (*roles)[classes.used[l]];
            const std::uint32_t k = classes.link_class[l];
            if (role == kNicUplink) ++out.nic_uplinks[k];
            if (role != kOtherLink && out.fabric_member[k] == kNoLink) out.fabric_member[k] = classes.used[l];
        }
    }
    std::uint32_t next_class = 0;  // flow classes come phase by phase (the phase is part of a class's key)
    std::size_t end_flow = 0;      // plan-wide index past the phase's last flow
    for (const PlanPhase& phase : plan.phases) {
        const std::size_t first_flow = end_flow;
        end_flow += phase.flows.size();
        ClassifiedPlan::Phase p{phase.repeat, phase.flows.size(), next_class, next_class};
        while (next_class < classes.representative.size() && classes.representative[next_class] < end_flow)
            out.class_bytes.push_back(phase.flows.bytes[classes.representative[next_class++] - first_flow]);
        p.end_class = next_class;
        out.phases.push_back(p);
    }
    return out;
}

namespace {

// The bytes the NICs sent into the scale-out fabric (SimulatedPlan::nic_bytes_sent), where the classes know their
// NIC uplinks. Every link of a class carried what its leader did, and a flow class's path lists the leader of each
// link class once per crossing by the class's flows, so the bytes the class's flows put on each link of a link
// class are class_bytes x crossings: on its NIC uplinks, that times their count.
double nic_bytes_sent(const ClassifiedPlan& plan, double scale) {
    double bytes = 0;
    for (const ClassifiedPlan::Phase& phase : plan.phases)
        for (std::uint32_t k = phase.first_class; k < phase.end_class; ++k)
            for (std::uint32_t i = plan.class_path_begin[k]; i < plan.class_path_begin[k + 1]; ++i)
                if (const std::uint32_t c = plan.class_path[i]; plan.nic_uplinks[c] > 0)
                    bytes += static_cast<double>(phase.repeat) * plan.class_bytes[k] * scale * plan.nic_uplinks[c];
    return bytes;
}

}  // namespace

std::vector<std::uint8_t> resource_roles(const Topology& topology) {
    const auto role_of = [&](const LinkSpec& link) -> std::uint8_t {
        if (link.kind != LinkKind::InfiniBand && link.kind != LinkKind::Ethernet) return kOtherLink;
        return topology.vertex(link.from).kind == VertexKind::Nic ? kNicUplink : kFabricLink;
    };
    std::vector<std::uint8_t> roles;
    roles.reserve(topology.links().size() + topology.spray_groups().size());
    for (const LinkSpec& link : topology.links()) roles.push_back(role_of(link));
    // A spray group's members are alike (a leaf's or a spine's up-links).
    for (const SprayGroup& group : topology.spray_groups()) roles.push_back(role_of(topology.link(group.members.front())));
    return roles;
}

SimulatedPlan simulate_classified(const ClassifiedPlan& plan, double scale, const Topology& topology,
                                  const std::vector<double>& capacity, bool check_capacities) {
    SimulatedPlan out;
    out.links_used = plan.links_used;
    if (plan.links_used == 0) return out;  // nothing moves (e.g. one GPU)

    // Zero latency on every network link: a step lasts until its last flow has DRAINED, and the cut-through
    // latency of each hop is part of NCCL's per-step latency terms (hardware + software, nccl_params.hpp),
    // which the result adds once; counting path latencies here too would count the hops twice. (It also
    // makes the utilisation window exactly the simulated drain time.)
    std::vector<NetworkLink> links;
    links.reserve(plan.link_resource.size());
    for (const LinkId id : plan.link_resource)
        links.push_back(NetworkLink{capacity[id], SimTime::zero(), resource_name(topology, id)});
    FlowNetwork network(std::move(links));
    Simulation sim;
    struct PhaseState {
        Simulation* sim = nullptr;
        SimTime last_drain;
    } state;
    state.sim = &sim;
    for (const ClassifiedPlan::Phase& phase : plan.phases) {
        const SimTime start = sim.now();
        state.last_drain = start;
        for (std::uint32_t k = phase.first_class; k < phase.end_class; ++k) {
            const std::span<const std::uint32_t> path(plan.class_path.data() + plan.class_path_begin[k],
                                                      plan.class_path_begin[k + 1] - plan.class_path_begin[k]);
            PhaseState* st = &state;  // one word: the callback stays in std::function's inline buffer
            network.start_flow(sim, path, plan.class_bytes[k] * scale, [st] { st->last_drain = st->sim->now(); });
        }
        out.flows += phase.flows;
        out.flow_classes += phase.end_class - phase.first_class;
        // Queued behind the network's reshare for this instant, so it sees the shared rates.
        if (check_capacities && phase.flows > 0)
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
    // Every used link carried exactly what its class's leader did. The busiest is the first used link with the
    // highest utilisation: the leader (first used link) of the first class, in class order, that has it.
    // The scale-out fabric's busiest link by the same rule, over the classes with a fabric member (where the classes
    // know them: classify_plan given the resources' roles).
    const bool fabric = !plan.fabric_member.empty();
    double sum = 0.0;
    std::size_t busiest = plan.link_resource.size(), busiest_fabric = plan.link_resource.size();
    for (std::size_t k = 0; k < plan.link_resource.size(); ++k) {
        const double u = network.link_utilisation(static_cast<std::uint32_t>(k), window);
        sum += u * plan.link_members[k];
        if (u > out.max_link_utilisation) {
            out.max_link_utilisation = u;
            busiest = k;
        }
        if (fabric && plan.fabric_member[k] != kNoLink && u > out.max_fabric_utilisation) {
            out.max_fabric_utilisation = u;
            busiest_fabric = k;
        }
    }
    if (busiest < plan.link_resource.size()) out.busiest_link = resource_name(topology, plan.link_resource[busiest]);
    if (busiest_fabric < plan.link_resource.size())
        out.busiest_fabric_link = resource_name(topology, plan.fabric_member[busiest_fabric]);
    out.mean_link_utilisation = sum / static_cast<double>(plan.links_used);
    if (fabric) out.nic_bytes_sent = nic_bytes_sent(plan, scale);
    return out;
}

SimulatedPlan simulate_plan(const CollectivePlan& plan, const Topology& topology, const std::vector<double>& capacity,
                            bool check_capacities, bool per_flow) {
    const std::vector<std::uint8_t> roles = resource_roles(topology);
    return simulate_classified(classify_plan(plan, capacity, per_flow, &roles), 1.0, topology, capacity, check_capacities);
}

}  // namespace ttsim
