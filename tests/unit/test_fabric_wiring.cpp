// How the fat tree is wired, seen by the traffic that crosses it: oversubscription per tier boundary (the top one
// as Meta's 24k-GPU RoCE clusters build it) and rail-optimised leaves or a node's NICs on one leaf. Each expected
// time is the bandwidth bound worked out by hand from the cables the builder keeps (superpod_fabric.cpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/phase_runner.hpp"
#include "topologies/presets.hpp"
#include "topologies/routing.hpp"

using namespace ttsim;

namespace {

constexpr double kBytes = 1e9;

// Each pair (a, b) of GPUs exchanges kBytes both ways, all at once, on the links' line rates (no NCCL efficiency:
// the bound is the cables'). Seconds until the last flow drains.
double exchange_seconds(const Topology& topology, const std::vector<std::pair<int, int>>& pairs) {
    Router router(topology);
    CollectivePlan plan;
    PlanPhase phase;
    std::vector<LinkId> path;
    for (const auto& [a, b] : pairs) {
        router.route_into(a, b, 0, path);
        phase.flows.add(path, kBytes);
        router.route_into(b, a, 0, path);
        phase.flows.add(path, kBytes);
    }
    plan.phases.push_back(std::move(phase));
    std::vector<double> line_rate;
    for (const LinkSpec& link : topology.links()) line_rate.push_back(link.bandwidth_bytes_per_s);
    const FlowResources resources = make_flow_resources(topology, line_rate);
    spray_over_groups(plan, resources);
    return simulate_plan(plan, topology, resources.capacity, true).bandwidth_time.seconds();
}

// Every NIC of the first `pod_nodes` nodes with the same rail of the node `pod_nodes` further on.
double pod_exchange_seconds(const Topology& topology, int pod_nodes) {
    std::vector<std::pair<int, int>> pairs;
    for (int node = 0; node < pod_nodes; ++node)
        for (int rail = 0; rail < 8; ++rail) pairs.emplace_back(node * 8 + rail, (node + pod_nodes) * 8 + rail);
    return exchange_seconds(topology, pairs);
}

}  // namespace

TEST_CASE("oversubscription at the top tier slows traffic between pods by the cables it keeps", "[fabric]") {
    // 16-port switches (8 ports down, 8 up), 1,024 H100s: three tiers, two pods of 8 units x 8 nodes (512 GPUs);
    // four tiers, two zones of one pod each. Every NIC of pod 0 exchanges 1 GB with its rail peer in pod 1: all of it
    // crosses the top tier. Non-blocking, each flow runs at its NIC's 50 GB/s: 20 ms.
    const double nic = NicSpeed::Ndr400.bytes_per_second;
    const FabricOptions three{.switch_ports = 16, .tiers = 3};
    const FabricOptions four{.switch_ports = 16, .tiers = 4};
    CHECK(pod_exchange_seconds(build_preset("dgx-h100", 1024, three), 64) == Approx(kBytes / nic).epsilon(1e-9));
    CHECK(pod_exchange_seconds(build_preset("dgx-h100", 1024, four), 64) == Approx(kBytes / nic).epsilon(1e-9));
    // Meta's shape, 1:7 at the top (arXiv 2407.21783 section 3.3.1): a switch keeps floor(8 / 7) = 1 of its 8
    // up-cables. Three tiers: a (pod, rail) spine group has 8 spines, 8 cables up = 400 GB/s for its 64 nodes'
    // flows: 6.25 GB/s each, 8 x slower (160 ms). Four tiers: a zone's 64 super-spines keep 64 cables = 3.2 TB/s
    // for its 512 NICs: the same 6.25 GB/s.
    const double kept = 1.0 / 8.0;
    FabricOptions meta3 = three;
    meta3.spine_oversubscription = 7;
    FabricOptions meta4 = four;
    meta4.superspine_oversubscription = 7;
    CHECK(pod_exchange_seconds(build_preset("dgx-h100", 1024, meta3), 64) == Approx(kBytes / (nic * kept)).epsilon(1e-9));
    CHECK(pod_exchange_seconds(build_preset("dgx-h100", 1024, meta4), 64) == Approx(kBytes / (nic * kept)).epsilon(1e-9));
    // The top ratio leaves traffic inside a pod alone: the first 32 nodes with the next 32 (one pod) stay at 20 ms.
    CHECK(pod_exchange_seconds(build_preset("dgx-h100", 1024, meta3), 32) == Approx(kBytes / nic).epsilon(1e-9));
    CHECK(pod_exchange_seconds(build_preset("dgx-h100", 1024, meta4), 32) == Approx(kBytes / nic).epsilon(1e-9));
    // A ratio for a tier the fabric does not have changes nothing: super-spines on three tiers.
    FabricOptions absent = three;
    absent.superspine_oversubscription = 7;
    CHECK(pod_exchange_seconds(build_preset("dgx-h100", 1024, absent), 64) == Approx(kBytes / nic).epsilon(1e-9));
    // On four tiers, the spines' ratio thins the boundary below: a pod's spine group keeps 8 cables to its zone's
    // super-spines, 6.25 GB/s a flow again, for traffic between pods of one zone and beyond it alike.
    FabricOptions spine4 = four;
    spine4.spine_oversubscription = 7;
    CHECK(pod_exchange_seconds(build_preset("dgx-h100", 1024, spine4), 64) == Approx(kBytes / (nic * kept)).epsilon(1e-9));
}

