// Benchmarks of the collective simulator: a 1 GiB all-reduce over DGX H100 SuperPODs of 1,024 to 16,384
// GPUs (128 to 2,048 nodes on the rail-optimised fat tree).
//  - BM_RingAllReduceWithTopology: topology build + simulator construction + one uncached ring run;
//  - BM_RingAllReduce: one uncached ring run on a prebuilt topology (a fresh simulator each time, so nothing
//    is cached; the simulator's own construction, which sizes per-link capacities, is included);
//  - BM_RingAllReduceCached: the training model's case, the same collective again (a map lookup);
//  - BM_TreeAllReduce: one uncached double-binary-tree run (target: well under 1 s at 16,384 GPUs; it was
//    O(n^2), ~17 s at 4,096 GPUs, before a tree channel became one flow, tree.cpp);
//  - BM_AutoAllReduce: `auto` with SHARP on, which simulates every applicable algorithm (ring, SHARP, tree,
//    hierarchical) and the one-island all-reduce that floors them (target: under ~1 s at 16,384 GPUs).
// Peak memory: run one size with /usr/bin/time -v (see the collective report).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "models/collectives/collective_simulator.hpp"
#include "topologies/presets.hpp"

namespace {

using namespace ttsim;

constexpr std::uint64_t kGiB = 1ull << 30;

CollectiveRequest allreduce(CollectiveAlgorithm algorithm) {
    CollectiveRequest r;
    r.op = CollectiveOp::AllReduce;
    r.bytes = kGiB;
    r.algorithm = algorithm;
    return r;
}

CollectiveRequest ring_allreduce() { return allreduce(CollectiveAlgorithm::Ring); }

void BM_RingAllReduceWithTopology(benchmark::State& state) {
    const int gpus = static_cast<int>(state.range(0));
    for (auto _ : state) {
        const Topology topo = build_preset("dgx-h100", gpus);
        CollectiveSimulator sim(topo);
        benchmark::DoNotOptimize(sim.run(ring_allreduce()).duration);
    }
    state.SetLabel(std::to_string(gpus) + " GPUs");
}

// One uncached run of `algorithm` per iteration on a prebuilt topology.
void run_uncached(benchmark::State& state, CollectiveAlgorithm algorithm, bool sharp) {
    const int gpus = static_cast<int>(state.range(0));
    const Topology topo = build_preset("dgx-h100", gpus);
    std::uint64_t flows = 0, events = 0;
    for (auto _ : state) {
        CollectiveSimulator sim(topo, CollectiveOptions{.sharp_enabled = sharp});
        const CollectiveResult r = sim.run(allreduce(algorithm));
        flows = r.flows_simulated;
        events = r.events;
        benchmark::DoNotOptimize(r.duration);
    }
    state.counters["flows"] = static_cast<double>(flows);
    state.counters["events"] = static_cast<double>(events);
    state.SetLabel(std::to_string(gpus) + " GPUs");
}

void BM_RingAllReduce(benchmark::State& state) { run_uncached(state, CollectiveAlgorithm::Ring, false); }
void BM_TreeAllReduce(benchmark::State& state) { run_uncached(state, CollectiveAlgorithm::Tree, false); }
void BM_AutoAllReduce(benchmark::State& state) { run_uncached(state, CollectiveAlgorithm::Auto, true); }

void BM_RingAllReduceCached(benchmark::State& state) {
    const Topology topo = build_preset("dgx-h100", static_cast<int>(state.range(0)));
    CollectiveSimulator sim(topo);
    sim.run(ring_allreduce());
    for (auto _ : state) benchmark::DoNotOptimize(sim.run(ring_allreduce()).duration);
}

}  // namespace

BENCHMARK(BM_RingAllReduceWithTopology)->RangeMultiplier(2)->Range(1024, 16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RingAllReduce)->RangeMultiplier(2)->Range(1024, 16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TreeAllReduce)->Arg(1024)->Arg(4096)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AutoAllReduce)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RingAllReduceCached)->Arg(1024)->Arg(16384)->Unit(benchmark::kMicrosecond);
