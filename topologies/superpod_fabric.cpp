// Wiring of the DGX SuperPOD compute fabric.
//
// Sources: SPOD_H100 (network-fabrics, Table 4) and SPOD_B200 (architecture and components pages), as
// summarised in /work/shared/data/hardware/params.md section 2 and params.yaml links.dgx_superpod.
//
// Leaves (both tiers). Nodes are grouped into scalable units (SU) of 32 node slots. Each SU has one leaf per
// rail, and NIC k of every node of the SU plugs into leaf k of that SU ("rail-optimised": same-rail traffic
// inside an SU crosses one switch, SPOD_H100). A 64-port leaf thus has 32 ports down (one per node) and 32
// ports up, which makes it non-blocking. With an oversubscription ratio R a leaf keeps 32 / R uplink cables,
// each a full port (an oversubscribed fabric has fewer cables, not slower ones), rounded down to a whole cable
// (R = 3: 10 cables, 3.2:1 in effect); beyond R = 32 one cable is left, thinned to 32 / R of a port. While the
// cables are at least the spines a leaf reaches, every trunk just has its share of them (a 2.0 fabric halves
// every trunk); with fewer, the leaf reaches only as many spines as it has cables, one cable each, the same first
// spines of its group for every leaf (so every two leaves still meet at a spine), and the spines (and in three
// tiers their core planes) that no leaf reaches are not built. Thinning the trunks alone would be wrong: at R = 8
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
// Three tiers (beyond 64 leaves). A leaf can no longer reach every spine (32 uplinks < spines), so spines
// are grouped per rail: units are grouped into pods of up to 32 SU; the leaves of rail r in pod p connect to
// every spine of group (p, r), G spines per group with G = the pod's units rounded up to a power of two (so
// each spine's 32 downlinks are filled when the pod is full). Spine number g of every group connects to
// every core of "plane" g, whose K cores terminate all those spines' 32 uplinks: K = rails x pods / 2
// (pods rounded up to a power of two). Cross-rail (or cross-pod) traffic goes leaf -> spine -> core ->
// spine -> leaf; same-rail traffic within a pod turns at the spine. Counts match SPOD_B200: 16 SU
// 128 leaves / 128 spines / 64 cores, 32 SU 256/256/128, 64 SU 512/512/256. The largest such fabric of
// 64-port switches has K = 32 and holds 65,536 NIC ports (2 x 32^3).
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
// (G spines per group, or all spines in two tiers; K cores per plane). Every member of a group carries the
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

}  // namespace

SuperPodShape superpod_shape(int nodes, int rails, int nodes_per_unit, int switch_ports) {
    TTSIM_ASSERT(nodes >= 1 && rails >= 1 && std::has_single_bit(static_cast<unsigned>(rails)),
                 "SuperPOD fabric needs >= 1 node and a power-of-two rail count");
    const int half = switch_ports / 2;
    TTSIM_ASSERT(nodes_per_unit == half, "leaf switches are split half down (one port per node), half up");
    SuperPodShape shape;
    shape.rails = rails;
    shape.units = ceil_div(nodes, nodes_per_unit);
    shape.leaves = shape.units * rails;
    if (shape.leaves <= switch_ports) {
        shape.tiers = 2;
        shape.pods = 1;
        shape.spines = divisor_at_least(ceil_div(shape.leaves * half, switch_ports), half);
        shape.spines_per_group = shape.spines;
        shape.cables_leaf_to_spine = half / shape.spines;
        return shape;
    }
    shape.tiers = 3;
    shape.pods = ceil_div(shape.units, half);
    const int units_per_pod = shape.pods == 1 ? shape.units : half;
    shape.spines_per_group = divisor_at_least(units_per_pod, half);
    shape.spines = shape.pods * rails * shape.spines_per_group;
    shape.cables_leaf_to_spine = half / shape.spines_per_group;
    // Each core of a plane terminates the plane's spines (one per (pod, rail) group) with whole cables.
    TTSIM_ASSERT(rails * shape.pods <= switch_ports,
                 "fabric for " + std::to_string(nodes) + " nodes needs more than three switch tiers");
    shape.cores_per_plane = divisor_at_least(ceil_div(rails * shape.pods, 2), half);
    shape.cables_spine_to_core = half / shape.cores_per_plane;
    shape.cores = shape.spines_per_group * shape.cores_per_plane;
    return shape;
}

