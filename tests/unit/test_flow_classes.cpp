// Equivalence classes of flows and links (phase_runner.hpp): one flow per class gives the flow-by-flow result,
// and the router's twin shortcut (routing.hpp) gives the distances of a BFS per switch.
#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/tuner.hpp"
#include "topologies/presets.hpp"
#include "topologies/routing.hpp"

using namespace ttsim;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

struct Case {
    std::string system;
    int gpus;
    FabricOptions fabric;
};

// Groups: every GPU, and a scattered one (uneven islands, ranks spread over units) whose flows fall into many
// classes, so the classes are exercised where the group is not symmetric too.
std::vector<std::vector<int>> groups_of(const Topology& topology, std::mt19937_64& rng) {
    std::vector<int> scattered;
    for (int r = 0; r < topology.gpu_count(); ++r)
        if (rng() % 3 == 0) scattered.push_back(r);
    return {{}, scattered};
}

}  // namespace

TEST_CASE("one flow per equivalence class gives the flow-by-flow result", "[collective][classes]") {
    // Durations: integer picoseconds. A class's rate is the solver's on a quotient whose link loads are the same
    // sums taken in another order, so a rate may differ in its last bits and a drain end, rounded up to a whole
    // picosecond, by 1 ps per simulated step; the bandwidth time repeats a step up to 2 (n - 1) times. So the
    // durations agree within 2 n ps (2 us at 1,024 GPUs, 1e-6 of a 1 GiB all-reduce's time), utilisations
    // within 1e-9 relative, and the busiest link and the number of links used exactly.
    const std::vector<Case> cases = {
        {"dgx-h100", 256, {}},
        {"dgx-h100", 1024, {}},
        {"dgx-h100", 512, FabricOptions{.oversubscription = 2.0}},
        {"dgx-h100", 512, FabricOptions{.routing = FabricRouting::StaticEcmp}},
        {"h100-100k", 2048, {}},
        {"gb200-nvl72-xdr", 648, {}},
        {"dgx-h100", 512, FabricOptions{.switch_ports = 16}},  // three tiers at 512 GPUs
        {"dgx-h100", 1024, FabricOptions{.switch_ports = 16, .tiers = 4}},  // four tiers, two zones
    };
    const std::vector<CollectiveOp> ops = {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter,
                                           CollectiveOp::AllGather, CollectiveOp::Broadcast, CollectiveOp::AllToAll};
    const std::vector<CollectiveAlgorithm> algorithms = {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
                                                         CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::Sharp,
                                                         CollectiveAlgorithm::Nvls, CollectiveAlgorithm::Direct};
    std::mt19937_64 rng(39);
    int compared = 0, merged = 0;
    for (const Case& c : cases) {
        const Topology topology = build_preset(c.system, c.gpus, c.fabric);
        CollectiveSimulator by_class(topology, CollectiveOptions{.sharp_enabled = true});
        CollectiveSimulator by_flow(topology, CollectiveOptions{.sharp_enabled = true, .per_flow = true});
        for (const std::vector<int>& group : groups_of(topology, rng)) {
            const GroupLayout layout(topology, group);
            for (const CollectiveOp op : ops)
                for (const CollectiveAlgorithm algorithm : algorithms) {
                    if (!inapplicable_reason(algorithm, op, layout, true).empty()) continue;
                    // All-to-all is n^2 flows: the flow-by-flow reference only on the smaller groups.
                    if (op == CollectiveOp::AllToAll && layout.size() > 512) continue;
                    CollectiveRequest request;
                    request.op = op;
                    request.algorithm = algorithm;
                    request.bytes = 64 * kMiB;
                    request.group = group;
                    INFO(c.system << " x" << c.gpus << " group of " << layout.size() << " " << to_string(op) << " "
                                  << to_string(algorithm));
                    const CollectiveResult a = by_class.run(request);
                    const CollectiveResult b = by_flow.run(request);
                    const std::int64_t slack_ps = 2 * static_cast<std::int64_t>(layout.size());
                    CHECK(std::abs((a.bandwidth_time - b.bandwidth_time).ps()) <= slack_ps);
                    CHECK(std::abs((a.duration - b.duration).ps()) <= slack_ps);
                    CHECK(a.max_link_utilisation == Approx(b.max_link_utilisation).epsilon(1e-9));
                    CHECK(a.mean_link_utilisation == Approx(b.mean_link_utilisation).epsilon(1e-9));
                    CHECK(a.busiest_link == b.busiest_link);
                    CHECK(a.links_used == b.links_used);
                    CHECK(a.flows_simulated == b.flows_simulated);
                    CHECK(b.flow_classes == b.flows_simulated);
                    CHECK(a.flow_classes <= b.flow_classes);
                    ++compared;
                    merged += a.flow_classes < b.flow_classes;
                }
        }
    }
    CHECK(compared >= 40);
    CHECK(merged >= compared / 2);
}

