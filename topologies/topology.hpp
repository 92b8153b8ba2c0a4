// The physical cluster as a Boost.Graph: which devices exist and which links join them.
//
// While it is built, a topology is a vertex list and a link list (add_vertex, add_duplex_link append to
// vectors); finalize() then indexes the links by source vertex as a compressed-sparse-row Boost graph. Every
// prediction builds its topology afresh (16,384 GPUs: ~10^5 directed links), and an adjacency_list grown edge
// by edge costs one heap allocation per edge (its bundled property) plus the out-edge vectors' regrowth, which
// was most of a large prediction's time; the CSR graph holds the same out-edges, in the same order, in two
// arrays.
//
// Vertices are devices: GPUs, NVLink switch domains, NICs and network switches (leaf / spine / core, or
// untiered switches from a YAML description). A whole NVLink switch domain is ONE vertex: the 4 NVSwitch
// chips of a DGX H100 (or the 18 NVLink switch chips of a GB200 NVL72 rack) behave as one non-blocking
// crossbar for bandwidth purposes, and every GPU has one link (all its NVLink lanes) to that vertex.
//
// Every physical link is full duplex and becomes TWO directed links, so the two directions never share
// bandwidth. Link ids are dense: the physical link k owns ids 2k (a->b) and 2k+1 (b->a), so the reverse
// of link `id` is `id ^ 1`. The flow network (sim/flow_network.hpp) consumes links as a vector indexed by
// these ids: see network_links().
//
// Parallel cables between the same two switches (e.g. 8 cables from a leaf to each spine of one SU) are one
// trunk link whose bandwidth is the sum: a single flow cannot use more than its 50 GB/s NIC anyway, and the
// trunk keeps the graph (and the routing) small.
//
// Latency convention used by the presets: a directed link's latency is its propagation delay plus the
// forwarding latency of the switch it ENTERS, so the sum over a path counts each switch traversal once.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include "sim/flow_network.hpp"
#include "sim/time.hpp"