SuperPodSize superpod_size(const SuperPodShape& shape, int nics) {
    const auto leaves = static_cast<std::size_t>(shape.leaves);
    const auto spines = static_cast<std::size_t>(shape.spines);
    // NIC-leaf cables, then leaf-spine trunks (every leaf to every spine of its group) and spine-core trunks
    // (every spine to every core of its plane); two directed links each.
    std::size_t physical = static_cast<std::size_t>(nics) + leaves * static_cast<std::size_t>(shape.spines_per_group);
    if (shape.tiers == 3) physical += spines * static_cast<std::size_t>(shape.cores_per_plane);
    return {leaves + spines + static_cast<std::size_t>(shape.cores), 2 * physical};
}

int superpod_max_nodes(int rails, int nodes_per_unit, int switch_ports) {
    // Largest pod count with rails * pods / 2 <= ports / 2 cores per plane.
    const int max_pods = std::max(1, switch_ports / rails);
    return max_pods * (switch_ports / 2) * nodes_per_unit;
}

SuperPodShape build_superpod_fabric(Topology& topology, const SuperPodFabricSpec& spec) {
    TTSIM_ASSERT(spec.oversubscription >= 1.0 && spec.spine_oversubscription >= 1.0, "oversubscription below 1");
    int rails = 0;
    for (const GpuInfo& g : topology.gpus()) rails = std::max(rails, g.local_index + 1);
    const SuperPodShape shape =
        superpod_shape(topology.node_count(), rails, spec.nodes_per_unit, spec.switch_ports);

    // Latency of a directed cable = propagation + forwarding of the switch it enters (see topology.hpp).
    const SimTime into_switch = spec.cable_latency + spec.switch_latency;
    const SimTime into_nic = spec.cable_latency;
    const double port = spec.port_bandwidth_bytes_per_s;
    // The spines each leaf reaches (of all of them in two tiers, of its group in three) and each trunk's bandwidth:
    // the leaf's uplink cables, 32 / R, spread over them (see the top of the file).
    const double exact_cables = (spec.switch_ports / 2) / spec.oversubscription;
    const int cables = std::max(1, static_cast<int>(std::floor(exact_cables + 1e-9)));
    const int reached = std::min(cables, shape.spines_per_group);
    const double leaf_spine_bw = (exact_cables < 1 ? exact_cables : static_cast<double>(cables)) * port / reached;
    // Spine uplinks, likewise: of a spine's half-radix up-ports, 1 / R_spine are cabled, spread over the cores of
    // its plane; with fewer cables than cores, it reaches as many cores as it has cables (the first ones of the
    // plane, for every spine, so every two spines still meet), and the cores no spine reaches are not built.
    const double exact_core_cables = (spec.switch_ports / 2) / spec.spine_oversubscription;
    const int core_cables = std::max(1, static_cast<int>(std::floor(exact_core_cables + 1e-9)));
    const int cores_reached = std::min(core_cables, std::max(shape.cores_per_plane, 1));
    const double spine_core_bw =
        (exact_core_cables < 1 ? exact_core_cables : static_cast<double>(core_cables)) * port / cores_reached;

    // Leaves, indexed [unit * rails + rail].
    std::vector<Vertex> leaves;
    leaves.reserve(static_cast<std::size_t>(shape.leaves));
    for (int u = 0; u < shape.units; ++u)
        for (int r = 0; r < rails; ++r)
            leaves.push_back(topology.add_vertex(VertexKind::LeafSwitch,
                                                 "su" + std::to_string(u) + ".rail" + std::to_string(r) + ".leaf"));
    for (const GpuInfo& g : topology.gpus()) {
        const int unit = g.node / spec.nodes_per_unit;
        topology.add_duplex_link(g.nic, leaves[static_cast<std::size_t>(unit * rails + g.local_index)],
                                 spec.link_kind, port, into_switch, into_nic);
    }

    topology.set_routing(spec.routing);
    // Up- and down-links of each leaf, [unit * rails + rail], for its spray groups.
    std::vector<std::vector<LinkId>> leaf_up(leaves.size()), leaf_down(leaves.size());
    auto declare_leaf_groups = [&] {
        for (std::size_t l = 0; l < leaves.size(); ++l) {
            const std::string leaf_name = topology.vertex(leaves[l]).name;
            topology.add_spray_group(leaf_name + "->spines", std::move(leaf_up[l]));
            topology.add_spray_group("spines->" + leaf_name, std::move(leaf_down[l]));
        }
    };

    if (shape.tiers == 2) {
        std::vector<Vertex> spines;
        for (int s = 0; s < reached; ++s)   // the spines no leaf reaches are not built
            spines.push_back(topology.add_vertex(VertexKind::SpineSwitch, "spine" + std::to_string(s)));
        for (std::size_t l = 0; l < leaves.size(); ++l)
            for (Vertex spine : spines) {
                const LinkId up = topology.add_duplex_link(leaves[l], spine, spec.link_kind, leaf_spine_bw,
                                                           into_switch, into_switch);
                leaf_up[l].push_back(up);
                leaf_down[l].push_back(up + 1);
            }
        if (reached > 1) declare_leaf_groups();
        return shape;
    }

    // Three tiers. Spines indexed [(pod * rails + rail) * G + g]; cores [g * K + k].
    const int per_group = reached;   // spines built per (pod, rail) group, and core planes
    std::vector<Vertex> spines;
    spines.reserve(static_cast<std::size_t>(shape.spines));
    for (int p = 0; p < shape.pods; ++p)
        for (int r = 0; r < rails; ++r)
            for (int g = 0; g < per_group; ++g)
                spines.push_back(topology.add_vertex(
                    VertexKind::SpineSwitch,
                    "pod" + std::to_string(p) + ".rail" + std::to_string(r) + ".spine" + std::to_string(g)));
    std::vector<Vertex> cores;
    cores.reserve(static_cast<std::size_t>(shape.cores));
    for (int g = 0; g < per_group; ++g)
        for (int k = 0; k < cores_reached; ++k)
            cores.push_back(topology.add_vertex(VertexKind::CoreSwitch,
                                                "plane" + std::to_string(g) + ".core" + std::to_string(k)));
    const int units_per_pod = shape.pods == 1 ? shape.units : spec.switch_ports / 2;
    for (int u = 0; u < shape.units; ++u) {
        const int pod = u / units_per_pod;
        for (int r = 0; r < rails; ++r)
            for (int g = 0; g < per_group; ++g) {
                const auto l = static_cast<std::size_t>(u * rails + r);
                const LinkId up = topology.add_duplex_link(
                    leaves[l], spines[static_cast<std::size_t>((pod * rails + r) * per_group + g)],
                    spec.link_kind, leaf_spine_bw, into_switch, into_switch);
                leaf_up[l].push_back(up);
                leaf_down[l].push_back(up + 1);
            }
    }
    if (per_group > 1) declare_leaf_groups();
    for (int group = 0; group < shape.pods * rails; ++group) {
        std::vector<LinkId> to_cores, from_cores;
        for (int g = 0; g < per_group; ++g)
            for (int k = 0; k < cores_reached; ++k) {
                const LinkId up = topology.add_duplex_link(
                    spines[static_cast<std::size_t>(group * per_group + g)],
                    cores[static_cast<std::size_t>(g * cores_reached + k)], spec.link_kind,
                    spine_core_bw, into_switch, into_switch);
                to_cores.push_back(up);
                from_cores.push_back(up + 1);
            }
        if (to_cores.size() > 1) {
            const std::string name =
                "pod" + std::to_string(group / rails) + ".rail" + std::to_string(group % rails) + ".spines";
            topology.add_spray_group(name + "->cores", std::move(to_cores));
            topology.add_spray_group("cores->" + name, std::move(from_cores));
        }
    }
    return shape;
}

double superpod_switch_equivalents(int gpus, int gpus_per_node, int nodes_per_unit, int switch_ports) {
    const int nodes = (gpus + gpus_per_node - 1) / gpus_per_node;
    if (nodes <= 1) return 0;
    const SuperPodShape shape = superpod_shape(nodes, gpus_per_node, nodes_per_unit, switch_ports);
    return static_cast<double>(gpus) * (2 * shape.tiers - 1) / switch_ports;
}

}  // namespace ttsim