TEST_CASE("a symmetric ring all-reduce is a handful of flow classes, whatever the GPU count", "[collective][classes]") {
    // 1,024 and 4,096 GPUs of h100-100k: 128 and 512 nodes of 8 on one rail-optimised fat tree. The ring's flows are
    // NVLink hops and rail hops; the number of classes does not grow with the nodes.
    std::vector<std::uint64_t> classes;
    for (const int gpus : {1024, 4096}) {
        const Topology topology = build_preset("h100-100k", gpus);
        CollectiveSimulator sim(topology);
        CollectiveRequest request;
        request.bytes = 64 * kMiB;
        request.algorithm = CollectiveAlgorithm::Ring;
        const CollectiveResult r = sim.run(request);
        CHECK(r.flows_simulated >= static_cast<std::uint64_t>(gpus));
        CHECK(r.flow_classes <= 16);
        classes.push_back(r.flow_classes);
    }
    CHECK(classes[0] == classes[1]);
}

TEST_CASE("routes through twin leaves follow shortest paths (the twin's distance map)", "[routing][classes]") {
    // Three tiers of 16-port switches at 512 GPUs: leaves of a rail in a pod are twins (same spines), so all but
    // one of them take their distance map from a twin. Every route must still be a shortest switch path:
    // PCIe + NIC->leaf + (switch hops = BFS distance between the two leaves) + leaf->NIC + PCIe.
    const Topology topology = build_preset("dgx-h100", 512, FabricOptions{.switch_ports = 16});
    const SwitchFabric& fabric = topology.fabric();
    const std::size_t switches = fabric.switch_count();
    auto bfs = [&](std::uint32_t from) {
        std::vector<int> d(switches, -1);
        std::deque<std::uint32_t> queue{from};
        d[from] = 0;
        while (!queue.empty()) {
            const std::uint32_t s = queue.front();
            queue.pop_front();
            for (std::uint32_t h = fabric.hop_begin[s]; h < fabric.hop_begin[s + 1]; ++h)
                if (d[fabric.hop_neighbor[h]] < 0) {
                    d[fabric.hop_neighbor[h]] = d[s] + 1;
                    queue.push_back(fabric.hop_neighbor[h]);
                }
        }
        return d;
    };
    Router router(topology);
    int checked = 0, through_core = 0;
    for (int src = 0; src < topology.gpu_count(); src += 7)
        for (int dst = 3; dst < topology.gpu_count(); dst += 61) {
            if (topology.gpu(src).nvlink_domain == topology.gpu(dst).nvlink_domain) continue;
            const std::uint32_t a = fabric.attachments[fabric.attachment_begin[src]].switch_index;
            const std::uint32_t b = fabric.attachments[fabric.attachment_begin[dst]].switch_index;
            const int hops = bfs(a)[b];
            const std::vector<LinkId> path = router.route(src, dst, 0);
            CHECK(static_cast<int>(path.size()) == 4 + hops);
            through_core += hops == 4;
            ++checked;
        }
    CHECK(checked > 500);
    CHECK(through_core > 0);
    CHECK(router.cached_distance_maps() > 0);
}
