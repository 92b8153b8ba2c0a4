// Properties of the collective model over random topologies, groups, sizes, ops and algorithms:
// physical lower bound, link capacities, determinism, caching.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/group_layout.hpp"
#include "models/collectives/tuner.hpp"
#include "topologies/presets.hpp"

using namespace ttsim;

namespace {

struct RandomCase {
    std::string system;
    int gpus = 0;
    double oversubscription = 1.0;
};

RandomCase random_topology(std::mt19937_64& rng) {
    const std::vector<std::string> systems = {"dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72"};
    RandomCase c;
    c.system = systems[rng() % systems.size()];
    if (c.system == "gb200-nvl72") {
        const std::vector<int> counts = {4, 8, 36, 72, 144};
        c.gpus = counts[rng() % counts.size()];
    } else {
        const std::vector<int> counts = {2, 8, 16, 24, 32, 48};
        c.gpus = counts[rng() % counts.size()];
    }
    const std::vector<double> over = {1.0, 2.0, 4.0};
    c.oversubscription = over[rng() % over.size()];
    // Oversubscription shapes leaf uplinks: a job within one NVLink domain has none, and the preset refuses it.
    const int domain = c.system == "gb200-nvl72" ? 72 : 8;
    if (c.gpus <= domain) c.oversubscription = 1.0;
    return c;
}

std::vector<int> random_group(std::mt19937_64& rng, const Topology& topo) {
    const int g = topo.gpu_count();
    switch (rng() % 3) {
        case 0: return {};  // everybody
        case 1: {           // any subset
            std::vector<int> all(static_cast<std::size_t>(g));
            for (int i = 0; i < g; ++i) all[static_cast<std::size_t>(i)] = i;
            std::shuffle(all.begin(), all.end(), rng);
            const int size = 2 + static_cast<int>(rng() % static_cast<std::uint64_t>(std::min(g, 40) - 1));
            all.resize(static_cast<std::size_t>(size));
            return all;
        }
        default: {  // the same local ranks on a few nodes (uniform islands)
            const int per_node = topo.gpu(g - 1).local_index + 1;
            const int nodes = topo.node_count();
            const int take = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(per_node));
            std::vector<int> out;
            for (int node = 0; node < nodes; ++node)
                if (nodes == 1 || rng() % 2 == 0 || node == 0)
                    for (int l = 0; l < take; ++l) out.push_back(node * per_node + l);
            if (out.size() < 2) out = {};
            return out;
        }
    }
}

}  // namespace

TEST_CASE("random collectives respect the lower bound and link capacities", "[collective]") {
    std::mt19937_64 rng(20240611);
    const std::vector<CollectiveOp> ops = {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter,
                                           CollectiveOp::AllGather, CollectiveOp::Broadcast, CollectiveOp::AllToAll};
    const std::vector<CollectiveAlgorithm> algorithms = {
        CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
        CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::Nvls, CollectiveAlgorithm::Sharp,
        CollectiveAlgorithm::Direct};
    int runs = 0;
    for (int iteration = 0; iteration < 60; ++iteration) {
        const RandomCase c = random_topology(rng);
        const Topology topo = build_preset(c.system, c.gpus, FabricOptions{.oversubscription = c.oversubscription});
        CollectiveSimulator sim(topo, CollectiveOptions{.sharp_enabled = rng() % 2 == 0});
        for (int k = 0; k < 4; ++k) {
            CollectiveRequest request;
            request.group = random_group(rng, topo);
            request.op = ops[rng() % ops.size()];
            request.algorithm = algorithms[rng() % algorithms.size()];
            // Log-uniform sizes from 1 KiB to 1 GiB.
            request.bytes = 1ull << (10 + rng() % 21);
            const GroupLayout layout(topo, request.group);
            if (!inapplicable_reason(request.algorithm, request.op, layout, sim.options().sharp_enabled).empty())
                continue;
            INFO(c.system << " x" << c.gpus << " oversub " << c.oversubscription << " op "
                          << to_string(request.op) << " algo " << to_string(request.algorithm) << " bytes "
                          << request.bytes << " group size " << layout.size());
            CollectiveResult r;
            // check_link_capacities runs inside every phase (InternalError on an over-allocated link).
            REQUIRE_NOTHROW(r = sim.run(request));
            CHECK(r.duration >= r.lower_bound);
            CHECK(r.max_link_utilisation <= 1.0 + 1e-9);
            CHECK(r.algorithm != CollectiveAlgorithm::Auto);
            ++runs;
        }
    }
    CHECK(runs > 100);
}

TEST_CASE("identical inputs give identical results", "[collective]") {
    const Topology topo = build_preset("dgx-h100", 64, FabricOptions{.oversubscription = 2.0});
    for (const CollectiveAlgorithm a : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
                                        CollectiveAlgorithm::Sharp, CollectiveAlgorithm::Auto}) {
        CollectiveRequest request;
        request.bytes = 300'000'000;
        request.algorithm = a;
        CollectiveSimulator first(topo, CollectiveOptions{.sharp_enabled = true});
        CollectiveSimulator second(topo, CollectiveOptions{.sharp_enabled = true});
        const CollectiveResult x = first.run(request);
        const CollectiveResult y = second.run(request);
        CHECK(x.duration == y.duration);
        CHECK(x.fingerprint == y.fingerprint);
        CHECK(x.fingerprint != 0);
        CHECK(x.max_link_utilisation == y.max_link_utilisation);
        // A repeat on the same simulator comes from the cache, unchanged.
        const CollectiveResult z = first.run(request);
        CHECK(z.cached);
        CHECK(z.duration == x.duration);
        CHECK(z.fingerprint == x.fingerprint);
    }
}
