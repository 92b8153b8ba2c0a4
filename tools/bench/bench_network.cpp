// Benchmarks of the network model at the scale of a ring collective on a large cluster:
//  - the max-min solver alone, 131,072 flows over a ~42,000-link synthetic fat tree;
//  - a FlowNetwork run of 16,384 (and 131,072) flows started together, to completion.
//
// Synthetic fat tree (all figures are per direction; every cable is two directed links):
//   16,384 hosts, 32 per leaf (512 leaves), 8 leaves per pod (64 pods), 8 planes.
//   host <-> leaf       : 50 GB/s   (400 Gb/s NIC)            32,768 links
//   leaf <-> pod spine  : 100 GB/s per plane                    8,192 links
//   pod spine <-> core  : 800 GB/s per plane (or 400: 2:1 oversubscribed) 1,024 links
// Flow (host h, channel c) goes to host h + 256 (the next pod: 6 hops) on plane c.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/flow_network.hpp"
#include "sim/maxmin.hpp"

namespace {

constexpr std::uint32_t kHosts = 16384;
constexpr std::uint32_t kHostsPerLeaf = 32;
constexpr std::uint32_t kLeavesPerPod = 8;
constexpr std::uint32_t kPlanes = 8;
constexpr std::uint32_t kLeaves = kHosts / kHostsPerLeaf;
constexpr std::uint32_t kPods = kLeaves / kLeavesPerPod;
constexpr std::uint32_t kHostsPerPod = kHostsPerLeaf * kLeavesPerPod;

struct FatTree {
    std::vector<ttsim::NetworkLink> links;
    // Link ids by role.
    std::uint32_t host_up(std::uint32_t host) const { return host; }
    std::uint32_t host_down(std::uint32_t host) const { return kHosts + host; }
    std::uint32_t leaf_up(std::uint32_t leaf, std::uint32_t plane) const { return 2 * kHosts + leaf * kPlanes + plane; }
    std::uint32_t leaf_down(std::uint32_t leaf, std::uint32_t plane) const {
        return 2 * kHosts + kLeaves * kPlanes + leaf * kPlanes + plane;
    }
    std::uint32_t pod_up(std::uint32_t pod, std::uint32_t plane) const {
        return 2 * kHosts + 2 * kLeaves * kPlanes + pod * kPlanes + plane;
    }
    std::uint32_t pod_down(std::uint32_t pod, std::uint32_t plane) const {
        return 2 * kHosts + 2 * kLeaves * kPlanes + kPods * kPlanes + pod * kPlanes + plane;
    }

    explicit FatTree(double core_bytes_per_s) {
        const ttsim::SimTime hop_latency = ttsim::SimTime::nanoseconds(500);
        auto add = [&](std::uint32_t count, double bandwidth, const char* role) {
            for (std::uint32_t i = 0; i < count; ++i) {
                links.push_back({bandwidth, hop_latency, std::string(role) + std::to_string(i)});
            }
        };
        add(kHosts, 50e9, "host_up");
        add(kHosts, 50e9, "host_down");
        add(kLeaves * kPlanes, 100e9, "leaf_up");
        add(kLeaves * kPlanes, 100e9, "leaf_down");
        add(kPods * kPlanes, core_bytes_per_s, "pod_up");
        add(kPods * kPlanes, core_bytes_per_s, "pod_down");
    }