namespace ttsim {

enum class VertexKind : std::uint8_t {
    Gpu,
    NvSwitch,      // one NVLink switch domain (node or rack), modelled as one crossbar
    Nic,           // scale-out network adapter, one per GPU
    LeafSwitch,    // network switches by tier; `Switch` is an untiered switch from a YAML description
    SpineSwitch,
    CoreSwitch,
    SuperSpineSwitch,  // the third of four tiers (between spine and core)
    Switch,
};

enum class LinkKind : std::uint8_t { NvLink, Pcie, InfiniBand, Ethernet };

std::string_view to_string(VertexKind kind);
std::string_view to_string(LinkKind kind);
// Network switches are the only vertices inter-domain traffic may pass through (GPUs and NICs never
// forward; NVLink switches only join the GPUs of their own domain).
constexpr bool is_network_switch(VertexKind kind) {
    return kind == VertexKind::LeafSwitch || kind == VertexKind::SpineSwitch || kind == VertexKind::CoreSwitch ||
           kind == VertexKind::SuperSpineSwitch || kind == VertexKind::Switch;
}

struct VertexProps {
    VertexKind kind = VertexKind::Gpu;
    std::string name;
};
struct EdgeProps {
    std::uint32_t link_id = 0;
};
// Out-edges of every vertex, in link creation order (link id order), each carrying its directed link id.
using TopologyGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, EdgeProps>;
using Vertex = TopologyGraph::vertex_descriptor;
using LinkId = std::uint32_t;
inline constexpr Vertex kNoVertex = std::numeric_limits<Vertex>::max();
inline constexpr LinkId kNoLink = std::numeric_limits<LinkId>::max();

// How the scale-out switch fabric spreads traffic over equal-cost (shortest) paths.
//  - StaticEcmp: each flow takes ONE shortest path, chosen per hop by a hash of (source, destination, flow
//    key, hop) (routing.hpp). Two heavy flows hashed onto the same up-link share it while its neighbours
//    idle; that is what static ECMP does on a real fabric.
//  - Adaptive: each flow is spread evenly over ALL shortest paths, as InfiniBand adaptive routing does when
//    it sprays the packets of a flow over every equal-cost output port (NVIDIA Quantum-2 AR, the DGX
//    SuperPOD default). Modelled with spray groups (below); the even split is the ideal of AR (real AR
//    reorders and rebalances by queue depth; no published efficiency figure, so none is applied).
enum class FabricRouting : std::uint8_t { StaticEcmp, Adaptive };
std::string_view to_string(FabricRouting routing);  // "static", "adaptive"
// How reports state a routing: "static ECMP routing", "adaptive routing".
std::string routing_note(FabricRouting routing);
// "static" / "ecmp" / "static-ecmp", "adaptive" / "ar"; InputError otherwise.
FabricRouting parse_fabric_routing(std::string_view text);
// The two spellings user inputs accept (`--routing`, the `routing:` keys of scenarios and YAML topologies).
inline const std::initializer_list<std::string_view> kFabricRoutingNames = {"adaptive", "static"};

// A spray group: directed links that adaptive routing loads in EQUAL shares of every flow crossing any of
// them, e.g. the up-links of one leaf switch (every flow leaving the leaf upwards is sprayed over all of
// them). Under even spraying, member m carries w = 1/k of each such flow (k members), so its max-min
// constraint is sum(rate) / k <= c_m: the same inequality for every member, i.e. the group is exactly ONE
// link of capacity k x min(c_m) that each flow crosses once per traversal. The fabric builder declares the
// groups (it knows which links are equal-cost for every flow that uses them; superpod_fabric.cpp); a link
// belongs to at most one group.
struct SprayGroup {
    std::string name;             // "su3.rail2.leaf->spines"
    std::vector<LinkId> members;  // directed link ids
};

// The name of a directed link, "<from vertex name>-><to vertex name>" (e.g. "node3.gpu5->node3.nvswitch"),
// composed when asked for. Names are for messages and reports (the busiest link, a capacity error), a handful
// per prediction, while a 16,384-GPU topology has ~10^5 directed links: storing every name cost one heap string
// per link to build and free, a third of such a prediction. Refers to the vertex names of its topology, which
// stay put when the topology moves; like a reference, it must not outlive the topology.
class LinkName {
public:
    LinkName() = default;
    LinkName(const std::vector<VertexProps>* vertices, std::size_t from, std::size_t to)
        : vertices_(vertices), from_(from), to_(to) {}
    std::string str() const;
    operator std::string() const { return str(); }  // NOLINT: a name reads as a string
    friend bool operator==(const LinkName& name, std::string_view text) { return name.str() == text; }

private:
    const std::vector<VertexProps>* vertices_ = nullptr;
    std::size_t from_ = 0, to_ = 0;
};

// One direction of one physical link.
struct LinkSpec {
    LinkId id = kNoLink;
    Vertex from = kNoVertex;
    Vertex to = kNoVertex;
    LinkKind kind = LinkKind::NvLink;
    double bandwidth_bytes_per_s = 0.0;  // per direction
    SimTime latency;                     // propagation + forwarding of the switch it enters
    LinkName name;                       // "node3.gpu5->node3.nvswitch"
    LinkId reverse() const { return id ^ 1u; }
};

// Bandwidth (per direction) and latency of a GPU's port; latency_up is GPU->device, latency_down back.
struct PortSpec {
    double bandwidth_bytes_per_s = 0.0;
    SimTime latency_up;
    SimTime latency_down;
};

struct GpuInfo {
    int rank = 0;         // global rank 0..G-1
    int node = 0;         // node (DGX, or GB200 compute tray) index
    int local_index = 0;  // index within the node = rail (NIC k of a node sits on rail k)
    Vertex vertex = kNoVertex;
    Vertex nic = kNoVertex;            // its own NIC
    Vertex nvlink_domain = kNoVertex;  // its NVLink switch vertex; kNoVertex if it has no NVLink
    int nvlink_domain_index = -1;      // dense index of that domain; -1 if none
    LinkId nvlink_up = kNoLink, nvlink_down = kNoLink;  // GPU->NVLink switch, NVLink switch->GPU
    LinkId pcie_up = kNoLink, pcie_down = kNoLink;      // GPU->NIC, NIC->GPU
};

struct TopologySummary {
    std::string name;
    int gpus = 0, nodes = 0, nvlink_domains = 0, nics = 0;
    int leaf_switches = 0, spine_switches = 0, superspine_switches = 0, core_switches = 0, untiered_switches = 0;
    int fabric_tiers = 0;  // 0 = no scale-out switches; 2 = leaf/spine; 3 = leaf/spine/core; 4 = with super-spines
    std::size_t physical_links = 0, directed_links = 0;
    std::string to_string() const;  // one line per item, for `ttsim` reports
};

// The scale-out switch fabric, indexed for routing: network switches renumbered densely 0..S-1, their
// switch-to-switch links as a compact adjacency (CSR), and each GPU's NIC attachments. Built by finalize().
struct SwitchFabric {
    struct NicAttachment {
        std::uint32_t switch_index;
        LinkId up;    // NIC -> switch
        LinkId down;  // switch -> NIC
    };
    // Compressed sparse row: the fastest Boost.Graph layout to traverse, and the BFS runs once per leaf.
    using SwitchGraph = boost::compressed_sparse_row_graph<boost::directedS>;

    std::vector<std::int32_t> switch_of_vertex;  // -1 for non-switch vertices
    std::vector<Vertex> vertex_of_switch;
    // Switch-to-switch hops of switch s are [hop_begin[s], hop_begin[s+1]): the neighbor (dense switch index)
    // and the directed link to it, kept as two arrays so that scanning neighbors touches only 4 bytes each.
    std::vector<std::uint32_t> hop_begin;  // size S+1
    std::vector<std::uint32_t> hop_neighbor;
    std::vector<LinkId> hop_link;
    std::vector<std::uint32_t> attachment_begin;  // per GPU rank, size G+1
    std::vector<NicAttachment> attachments;
    std::vector<int> component;  // connected component of each switch
    // Switches only, same switch-to-switch edges (for Boost BFS). Behind a pointer because Boost 1.74's
    // adjacency_list has no move constructor: without it every move of a Topology would copy the graphs.
    std::unique_ptr<SwitchGraph> graph;

