// Collective model against published nccl-tests figures (params.md section 3.3) and its own invariants.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/group_layout.hpp"
#include "models/collectives/nccl_params.hpp"
#include "models/collectives/tuner.hpp"
#include "sim/errors.hpp"
#include "topologies/presets.hpp"
#include "topologies/yaml_topology.hpp"

using namespace ttsim;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

double busbw_gbps(const CollectiveResult& r) { return r.busbw_bytes_per_s / 1e9; }

CollectiveResult run(CollectiveSimulator& sim, CollectiveOp op, std::uint64_t bytes, CollectiveAlgorithm algorithm,
                     NcclProtocol protocol = NcclProtocol::Auto) {
    CollectiveRequest request;
    request.op = op;
    request.bytes = bytes;
    request.algorithm = algorithm;
    request.protocol = protocol;
    return sim.run(request);
}

}  // namespace

TEST_CASE("8x H100 all-reduce at 8 GiB: ring ~370 GB/s, NVLS ~480 GB/s busbw", "[collective]") {
    const Topology topo = build_preset("dgx-h100", 8);
    CollectiveSimulator sim(topo);
    // NT_212: "~370 GB/s effective NVLink bandwidth" with NCCL_ALGO=RING on 8x H100.
    const CollectiveResult ring = run(sim, CollectiveOp::AllReduce, 8 * kGiB, CollectiveAlgorithm::Ring);
    CHECK(ring.protocol == NcclProtocol::Simple);
    CHECK(busbw_gbps(ring) == Approx(370.0).epsilon(0.05));
    // NT_212 (~480, algbw ~275) and NT_347 (479.4-480.1 at 8 GiB). In-sample: the NVLS efficiency is
    // calibrated to this point (nccl_params.hpp), so this checks the calibration is wired through.
    const CollectiveResult nvls = run(sim, CollectiveOp::AllReduce, 8 * kGiB, CollectiveAlgorithm::Nvls);
    CHECK(busbw_gbps(nvls) == Approx(480.0).epsilon(0.05));
    CHECK(nvls.algbw_bytes_per_s / 1e9 == Approx(275.0).epsilon(0.05));
    // auto takes NVLS at this size, as NCCL does on one H100 node (NT_212: NVLS is the default).
    const CollectiveResult chosen = run(sim, CollectiveOp::AllReduce, 8 * kGiB, CollectiveAlgorithm::Auto);
    CHECK(chosen.algorithm == CollectiveAlgorithm::Nvls);
    CHECK(chosen.considered.size() >= 3);
    for (const CollectiveResult* r : {&ring, &nvls}) {
        CHECK(r->duration >= r->lower_bound);
        CHECK(r->max_link_utilisation <= 1.0 + 1e-9);
    }
}

TEST_CASE("8x H200 NVLS all-reduce follows the published size curve (held out)", "[collective]") {
    // AZ_H200 (NCCL 2.20.5, in-place) busbw in GB/s. Nothing is fitted to this curve: the NVLS efficiency is
    // calibrated on 8x H100 at 8 GiB (NT_347) and the size dependence is NCCL's 25 us NVLS latency plus the
    // two-stage pipeline fill/drain window (nccl_params.hpp). Tolerances from the brief: 10% from 64 MiB up,
    // 25% from 1 to 32 MiB.
    const std::vector<std::pair<std::uint64_t, double>> published = {
        {1 * kMiB, 53},   {4 * kMiB, 138},   {16 * kMiB, 240},  {64 * kMiB, 368},
        {128 * kMiB, 412}, {256 * kMiB, 432}, {512 * kMiB, 443}, {1 * kGiB, 468},
        {2 * kGiB, 473},   {4 * kGiB, 477},   {8 * kGiB, 480}};
    const Topology topo = build_preset("dgx-h200", 8);
    CollectiveSimulator sim(topo);
    std::string table = "8x H200 NVLS all-reduce busbw (GB/s): size, published (AZ_H200), simulated, error\n";
    for (const auto& [bytes, want] : published) {
        const CollectiveResult r = run(sim, CollectiveOp::AllReduce, bytes, CollectiveAlgorithm::Nvls);
        const double got = busbw_gbps(r);
        const double error = got / want - 1.0;
        char line[128];
        std::snprintf(line, sizeof line, "  %5llu MiB  %5.0f  %6.1f  %+5.1f%%\n",
                      static_cast<unsigned long long>(bytes / kMiB), want, got, 100.0 * error);
        table += line;
        INFO("size " << bytes / kMiB << " MiB: published " << want << ", simulated " << got);
        CHECK(std::abs(error) <= (bytes >= 64 * kMiB ? 0.10 : 0.25));
        CHECK(r.duration >= r.lower_bound);
    }
    WARN(table);
}

