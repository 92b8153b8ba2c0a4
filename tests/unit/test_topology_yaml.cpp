// YAML topologies: the shipped examples load and route; bad descriptions are rejected with file:line.
#include <catch2/catch.hpp>

#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "topologies/routing.hpp"
#include "topologies/yaml_topology.hpp"

using namespace ttsim;

namespace {

Topology load_text(const std::string& text, const std::string& file = "test_topology.yaml") {
    return load_topology(ConfigNode::load_string(text, file));
}

const char* const kTwoNodesHead = R"(name: t
nodes:
  count: 2
  gpus_per_node: 2
  nvlink: {bandwidth: 450GB/s, latency: 250ns}
  nic: {bandwidth: 63GB/s, latency: 500ns}
)";

}  // namespace

TEST_CASE("Example YAML topologies load and route", "[topology]") {
    const std::string dir = std::string(TTSIM_SOURCE_DIR) + "/topologies/examples/";

    const Topology dgx = load_topology_file(dir + "two_dgx_h100.yaml");
    const TopologySummary s = dgx.summary();
    CHECK(s.gpus == 16);
    CHECK(s.nodes == 2);
    CHECK(s.nvlink_domains == 2);
    CHECK(s.leaf_switches == 8);
    CHECK(s.spine_switches == 4);
    Router router(dgx);
    const auto same_rail = router.route(2, 10, 0);
    REQUIRE(same_rail.size() == 4);
    CHECK(dgx.vertex(dgx.link(same_rail[1]).to).name == "leaf[2]");
    CHECK(dgx.link(same_rail[1]).latency == SimTime::nanoseconds(350));  // cable + leaf forwarding
    CHECK(dgx.link(same_rail[2]).latency == SimTime::nanoseconds(50));   // into the NIC: cable only
    CHECK(router.route(2, 11, 0).size() == 6);                            // cross-rail via a spine
    CHECK(dgx.out_bandwidth(dgx.vertices_of_kind(VertexKind::LeafSwitch)[0], VertexKind::SpineSwitch) ==
          Approx(4 * 8 * 50e9));

    const Topology pcie = load_topology_file(dir + "pcie_servers_ethernet.yaml");
    CHECK(pcie.summary().nvlink_domains == 0);
    Router pcie_router(pcie);
    // No NVLink: GPUs of one server talk through their NICs and the ToR.
    const auto intra = pcie_router.route(0, 1, 0);
    REQUIRE(intra.size() == 4);
    CHECK(pcie.link(intra[1]).kind == LinkKind::Ethernet);
    CHECK(pcie_router.route(0, 15, 0).size() == 6);  // tor[0] -> spine -> tor[1]
}

TEST_CASE("A preset can be named in YAML", "[topology]") {
    const Topology t = load_text("preset: {system: dgx-b200, gpus: 64, nic: xdr, oversubscription: 2}\n");
    CHECK(t.summary().leaf_switches == 8);
    CHECK_THROWS_WITH(load_text("preset:\n  system: dgx-b200\n  gpus: 12\n", "p.yaml"),
                      Catch::Contains("p.yaml:3") && Catch::Contains("multiple of 8"));
    // Routing: adaptive by default (the SuperPOD's), static ECMP on request; anything else names its line.
    CHECK(t.routing() == FabricRouting::Adaptive);
    CHECK(load_text("preset: {system: dgx-h100, gpus: 64, routing: static}\n").routing() == FabricRouting::StaticEcmp);
    CHECK_THROWS_WITH(load_text("preset:\n  system: dgx-h100\n  gpus: 64\n  routing: random\n", "r.yaml"),
                      Catch::Contains("r.yaml:4") && Catch::Contains("static"));
}

TEST_CASE("A disconnected YAML topology is rejected with file and line", "[topology]") {
    // Node 0's NICs reach island_a, node 1's reach island_b, and nothing joins the two islands.
    const std::string text = std::string(kTwoNodesHead) + R"(switches:
  - {name: island_a, count: 1}
  - {name: island_b, count: 1}
links:
  - {from: "nic[0-1]", to: island_a, bandwidth: 400Gb/s, latency: 50ns}
  - {from: "nic[2-3]", to: island_b, bandwidth: 400Gb/s, latency: 50ns}
)";
    try {
        load_text(text, "islands.yaml");
        FAIL("disconnected topology accepted");
    } catch (const InputError& e) {
        const std::string what = e.what();
        CHECK_THAT(what, Catch::Contains("islands.yaml:11"));  // the `links` list
        CHECK_THAT(what, Catch::Contains("disconnected"));
        CHECK_THAT(what, Catch::Contains("node1.gpu0"));
    }

    // A NIC with no link at all.
    const std::string dangling = std::string(kTwoNodesHead) + R"(switches:
  - {name: sw, count: 1}
links:
  - {from: "nic[0-2]", to: sw, bandwidth: 400Gb/s, latency: 50ns}
)";
    CHECK_THROWS_WITH(load_text(dangling, "dangling.yaml"),
                      Catch::Contains("dangling.yaml:10") && Catch::Contains("node1.nic1"));

    // No fabric at all with two NVLink domains.
    CHECK_THROWS_WITH(load_text(kTwoNodesHead, "nofabric.yaml"), Catch::Contains("nofabric.yaml:1"));
}

