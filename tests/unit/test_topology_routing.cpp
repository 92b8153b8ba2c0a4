// Routing on preset topologies: path shapes, rail rules, ECMP spreading, determinism, and valid routes at
// 16k GPUs (their speed: tools/bench/bench_routing.cpp).
#include <catch2/catch.hpp>

#include <set>

#include "topologies/presets.hpp"
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
    CHECK(router.cached_distance_maps() == 512);      // one BFS map per destination leaf

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
