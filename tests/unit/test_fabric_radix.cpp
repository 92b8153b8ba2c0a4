// Fat trees of any switch radix: the SuperPOD shape with 64-port Quantum-2 switches (as NVIDIA documents it) and
// 144-port Quantum-X800 switches (72 ports down, 72 up), their capacities by tier worked out by hand.
#include <catch2/catch.hpp>

#include "topologies/superpod_fabric.hpp"

using ttsim::superpod_max_nodes;
using ttsim::superpod_shape;

TEST_CASE("fabric radix: two tiers of 144-port switches hold 10,368 GPUs, three ~746k", "[fabric]") {
    // A 144-port leaf has 72 ports down (one per node of a 72-node scalable unit) and 72 up. Two tiers: every leaf
    // reaches every spine, so at most 144 leaves = 18 units x 8 rails = 1,296 nodes = 10,368 GPUs.
    const auto two = superpod_shape(1296, 8, 72, 144);
    REQUIRE(two.tiers == 2);
    REQUIRE(two.leaves == 144);
    // 144 leaves x 72 uplinks = 10,368 cables over 144-port spines: 72 spines, one cable each.
    REQUIRE(two.spines == 72);
    REQUIRE(two.cables_leaf_to_spine == 1);
    REQUIRE(superpod_shape(1297, 8, 72, 144).tiers == 3);
    // Three tiers: pods of 72 units; a core plane terminates one spine of each (pod, rail) group, so at most
    // 144 / 8 = 18 pods: 18 x 72 units x 72 nodes x 8 GPUs = 746,496 GPUs (72^3 x 2 = 746,496 NIC ports).
    REQUIRE(superpod_max_nodes(8, 72, 144) * 8 == 746'496);
    const auto full = superpod_shape(93'312, 8, 72, 144);
    REQUIRE(full.tiers == 3);
    REQUIRE(full.pods == 18);
    REQUIRE(full.spines_per_group == 72);
    REQUIRE(full.cores_per_plane == 72);   // 18 pods x 8 rails / 2
    REQUIRE(full.cables_spine_to_core == 1);
    // 131,072 GPUs (16,384 nodes) fit three tiers: 228 units in 4 pods, a core plane of 16 cores.
    const auto big = superpod_shape(16'384, 8, 72, 144);
    REQUIRE(big.tiers == 3);
    REQUIRE(big.pods == 4);
    REQUIRE(big.cores_per_plane == 18);   // the divisor of 72 at or above 4 x 8 / 2 = 16
    REQUIRE(72 % big.cables_spine_to_core == 0);
}

TEST_CASE("fabric radix: 64-port switches keep the documented SuperPOD counts", "[fabric]") {
    // SPOD_H100 Table 4: 4 SU = 32 leaves / 16 spines; SPOD_B200: 16 SU = 128 leaves / 128 spines / 64 cores.
    const auto four = superpod_shape(127, 8);
    REQUIRE(four.tiers == 2);
    REQUIRE(four.leaves == 32);
    REQUIRE(four.spines == 16);
    const auto sixteen = superpod_shape(16 * 32, 8);
    REQUIRE(sixteen.tiers == 3);
    REQUIRE(sixteen.leaves == 128);
    REQUIRE(sixteen.spines == 128);
    REQUIRE(sixteen.cores == 64);
    REQUIRE(superpod_max_nodes(8) * 8 == 65'536);
}
