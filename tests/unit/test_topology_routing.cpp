// Routing on preset topologies: path shapes, rail rules, ECMP spreading, determinism, valid routes at 16k
// GPUs (their speed: tools/bench/bench_routing.cpp), and the spray groups of adaptive routing.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "sim/errors.hpp"
#include "topologies/presets.hpp"
#include "topologies/superpod_fabric.hpp"
#include "topologies/routing.hpp"

using namespace ttsim;

namespace {

// The vertex kinds a path visits, source and destination included.
std::vector<VertexKind> kinds_along(const Topology& t, const std::vector<LinkId>& path) {
    std::vector<VertexKind> kinds;
    if (path.empty()) return kinds;
    kinds.push_back(t.vertex(t.link(path.front()).from).kind);
    for (LinkId id : path) kinds.push_back(t.vertex(t.link(id).to).kind);
    return kinds;
}

// Empty when `path` is a valid route src -> dst: contiguous links, GPUs and NICs never in transit, a NIC
// only right after the source GPU and right before the destination GPU (and each GPU's own NIC).
std::string path_problem(const Topology& t, int src, int dst, const std::vector<LinkId>& path) {
    if (path.empty()) return "empty path";
    if (t.link(path.front()).from != t.gpu(src).vertex) return "does not start at the source GPU";
    if (t.link(path.back()).to != t.gpu(dst).vertex) return "does not end at the destination GPU";
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
        if (t.link(path[i]).to != t.link(path[i + 1]).from) return "links are not contiguous";
        const Vertex via = t.link(path[i]).to;
        const VertexKind kind = t.vertex(via).kind;
        if (kind == VertexKind::Gpu) return "a GPU forwards traffic";
        if (kind == VertexKind::Nic) {
            const bool own = (i == 0 && via == t.gpu(src).nic) || (i + 2 == path.size() && via == t.gpu(dst).nic);
            if (!own) return "traffic crosses a NIC that is not the source's or the destination's own";
        }
    }
    return {};
}

bool visits(const std::vector<VertexKind>& kinds, VertexKind kind) {
    return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

}  // namespace

TEST_CASE("Every GPU pair is routable with a valid path", "[topology]") {
    for (const auto& [system, gpus] : std::vector<std::pair<std::string, int>>{
             {"dgx-h100", 16}, {"dgx-h100", 264}, {"gb200-nvl72", 148}}) {
        const Topology t = build_preset(system, gpus);
        Router router(t);
        std::vector<LinkId> path;
        int bad = 0;
        std::string first_problem;
        for (int s = 0; s < gpus; ++s)
            for (int d = 0; d < gpus; ++d) {
                if (s == d) continue;
                router.route_into(s, d, static_cast<std::uint64_t>(s * 7 + d), path);
                if (std::string p = path_problem(t, s, d, path); !p.empty()) {
                    if (bad++ == 0) first_problem = std::to_string(s) + "->" + std::to_string(d) + ": " + p;
                }
            }
        INFO(system << " x" << gpus << ": " << first_problem);
        CHECK(bad == 0);
    }
}

TEST_CASE("Path shapes follow the rail-optimised rules", "[topology]") {
    const Topology t = build_preset("dgx-h100", 512);  // 64 nodes = 2 SU, two tiers
    Router router(t);
    using K = VertexKind;

    SECTION("intra-node: 2 NVLink links through the node's NVSwitch") {
        const auto path = router.route(3, 6, 0);
        REQUIRE(path.size() == 2);
        CHECK(t.link(path[0]).kind == LinkKind::NvLink);
        CHECK(t.link(path[1]).kind == LinkKind::NvLink);
        CHECK(kinds_along(t, path) == std::vector<K>{K::Gpu, K::NvSwitch, K::Gpu});
        CHECK(router.route(5, 5, 0).empty());
    }
    SECTION("same rail, same SU: GPU -> NIC -> leaf -> NIC -> GPU") {
        const auto path = router.route(8 * 2 + 3, 8 * 30 + 3, 42);  // node 2 and node 30, rail 3
        CHECK(kinds_along(t, path) == std::vector<K>{K::Gpu, K::Nic, K::LeafSwitch, K::Nic, K::Gpu});
        CHECK(t.link(path[0]).kind == LinkKind::Pcie);
        CHECK(t.link(path[1]).kind == LinkKind::InfiniBand);
    }
    SECTION("different rails inside one SU go through a spine (no PXN: own NICs only)") {
        const auto path = router.route(8 * 2 + 3, 8 * 30 + 4, 1);
        CHECK(kinds_along(t, path) ==
              std::vector<K>{K::Gpu, K::Nic, K::LeafSwitch, K::SpineSwitch, K::LeafSwitch, K::Nic, K::Gpu});
        CHECK(t.link(path[1]).from == t.gpu(8 * 2 + 3).nic);
        CHECK(t.link(path[4]).to == t.gpu(8 * 30 + 4).nic);
    }
    SECTION("cross-SU paths go through spines") {
        const auto path = router.route(0, 8 * 40, 0);  // node 0 (SU 0) to node 40 (SU 1), rail 0
        CHECK(kinds_along(t, path) ==
              std::vector<K>{K::Gpu, K::Nic, K::LeafSwitch, K::SpineSwitch, K::LeafSwitch, K::Nic, K::Gpu});
    }
    SECTION("path latency adds NIC, cable and switch estimates once per traversal") {
        const auto path = router.route(8 * 2 + 3, 8 * 30 + 3, 0);
        SimTime total;
        for (LinkId id : path) total += t.link(id).latency;
        CHECK(total == SimTime::nanoseconds(500 + 350 + 50 + 500));
    }
}

