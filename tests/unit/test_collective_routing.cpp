// Collectives under the fabric's two routing modes (topology.hpp FabricRouting): static hashed ECMP, where
// flows that hash onto the same leaf up-link share it, and adaptive routing, where every flow is sprayed
// over all equal-cost up-links and each spray group acts as one link (phase_runner.hpp FlowResources).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/collective_simulator.hpp"
#include "topologies/presets.hpp"

using namespace ttsim;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

CollectiveResult run(CollectiveSimulator& sim, CollectiveOp op, std::uint64_t bytes, CollectiveAlgorithm algorithm,
                     std::vector<int> group = {}, NcclProtocol protocol = NcclProtocol::Auto) {
    CollectiveRequest request;
    request.op = op;
    request.bytes = bytes;
    request.algorithm = algorithm;
    request.group = std::move(group);
    request.protocol = protocol;
    return sim.run(request);
}

// Bus bandwidth of the simulated part alone (GB/s), before NCCL's protocol factor and latency terms.
double simulated_busbw_gbps(const CollectiveResult& r, std::uint64_t bytes) {
    return static_cast<double>(bytes) * bus_bandwidth_factor(CollectiveOp::AllReduce, r.ranks) /
           (r.bandwidth_time - r.floor_excess).seconds() / 1e9;
}

Topology preset(int gpus, FabricRouting routing, double oversubscription = 1.0) {
    return build_preset("dgx-h100", gpus, FabricOptions{.oversubscription = oversubscription, .routing = routing});
}

}  // namespace

TEST_CASE("adaptive routing keeps the tree all-reduce NIC-bound at every scale, static ECMP does not", "[collective]") {
    // Up to one leaf per rail-and-SU pair per edge (<= 512 GPUs) no tree edge leaves its leaf twice over the
    // same up-link, and routing does not matter. Beyond, static ECMP hashes several inter-SU tree edges onto
    // one leaf->spine trunk and the busiest trunk paces every channel (the collapse reported at 1,024+
    // GPUs). The fabric is non-blocking, so with every flow sprayed over all up-links no fabric link can bind
    // and the tree runs at its NIC bound at every scale.
    const auto tree_busbw = [](int gpus, FabricRouting routing) {
        const Topology topo = preset(gpus, routing);
        CollectiveSimulator sim(topo);
        const CollectiveResult r =
            run(sim, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Tree, {}, NcclProtocol::Simple);
        CHECK(r.duration >= r.lower_bound);
        CHECK(r.max_link_utilisation <= 1.0 + 1e-9);
        return simulated_busbw_gbps(r, kGiB);
    };
    const double reference = tree_busbw(512, FabricRouting::Adaptive);
    CHECK(reference == Approx(tree_busbw(512, FabricRouting::StaticEcmp)).epsilon(1e-9));
    for (const int gpus : {1024, 2048, 4096, 16384}) {
        INFO(gpus << " GPUs");
        const double adaptive = tree_busbw(gpus, FabricRouting::Adaptive);
        CHECK(adaptive == Approx(reference).epsilon(0.01));
        // Static ECMP, 1 GiB Simple, simulated part: 201.7 (1,024), 108.6 (2,048), 148.7 (4,096), 94.2 (16,384)
        // GB/s against ~330: at least a third lost at every one of these scales.
        CHECK(tree_busbw(gpus, FabricRouting::StaticEcmp) < 0.67 * adaptive);
    }
}

TEST_CASE("adaptive routing: a spray group is one link of the members' total capacity", "[collective]") {
    // All-to-all among the 64 rail-0 GPUs of 2 scalable units (nodes 0-31 and 32-63, leaves su0.rail0 and
    // su1.rail0, 8 spines, 4 cables per leaf-spine trunk). Each GPU sends S/64 to each of 63 peers, 32 of
    // them across the spines: 32 x 32 x S/64 = 16 S leave su0.rail0 upwards, against 8 x 4 x 48 = 1,536 GB/s
    // of sprayed up-links, while each NIC sends 63 S/64 at 48 GB/s. The NICs bind (1,536 GB/s of up-links
    // = the 32 NICs below them): every flow gets 48/63 GB/s and the phase lasts exactly 63 S / (64 x 48 GB/s).
    const Topology topo = preset(512, FabricRouting::Adaptive);
    std::vector<int> group;
    for (int node = 0; node < 64; ++node) group.push_back(8 * node);
    CollectiveSimulator sim(topo);
    const std::uint64_t bytes = 64 * kMiB;
    const CollectiveResult r = run(sim, CollectiveOp::AllToAll, bytes, CollectiveAlgorithm::Direct, group);
    CHECK(r.bandwidth_time.seconds() == Approx(63.0 * static_cast<double>(bytes) / (64.0 * 48e9)).epsilon(1e-8));
    CHECK(r.max_link_utilisation == Approx(1.0).epsilon(1e-9));

    // Oversubscribed 2:1, the same group's up-links carry 768 GB/s: the spray group binds, 16 S at 768 GB/s
    // for the cross-SU traffic; the busiest resource is named after the group.
    const Topology thin = preset(512, FabricRouting::Adaptive, 2.0);
    CollectiveSimulator thin_sim(thin);
    const CollectiveResult o = run(thin_sim, CollectiveOp::AllToAll, bytes, CollectiveAlgorithm::Direct, group);
    CHECK(o.duration > r.duration);
    CHECK(o.duration >= o.lower_bound);
    CHECK(o.max_link_utilisation <= 1.0 + 1e-9);
    INFO("busiest: " << o.busiest_link);
    CHECK(o.busiest_link.find("spines") != std::string::npos);
    // Max-min: cross-SU flows are capped at 768 GB/s / (32 x 32) = 0.75 GB/s by their leaf's group, below the
    // 48/63 GB/s NIC share; the same-SU flows then fill each NIC. Cross-SU flows finish last, at
    // (S/64) / 0.75 GB/s.
    CHECK(o.bandwidth_time.seconds() == Approx(static_cast<double>(bytes) / 64.0 / 0.75e9).epsilon(1e-8));
}