    // 6 hops from `source` to the host one pod further, on `plane`.
    std::vector<std::uint32_t> path(std::uint32_t source, std::uint32_t plane) const {
        const std::uint32_t destination = (source + kHostsPerPod) % kHosts;
        const std::uint32_t source_leaf = source / kHostsPerLeaf;
        const std::uint32_t destination_leaf = destination / kHostsPerLeaf;
        return {host_up(source),
                leaf_up(source_leaf, plane),
                pod_up(source_leaf / kLeavesPerPod, plane),
                pod_down(destination_leaf / kLeavesPerPod, plane),
                leaf_down(destination_leaf, plane),
                host_down(destination)};
    }
};

// 800 GB/s core planes: every tier binds at 3.125 GB/s per flow (one level). 400 GB/s: the core binds first.
void BM_MaxMinSolve131kFlows(benchmark::State& state) {
    const FatTree tree(state.range(0) == 0 ? 800e9 : 400e9);
    ttsim::MaxMinProblem problem;
    for (const auto& link : tree.links) problem.add_link(link.bandwidth_bytes_per_s);
    for (std::uint32_t host = 0; host < kHosts; ++host) {
        for (std::uint32_t plane = 0; plane < kPlanes; ++plane) problem.add_flow(tree.path(host, plane));
    }
    ttsim::MaxMinSolver solver;
    std::vector<double> rates;
    for (auto _ : state) {
        solver.solve(problem, rates);
        benchmark::DoNotOptimize(rates.data());
    }
    state.counters["flows"] = static_cast<double>(problem.flow_count());
    state.counters["links"] = static_cast<double>(problem.link_count());
    state.counters["rounds"] = static_cast<double>(solver.last_round_count());
    state.SetLabel(state.range(0) == 0 ? "non-blocking" : "core 2:1 oversubscribed");
}
BENCHMARK(BM_MaxMinSolve131kFlows)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

std::vector<std::vector<std::uint32_t>> ring_paths(const FatTree& tree, std::uint32_t flow_count) {
    const std::uint32_t planes = flow_count / kHosts;
    std::vector<std::vector<std::uint32_t>> paths;
    for (std::uint32_t host = 0; host < kHosts; ++host) {
        for (std::uint32_t plane = 0; plane < planes; ++plane) paths.push_back(tree.path(host, plane));
    }
    return paths;
}

constexpr double kBytesPerFlow = 1 << 20;

// Cold: a fresh network per run, so the time includes first-touch allocation of every buffer.
// All flows start at t = 0 (one solve) and, being symmetric, drain at the same picosecond (one retire
// event). Timed: starting the flows and running the simulation to the last completion callback.
void BM_FlowNetworkColdRun(benchmark::State& state) {
    const FatTree tree(800e9);
    const auto paths = ring_paths(tree, static_cast<std::uint32_t>(state.range(0)));
    std::uint64_t completed = 0;
    std::uint64_t solves = 0;
    double finish_us = 0.0;
    for (auto _ : state) {
        state.PauseTiming();
        ttsim::Simulation sim;
        auto network = std::make_unique<ttsim::FlowNetwork>(tree.links);
        state.ResumeTiming();
        completed = 0;
        for (const auto& path : paths) network->start_flow(sim, path, kBytesPerFlow, [&] { ++completed; });
        sim.run();
        solves = network->solve_count();
        finish_us = sim.now().microseconds_f();
        state.PauseTiming();
        network.reset();  // 42k link names: not part of the measured work
        state.ResumeTiming();
    }
    state.counters["flows"] = static_cast<double>(completed);
    state.counters["solves"] = static_cast<double>(solves);
    state.counters["sim_us"] = finish_us;
}
BENCHMARK(BM_FlowNetworkColdRun)->Arg(16384)->Arg(131072)->Unit(benchmark::kMillisecond);

// Warm: one network runs the same collective step after step, as in a training simulation, so its
// buffers are already allocated. Each iteration starts every flow at the current time and runs to the end.
void BM_FlowNetworkWarmRun(benchmark::State& state) {
    const FatTree tree(800e9);
    const auto paths = ring_paths(tree, static_cast<std::uint32_t>(state.range(0)));
    ttsim::Simulation sim;
    ttsim::FlowNetwork network(tree.links);
    std::uint64_t completed = 0;
    for (auto _ : state) {
        for (const auto& path : paths) network.start_flow(sim, path, kBytesPerFlow, [&] { ++completed; });
        sim.run();
    }
    state.counters["flows_per_run"] = static_cast<double>(completed) / static_cast<double>(state.iterations());
    state.counters["solves_per_run"] =
        static_cast<double>(network.solve_count()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_FlowNetworkWarmRun)->Arg(16384)->Arg(131072)->Unit(benchmark::kMillisecond);

}  // namespace