TEST_CASE("Three-tier paths: same rail turns at the spine, cross-rail goes through a core", "[topology]") {
    const Topology t = build_preset("dgx-h100", 4096);  // 512 nodes = 16 SU
    Router router(t);
    const auto same_rail = kinds_along(t, router.route(0, 8 * 200, 0));
    CHECK(visits(same_rail, VertexKind::SpineSwitch));
    CHECK_FALSE(visits(same_rail, VertexKind::CoreSwitch));
    CHECK(same_rail.size() == 7);
    const auto cross_rail = kinds_along(t, router.route(0, 8 * 200 + 1, 0));
    CHECK(visits(cross_rail, VertexKind::CoreSwitch));
    CHECK(cross_rail.size() == 9);  // GPU NIC leaf spine core spine leaf NIC GPU
}

TEST_CASE("ECMP spreads flow keys over spines and cores, routes are deterministic", "[topology]") {
    const Topology t = build_preset("dgx-h100", 512);
    Router router(t);
    std::set<Vertex> spines;
    for (std::uint64_t key = 0; key < 64; ++key) {
        const auto path = router.route(0, 8 * 40, key);
        spines.insert(t.link(path[2]).to);  // leaf -> spine
    }
    CHECK(spines.size() == 8);  // 2 SU: all 8 spines used by 64 flows

    // Different pairs with the same key also spread.
    std::set<Vertex> spines_by_pair;
    for (int node = 32; node < 64; ++node) spines_by_pair.insert(t.link(router.route(0, 8 * node, 7)[2]).to);
    CHECK(spines_by_pair.size() >= 6);

    const Topology big = build_preset("dgx-h100", 4096);
    Router big_router(big);
    std::set<Vertex> cores;
    for (std::uint64_t key = 0; key < 256; ++key) cores.insert(big.link(big_router.route(0, 8 * 200 + 1, key)[3]).to);
    CHECK(cores.size() >= 32);  // 16 planes x 4 cores reachable from rail 0 / rail 1

    // Same inputs, same path, in a fresh router and regardless of the order routes were asked for.
    Router other(t);
    for (int s = 0; s < 512; s += 37)
        for (int d = 511; d >= 0; d -= 41)
            for (std::uint64_t key : {0ull, 1ull, 0xDEADBEEFull}) CHECK(other.route(s, d, key) == router.route(s, d, key));
}

TEST_CASE("131k ring routes and 131k random-pair routes on 16384 GPUs (3-tier) are valid", "[topology]") {
    // The same routes tools/bench/bench_routing.cpp times (BM_Routes16k/ring and /random_pairs).
    const Topology t = build_preset("dgx-h100", 16384);
    const int n = t.gpu_count();
    const int channels = 8;
    const TopologySummary summary = t.summary();
    REQUIRE(summary.core_switches > 0);   // three tiers
    REQUIRE(summary.leaf_switches == 512);

    // NCCL-like rings: channel c visits the nodes in order, and inside each node starts at GPU c, so every
    // channel crosses node boundaries on a different rail (all 512 leaves become destinations).
    Router router(t);
    std::vector<LinkId> path;
    int bad = 0, inter_node = 0;
    std::string first_problem;
    auto check = [&](int src, int dst) {
        const std::string problem = path_problem(t, src, dst, path);
        if (!problem.empty() && bad++ == 0) first_problem = std::to_string(src) + " -> " + std::to_string(dst) + ": " + problem;
    };
    for (int c = 0; c < channels; ++c)
        for (int i = 0; i < n; ++i) {
            const int src = (i / 8) * 8 + (i % 8 + c) % 8;
            const int next_i = (i + 1) % n;
            const int dst = (next_i / 8) * 8 + (next_i % 8 + c) % 8;
            router.route_into(src, dst, static_cast<std::uint64_t>(c), path);
            check(src, dst);
            if (visits(kinds_along(t, path), VertexKind::Nic)) ++inter_node;
        }
    INFO(first_problem);
    CHECK(bad == 0);
    CHECK(inter_node == channels * (n / 8));          // exactly one node-crossing hop per node and channel
    // One BFS map per twin class of destination leaves (routing.hpp): the 512 leaves of one rail in one pod share
    // their spines, and 16,384 GPUs are 2 pods of 32 units x 8 rails, so 16 maps, not one per leaf.
    CHECK(superpod_shape(n / 8, 8).pods == 2);
    CHECK(router.cached_distance_maps() == 16);

    // Worst case: 131k random pairs (almost all inter-node, most through cores), in a fresh router.
    Router cold(t);
    std::uint64_t state = 12345;
    auto next_rank = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
    };
    int routed = 0;
    for (int k = 0; k < channels * n; ++k) {
        const int s = next_rank(), d = next_rank();
        cold.route_into(s, d, static_cast<std::uint64_t>(k), path);
        if (s == d) {
            CHECK(path.empty());
            continue;
        }
        check(s, d);
        ++routed;
    }
    INFO(first_problem);
    CHECK(bad == 0);
    CHECK(routed > channels * n - 100);
}