TEST_CASE("SHARP's aggregation trees and one-node collectives ignore the routing mode", "[collective]") {
    // SHARP trees are fixed link sets (not sprayed); NVLink traffic never touches the fabric.
    const Topology adaptive = preset(1024, FabricRouting::Adaptive);
    const Topology fixed = preset(1024, FabricRouting::StaticEcmp);
    CollectiveSimulator a(adaptive, CollectiveOptions{.sharp_enabled = true});
    CollectiveSimulator s(fixed, CollectiveOptions{.sharp_enabled = true});
    const CollectiveResult sa = run(a, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Sharp);
    const CollectiveResult ss = run(s, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Sharp);
    CHECK(sa.duration == ss.duration);
    CHECK(sa.fingerprint == ss.fingerprint);
    const std::vector<int> node = {0, 1, 2, 3, 4, 5, 6, 7};
    CHECK(run(a, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Ring, node).duration ==
          run(s, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Ring, node).duration);
}

TEST_CASE("oversubscription removes leaf up-link cables, not speed: one SHARP tree per leaf keeps a full cable",
          "[collective][fabric]") {
    // 1,024 GPUs = 4 scalable units, 16 spines, 2 cables per leaf-spine trunk non-blocking. At R = 8 a leaf keeps
    // 32 / 8 = 4 uplink cables, so it reaches 4 spines with one 400G cable each. Each rail's aggregation tree
    // crosses each leaf's up-links once, and a ring crosses them once per rail and unit: both need one cable a
    // leaf, so neither slows through R = 32 (one cable left). Before, R thinned every trunk to 2 x 400 / R Gb/s and
    // a tree edge, held to one trunk, got 100 Gb/s at R = 8: SHARP 420 -> 162 GB/s busbw, static ring 204 -> 75.
    for (const FabricRouting routing : {FabricRouting::Adaptive, FabricRouting::StaticEcmp}) {
        for (const CollectiveAlgorithm algorithm : {CollectiveAlgorithm::Sharp, CollectiveAlgorithm::Ring}) {
            double non_blocking = 0;
            for (const double oversubscription : {1.0, 4.0, 8.0, 16.0}) {
                INFO((routing == FabricRouting::Adaptive ? "adaptive" : "static") << ", R = " << oversubscription);
                const Topology topo = preset(1024, routing, oversubscription);
                CollectiveSimulator sim(topo, CollectiveOptions{.sharp_enabled = true});
                const CollectiveResult r = run(sim, CollectiveOp::AllReduce, kGiB, algorithm);
                CHECK(r.max_link_utilisation <= 1.0 + 1e-9);
                if (oversubscription == 1.0) non_blocking = r.duration.seconds();
                CHECK(r.duration.seconds() == Approx(non_blocking).epsilon(1e-6));
            }
        }
    }
    // The up-link capacity a leaf keeps is still 1/R of its down-links: traffic that needs every up-link (the
    // tree's, here) slows as R grows.
    const auto tree_seconds = [](double oversubscription) {
        const Topology topo = preset(1024, FabricRouting::Adaptive, oversubscription);
        CollectiveSimulator sim(topo);
        return run(sim, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Tree, {}, NcclProtocol::Simple).duration.seconds();
    };
    CHECK(tree_seconds(8.0) > 4.0 * tree_seconds(1.0));
}

TEST_CASE("oversubscription counts whole up-link cables, in two and three tiers", "[collective][fabric]") {
    const auto seconds = [](int gpus, double oversubscription) {
        const Topology topo = preset(gpus, FabricRouting::Adaptive, oversubscription);
        CollectiveSimulator sim(topo);
        return run(sim, CollectiveOp::AllToAll, kGiB, CollectiveAlgorithm::Auto).duration.seconds();
    };
    // R = 3 leaves 32 / 3 = 10.67 cables a leaf: 10 whole ones, as R = 3.2.
    CHECK(seconds(1024, 3.0) == Approx(seconds(1024, 3.2)).epsilon(1e-9));
    // Three tiers (4,096 GPUs): R = 20 and R = 32 both leave one cable a leaf, reaching one spine of its group (the
    // spines no leaf reaches, and their core planes, are not built, so they add no capacity); R = 16 leaves two.
    const double one_cable = seconds(4096, 32.0);
    CHECK(seconds(4096, 20.0) == Approx(one_cable).epsilon(1e-9));
    CHECK(seconds(4096, 16.0) < 0.75 * one_cable);
    // Beyond R = 32 the last cable thins: slower still.
    CHECK(seconds(4096, 64.0) > 1.5 * one_cable);
}
