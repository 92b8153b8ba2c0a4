// Wiring of the DGX SuperPOD compute fabric, and of fat trees of any radix, 2 to 4 tiers, with or without rails.
//
// Sources: SPOD_H100 (network-fabrics, Table 4) and SPOD_B200 (architecture and components pages), as
// summarised in /work/shared/data/hardware/params.md section 2 and params.yaml links.dgx_superpod. Figures below
// are for the 64-port radix (32 ports down, 32 up); any even radix K splits the same way, K/2 down and K/2 up.
//
// Leaves (every tier count). Nodes are grouped into scalable units (SU) of 32 node slots. Rail-optimised (the
// SuperPOD's way, the default): each SU has one leaf per rail, and NIC k of every node of the SU plugs into leaf k
// of that SU (same-rail traffic inside an SU crosses one switch, SPOD_H100). Not rail-optimised: a node's NICs
// share a leaf, each leaf taking the next 32 NICs in (node, rail) order (4 DGX per leaf), so traffic between GPU i
// of one node and GPU j of another crosses one switch when the two nodes share a leaf, where rails would send it
// through a spine. A 64-port leaf thus has 32 ports down and 32 ports up, which makes it non-blocking.
//
// Oversubscription, per tier below the top (leaf, spine, and a four-tier fabric's super-spine). With a ratio R a
// switch keeps 32 / R uplink cables, each a full port (an oversubscribed fabric has fewer cables, not slower
// ones), rounded down to a whole cable (R = 3: 10 cables, 3.2:1 in effect); beyond R = 32 one cable is left,
// thinned to 32 / R of a port. While the cables are at least the switches above that it reaches, every trunk just
// has its share of them (a 2.0 fabric halves every trunk); with fewer, the switch reaches only as many switches
// above as it has cables, one cable each, the same first ones of its plane for every switch below (so every two
// still meet), and the switches above that nothing reaches (and the planes of the tiers above them) are not
// built. Thinning the trunks alone would be wrong: at R = 8
// a leaf-spine trunk of 2 cables would carry 100 Gb/s, and a flow held to one trunk (static ECMP, a SHARP
// aggregation tree's edge) would get a quarter of the one 400G cable it has on a real fabric: SHARP would lose 60 %
// of its bandwidth at 1,024 GPUs, ring under static routing 63 %.
//
// Two tiers (up to 64 leaves = 8 SU of DGX = 2,048 GPUs, SPOD_B200). Every leaf connects to EVERY spine,
// splitting its 32 uplinks evenly, so all rails share one spine group and cross-rail traffic needs only
// leaf -> spine -> leaf. The spine count is the number of 64-port switches that can terminate all leaf
// uplinks, rounded up to a power of two so that 32 uplinks divide evenly (integer cables per trunk). That
// reproduces SPOD_H100 Table 4: 1 SU 8 leaves / 4 spines (8 cables per leaf-spine pair), 2 SU 16/8, 3 SU
// 24/16 (provisioned like 4 SU), 4 SU 32/16; and SPOD_B200: 8 SU 64 leaves / 32 spines (1 cable per pair).
//
// The fewest tiers that hold the nodes, two or three, unless the tier count is given (2 to 4): a fourth tier is
// never chosen by itself (NVIDIA's SuperPOD designs stop at three; a fourth adds switches and hops).
//
// Three tiers (beyond 64 leaves, or when asked for). A leaf can no longer reach every spine (32 uplinks < spines), so spines
// are grouped per rail: units are grouped into pods of up to 32 SU; the leaves of rail r in pod p connect to
// every spine of group (p, r), G spines per group with G = the pod's units rounded up to a power of two (so
// each spine's 32 downlinks are filled when the pod is full). Spine number g of every group connects to
// every core of "plane" g, whose K cores terminate all those spines' 32 uplinks: K = rails x pods / 2
// (pods rounded up to a power of two). Cross-rail (or cross-pod) traffic goes leaf -> spine -> core ->
// spine -> leaf; same-rail traffic within a pod turns at the spine. Counts match SPOD_B200: 16 SU
// 128 leaves / 128 spines / 64 cores, 32 SU 256/256/128, 64 SU 512/512/256. The largest such fabric of
// 64-port switches has K = 32 and holds 65,536 NIC ports (2 x 32^3). Without rails, a spine group is each run of
// 32 leaves (pod p of the leaves in NIC order), and the same rules apply.
//
// Four tiers (when asked for). The spine groups are grouped again into zones of up to 32 groups (the groups in
// order: rail by rail within pod 0, then pod 1, ...); a zone has a super-spine plane per spine position g, of S
// super-spines each, S = the zone's groups rounded up to a divisor of 32, and spine g of every group of the zone
// connects to every super-spine of the zone's plane g. Super-spine (g, s) of every zone connects to every core
// of core plane (g, s), whose K cores terminate all zones' super-spine uplinks: K = zones / 2 rounded up to a
// divisor of 32. At most 64 zones x 32 groups x 32 leaves x 32 NICs = 2,097,152 NICs (2 x 32^4, K^4/8 for any
// radix K). Traffic turns at the lowest tier the two ends share: a leaf, a spine group, a zone, or the cores.
//
// Spray groups (adaptive routing, topology.hpp). NVIDIA InfiniBand switches put "all ports with minimal hops
// to destination" in one AR group and pick the output port per packet by load; the subnet manager enables it
// by default (IB_BRINGUP_AR: docs.nvidia.com/networking/display/ibclusterbringupprocedure/adaptive+routing,
// "TREE" algorithm for fat trees). On this fabric, for every flow that leaves a leaf upwards, ALL the leaf's
// up-links are minimal (every spine it reaches, or every spine of its group, leads to every destination at
// the same hop count), and in three tiers every spine of a group reaches the destination through every core
// of its plane. Spraying evenly at each switch then loads:
//   leaf -> spines of leaf L          1/G of each flow leaving L upwards        group "su<u>.rail<r>.leaf->spines"
//   spines -> leaf L                  1/G of each flow entering L from above    group "spines->su<u>.rail<r>.leaf"
//   spines of group A -> cores        1/(G K) of each flow leaving A upwards    group "pod<p>.rail<r>.spines->cores"
//   cores -> spines of group B        1/(G K) of each flow entering B           group "cores->pod<p>.rail<r>.spines"
// (G spines per group, or all spines in two tiers; K cores per plane); in four tiers, likewise
// "pod<p>.rail<r>.spines->superspines" and "zone<z>.superspines->cores" and their reverses (a block's up-links
// carry equal shares of every flow leaving it, as each switch below sprays evenly). Every member of a group carries the
// same share of every flow crossing it, which is what makes each group exactly one constraint.
#include "topologies/superpod_fabric.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "sim/errors.hpp"

