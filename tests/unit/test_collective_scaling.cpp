// Collectives as the GPU count grows: the tree as one flow per channel (tree.cpp), and the exactness of
// merging identically loaded links in the plan runner (phase_runner.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/nccl_params.hpp"
#include "models/collectives/phase_runner.hpp"
#include "models/collectives/plan.hpp"
#include "sim/event_queue.hpp"
#include "sim/flow_network.hpp"
#include "topologies/presets.hpp"

using namespace ttsim;

namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

CollectiveResult allreduce(CollectiveSimulator& sim, std::uint64_t bytes, CollectiveAlgorithm algorithm,
                           std::vector<int> group = {}, NcclProtocol protocol = NcclProtocol::Auto) {
    CollectiveRequest request;
    request.bytes = bytes;
    request.algorithm = algorithm;
    request.group = std::move(group);
    request.protocol = protocol;
    return sim.run(request);
}

}  // namespace

TEST_CASE("tree all-reduce: one flow per channel, NVLink-bound on 2 nodes, NIC-bound on 8", "[collective]") {
    // 2R = 16 channels of S / 16 each. On 2 nodes every GPU's NVLink port carries 14 channels' chain edges
    // in each direction, 1.75 S at 370.8 GB/s. On 8 nodes (one scalable unit) the NIC of a node interior
    // to a tree carries 3 edges of that tree and 1 of the other in each direction: 4 S / 16 at 48 GB/s.
    // Tree Simple bandwidth is NCCL's x0.92 of the simulated rate (nccl_params.hpp).
    const double s = static_cast<double>(kGiB);
    for (const auto& [gpus, expected_seconds] : {std::pair{16, 1.75 * s / 370.8e9}, std::pair{64, 4.0 * s / 16 / 48e9}}) {
        const Topology topo = build_preset("dgx-h100", gpus);
        CollectiveSimulator sim(topo);
        const CollectiveResult r = allreduce(sim, kGiB, CollectiveAlgorithm::Tree, {}, NcclProtocol::Simple);
        INFO(gpus << " GPUs");
        CHECK(r.bandwidth_time.seconds() * 0.92 == Approx(expected_seconds).epsilon(1e-6));
        CHECK(r.flows_simulated == 16);
    }
    // At scale the channel count, not the group, sets the cost: 16 flows, a handful of events.
    const Topology big = build_preset("dgx-h100", 2048);
    CollectiveSimulator sim(big);
    const CollectiveResult r = allreduce(sim, kGiB, CollectiveAlgorithm::Tree);
    CHECK(r.flows_simulated == 16);
    CHECK(r.events <= 3 * 16);
    CHECK(r.duration >= r.lower_bound);
    CHECK(r.max_link_utilisation <= 1.0 + 1e-9);
}

TEST_CASE("merging identically loaded links changes no drain time", "[collective]") {
    // Random plans whose flows cross a small pool of links, many of them with copied loads (so they merge),
    // some crossed twice by a flow; simulate_plan (merged) against a flow network over every link (unmerged).
    const Topology topo = build_preset("dgx-h100", 16);
    std::vector<double> capacity;
    for (const LinkSpec& link : topo.links()) capacity.push_back(link_capacity(link, GpuGeneration::Hopper, {}));
    std::vector<LinkId> pool;
    for (int g = 0; g < 8; ++g) {
        pool.push_back(topo.gpu(g).nvlink_up);
        pool.push_back(topo.gpu(g).nvlink_down);
        pool.push_back(topo.gpu(g).pcie_up);  // a different capacity: never merged with NVLink
    }
    std::mt19937_64 rng(7);
    int merged_plans = 0;
    for (int iteration = 0; iteration < 200; ++iteration) {
        CollectivePlan plan;
        const int phases = 1 + static_cast<int>(rng() % 2);
        const int flows = 2 + static_cast<int>(rng() % 4);
        // crossings[l][f] = times flow f crosses pool link l (in every phase); later links may copy earlier ones.
        std::vector<std::vector<int>> crossings(pool.size(), std::vector<int>(static_cast<std::size_t>(flows)));
        for (std::size_t l = 0; l < pool.size(); ++l) {
            if (l > 0 && rng() % 2 == 0) {
                crossings[l] = crossings[rng() % l];
                continue;
            }
            for (int& c : crossings[l]) c = rng() % 3 == 0 ? static_cast<int>(rng() % 3) : 0;
        }
        for (int p = 0; p < phases; ++p) {
            PlanPhase phase;
            phase.repeat = 1 + p;
            for (int f = 0; f < flows; ++f) {
                std::vector<LinkId> path;
                for (std::size_t l = 0; l < pool.size(); ++l)
                    for (int c = 0; c < crossings[l][static_cast<std::size_t>(f)]; ++c) path.push_back(pool[l]);
                std::shuffle(path.begin(), path.end(), rng);
                phase.flows.add(path, 1e6 * static_cast<double>(1 + rng() % 100));
            }
            plan.phases.push_back(std::move(phase));
        }
        const SimulatedPlan merged = simulate_plan(plan, topo, capacity, true);

        // Reference: every used link its own network link.
        std::vector<std::int32_t> local(topo.links().size(), -1);
        std::vector<NetworkLink> links;
        for (const PlanPhase& phase : plan.phases)
            for (const LinkId id : phase.flows.links)
                if (local[id] < 0) {
                    local[id] = static_cast<std::int32_t>(links.size());
                    links.push_back(NetworkLink{capacity[id], SimTime::zero(), topo.link(id).name});
                }
        std::size_t distinct_loads = 0;
        {
            std::vector<std::vector<int>> seen;
            for (std::size_t l = 0; l < pool.size(); ++l)
                if (std::any_of(crossings[l].begin(), crossings[l].end(), [](int c) { return c > 0; })) {
                    std::vector<int> key = crossings[l];
                    key.push_back(static_cast<int>(capacity[pool[l]]));
                    if (std::find(seen.begin(), seen.end(), key) == seen.end()) seen.push_back(key);
                }
            distinct_loads = seen.size();
        }
        merged_plans += distinct_loads < links.size();
        if (links.empty()) continue;
        FlowNetwork network(std::move(links));
        Simulation sim;
        SimTime bandwidth_time = SimTime::zero();
        for (const PlanPhase& phase : plan.phases) {
            const SimTime start = sim.now();
            SimTime last = start;
            for (std::size_t f = 0; f < phase.flows.size(); ++f) {
                std::vector<std::uint32_t> path;
                for (const LinkId id : phase.flows.path(f)) path.push_back(static_cast<std::uint32_t>(local[id]));
                network.start_flow(sim, path, phase.flows.bytes[f], [&sim, &last] { last = sim.now(); });
            }
            sim.run();
            bandwidth_time += (last - start) * phase.repeat;
        }
        INFO("iteration " << iteration);
        CHECK(merged.bandwidth_time == bandwidth_time);
        CHECK(merged.links_used == local.size() - static_cast<std::size_t>(std::count(local.begin(), local.end(), -1)));
    }
    CHECK(merged_plans > 50);  // the merge was exercised, not just the identity
}
