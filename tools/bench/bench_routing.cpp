// Benchmarks of routing on the largest preset the collectives use routinely: DGX H100 x 16,384 GPUs, a
// three-tier rail-optimised fat tree (512 leaves).
//  - BM_BuildPreset16k: building that topology (Boost.Graph, fabric, finalize);
//  - BM_Routes16k/ring: the 131,072 routes of an 8-channel NCCL-like ring all-reduce (channel c visits the nodes
//    in order and starts at GPU c inside each node, so every channel crosses node boundaries on a different
//    rail and all 512 leaves become destinations), in a fresh router each iteration (cold BFS cache).
//    Target: under 300 ms CPU (it was a wall-clock assertion in tests/unit/test_topology_routing.cpp);
//  - BM_Routes16k/random_pairs: the worst case, 131,072 random GPU pairs (almost all inter-node, most through the
//    core), in a fresh router.
// Correctness of these routes is tested in tests/unit/test_topology_routing.cpp; this file only times them.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "topologies/presets.hpp"
#include "topologies/routing.hpp"

namespace {

using namespace ttsim;

constexpr int kGpus = 16384;
constexpr int kChannels = 8;

const Topology& topology_16k() {
    static const Topology topology = build_preset("dgx-h100", kGpus);
    return topology;
}

void BM_BuildPreset16k(benchmark::State& state) {
    for (auto _ : state) {
        Topology t = build_preset("dgx-h100", kGpus);
        benchmark::DoNotOptimize(t.links().size());
    }
}

struct RouteRequest {
    int src, dst;
    std::uint64_t flow_key;
};

// 8 channels x n ring neighbours (flow key = channel).
std::vector<RouteRequest> ring_routes(int n) {
    std::vector<RouteRequest> routes;
    for (int c = 0; c < kChannels; ++c)
        for (int i = 0; i < n; ++i) {
            const int next = (i + 1) % n;
            routes.push_back({(i / 8) * 8 + (i % 8 + c) % 8, (next / 8) * 8 + (next % 8 + c) % 8,
                              static_cast<std::uint64_t>(c)});
        }
    return routes;
}

// 8 x n pseudo-random pairs, the same every run (flow key = position).
std::vector<RouteRequest> random_routes(int n) {
    std::vector<RouteRequest> routes;
    std::uint64_t rng = 12345;
    auto next_rank = [&] {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<int>((rng >> 33) % static_cast<std::uint64_t>(n));
    };
    for (int k = 0; k < kChannels * n; ++k) {
        const int s = next_rank(), d = next_rank();
        routes.push_back({s, d, static_cast<std::uint64_t>(k)});
    }
    return routes;
}

// Every route of the list in a fresh router (cold BFS cache) per iteration.
void BM_Routes16k(benchmark::State& state, std::vector<RouteRequest> (*make_routes)(int)) {
    const Topology& t = topology_16k();
    const std::vector<RouteRequest> routes = make_routes(t.gpu_count());
    std::vector<LinkId> path;
    std::size_t links = 0;
    for (auto _ : state) {
        Router router(t);
        for (const RouteRequest& r : routes) {
            router.route_into(r.src, r.dst, r.flow_key, path);
            links += path.size();
        }
        benchmark::DoNotOptimize(links);
        state.counters["bfs_maps"] = static_cast<double>(router.cached_distance_maps());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(routes.size()));
}

}  // namespace

BENCHMARK(BM_BuildPreset16k)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Routes16k, ring, ring_routes)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Routes16k, random_pairs, random_routes)->Unit(benchmark::kMillisecond);