TEST_CASE("Spray groups hold exactly the equal-cost next hops of every flow that crosses them", "[topology]") {
    // Adaptive routing puts every output port with minimal hops to the destination in one AR group
    // (IB_BRINGUP_AR). A spray group must therefore be, for every flow crossing it, the set of links the flow
    // could take at that hop: over many flow keys the static ECMP hash (which picks one equal-cost next hop
    // per key) must land on every member, and on nothing outside the group. 2 tiers (1,024 GPUs: 32 leaves,
    // 16 spines) and 3 tiers (16,384 GPUs: groups of 32 spines, planes of 8 cores: spine groups of 256 links).
    for (const int gpus : {1024, 16384}) {
        const Topology t = build_preset("dgx-h100", gpus);
        REQUIRE(t.routing() == FabricRouting::Adaptive);
        const auto& groups = t.spray_groups();
        REQUIRE(!groups.empty());
        for (std::size_t g = 0; g < groups.size(); ++g)
            for (const LinkId m : groups[g].members) REQUIRE(t.spray_group_of(m) == static_cast<std::int32_t>(g));
        Router router(t);
        // Cross-rail pairs in different scalable units (and, at 16,384 GPUs, different pods): every hop
        // above the leaf is in a group.
        const std::vector<std::pair<int, int>> pairs = {{0, gpus - 1}, {9, gpus / 2 + 3}, {gpus - 5, 17}};
        for (const auto& [src, dst] : pairs) {
            INFO(gpus << " GPUs, " << src << " -> " << dst);
            std::map<std::int32_t, std::set<LinkId>> reached;  // group -> members some key's path used
            std::vector<LinkId> path;
            std::size_t grouped_hops = 0;
            for (std::uint64_t key = 0; key < 4096; ++key) {
                router.route_into(src, dst, key, path);
                std::size_t hops = 0;
                for (const LinkId id : path)
                    if (const std::int32_t g = t.spray_group_of(id); g >= 0) {
                        reached[g].insert(id);
                        ++hops;
                    }
                if (key == 0) grouped_hops = hops;
                CHECK(hops == grouped_hops);  // same groups on every equal-cost path
            }
            CHECK(grouped_hops == (gpus == 1024 ? 2u : 4u));  // leaf up, (spines up, cores down,) leaf down
            CHECK(reached.size() == grouped_hops);
            for (const auto& [g, used] : reached) {
                INFO("group " << groups[static_cast<std::size_t>(g)].name);
                CHECK(used.size() == groups[static_cast<std::size_t>(g)].members.size());
            }
        }
    }
}

TEST_CASE("Spray groups: one per leaf direction and spine group, non-blocking capacity", "[topology]") {
    // 1,024 GPUs: 4 SU x 8 rails = 32 leaves, 16 spines, 2 cables per leaf-spine trunk (SPOD_H100 Table 4).
    const Topology two = build_preset("dgx-h100", 1024);
    CHECK(two.spray_groups().size() == 2 * 32);
    for (const SprayGroup& g : two.spray_groups()) {
        CHECK(g.members.size() == 16);
        double total = 0;
        for (const LinkId m : g.members) total += two.link(m).bandwidth_bytes_per_s;
        CHECK(total == Approx(32 * 50e9));  // the leaf's 32 node ports: non-blocking
    }
    // 16,384 GPUs: 512 leaves; 2 pods x 8 rails = 16 spine groups of 32 spines, 8 cores per plane.
    const Topology three = build_preset("dgx-h100", 16384);
    CHECK(three.spray_groups().size() == 2 * 512 + 2 * 16);
    std::size_t spine_groups = 0;
    for (const SprayGroup& g : three.spray_groups())
        if (g.name.find("cores") != std::string::npos) {
            ++spine_groups;
            CHECK(g.members.size() == 32 * 8);
        } else {
            CHECK(g.members.size() == 32);
        }
    CHECK(spine_groups == 2 * 16);
    // Static ECMP keeps the groups (they describe the wiring) but routes without them.
    const Topology fixed = build_preset("dgx-h100", 1024, FabricOptions{.routing = FabricRouting::StaticEcmp});
    CHECK(fixed.routing() == FabricRouting::StaticEcmp);
    CHECK(fixed.spray_groups().size() == two.spray_groups().size());
    // One node has no fabric and no groups.
    CHECK(build_preset("dgx-h100", 8).spray_groups().empty());
    CHECK(parse_fabric_routing("static") == FabricRouting::StaticEcmp);
    CHECK(parse_fabric_routing("ar") == FabricRouting::Adaptive);
    CHECK_THROWS_AS(parse_fabric_routing("random"), InputError);
}
