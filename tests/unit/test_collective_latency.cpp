// Latency terms that grow with the job: all-to-all posts n - 1 send/recv pairs per rank (one per-peer NCCL step
// each, nccl_params.cpp), and a SHARP aggregation climbs every switch tier of the fabric (sharp_latency.hpp).
// Every duration stays at or above the physical lower bound (lower_bound.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/nccl_params.hpp"
#include "models/collectives/sharp_latency.hpp"
#include "topologies/presets.hpp"

using namespace ttsim;

namespace {

constexpr std::uint64_t kKiB = 1ull << 10;
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::size_t kLL = 0, kSimple = 2;  // ProtocolTable index

CollectiveResult run_on(int gpus, CollectiveOp op, CollectiveAlgorithm algorithm, std::uint64_t bytes,
                        NcclProtocol protocol = NcclProtocol::Auto) {
    const Topology topo = build_preset("dgx-h100", gpus);
    CollectiveSimulator sim(topo, CollectiveOptions{.sharp_enabled = true});
    return sim.run(CollectiveRequest{.op = op, .bytes = bytes, .group = {}, .algorithm = algorithm, .protocol = protocol});
}

}  // namespace

TEST_CASE("All-to-all latency grows by one per-peer NCCL step per added peer", "[collective][latency]") {
    const NcclParams p = nccl_params(GpuGeneration::Hopper);
    std::map<int, CollectiveResult> a2a;
    for (const int gpus : {8, 64, 1024, 16384}) {
        a2a[gpus] = run_on(gpus, CollectiveOp::AllToAll, CollectiveAlgorithm::Auto, 16 * kKiB);
        const CollectiveResult& r = a2a[gpus];
        INFO(gpus << " GPUs: " << r.duration.microseconds_f() << " us, latency " << r.latency.microseconds_f());
        CHECK(r.algorithm == CollectiveAlgorithm::Direct);
        // 16 KiB / n per peer is below NCCL_P2P_LL_THRESHOLD: send/recv runs LL.
        CHECK(r.protocol == NcclProtocol::LL);
        CHECK(r.duration >= r.lower_bound);
    }
    // One node: base + 7 NVLink peers.
    CHECK(a2a[8].latency.microseconds_f() == Approx(p.ring_base_us[kLL] + 7 * p.ring_nvlink_us[kLL]).margin(1e-6));
    // Eight GPUs per node everywhere, so every added GPU is one more network peer: 2.7 us each (LL hwLat NET).
    for (const auto& [small, large] : {std::pair{64, 1024}, std::pair{1024, 16384}}) {
        const CollectiveResult& a = a2a[small];
        const CollectiveResult& b = a2a[large];
        INFO(small << " -> " << large << " GPUs");
        CHECK(b.duration > a.duration);
        const double expected_us = (large - small) * p.ring_net_us[kLL];
        CHECK((b.latency - a.latency).microseconds_f() == Approx(expected_us).margin(1e-6));
        // The bandwidth part can only shrink by what it was (each peer's share falls as S / n).
        CHECK((b.duration - a.duration).microseconds_f() >= expected_us - a.bandwidth_time.microseconds_f());
    }

    SECTION("above the LL threshold per peer, send/recv runs Simple with Simple's per-peer steps") {
        const CollectiveResult r = run_on(64, CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, 64 * 32 * kKiB);
        CHECK(r.protocol == NcclProtocol::Simple);
        CHECK(r.latency.microseconds_f() ==
              Approx(p.ring_base_us[kSimple] + 7 * p.ring_nvlink_us[kSimple] + 56 * p.ring_net_us[kSimple]).margin(1e-6));
        CHECK(r.duration >= r.lower_bound);
    }
    SECTION("a forced protocol: LL runs, LL128 does not") {
        const CollectiveResult r = run_on(64, CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, 64 * 32 * kKiB,
                                          NcclProtocol::LL);
        CHECK(r.protocol == NcclProtocol::LL);
        CHECK_THROWS(run_on(64, CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, 16 * kKiB, NcclProtocol::LL128));
        CHECK_THROWS(run_on(64, CollectiveOp::AllToAll, CollectiveAlgorithm::Auto, 16 * kKiB, NcclProtocol::LL128));
    }
}

TEST_CASE("SHARP latency grows with the switch tiers its aggregation climbs", "[collective][latency][sharp]") {
    // Per tier above the leaf: one link up and one down, 300 ns switch + 50 ns cable each (presets.cpp,
    // params.md "IB switch hop latency").
    CHECK(sharp_tree_climb_us(build_preset("dgx-h100", 8)) == 0.0);  // one node: no fabric
    const Topology two_tier = build_preset("dgx-h100", 1024);
    const Topology three_tier = build_preset("dgx-h100", 4096);
    REQUIRE(two_tier.summary().fabric_tiers == 2);
    REQUIRE(three_tier.summary().fabric_tiers == 3);
    CHECK(sharp_tree_climb_us(two_tier) == Approx(0.7).margin(1e-9));
    CHECK(sharp_tree_climb_us(three_tier) == Approx(1.4).margin(1e-9));
    // Four tiers (asked for): spine -> super-spine -> core, one more tier climbed.
    CHECK(sharp_tree_climb_us(build_preset("dgx-h100", 1024, FabricOptions{.tiers = 4})) == Approx(2.1).margin(1e-9));

    const NcclParams p = nccl_params(GpuGeneration::Hopper);
    // NCCL's CollNetDirect latency with 8 GPUs per node: 2 (3.7 + 0.4 x 7) + 31 us.
    const double nccl_us = 2.0 * (p.collnet_direct_nvlink_us + 0.4 * 7) + p.collnet_direct_net_us;
    for (const std::uint64_t bytes : {std::uint64_t{8}, kMiB}) {
        const CollectiveResult small = run_on(1024, CollectiveOp::AllReduce, CollectiveAlgorithm::Sharp, bytes);
        const CollectiveResult large = run_on(4096, CollectiveOp::AllReduce, CollectiveAlgorithm::Sharp, bytes);
        INFO(bytes << " B: " << small.duration.microseconds_f() << " us at 1,024 GPUs, "
                   << large.duration.microseconds_f() << " us at 4,096");
        CHECK(small.latency.microseconds_f() == Approx(nccl_us + 0.7).margin(1e-6));
        CHECK(large.latency.microseconds_f() == Approx(nccl_us + 1.4).margin(1e-6));
        CHECK(large.latency > small.latency);
        CHECK(small.duration >= small.lower_bound);
        CHECK(large.duration >= large.lower_bound);
    }
    // The small-message duration is the latency alone, so it too is larger on three tiers.
    CHECK(run_on(4096, CollectiveOp::AllReduce, CollectiveAlgorithm::Sharp, 8).duration >
          run_on(1024, CollectiveOp::AllReduce, CollectiveAlgorithm::Sharp, 8).duration);
}