    std::size_t switch_count() const { return vertex_of_switch.size(); }
};

class Topology {
public:
    explicit Topology(std::string name);
    Topology(Topology&&) noexcept = default;
    Topology& operator=(Topology&&) noexcept = default;
    Topology(const Topology&) = delete;  // large (100k+ links at scale); Routers refer to it
    Topology& operator=(const Topology&) = delete;

    // ---- building (presets and the YAML loader) ----
    // Capacity for `gpus` GPUs, `vertices` vertices and `directed_links` directed links in all, when the builder
    // knows them: saves regrowing (and moving) the lists while a large cluster is built.
    void reserve(std::size_t gpus, std::size_t vertices, std::size_t directed_links);
    Vertex add_vertex(VertexKind kind, std::string name);
    // One physical full-duplex link a<->b: returns the id of a->b; b->a is that id + 1.
    LinkId add_duplex_link(Vertex a, Vertex b, LinkKind kind, double bandwidth_bytes_per_s,
                           SimTime latency_a_to_b, SimTime latency_b_to_a);
    // Adds GPU `rank` = next rank, with its own NIC ("node<n>.nic<k>") over PCIe, and (if nvlink_domain is
    // not kNoVertex) its NVLink link to that domain. Ranks are assigned in call order.
    int add_gpu(int node, int local_index, Vertex nvlink_domain, const PortSpec& nvlink, const PortSpec& pcie);
    // Declares a spray group (see SprayGroup): at least two links, none already in a group.
    void add_spray_group(std::string name, std::vector<LinkId> members);
    // Default StaticEcmp. Adaptive applies to the spray groups only: a topology without groups routes
    // every flow on its static ECMP path whatever this says.
    void set_routing(FabricRouting routing);
    // Builds the routing index. Call once, after the last add_*; the topology is read-only afterwards.
    void finalize();
    // Empty when every GPU can reach every other GPU under the routing rules (same NVLink domain, or
    // own NIC -> network switches -> destination's NIC); otherwise a sentence naming an unreachable pair.
    std::string connectivity_problem() const;

    // ---- queries ----
    const std::string& name() const { return name_; }
    // The link graph; built by finalize().
    const TopologyGraph& graph() const;
    int gpu_count() const { return static_cast<int>(gpus_.size()); }
    int node_count() const { return node_count_; }
    const GpuInfo& gpu(int rank) const { return gpus_.at(static_cast<std::size_t>(rank)); }
    const std::vector<GpuInfo>& gpus() const { return gpus_; }
    const std::vector<LinkSpec>& links() const { return links_; }
    const LinkSpec& link(LinkId id) const { return links_.at(id); }
    const VertexProps& vertex(Vertex v) const { return (*vertices_)[v]; }
    std::size_t vertex_count() const { return vertices_->size(); }
    const SwitchFabric& fabric() const;
    // GPU `rank`'s NIC attaches to the switch fabric, every attachment over InfiniBand: where SHARP can reduce
    // (the collectives' GroupLayout::infiniband_fabric and a topology file's SHARP check ask this one question).
    bool attached_over_infiniband(int rank) const;
    TopologySummary summary() const;
    // The links in the form the flow network takes, index = link id.
    std::vector<NetworkLink> network_links() const;
    // Sum of the bandwidth of the directed links leaving `v` whose target has kind `to_kind`.
    double out_bandwidth(Vertex v, VertexKind to_kind) const;
    // Vertices of a kind, in creation order.
    std::vector<Vertex> vertices_of_kind(VertexKind kind) const;
    FabricRouting routing() const { return routing_; }
    const std::vector<SprayGroup>& spray_groups() const { return spray_groups_; }
    // Index into spray_groups() of the group holding directed link `id`, or -1.
    std::int32_t spray_group_of(LinkId id) const {
        return id < spray_group_of_link_.size() ? spray_group_of_link_[id] : -1;
    }

private:
    std::string name_;
    // Behind a pointer so that it stays put when the topology moves: LinkName refers to it.
    std::unique_ptr<std::vector<VertexProps>> vertices_;
    std::unique_ptr<TopologyGraph> graph_;  // built by finalize(); a pointer, as SwitchFabric::graph
    std::vector<LinkSpec> links_;
    std::vector<GpuInfo> gpus_;
    int node_count_ = 0;
    int nvlink_domain_count_ = 0;
    std::vector<int> domain_index_of_vertex_;  // dense NVLink domain index per vertex, grown on demand
    SwitchFabric fabric_;
    FabricRouting routing_ = FabricRouting::StaticEcmp;
    std::vector<SprayGroup> spray_groups_;
    std::vector<std::int32_t> spray_group_of_link_;  // per directed link, grown on demand; -1 = none
    bool finalized_ = false;
};

}  // namespace ttsim