namespace ttsim {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }
// The smallest divisor of `n` that is at least `x` (n itself at most): how many switches share a switch's `n`
// up-ports in whole cables each. For the 64-port radix (n = 32) the divisors are the powers of two, as the
// SuperPOD documents build it; for 144 ports (n = 72) they are 1, 2, 3, 4, 6, 8, 9, 12, 18, 24, 36, 72.
int divisor_at_least(int x, int n) {
    for (int d = std::max(x, 1); d < n; ++d)
        if (n % d == 0) return d;
    return n;
}

// Leaves in creation order: rail-optimised, unit by unit and rail by rail (leaf u * rails + r); otherwise by NIC,
// each leaf taking the next half-radix NICs in (node, rail) order.
int leaf_of(const GpuInfo& g, const SuperPodShape& shape, int nodes_per_unit, int half) {
    if (shape.rail_optimized) return g.node / nodes_per_unit * shape.rails + g.local_index;
    return (g.node * shape.rails + g.local_index) / half;
}

// The block of tier t + 1 that block `b` of tier t belongs to (0 under the top tier). Tier 1 -> 2: the leaves of
// one rail in one pod (rail-optimised) or each run of half-radix leaves; tier 2 -> 3: each run of half-radix
// spine groups.
int parent_block(const SuperPodShape& shape, int tier, int b, int half) {
    if (tier + 1 == shape.tiers) return 0;
    if (tier == 1 && shape.rail_optimized) return b / shape.rails / half * shape.rails + b % shape.rails;
    return b / half;
}

// Names: blocks of tier 2 ("pod3.rail5", or "pod3" without rails) and 3 ("zone1"), switches by tier and position.
std::string block_name(const SuperPodShape& shape, int tier, int b) {
    if (tier == 3) return "zone" + std::to_string(b);
    if (!shape.rail_optimized) return "pod" + std::to_string(b);
    return "pod" + std::to_string(b / shape.rails) + ".rail" + std::to_string(b % shape.rails);
}
std::string tier_plural(const SuperPodShape& shape, int tier) {
    if (tier == shape.tiers && tier >= 3) return "cores";
    return tier == 2 ? "spines" : "superspines";
}
VertexKind tier_kind(const SuperPodShape& shape, int tier) {
    if (tier == shape.tiers && tier >= 3) return VertexKind::CoreSwitch;
    return tier == 2 ? VertexKind::SpineSwitch : VertexKind::SuperSpineSwitch;
}
std::string switch_name(const SuperPodShape& shape, int tier, int block, int plane, int k) {
    const std::string index = std::to_string(k);
    if (tier == shape.tiers)
        return tier == 2 ? "spine" + index : "plane" + std::to_string(plane) + ".core" + index;
    if (tier == 2) return block_name(shape, 2, block) + ".spine" + index;
    return block_name(shape, 3, block) + ".plane" + std::to_string(plane) + ".superspine" + index;
}

}  // namespace