TEST_CASE("DGX H100 multi-node ring all-reduce is NIC-bound, and SHARP beats ring", "[collective]") {
    // 8 NDR NICs per node x ~46-48 GB/s (NT_290, NT_267; params.md "DGX H100, multi-node ring": ~370-385).
    // The simulated bandwidth part must sit in 340-400 GB/s busbw at every scale. NCCL's ring latency grows
    // with 2(n-1) steps (params.md 3.2), so the end-to-end busbw at 1 GiB only stays in that band for small
    // node counts; at larger counts it is checked at a size where the latency is amortised (see the report).
    std::string table = "DGX H100 ring all-reduce: GPUs, size, protocol, busbw end-to-end, bandwidth-part busbw, "
                        "latency us; SHARP algbw vs ring algbw\n";
    for (const int nodes : {2, 4, 8, 16, 32, 64, 128}) {
        const Topology topo = build_preset("dgx-h100", 8 * nodes);
        CollectiveSimulator sim(topo, CollectiveOptions{.sharp_enabled = true});
        const CollectiveResult ring = run(sim, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Ring,
                                          NcclProtocol::Simple);
        const double factor = 2.0 * (8.0 * nodes - 1.0) / (8.0 * nodes);
        const double bw_part = static_cast<double>(kGiB) * factor / ring.bandwidth_time.seconds() / 1e9;
        CHECK(bw_part >= 340.0);
        CHECK(bw_part <= 400.0);
        if (nodes <= 2) {
            CHECK(busbw_gbps(ring) >= 340.0);
            CHECK(busbw_gbps(ring) <= 400.0);
        }
        const CollectiveResult sharp = run(sim, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Sharp);
        CHECK(sharp.algbw_bytes_per_s > ring.algbw_bytes_per_s);
        CHECK(ring.duration >= ring.lower_bound);
        CHECK(sharp.duration >= sharp.lower_bound);
        char line[200];
        std::snprintf(line, sizeof line, "  %5d  1 GiB  %-6s  %6.1f  %6.1f  %8.1f ; sharp algbw %6.1f vs ring %6.1f\n",
                      8 * nodes, std::string(to_string(ring.protocol)).c_str(), busbw_gbps(ring), bw_part,
                      ring.latency.microseconds_f(), sharp.algbw_bytes_per_s / 1e9, ring.algbw_bytes_per_s / 1e9);
        table += line;
    }
    WARN(table);
}

TEST_CASE("collective names parse and unknown names list the valid ones", "[collective]") {
    CHECK(parse_collective_op("all-reduce") == CollectiveOp::AllReduce);
    CHECK(parse_collective_op("reduce_scatter") == CollectiveOp::ReduceScatter);
    CHECK(parse_collective_op("AllGather") == CollectiveOp::AllGather);
    CHECK(parse_collective_op("all-to-all") == CollectiveOp::AllToAll);
    CHECK(parse_collective_algorithm("NVLS") == CollectiveAlgorithm::Nvls);
    CHECK(parse_collective_algorithm("sharp") == CollectiveAlgorithm::Sharp);
    CHECK(parse_nccl_protocol("ll128") == NcclProtocol::LL128);
    CHECK(to_string(CollectiveAlgorithm::Hierarchical) == "hierarchical");
    try {
        parse_collective_algorithm("butterfly");
        FAIL("no exception");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("ring, tree, hierarchical, nvls, sharp") != std::string::npos);
    }
    CHECK_THROWS_AS(parse_collective_op("allreduc"), InputError);
    CHECK_THROWS_AS(parse_nccl_protocol("fast"), InputError);
    CHECK(bus_bandwidth_factor(CollectiveOp::AllReduce, 8) == Approx(1.75));
    CHECK(bus_bandwidth_factor(CollectiveOp::Broadcast, 8) == 1.0);
}

