// Fat trees of any switch radix and 2 to 4 tiers: the SuperPOD shape with 64-port Quantum-2 switches (as NVIDIA
// documents it) and 144-port Quantum-X800 switches (72 ports down, 72 up), their capacities by tier worked out by
// hand.
#include <catch2/catch.hpp>

#include "topologies/presets.hpp"
#include "topologies/superpod_fabric.hpp"

using ttsim::superpod_max_nodes;
using ttsim::superpod_shape;

TEST_CASE("fabric radix: two tiers of 144-port switches hold 10,368 GPUs, three ~746k", "[fabric]") {
    // A 144-port leaf has 72 ports down (one per node of a 72-node scalable unit) and 72 up. Two tiers: every leaf
    // reaches every spine, so at most 144 leaves = 18 units x 8 rails = 1,296 nodes = 10,368 GPUs.
    const auto two = superpod_shape(1296, 8, 72, 144);
    REQUIRE(two.tiers == 2);
    REQUIRE(two.leaves() == 144);
    // 144 leaves x 72 uplinks = 10,368 cables over 144-port spines: 72 spines, one cable each.
    REQUIRE(two.spines() == 72);
    REQUIRE(two.cables[2] == 1);
    REQUIRE(superpod_max_nodes(8, 72, 144, 2) * 8 == 10'368);
    REQUIRE(superpod_shape(1297, 8, 72, 144).tiers == 3);
    // Three tiers: pods of 72 units; a core plane terminates one spine of each (pod, rail) group, so at most
    // 144 / 8 = 18 pods: 18 x 72 units x 72 nodes x 8 GPUs = 746,496 GPUs (72^3 x 2 = 746,496 NIC ports).
    REQUIRE(superpod_max_nodes(8, 72, 144) * 8 == 746'496);
    REQUIRE(superpod_max_nodes(8, 72, 144, 3) * 8 == 746'496);
    const auto full = superpod_shape(93'312, 8, 72, 144);
    REQUIRE(full.tiers == 3);
    REQUIRE(full.pods == 18);
    REQUIRE(full.per_plane[2] == 72);   // spines per (pod, rail) group
    REQUIRE(full.per_plane[3] == 72);   // cores per plane: 18 pods x 8 rails / 2
    REQUIRE(full.cables[3] == 1);
    // 131,072 GPUs (16,384 nodes) fit three tiers: 228 units in 4 pods, a core plane of 16 cores.
    const auto big = superpod_shape(16'384, 8, 72, 144);
    REQUIRE(big.tiers == 3);
    REQUIRE(big.pods == 4);
    REQUIRE(big.per_plane[3] == 18);   // the divisor of 72 at or above 4 x 8 / 2 = 16
    REQUIRE(72 % big.cables[3] == 0);
}

TEST_CASE("fabric radix: 64-port switches keep the documented SuperPOD counts", "[fabric]") {
    // SPOD_H100 Table 4: 4 SU = 32 leaves / 16 spines; SPOD_B200: 16 SU = 128 leaves / 128 spines / 64 cores.
    const auto four = superpod_shape(127, 8);
    REQUIRE(four.tiers == 2);
    REQUIRE(four.leaves() == 32);
    REQUIRE(four.spines() == 16);
    const auto sixteen = superpod_shape(16 * 32, 8);
    REQUIRE(sixteen.tiers == 3);
    REQUIRE(sixteen.leaves() == 128);
    REQUIRE(sixteen.spines() == 128);
    REQUIRE(sixteen.cores() == 64);
    REQUIRE(superpod_max_nodes(8) * 8 == 65'536);
}

TEST_CASE("fabric tiers: four tiers of 64-port switches hold 2,097,152 NICs per plane (K^4/8)", "[fabric]") {
    // Per tier, a switch puts 32 ports down and 32 up, the top tier all 64 down: 64 zones x 32 spine groups x 32
    // leaves x 32 NICs = 2,097,152 = 64^4 / 8. Rail-optimised, in whole pods of 8 rail groups: 64 x 32 / 8 = 256
    // pods of 32 units of 32 nodes = 262,144 DGX nodes of 8 NICs, the same count.
    REQUIRE(superpod_max_nodes(8, 32, 64, 4) * 8 == 2'097'152);
    REQUIRE(superpod_max_nodes(8, 32, 64, 4, false) * 8 == 2'097'152);
    REQUIRE(superpod_max_nodes(8, 32, 64, 3) * 8 == 64 * 64 * 64 / 4);
    REQUIRE(superpod_max_nodes(8, 32, 64, 2) * 8 == 64 * 64 / 2);
    const auto full = superpod_shape(262'144, 8, 32, 64, 4);
    REQUIRE(full.tiers == 4);
    REQUIRE(full.leaves() == 65'536);          // 8,192 units x 8 rails
    REQUIRE(full.blocks[2] == 2'048);          // 256 pods x 8 rails
    REQUIRE(full.blocks[3] == 64);             // zones of 32 groups
    REQUIRE(full.per_plane[2] == 32);
    REQUIRE(full.per_plane[3] == 32);
    REQUIRE(full.per_plane[4] == 32);          // 64 zones / 2
    // Non-blocking: every tier as many switches as the leaves (32 x 32 positions per zone x 64 zones), the top
    // tier half (its ports all face down).
    REQUIRE(full.switches[2] == 65'536);
    REQUIRE(full.switches[3] == 65'536);
    REQUIRE(full.switches[4] == 32'768);
    // 16-port switches: three tiers hold 16^3/4 = 1,024 NICs, four 16^4/8 = 8,192.
    REQUIRE(superpod_max_nodes(8, 8, 16, 3) * 8 == 1'024);
    REQUIRE(superpod_max_nodes(8, 8, 16, 4) * 8 == 8'192);
}

TEST_CASE("fabric tiers: the default is the fewest of two and three that hold the job, more can be asked for",
          "[fabric]") {
    REQUIRE(superpod_shape(256, 8).tiers == 2);    // 8 SU x 8 rails = 64 leaves
    REQUIRE(superpod_shape(257, 8).tiers == 3);
    REQUIRE(superpod_shape(256, 8, 32, 64, 3).tiers == 3);
    REQUIRE(superpod_shape(256, 8, 32, 64, 4).tiers == 4);
    // A preset's limit follows its tiers: 64-port dgx-h100 holds 2,048 GPUs in two tiers, 65,536 in three, the
    // preset cap (262,144) in four.
    const ttsim::PresetInfo& h100 = ttsim::preset_systems().front();
    REQUIRE(ttsim::max_cluster_gpus(h100, ttsim::FabricOptions{.tiers = 2}) == 2'048);
    REQUIRE(ttsim::max_cluster_gpus(h100, ttsim::FabricOptions{}) == 65'536);
    REQUIRE(ttsim::max_cluster_gpus(h100, ttsim::FabricOptions{.tiers = 4}) == ttsim::kMaxPresetGpus);
    // Built: a forced fourth tier has super-spines and cores; the summary counts four tiers.
    const ttsim::Topology t = ttsim::build_preset("dgx-h100", 1024, ttsim::FabricOptions{.tiers = 4});
    const ttsim::TopologySummary s = t.summary();
    CHECK(s.fabric_tiers == 4);
    CHECK(s.superspine_switches > 0);
    CHECK(s.core_switches > 0);
}