SuperPodShape superpod_shape(int nodes, int rails, int nodes_per_unit, int switch_ports, int tiers,
                             bool rail_optimized) {
    TTSIM_ASSERT(nodes >= 1 && rails >= 1 && std::has_single_bit(static_cast<unsigned>(rails)),
                 "SuperPOD fabric needs >= 1 node and a power-of-two rail count");
    const int half = switch_ports / 2;
    TTSIM_ASSERT(nodes_per_unit == half, "leaf switches are split half down (one port per node), half up");
    TTSIM_ASSERT(tiers == 0 || (tiers >= kMinFabricTiers && tiers <= kMaxFabricTiers), "fat trees have 2 to 4 tiers");
    SuperPodShape shape;
    shape.rails = rails;
    shape.rail_optimized = rail_optimized;
    shape.units = ceil_div(nodes, nodes_per_unit);
    const int leaves = rail_optimized ? shape.units * rails : ceil_div(nodes * rails, half);
    shape.pods = rail_optimized ? ceil_div(shape.units, half) : ceil_div(leaves, half);
    const int groups = rail_optimized ? shape.pods * rails : shape.pods;
    shape.tiers = tiers != 0 ? tiers : leaves <= switch_ports ? 2 : 3;
    shape.blocks[1] = leaves;
    if (shape.tiers >= 3) shape.blocks[2] = groups;
    if (shape.tiers == 4) shape.blocks[3] = ceil_div(groups, half);
    // Below the top, a block's switches each reach one switch of every child block, so a plane holds at least as
    // many switches as the first (fullest) block has children; the top tier's switches put all their ports down.
    const int under_top = shape.blocks[static_cast<std::size_t>(shape.tiers - 1)];
    TTSIM_ASSERT(under_top <= switch_ports, "fabric for " + std::to_string(nodes) + " nodes needs more than " +
                                                std::to_string(shape.tiers) + " switch tiers");
    const int first_children[] = {0, 0, rail_optimized ? std::min(shape.units, half) : std::min(leaves, half),
                                  std::min(groups, half)};
    shape.switches[1] = leaves;
    int positions = 1;   // switches of tier t per block of tier t
    for (int t = 2; t <= shape.tiers; ++t) {
        const auto i = static_cast<std::size_t>(t);
        const bool top = t == shape.tiers;
        shape.per_plane[i] = divisor_at_least(top ? ceil_div(under_top, 2) : first_children[t], half);
        shape.cables[i] = half / shape.per_plane[i];
        positions *= shape.per_plane[i];
        shape.switches[i] = (top ? 1 : shape.blocks[i]) * positions;
    }
    return shape;
}

SuperPodSize superpod_size(const SuperPodShape& shape, int nics) {
    // NIC-leaf cables, then every switch below the top to each switch of its plane above; two directed links each.
    SuperPodSize size;
    std::size_t physical = static_cast<std::size_t>(nics);
    for (int t = 1; t <= shape.tiers; ++t) {
        const auto i = static_cast<std::size_t>(t);
        size.switches += static_cast<std::size_t>(shape.switches[i]);
        if (t < shape.tiers)
            physical += static_cast<std::size_t>(shape.switches[i]) * static_cast<std::size_t>(shape.per_plane[i + 1]);
    }
    size.directed_links = 2 * physical;
    return size;
}

std::int64_t superpod_max_nodes(int rails, int nodes_per_unit, int switch_ports, int tiers, bool rail_optimized) {
    if (tiers == 0) tiers = 3;
    const std::int64_t half = switch_ports / 2;
    // The top tier joins at most `switch_ports` blocks of the tier below, each of half-radix children.
    std::int64_t leaves = switch_ports;
    for (int t = 3; t <= tiers; ++t) leaves *= half;
    if (!rail_optimized) return leaves * half / rails;
    // Rail-optimised: whole units under two tiers (`rails` leaves each), whole pods (`rails` spine groups of half
    // units each) under more.
    if (tiers == 2) return std::max<std::int64_t>(1, switch_ports / rails) * nodes_per_unit;
    const std::int64_t groups = leaves / half;
    return std::max<std::int64_t>(1, groups / rails) * half * nodes_per_unit;
}