TEST_CASE("rail-optimised leaves or a node's NICs on one leaf: where routes differ and where they do not", "[fabric]") {
    // 64 H100s (8 DGX) on 64-port switches: two tiers; rail-optimised, 8 leaves (one per rail, one unit); not, 2
    // leaves of 32 NICs (nodes 0-3 and 4-7).
    const Topology rails = build_preset("dgx-h100", 64);
    const Topology racks = build_preset("dgx-h100", 64, FabricOptions{.rail_optimized = false});
    CHECK(rails.summary().leaf_switches == 8);
    CHECK(racks.summary().leaf_switches == 2);
    const auto switch_hops = [](const Topology& t, int a, int b) {
        Router router(t);
        int hops = 0;
        for (const LinkId id : router.route(a, b, 0))
            hops += is_network_switch(t.vertex(t.link(id).from).kind) && is_network_switch(t.vertex(t.link(id).to).kind);
        return hops;
    };
    // GPU 0 of node 0 to GPU 1 of node 1: across rails, leaf -> spine -> leaf on rails; one leaf when the two
    // nodes share it.
    CHECK(switch_hops(rails, 0, 8 + 1) == 2);
    CHECK(switch_hops(racks, 0, 8 + 1) == 0);
    // GPU 0 of node 0 to GPU 0 of node 4: one rail leaf; different top-of-rack leaves.
    CHECK(switch_hops(rails, 0, 32) == 0);
    CHECK(switch_hops(racks, 0, 32) == 2);

    // 256 H100s (one unit of 32 DGX), leaves 4:1 oversubscribed: each keeps 8 of its 32 up-cables (400 GB/s) for
    // its 32 NICs, on rails (rail r of 32 nodes) or not (4 nodes).
    const Topology rails4 = build_preset("dgx-h100", 256, FabricOptions{.oversubscription = 4});
    const Topology racks4 = build_preset("dgx-h100", 256, FabricOptions{.oversubscription = 4, .rail_optimized = false});
    // Where they differ: GPU r of node 2k with GPU r + 1 of node 2k + 1. On rails every flow climbs: a leaf sends 32
    // flows up over 400 GB/s, 12.5 GB/s each, 80 ms a GB. Nodes 2k and 2k + 1 share a leaf otherwise: the NIC's
    // 50 GB/s, 20 ms.
    std::vector<std::pair<int, int>> cross_rail, ring;
    for (int node = 0; node < 32; node += 2)
        for (int r = 0; r < 8; ++r) cross_rail.emplace_back(node * 8 + r, (node + 1) * 8 + (r + 1) % 8);
    CHECK(exchange_seconds(rails4, cross_rail) == Approx(kBytes / 12.5e9).epsilon(1e-9));
    CHECK(exchange_seconds(racks4, cross_rail) == Approx(kBytes / 50e9).epsilon(1e-9));
    // Where they do not: a ring over the rails, GPU r of node k with GPU r of node k + 1 (mod 32). Each NIC sends
    // two flows, 25 GB/s each: 40 ms. On rails nothing climbs; otherwise a leaf's first and last node send their
    // 2 x 8 flows up, 16 x 25 GB/s = its 400 GB/s exactly.
    for (int node = 0; node < 32; ++node)
        for (int r = 0; r < 8; ++r) ring.emplace_back(node * 8 + r, (node + 1) % 32 * 8 + r);
    CHECK(exchange_seconds(rails4, ring) == Approx(kBytes / 25e9).epsilon(1e-9));
    CHECK(exchange_seconds(racks4, ring) == Approx(kBytes / 25e9).epsilon(1e-9));
    // NCCL's ring all-reduce, one rail-aligned ring per channel: the same time on both.
    CollectiveRequest request;
    request.bytes = static_cast<std::uint64_t>(kBytes);
    request.algorithm = CollectiveAlgorithm::Ring;
    request.protocol = NcclProtocol::Simple;
    const CollectiveResult on_rails = CollectiveSimulator(rails4).run(request);
    const CollectiveResult on_racks = CollectiveSimulator(racks4).run(request);
    CHECK(on_racks.bandwidth_time.seconds() == Approx(on_rails.bandwidth_time.seconds()).epsilon(1e-9));
    CHECK(on_racks.duration >= on_racks.lower_bound);
}