TEST_CASE("Bad values in YAML topologies are rejected with file and line", "[topology]") {
    const std::string zero_bandwidth = std::string(kTwoNodesHead) + R"(switches:
  - {name: sw, count: 1}
links:
  - from: nic
    to: sw
    bandwidth: 0GB/s
    latency: 50ns
)";
    CHECK_THROWS_AS(load_text(zero_bandwidth, "zero.yaml"), InputError);
    CHECK_THROWS_WITH(load_text(zero_bandwidth, "zero.yaml"), Catch::Contains("zero.yaml:12"));

    const std::string negative_latency = std::string(kTwoNodesHead) + R"(switches:
  - {name: sw, count: 1}
links:
  - {from: nic, to: sw, bandwidth: 400Gb/s, latency: -5ns}
)";
    CHECK_THROWS_WITH(load_text(negative_latency, "neg.yaml"), Catch::Contains("neg.yaml:10"));

    const std::string wrong_count = "gpus: 8\n" + std::string(kTwoNodesHead) + R"(switches:
  - {name: sw, count: 1}
links:
  - {from: nic, to: sw, bandwidth: 400Gb/s, latency: 50ns}
)";
    CHECK_THROWS_WITH(load_text(wrong_count, "count.yaml"),
                      Catch::Contains("count.yaml:1") && Catch::Contains("2 x 2 = 4"));

    const std::string unknown_endpoint = std::string(kTwoNodesHead) + R"(switches:
  - {name: sw, count: 1}
links:
  - {from: nic, to: swx, bandwidth: 400Gb/s, latency: 50ns}
)";
    CHECK_THROWS_WITH(load_text(unknown_endpoint, "ep.yaml"),
                      Catch::Contains("ep.yaml:10") && Catch::Contains("unknown endpoint 'swx'"));

    const std::string out_of_range = std::string(kTwoNodesHead) + R"(switches:
  - {name: sw, count: 1}
links:
  - {from: "nic[0-9]", to: sw, bandwidth: 400Gb/s, latency: 50ns}
)";
    CHECK_THROWS_WITH(load_text(out_of_range, "range.yaml"), Catch::Contains("out of range"));

    const std::string bad_rail = std::string(kTwoNodesHead) + R"(switches:
  - {name: sw, count: 3}
links:
  - {from: nic, to: sw, pattern: rail, bandwidth: 400Gb/s, latency: 50ns}
)";
    CHECK_THROWS_WITH(load_text(bad_rail, "rail.yaml"), Catch::Contains("multiple of gpus_per_node"));

    CHECK_THROWS_WITH(load_text(std::string(kTwoNodesHead) + "fabric: {}\n", "key.yaml"),
                      Catch::Contains("key.yaml:7"));
}

TEST_CASE("YAML topologies: bandwidths and latencies outside their physical ranges are refused at their key",
          "[topology][hostile]") {
    // 1b/s of link used to overflow the event clock and print 0 us collectives (exit 0); a 5,000,000 s latency,
    // summed along a path, tripped an internal assert. Both are typos, not what-ifs (sim/physical_range.hpp).
    auto with_link = [](const std::string& bandwidth, const std::string& latency, const std::string& switch_latency) {
        return std::string(kTwoNodesHead) + "switches:\n  - {name: sw, count: 1, latency: " + switch_latency +
               "}\nlinks:\n  - {from: nic, to: sw, bandwidth: " + bandwidth + ", latency: " + latency + "}\n";
    };
    CHECK_NOTHROW(load_text(with_link("1Gb/s", "1s", "1s")));           // the ends of the ranges are accepted
    CHECK_NOTHROW(load_text(with_link("100Tb/s", "0ns", "0ns")));
    CHECK_THROWS_WITH(load_text(with_link("1b/s", "50ns", "0ns"), "slow.yaml"),
                      Catch::Contains("slow.yaml:10") && Catch::Contains("'links[0].bandwidth'") &&
                          Catch::Contains("outside the physical range 1Gb/s to 100Tb/s"));
    CHECK_THROWS_WITH(load_text(with_link("101Tb/s", "50ns", "0ns"), "fast.yaml"),
                      Catch::Contains("outside the physical range"));
    CHECK_THROWS_WITH(load_text(with_link("400Gb/s", "2s", "0ns"), "lat.yaml"),
                      Catch::Contains("'links[0].latency'") && Catch::Contains("0s to 1s"));
    CHECK_THROWS_WITH(load_text(with_link("400Gb/s", "50ns", "5000000s"), "sw.yaml"),
                      Catch::Contains("sw.yaml:8") && Catch::Contains("'switches[0].latency'"));
    // The nodes' own ports: NVLink and NIC.
    std::string head(kTwoNodesHead);
    const std::string slow_nvlink = head.replace(head.find("450GB/s"), 7, "1Mb/s") +
                                    "switches:\n  - {name: sw, count: 1}\nlinks:\n  - {from: nic, to: sw, bandwidth: "
                                    "400Gb/s, latency: 50ns}\n";
    CHECK_THROWS_WITH(load_text(slow_nvlink, "nv.yaml"), Catch::Contains("'nodes.nvlink.bandwidth'"));
}