SuperPodShape build_superpod_fabric(Topology& topology, const SuperPodFabricSpec& spec) {
    for (const double ratio : spec.oversubscription) TTSIM_ASSERT(ratio >= 1.0, "oversubscription below 1");
    int rails = 0;
    for (const GpuInfo& g : topology.gpus()) rails = std::max(rails, g.local_index + 1);
    const SuperPodShape shape = superpod_shape(topology.node_count(), rails, spec.nodes_per_unit, spec.switch_ports,
                                               spec.tiers, spec.rail_optimized);
    const int half = spec.switch_ports / 2;
    const int tiers = shape.tiers;

    // Latency of a directed cable = propagation + forwarding of the switch it enters (see topology.hpp).
    const SimTime into_switch = spec.cable_latency + spec.switch_latency;
    const SimTime into_nic = spec.cable_latency;
    const double port = spec.port_bandwidth_bytes_per_s;
    // Per tier t >= 2: the switches of a plane each switch below reaches (`reached`: the plane's switches built)
    // and each trunk's bandwidth: the half-radix uplinks below, 1 / R of them cabled, spread over them (top of file).
    std::array<int, kMaxFabricTiers + 1> reached{}, positions{};
    std::array<double, kMaxFabricTiers + 1> trunk_bandwidth{};
    positions[1] = 1;
    for (int t = 2; t <= tiers; ++t) {
        const auto i = static_cast<std::size_t>(t);
        const double exact = half / spec.oversubscription[i - 2];
        const int cables = std::max(1, static_cast<int>(std::floor(exact + 1e-9)));
        reached[i] = std::min(cables, shape.per_plane[i]);
        trunk_bandwidth[i] = (exact < 1 ? exact : static_cast<double>(cables)) * port / reached[i];
        positions[i] = positions[i - 1] * reached[i];
    }

    // Switches of every tier, indexed [block * positions + plane * reached + k] (tier 1: [leaf]).
    std::array<std::vector<Vertex>, kMaxFabricTiers + 1> switches;
    switches[1].reserve(static_cast<std::size_t>(shape.leaves()));
    for (int l = 0; l < shape.leaves(); ++l)
        switches[1].push_back(topology.add_vertex(
            VertexKind::LeafSwitch, shape.rail_optimized
                                        ? "su" + std::to_string(l / rails) + ".rail" + std::to_string(l % rails) + ".leaf"
                                        : "leaf" + std::to_string(l)));
    for (const GpuInfo& g : topology.gpus())
        topology.add_duplex_link(g.nic, switches[1][static_cast<std::size_t>(leaf_of(g, shape, spec.nodes_per_unit, half))],
                                 spec.link_kind, port, into_switch, into_nic);
    for (int t = 2; t <= tiers; ++t) {
        const auto i = static_cast<std::size_t>(t);
        const int blocks = t == tiers ? 1 : shape.blocks[i];
        for (int b = 0; b < blocks; ++b)
            for (int p = 0; p < positions[i - 1]; ++p)
                for (int k = 0; k < reached[i]; ++k)
                    switches[i].push_back(topology.add_vertex(tier_kind(shape, t), switch_name(shape, t, b, p, k)));
    }

    topology.set_routing(spec.routing);
    // Each switch below the top, in creation order (so block by block), to every switch of its plane in the block
    // above; each block's up-links and down-links form one spray group (top of file).
    for (int t = 1; t < tiers; ++t) {
        const auto i = static_cast<std::size_t>(t);
        const auto up = i + 1;
        std::vector<LinkId> to_above, from_above;
        for (std::size_t s = 0; s < switches[i].size(); ++s) {
            const int block = static_cast<int>(s) / positions[i];
            const int plane = static_cast<int>(s) % positions[i];
            const int above = parent_block(shape, t, block, half);
            for (int k = 0; k < reached[up]; ++k) {
                const auto parent = static_cast<std::size_t>((above * positions[i] + plane) * reached[up] + k);
                const LinkId link = topology.add_duplex_link(switches[i][s], switches[up][parent], spec.link_kind,
                                                             trunk_bandwidth[up], into_switch, into_switch);
                to_above.push_back(link);
                from_above.push_back(link + 1);
            }
            if ((s + 1) % static_cast<std::size_t>(positions[i]) != 0) continue;   // the block has more switches
            if (to_above.size() > 1) {
                const std::string name =
                    t == 1 ? topology.vertex(switches[i][s]).name : block_name(shape, t, block) + "." + tier_plural(shape, t);
                topology.add_spray_group(name + "->" + tier_plural(shape, t + 1), std::move(to_above));
                topology.add_spray_group(tier_plural(shape, t + 1) + "->" + name, std::move(from_above));
            }
            to_above.clear();
            from_above.clear();
        }
    }
    return shape;
}

double superpod_switch_equivalents(int gpus, int gpus_per_node, int nodes_per_unit, int switch_ports, int tiers,
                                  bool rail_optimized) {
    const int nodes = (gpus + gpus_per_node - 1) / gpus_per_node;
    if (nodes <= 1) return 0;
    const SuperPodShape shape =
        superpod_shape(nodes, gpus_per_node, nodes_per_unit, switch_ports, tiers, rail_optimized);
    return static_cast<double>(gpus) * (2 * shape.tiers - 1) / switch_ports;
}

}  // namespace ttsim
