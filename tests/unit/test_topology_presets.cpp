// Preset systems: switch counts against the DGX SuperPOD reference architectures, node structure, options,
// and rejection of GPU counts that do not fit.
#include <catch2/catch.hpp>

#include "sim/errors.hpp"
#include "topologies/presets.hpp"
#include "topologies/superpod_fabric.hpp"

using namespace ttsim;

namespace {

struct Tiers {
    int leaf, spine, core;
};

Tiers tiers_of(const Topology& t) {
    const TopologySummary s = t.summary();
    return {s.leaf_switches, s.spine_switches, s.core_switches};
}

}  // namespace

TEST_CASE("DGX H100 SuperPOD switch counts match SPOD_H100 Table 4 and SPOD_B200", "[topology]") {
    SECTION("1 SU = 32 nodes: 8 leaves (one per rail), 4 spines") {
        const Topology t = build_preset("dgx-h100", 256);
        const TopologySummary s = t.summary();
        CHECK(s.gpus == 256);
        CHECK(s.nodes == 32);
        CHECK(s.nvlink_domains == 32);
        CHECK(s.nics == 256);
        CHECK(s.leaf_switches == 8);
        CHECK(s.spine_switches == 4);
        CHECK(s.core_switches == 0);
        CHECK(s.fabric_tiers == 2);
    }
    SECTION("4 SU = 128 nodes = 1024 GPUs: 32 leaves, 16 spines, two tiers") {
        const Topology t = build_preset("dgx-h100", 1024);
        const Tiers n = tiers_of(t);
        CHECK(n.leaf == 32);
        CHECK(n.spine == 16);
        CHECK(n.core == 0);
    }
    SECTION("64 SU = 2048 nodes = 16384 GPUs: three tiers, 512 leaves, 512 spines, 256 cores") {
        const Topology t = build_preset("dgx-h100", 16384);
        const TopologySummary s = t.summary();
        CHECK(s.nodes == 2048);
        CHECK(s.leaf_switches == 512);
        CHECK(s.spine_switches == 512);
        CHECK(s.core_switches == 256);
        CHECK(s.fabric_tiers == 3);
    }
    SECTION("every row of the tables (shape only)") {
        // {nodes, leaf, spine, core}: SPOD_H100 Table 4 (2, 3 SU) and SPOD_B200 (8, 16, 32 SU).
        const int rows[][4] = {{64, 16, 8, 0},    {96, 24, 16, 0},      {256, 64, 32, 0},
                               {512, 128, 128, 64}, {1024, 256, 256, 128}, {2048, 512, 512, 256}};
        for (const auto& row : rows) {
            const SuperPodShape shape = superpod_shape(row[0], 8);
            INFO("nodes " << row[0]);
            CHECK(shape.leaves() == row[1]);
            CHECK(shape.spines() == row[2]);
            CHECK(shape.cores() == row[3]);
            CHECK(shape.tiers == (row[3] > 0 ? 3 : 2));
        }
        // Three tiers of 64-port switches: 65,536 NICs, what a DGX SuperPOD preset holds (8 or 4 rails alike).
        CHECK(superpod_max_nodes(8) * 8 == 65'536);
        CHECK(superpod_max_nodes(4) * 4 == 65'536);
        CHECK(max_cluster_gpus(preset_systems().front(), FabricOptions{}) == 65'536);
    }
}

TEST_CASE("A partial last SU gets its full set of rail leaves", "[topology]") {
    const Topology t = build_preset("dgx-b200", 33 * 8);  // 33 nodes = 1 SU + 1 node
    const TopologySummary s = t.summary();
    CHECK(s.leaf_switches == 16);
    CHECK(s.spine_switches == 8);
}

TEST_CASE("Single node presets have NICs but no scale-out switches", "[topology]") {
    for (int gpus : {1, 4, 8}) {
        const Topology t = build_preset("dgx-h100", gpus);
        const TopologySummary s = t.summary();
        CHECK(s.gpus == gpus);
        CHECK(s.nodes == 1);
        CHECK(s.nvlink_domains == 1);
        CHECK(s.nics == gpus);
        CHECK(s.leaf_switches + s.spine_switches + s.core_switches == 0);
        CHECK(s.directed_links == static_cast<std::size_t>(4 * gpus));  // NVLink + PCIe, both directions
    }
    const Topology rack = build_preset("gb200-nvl72", 72);
    CHECK(rack.summary().nodes == 18);  // compute trays of 4 GPUs
    CHECK(rack.summary().nvlink_domains == 1);
    CHECK(rack.summary().nics == 72);
    CHECK(rack.summary().leaf_switches == 0);
}

TEST_CASE("Node structure: NVLink bandwidth, PCIe NIC, rails", "[topology]") {
    const Topology h100 = build_preset("dgx-h100", 16);
    const GpuInfo& g = h100.gpu(13);
    CHECK(g.node == 1);
    CHECK(g.local_index == 5);
    CHECK(h100.link(g.nvlink_up).kind == LinkKind::NvLink);
    CHECK(h100.link(g.nvlink_up).bandwidth_bytes_per_s == Approx(450e9));
    CHECK(h100.link(g.pcie_up).bandwidth_bytes_per_s == Approx(63e9));
    CHECK(h100.link(g.nvlink_down).reverse() == g.nvlink_up);
    CHECK(h100.out_bandwidth(g.nic, VertexKind::LeafSwitch) == Approx(50e9));  // NDR 400 Gb/s

    const Topology b200 = build_preset("dgx-b200", 8);
    CHECK(b200.link(b200.gpu(0).nvlink_up).bandwidth_bytes_per_s == Approx(900e9));

    const Topology gb200 = build_preset("gb200-nvl72", 144);
    CHECK(gb200.summary().nvlink_domains == 2);
    CHECK(gb200.gpu(71).nvlink_domain == gb200.gpu(4).nvlink_domain);  // same rack, different trays
    CHECK(gb200.gpu(72).nvlink_domain != gb200.gpu(71).nvlink_domain);
    CHECK(gb200.gpu(6).local_index == 2);
    CHECK(gb200.summary().leaf_switches == 8);  // 36 trays = 2 units x 4 rails

    const Topology xdr = build_preset("dgx-h100", 16, {.nic = NicSpeed::Xdr800});
    CHECK(xdr.out_bandwidth(xdr.gpu(0).nic, VertexKind::LeafSwitch) == Approx(100e9));

    // Exported for the flow network, index = link id.
    const auto links = h100.network_links();
    REQUIRE(links.size() == h100.links().size());
    CHECK(links[g.pcie_up].name == "node1.gpu5->node1.nic5");
}

TEST_CASE("Leaf uplinks are non-blocking by default, oversubscription 2 halves them", "[topology]") {
    for (int gpus : {256, 4096}) {  // two and three tiers
        const Topology full = build_preset("dgx-h100", gpus);
        const Topology half = build_preset("dgx-h100", gpus, {.oversubscription = 2.0});
        const Vertex leaf = full.vertices_of_kind(VertexKind::LeafSwitch).front();
        const Vertex leaf_half = half.vertices_of_kind(VertexKind::LeafSwitch).front();
        const double down = full.out_bandwidth(leaf, VertexKind::Nic);
        CHECK(down == Approx(32 * 50e9));  // a full SU: 32 nodes on each rail leaf
        CHECK(full.out_bandwidth(leaf, VertexKind::SpineSwitch) == Approx(down));
        CHECK(half.out_bandwidth(leaf_half, VertexKind::SpineSwitch) == Approx(down / 2));
        CHECK(half.out_bandwidth(leaf_half, VertexKind::Nic) == Approx(down));
    }
}

TEST_CASE("GPU counts and options that do not fit are rejected", "[topology]") {
    for (int bad : {0, -8, 12, 20, 65544, 131072}) {
        INFO("gpus " << bad);
        CHECK_THROWS_AS(build_preset("dgx-h100", bad), InputError);
    }
    CHECK_THROWS_WITH(build_preset("dgx-h100", 12),
                      Catch::Contains("dgx-h100") && Catch::Contains("multiple of 8") && Catch::Contains("got 12"));
    CHECK_THROWS_WITH(build_preset("gb200-nvl72", 6),
                      Catch::Contains("gb200-nvl72") && Catch::Contains("multiple of 4"));
    CHECK_NOTHROW(build_preset("gb200-nvl72", 76));  // a partial second rack
    CHECK_THROWS_WITH(build_preset("dgx-a100", 8), Catch::Contains("unknown system") && Catch::Contains("dgx-h100"));
    CHECK_THROWS_AS(build_preset("dgx-h100", 16, {.oversubscription = 0.5}), InputError);
    CHECK(parse_nic_speed("hdr") == NicSpeed::Hdr200);
    CHECK(parse_nic_speed("xdr") == NicSpeed::Xdr800);
}
