#include "topologies/topology.hpp"

#include <algorithm>

#include <boost/graph/graph_traits.hpp>
#include <boost/pending/disjoint_sets.hpp>
#include <boost/property_map/property_map.hpp>
#include <fmt/format.h>

#include "sim/errors.hpp"

namespace ttsim {

std::string_view to_string(VertexKind kind) {
    switch (kind) {
        case VertexKind::Gpu: return "gpu";
        case VertexKind::NvSwitch: return "nvswitch";
        case VertexKind::Nic: return "nic";
        case VertexKind::LeafSwitch: return "leaf";
        case VertexKind::SpineSwitch: return "spine";
        case VertexKind::CoreSwitch: return "core";
        case VertexKind::SuperSpineSwitch: return "superspine";
        case VertexKind::Switch: return "switch";
    }
    return "?";
}

std::string_view to_string(LinkKind kind) {
    switch (kind) {
        case LinkKind::NvLink: return "nvlink";
        case LinkKind::Pcie: return "pcie";
        case LinkKind::InfiniBand: return "infiniband";
        case LinkKind::Ethernet: return "ethernet";
    }
    return "?";
}

std::string_view to_string(FabricRouting routing) {
    switch (routing) {
        case FabricRouting::StaticEcmp: return "static";
        case FabricRouting::Adaptive: return "adaptive";
    }
    return "?";
}

std::string routing_note(FabricRouting routing) {
    return routing == FabricRouting::StaticEcmp ? "static ECMP routing" : "adaptive routing";
}

FabricRouting parse_fabric_routing(std::string_view text) {
    if (text == "static" || text == "ecmp" || text == "static-ecmp") return FabricRouting::StaticEcmp;
    if (text == "adaptive" || text == "ar") return FabricRouting::Adaptive;
    throw InputError("unknown fabric routing '" + std::string(text) +
                     "'; use adaptive (spray over all equal-cost paths) or static (hashed ECMP, one path per flow)");
}

std::string LinkName::str() const {
    const std::string& from = (*vertices_)[from_].name;
    const std::string& to = (*vertices_)[to_].name;
    std::string name;
    name.reserve(from.size() + 2 + to.size());
    name.append(from).append("->").append(to);
    return name;
}

Topology::Topology(std::string name)
    : name_(std::move(name)), vertices_(std::make_unique<std::vector<VertexProps>>()) {}

void Topology::reserve(std::size_t gpus, std::size_t vertices, std::size_t directed_links) {
    gpus_.reserve(gpus);
    vertices_->reserve(vertices);
    links_.reserve(directed_links);
}

Vertex Topology::add_vertex(VertexKind kind, std::string name) {
    TTSIM_ASSERT(!finalized_, "topology modified after finalize()");
    vertices_->push_back(VertexProps{kind, std::move(name)});
    return vertices_->size() - 1;
}

LinkId Topology::add_duplex_link(Vertex a, Vertex b, LinkKind kind, double bandwidth_bytes_per_s,
                                 SimTime latency_a_to_b, SimTime latency_b_to_a) {
    TTSIM_ASSERT(!finalized_, "topology modified after finalize()");
    TTSIM_ASSERT(a < vertex_count() && b < vertex_count() && a != b, "link between invalid vertices");
    TTSIM_ASSERT(bandwidth_bytes_per_s > 0.0, "link bandwidth must be positive");
    TTSIM_ASSERT(latency_a_to_b >= SimTime::zero() && latency_b_to_a >= SimTime::zero(), "negative latency");
    TTSIM_ASSERT(links_.size() + 2 < kNoLink, "too many links");
    const auto forward = static_cast<LinkId>(links_.size());
    const std::vector<VertexProps>* names = vertices_.get();
    links_.push_back({forward, a, b, kind, bandwidth_bytes_per_s, latency_a_to_b, LinkName(names, a, b)});
    links_.push_back({forward + 1, b, a, kind, bandwidth_bytes_per_s, latency_b_to_a, LinkName(names, b, a)});
    return forward;
}

int Topology::add_gpu(int node, int local_index, Vertex nvlink_domain, const PortSpec& nvlink,
                      const PortSpec& pcie) {
    TTSIM_ASSERT(node >= 0 && local_index >= 0, "negative node or local index");
    GpuInfo info;
    info.rank = gpu_count();
    info.node = node;
    info.local_index = local_index;
    const std::string prefix = "node" + std::to_string(node);
    info.vertex = add_vertex(VertexKind::Gpu, prefix + ".gpu" + std::to_string(local_index));
    info.nic = add_vertex(VertexKind::Nic, prefix + ".nic" + std::to_string(local_index));
    info.pcie_up = add_duplex_link(info.vertex, info.nic, LinkKind::Pcie, pcie.bandwidth_bytes_per_s,
                                   pcie.latency_up, pcie.latency_down);
    info.pcie_down = info.pcie_up + 1;
    if (nvlink_domain != kNoVertex) {
        TTSIM_ASSERT((*vertices_)[nvlink_domain].kind == VertexKind::NvSwitch, "NVLink domain is not an NVSwitch");
        if (domain_index_of_vertex_.size() <= nvlink_domain) domain_index_of_vertex_.resize(nvlink_domain + 1, -1);
        int& domain_index = domain_index_of_vertex_[nvlink_domain];
        if (domain_index < 0) domain_index = nvlink_domain_count_++;
        info.nvlink_domain = nvlink_domain;
        info.nvlink_domain_index = domain_index;
        info.nvlink_up = add_duplex_link(info.vertex, nvlink_domain, LinkKind::NvLink,
                                         nvlink.bandwidth_bytes_per_s, nvlink.latency_up, nvlink.latency_down);
        info.nvlink_down = info.nvlink_up + 1;
    }
    node_count_ = std::max(node_count_, node + 1);
    gpus_.push_back(info);
    return info.rank;
}

void Topology::add_spray_group(std::string name, std::vector<LinkId> members) {
    TTSIM_ASSERT(!finalized_, "topology modified after finalize()");
    TTSIM_ASSERT(members.size() >= 2, "spray group " + name + " has fewer than two links");
    const auto index = static_cast<std::int32_t>(spray_groups_.size());
    if (spray_group_of_link_.size() < links_.size()) spray_group_of_link_.resize(links_.size(), -1);
    for (const LinkId id : members) {
        TTSIM_ASSERT(id < links_.size(), "spray group " + name + " names an unknown link");
        TTSIM_ASSERT(spray_group_of_link_[id] < 0, "link " + links_[id].name.str() + " is in two spray groups");
        spray_group_of_link_[id] = index;
    }
    spray_groups_.push_back(SprayGroup{std::move(name), std::move(members)});
}

void Topology::set_routing(FabricRouting routing) {
    TTSIM_ASSERT(!finalized_, "topology modified after finalize()");
    routing_ = routing;
}

void Topology::finalize() {
    TTSIM_ASSERT(!finalized_, "finalize() called twice");
    const std::size_t vertices = vertex_count();
    // The link graph: links sorted by source vertex, stably (a counting sort), so each vertex's out-edges keep
    // link creation order, the order the ECMP choices and sums below depend on.
    {
        std::vector<std::size_t> begin(vertices + 1, 0);
        for (const LinkSpec& l : links_) ++begin[l.from + 1];
        for (std::size_t v = 0; v < vertices; ++v) begin[v + 1] += begin[v];
        std::vector<std::pair<Vertex, Vertex>> edges(links_.size());
        std::vector<EdgeProps> props(links_.size());
        for (const LinkSpec& l : links_) {
            const std::size_t at = begin[l.from]++;
            edges[at] = {l.from, l.to};
            props[at] = EdgeProps{l.id};
        }
        graph_ = std::make_unique<TopologyGraph>(boost::edges_are_sorted, edges.begin(), edges.end(), props.begin(),
                                                 vertices, edges.size());
    }
    SwitchFabric& f = fabric_;
    f.switch_of_vertex.assign(vertices, -1);
    for (Vertex v = 0; v < vertices; ++v) {
        if (!is_network_switch((*vertices_)[v].kind)) continue;
        f.switch_of_vertex[v] = static_cast<std::int32_t>(f.vertex_of_switch.size());
        f.vertex_of_switch.push_back(v);
    }
    const std::size_t switches = f.switch_count();

    // Switch-to-switch hops in CSR form, in edge creation order (which keeps ECMP choices deterministic).
    f.hop_begin.assign(switches + 1, 0);
    std::vector<std::pair<std::size_t, std::size_t>> switch_edges;
    for (std::size_t s = 0; s < switches; ++s) {
        f.hop_begin[s] = static_cast<std::uint32_t>(f.hop_neighbor.size());
        for (auto [e, end] = boost::out_edges(f.vertex_of_switch[s], *graph_); e != end; ++e) {
            const std::int32_t neighbor = f.switch_of_vertex[boost::target(*e, *graph_)];
            if (neighbor < 0) continue;
            f.hop_neighbor.push_back(static_cast<std::uint32_t>(neighbor));
            f.hop_link.push_back((*graph_)[*e].link_id);
            switch_edges.emplace_back(s, static_cast<std::size_t>(neighbor));
        }
    }
    f.hop_begin[switches] = static_cast<std::uint32_t>(f.hop_neighbor.size());
    // Edges are generated in source order, as the CSR constructor requires.
    f.graph = std::make_unique<SwitchFabric::SwitchGraph>(boost::edges_are_sorted, switch_edges.begin(),
                                                          switch_edges.end(), switches);

    // NIC attachments per GPU rank: every link from the GPU's NIC to a network switch.
    f.attachment_begin.assign(gpus_.size() + 1, 0);
    for (const GpuInfo& g : gpus_) {
        f.attachment_begin[static_cast<std::size_t>(g.rank)] = static_cast<std::uint32_t>(f.attachments.size());
        for (auto [e, end] = boost::out_edges(g.nic, *graph_); e != end; ++e) {
            const std::int32_t s = f.switch_of_vertex[boost::target(*e, *graph_)];
            if (s < 0) continue;
            const LinkId up = (*graph_)[*e].link_id;
            f.attachments.push_back({static_cast<std::uint32_t>(s), up, links_[up].reverse()});
        }
    }
    f.attachment_begin[gpus_.size()] = static_cast<std::uint32_t>(f.attachments.size());

    // Components of the switch fabric; links are full duplex, so the directed graph's components are the
    // undirected ones: Boost's disjoint sets over the switch-to-switch hops, without an undirected copy of the
    // graph. A component's id is its smallest switch index, whatever the order of the unions.
    // Rank and parent as iterator property maps, not disjoint_sets_with_storage: its raw-pointer get() is hidden
    // by the CSR graph's boost::detail::get (Boost 1.74) in this file.
    using SwitchMap = boost::iterator_property_map<std::vector<std::size_t>::iterator, boost::identity_property_map>;
    std::vector<std::size_t> rank(switches), parent(switches);
    boost::disjoint_sets<SwitchMap, SwitchMap> sets(SwitchMap(rank.begin()), SwitchMap(parent.begin()));
    for (std::size_t s = 0; s < switches; ++s) sets.make_set(s);
    for (std::size_t s = 0; s < switches; ++s)
        for (std::uint32_t h = f.hop_begin[s]; h < f.hop_begin[s + 1]; ++h)
            sets.union_set(s, static_cast<std::size_t>(f.hop_neighbor[h]));
    std::vector<int> id_of_representative(switches, -1);
    f.component.resize(switches);
    for (std::size_t s = 0; s < switches; ++s) {
        int& id = id_of_representative[sets.find_set(s)];
        if (id < 0) id = static_cast<int>(s);
        f.component[s] = id;
    }
    finalized_ = true;
}

const TopologyGraph& Topology::graph() const {
    TTSIM_ASSERT(finalized_, "topology used before finalize()");
    return *graph_;
}

bool Topology::attached_over_infiniband(int rank) const {
    const SwitchFabric& f = fabric();
    const std::uint32_t begin = f.attachment_begin[static_cast<std::size_t>(rank)];
    const std::uint32_t end = f.attachment_begin[static_cast<std::size_t>(rank) + 1];
    if (begin == end) return false;
    for (std::uint32_t a = begin; a < end; ++a)
        if (link(f.attachments[a].up).kind != LinkKind::InfiniBand) return false;
    return true;
}

const SwitchFabric& Topology::fabric() const {
    TTSIM_ASSERT(finalized_, "topology used before finalize()");
    return fabric_;
}

std::string Topology::connectivity_problem() const {
    const SwitchFabric& f = fabric();
    if (gpus_.empty()) return "the topology has no GPUs";
    // All GPUs in one NVLink domain: no scale-out path is needed.
    const int first_domain = gpus_.front().nvlink_domain_index;
    if (first_domain >= 0 && std::all_of(gpus_.begin(), gpus_.end(), [&](const GpuInfo& g) {
            return g.nvlink_domain_index == first_domain;
        }))
        return {};

    auto describe = [&](const GpuInfo& g) {
        return "GPU rank " + std::to_string(g.rank) + " (" + (*vertices_)[g.vertex].name + ")";
    };
    // Otherwise every GPU must reach, through its own NIC, the GPUs outside its domain: all NICs must touch
    // one common switch component. Pick the component touched by the most NICs and report one that misses it.
    // The components each NIC touches, without repeats: GPU r's are touched[touched_begin[r] ..
    // touched_begin[r + 1]) (one flat array rather than a set per GPU: a NIC has one or a few attachments).
    std::vector<int> touched;
    std::vector<std::size_t> touched_begin(gpus_.size() + 1, 0);
    touched.reserve(f.attachments.size());
    std::vector<int> nic_count_per_component(f.switch_count(), 0);
    for (const GpuInfo& g : gpus_) {
        const auto r = static_cast<std::size_t>(g.rank);
        const std::size_t first = touched.size();
        for (std::uint32_t a = f.attachment_begin[r]; a < f.attachment_begin[r + 1]; ++a) {
            const int c = f.component[f.attachments[a].switch_index];
            if (std::find(touched.begin() + static_cast<std::ptrdiff_t>(first), touched.end(), c) == touched.end())
                touched.push_back(c);
        }
        touched_begin[r + 1] = touched.size();
        if (touched.size() == first)
            return describe(g) + " cannot reach GPUs outside its NVLink domain: its NIC " + (*vertices_)[g.nic].name +
                   " has no link to any network switch";
        for (std::size_t i = first; i < touched.size(); ++i) ++nic_count_per_component[static_cast<std::size_t>(touched[i])];
    }
    auto touches = [&](const GpuInfo& g, int component) {
        const auto r = static_cast<std::size_t>(g.rank);
        const auto from = touched.begin() + static_cast<std::ptrdiff_t>(touched_begin[r]);
        const auto to = touched.begin() + static_cast<std::ptrdiff_t>(touched_begin[r + 1]);
        return std::find(from, to, component) != to;
    };
    const auto main_component = static_cast<int>(
        std::max_element(nic_count_per_component.begin(), nic_count_per_component.end()) -
        nic_count_per_component.begin());
    const GpuInfo* reference = nullptr;
    for (const GpuInfo& g : gpus_)
        if (touches(g, main_component)) { reference = &g; break; }
    for (const GpuInfo& g : gpus_) {
        if (touches(g, main_component)) continue;
        return describe(g) + " cannot reach " + describe(*reference) + ": the switches its NIC " +
               (*vertices_)[g.nic].name + " connects to are not connected to those of " + (*vertices_)[reference->nic].name +
               " (the switch fabric is disconnected)";
    }
    return {};
}

TopologySummary Topology::summary() const {
    TopologySummary s;
    s.name = name_;
    s.gpus = gpu_count();
    s.nodes = node_count_;
    s.nvlink_domains = nvlink_domain_count_;
    for (Vertex v = 0; v < vertex_count(); ++v) {
        switch ((*vertices_)[v].kind) {
            case VertexKind::Nic: ++s.nics; break;
            case VertexKind::LeafSwitch: ++s.leaf_switches; break;
            case VertexKind::SpineSwitch: ++s.spine_switches; break;
            case VertexKind::CoreSwitch: ++s.core_switches; break;
            case VertexKind::SuperSpineSwitch: ++s.superspine_switches; break;
            case VertexKind::Switch: ++s.untiered_switches; break;
            default: break;
        }
    }
    s.fabric_tiers = (s.leaf_switches > 0) + (s.spine_switches > 0) + (s.superspine_switches > 0) + (s.core_switches > 0) +
                     (s.untiered_switches > 0 && s.leaf_switches == 0 ? 1 : 0);
    s.directed_links = links_.size();
    s.physical_links = links_.size() / 2;
    return s;
}

std::string TopologySummary::to_string() const {
    return fmt::format("topology {}: {} GPUs on {} nodes, {} NVLink domains, {} NICs\n"
                       "  switches: {} leaf, {} spine, {}{} core{} ({} tier{})\n"
                       "  links: {} full-duplex = {} directed\n",
                       name, gpus, nodes, nvlink_domains, nics, leaf_switches, spine_switches,
                       superspine_switches > 0 ? fmt::format("{} super-spine, ", superspine_switches) : "", core_switches,
                       untiered_switches > 0 ? fmt::format(", {} untiered", untiered_switches) : "", fabric_tiers,
                       fabric_tiers == 1 ? "" : "s", physical_links, directed_links);
}

std::vector<NetworkLink> Topology::network_links() const {
    std::vector<NetworkLink> out;
    out.reserve(links_.size());
    for (const LinkSpec& l : links_) out.push_back({l.bandwidth_bytes_per_s, l.latency, l.name.str()});
    return out;
}

double Topology::out_bandwidth(Vertex v, VertexKind to_kind) const {
    double total = 0.0;
    const TopologyGraph& g = graph();
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e)
        if ((*vertices_)[boost::target(*e, g)].kind == to_kind) total += links_[g[*e].link_id].bandwidth_bytes_per_s;
    return total;
}

std::vector<Vertex> Topology::vertices_of_kind(VertexKind kind) const {
    std::vector<Vertex> out;
    for (Vertex v = 0; v < vertex_count(); ++v)
        if ((*vertices_)[v].kind == kind) out.push_back(v);
    return out;
}

}  // namespace ttsim