TEST_CASE("inapplicable algorithms and bad groups are input errors", "[collective]") {
    const Topology topo = build_preset("dgx-h100", 16);
    CollectiveSimulator sim(topo);  // SHARP off
    CHECK_THROWS_AS(run(sim, CollectiveOp::AllReduce, kMiB, CollectiveAlgorithm::Nvls), InputError);  // 2 nodes
    CHECK_THROWS_AS(run(sim, CollectiveOp::AllReduce, kMiB, CollectiveAlgorithm::Sharp), InputError);  // disabled
    CHECK_THROWS_AS(run(sim, CollectiveOp::AllGather, kMiB, CollectiveAlgorithm::Tree), InputError);
    CHECK_THROWS_AS(run(sim, CollectiveOp::AllToAll, kMiB, CollectiveAlgorithm::Ring), InputError);
    CHECK_THROWS_AS(run(sim, CollectiveOp::AllReduce, kMiB, CollectiveAlgorithm::Nvls, NcclProtocol::LL), InputError);
    CollectiveRequest bad;
    bad.group = {0, 3, 3};
    CHECK_THROWS_AS(sim.run(bad), InputError);
    bad.group = {0, 16};
    CHECK_THROWS_AS(sim.run(bad), InputError);
    // One node of the group: NVLS applies to a subgroup inside one NVLink domain.
    CollectiveRequest inside;
    inside.bytes = kMiB;
    inside.group = {8, 9, 10, 11};
    inside.algorithm = CollectiveAlgorithm::Nvls;
    CHECK(sim.run(inside).duration > SimTime::zero());
    // Trivial collectives take no time.
    CollectiveRequest one;
    one.bytes = kGiB;
    one.group = {5};
    CHECK(sim.run(one).duration == SimTime::zero());
}

TEST_CASE("SHARP needs InfiniBand switches, whoever asks: the model refuses it on an Ethernet fabric", "[collective]") {
    // Four PCIe servers on Ethernet ToR and spine switches: a switch fabric, but not one SHARP runs in. The rule
    // lives in the model (tuner.hpp), so an explicit request, `auto` and training predictions (which take the
    // candidates from candidate_algorithms) all see it, with SHARP switched on.
    const Topology ethernet =
        load_topology_file(std::string(TTSIM_SOURCE_DIR) + "/topologies/examples/pcie_servers_ethernet.yaml");
    const GroupLayout layout(ethernet, {});
    REQUIRE(layout.island_count() >= 2);
    REQUIRE(layout.uniform());
    CHECK_FALSE(layout.infiniband_fabric());
    const std::string reason = inapplicable_reason(CollectiveAlgorithm::Sharp, CollectiveOp::AllReduce, layout, true);
    CHECK_THAT(reason, Catch::StartsWith("SHARP in-network reduction needs an InfiniBand switch fabric with SHARP "
                                         "enabled"));
    for (const CollectiveAlgorithm a : candidate_algorithms(CollectiveOp::AllReduce, layout, true))
        CHECK(a != CollectiveAlgorithm::Sharp);
    CollectiveSimulator sim(ethernet, CollectiveOptions{.sharp_enabled = true});
    try {
        (void)run(sim, CollectiveOp::AllReduce, kMiB, CollectiveAlgorithm::Sharp);
        FAIL("SHARP ran on an Ethernet fabric");
    } catch (const InputError& e) {
        CHECK_THAT(e.message(), Catch::Contains("needs an InfiniBand switch fabric with SHARP enabled"));
    }
    const CollectiveResult chosen = run(sim, CollectiveOp::AllReduce, 64 * kMiB, CollectiveAlgorithm::Auto);
    CHECK(chosen.algorithm != CollectiveAlgorithm::Sharp);
    for (const AlgorithmEstimate& e : chosen.considered) CHECK(e.algorithm != CollectiveAlgorithm::Sharp);

    // The same words on an InfiniBand fabric with SHARP off; no internal names in any reason.
    const Topology infiniband = build_preset("dgx-h100", 16);
    const GroupLayout two_nodes(infiniband, {});
    CHECK(two_nodes.infiniband_fabric());
    CHECK(inapplicable_reason(CollectiveAlgorithm::Sharp, CollectiveOp::AllReduce, two_nodes, true).empty());
    CHECK_THAT(inapplicable_reason(CollectiveAlgorithm::Sharp, CollectiveOp::AllReduce, two_nodes, false),
               Catch::StartsWith("SHARP in-network reduction needs an InfiniBand switch fabric with SHARP enabled") &&
                   Catch::Contains("SHARP is off"));
    for (const Topology* topology : {&ethernet, &infiniband})
        for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
                                      CollectiveOp::Broadcast, CollectiveOp::AllToAll})
            for (const CollectiveAlgorithm a :
                 {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree, CollectiveAlgorithm::Hierarchical,
                  CollectiveAlgorithm::Nvls, CollectiveAlgorithm::Sharp, CollectiveAlgorithm::Direct})
                for (const bool sharp : {true, false}) {
                    const std::string why = inapplicable_reason(a, op, GroupLayout(*topology, {}), sharp);
                    INFO(why);
                    CHECK(why.find("::") == std::string::npos);
                    CHECK(why.find("_enabled") == std::string::npos);
                }
}

