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
//  - BM_TreeAllReduceRouting: the tree at 16,384 GPUs under static ECMP (arg 0) and adaptive routing (arg 1),
//    which replaces every leaf/spine hop by its spray group (phase_runner.hpp FlowResources).
//  - BM_Nvl72PartialAllReduce: what `ttsim predict --workload retinanet --system gb200-nvl72` asks for at
//    4,096 and 8,192 GPUs, counts that are not multiples of 72 (56 full NVL72 racks + 64 GPUs; 113 + 56):
//    the 36.8 MB gradient-bucket all-reduce (73.7 MB of fp16 gradients in two <= 64 MB buckets) over every
//    GPU, `auto` with SHARP on (SHARP and hierarchical do not apply to unequal racks, so ring and tree over
//    56-72 rails per rack, plus the one-rack floor). The tree alone took 11 s (4,096) and 34 s (8,192)
//    before its channels became one flow each (1d0b517); target: well under 1 s, a whole prediction's budget.
//  - BM_FrontierAllReduce: what `ttsim collective --system h100-100k --gpus N --op allreduce --min-size 1GiB
//    --max-size 1GiB` does at 131,072 and 262,144 GPUs (16,384 and 32,768 nodes on 128-port Ethernet switches,
//    three tiers): topology build, then `auto` (ring, tree and hierarchical, each routed per rank and simulated
//    once per equivalence class of flows, phase_runner.hpp). Acceptance: <= 1 s (131,072) and <= 3 s (262,144)
//    of process wall, <= 1 GiB at 131,072.
//  - BM_FrontierAllReduceNewSize: the same all-reduce at a size not yet simulated on a warm simulator, what a
//    training prediction asks for each gradient bucket: the routed and classified plans are reused (one small
//    simulation of the classes per algorithm).
// Peak memory: run one size with /usr/bin/time -v (see the collective report).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

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

// The last run's flows, the flow classes the network simulated and its events, as the benchmark's counters.
void count_flows(benchmark::State& state, const CollectiveResult& last) {
    state.counters["flows"] = static_cast<double>(last.flows_simulated);
    state.counters["flow_classes"] = static_cast<double>(last.flow_classes);
    state.counters["events"] = static_cast<double>(last.events);
}

// One uncached run of `algorithm` per iteration on a prebuilt topology.
void run_uncached(benchmark::State& state, CollectiveAlgorithm algorithm, bool sharp) {
    const int gpus = static_cast<int>(state.range(0));
    const Topology topo = build_preset("dgx-h100", gpus);
    CollectiveResult last;
    for (auto _ : state) {
        CollectiveSimulator sim(topo, CollectiveOptions{.sharp_enabled = sharp});
        last = sim.run(allreduce(algorithm));
        benchmark::DoNotOptimize(last.duration);
    }
    count_flows(state, last);
    state.SetLabel(std::to_string(gpus) + " GPUs");
}

void BM_RingAllReduce(benchmark::State& state) { run_uncached(state, CollectiveAlgorithm::Ring, false); }
void BM_TreeAllReduce(benchmark::State& state) { run_uncached(state, CollectiveAlgorithm::Tree, false); }
void BM_AutoAllReduce(benchmark::State& state) { run_uncached(state, CollectiveAlgorithm::Auto, true); }

void BM_TreeAllReduceRouting(benchmark::State& state) {
    const FabricRouting routing = state.range(0) == 0 ? FabricRouting::StaticEcmp : FabricRouting::Adaptive;
    const Topology topo = build_preset("dgx-h100", 16384, FabricOptions{.routing = routing});
    for (auto _ : state) {
        CollectiveSimulator sim(topo);
        benchmark::DoNotOptimize(sim.run(allreduce(CollectiveAlgorithm::Tree)).duration);
    }
    state.SetLabel(std::string("16384 GPUs, ") + std::string(to_string(routing)));
}

void BM_Nvl72PartialAllReduce(benchmark::State& state) {
    const int gpus = static_cast<int>(state.range(0));
    const Topology topo = build_preset("gb200-nvl72", gpus);
    CollectiveRequest request;
    request.op = CollectiveOp::AllReduce;
    request.bytes = 36'849'004;  // RetinaNet: 73,698,008 gradient bytes in 2 buckets (predict.hpp kGradientBucketBytes)
    std::uint64_t simulations = 0;
    for (auto _ : state) {
        CollectiveSimulator sim(topo, CollectiveOptions{.sharp_enabled = true});
        benchmark::DoNotOptimize(sim.run(request).duration);
        simulations = sim.simulations();
    }
    state.counters["simulations"] = static_cast<double>(simulations);
    state.SetLabel(std::to_string(gpus) + " GB200 GPUs, " + std::to_string(gpus / 72) + " full NVL72 racks + " +
                   std::to_string(gpus % 72));
}

void BM_FrontierAllReduce(benchmark::State& state) {
    const int gpus = static_cast<int>(state.range(0));
    CollectiveResult last;
    for (auto _ : state) {   // the topology's build is timed too: at this scale it is part of the answer's cost
        const Topology topo = build_preset("h100-100k", gpus);
        CollectiveSimulator sim(topo);
        last = sim.run(allreduce(CollectiveAlgorithm::Auto));
        benchmark::DoNotOptimize(last.duration);
    }
    count_flows(state, last);
    state.SetLabel(std::to_string(gpus) + " GPUs, h100-100k, topology + auto");
}

void BM_FrontierAllReduceNewSize(benchmark::State& state) {
    const Topology topo = build_preset("h100-100k", static_cast<int>(state.range(0)));
    CollectiveSimulator sim(topo);
    CollectiveRequest request = allreduce(CollectiveAlgorithm::Auto);
    sim.run(request);
    for (auto _ : state) {
        ++request.bytes;  // a size never simulated before
        benchmark::DoNotOptimize(sim.run(request).duration);
    }
}

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
BENCHMARK(BM_TreeAllReduceRouting)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Nvl72PartialAllReduce)->Arg(4096)->Arg(8192)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FrontierAllReduce)->Arg(131072)->Arg(262144)->Iterations(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FrontierAllReduceNewSize)->Arg(131072)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RingAllReduceCached)->Arg(1024)->Arg(16384)->Unit(benchmark::kMicrosecond);