TEST_CASE("ring all-reduce over 1,024 H100s: NCCL 2.22's latency terms and its LL128 choice at GiB sizes", "[collective]") {
    // NCCL_2223 ring latency, 2(n-1) = 2,046 steps of which 2(nodes-1) = 254 inter-node (params.md 3.2):
    //   Simple  8.4 + 1,792 x 3.4 + 254 x 14 = 9,657.2 us, x1.4 once nBytes / (nChannels x nRanks) >= 64,
    //           i.e. from 64 x 16 x 1,024 = 1 MiB with 16 channels;
    //   LL128   14 + 1,792 x 1.9 + 254 x 4 = 4,434.8 us.
    const NcclParams params = nccl_params(GpuGeneration::Hopper);
    const LatencyShape shape{CollectiveOp::AllReduce, 1024, 128, 8, 1.0};
    CHECK(nccl_latency_us(params, CollectiveAlgorithm::Ring, NcclProtocol::Simple, shape, 512.0 * 1024, 16) ==
          Approx(9657.2));
    CHECK(nccl_latency_us(params, CollectiveAlgorithm::Ring, NcclProtocol::Simple, shape, 1024.0 * 1024, 16) ==
          Approx(9657.2 * 1.4));
    CHECK(nccl_latency_us(params, CollectiveAlgorithm::Ring, NcclProtocol::LL128, shape, 1024.0 * 1024, 16) ==
          Approx(4434.8));
    // LL128 runs at 0.92 x the simulated 384 GB/s. NCCL 2.22 enables it on Hopper with NVLink inside the node
    // and a NIC on the GPU's PCIe switch (tuning.cc: typeIntra <= NVB, typeInter <= PXN) and caps it by
    // bandwidth (nChannels x 36.7 GB/s), never by size, so its 9.1 ms latency advantage decides: LL128 up to
    // ~20 GB (4.4 ms + S' / 353 GB/s = 13.5 ms + S' / 384 GB/s at S' = 2 (n-1)/n S = 40 GB), Simple beyond.
    const Topology topo = build_preset("dgx-h100", 1024);
    CollectiveSimulator sim(topo);
    CHECK(run(sim, CollectiveOp::AllReduce, 4 * kGiB, CollectiveAlgorithm::Ring).protocol == NcclProtocol::LL128);
    CHECK(run(sim, CollectiveOp::AllReduce, 16 * kGiB, CollectiveAlgorithm::Ring).protocol == NcclProtocol::LL128);
    CHECK(run(sim, CollectiveOp::AllReduce, 32 * kGiB, CollectiveAlgorithm::Ring).protocol == NcclProtocol::Simple);
    // What scenarios/collective-h100-1024-ring-vs-sharp.yaml states: 299 GB/s busbw at 4 GiB, 324 at 8 GiB.
    CHECK(busbw_gbps(run(sim, CollectiveOp::AllReduce, 4 * kGiB, CollectiveAlgorithm::Ring)) == Approx(298.7).epsilon(0.002));
    CHECK(busbw_gbps(run(sim, CollectiveOp::AllReduce, 8 * kGiB, CollectiveAlgorithm::Ring)) == Approx(323.7).epsilon(0.002));
}

TEST_CASE("small all-reduce picks a low-latency protocol, large picks Simple", "[collective]") {
    const Topology topo = build_preset("dgx-h100", 8);
    CollectiveSimulator sim(topo);
    const CollectiveResult small = run(sim, CollectiveOp::AllReduce, 64 * 1024, CollectiveAlgorithm::Ring);
    CHECK(small.protocol == NcclProtocol::LL);
    const CollectiveResult large = run(sim, CollectiveOp::AllReduce, kGiB, CollectiveAlgorithm::Ring);
    CHECK(large.protocol == NcclProtocol::Simple);
    CHECK(small.duration < large.duration);
}
