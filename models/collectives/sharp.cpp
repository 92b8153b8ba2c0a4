// SHARP all-reduce (NCCL CollNet Direct): in-network reduction in the InfiniBand switches.
//  - Inside each island the q members reduce-scatter over NVLink, so member p holds shard p (S / q bytes);
//  - member p of every island (one rail) sends its shard up a switch aggregation tree ONCE and receives the
//    reduced shard ONCE, instead of a ring's ~2 S / q through its NIC;
//  - inside each island the members all-gather the reduced shards over NVLink.
// NCCL pipelines the three stages chunk by chunk, so all of their traffic is simulated as one concurrent
// phase: the intra-island flows (each member sends (q - 1) S / q for the reduce-scatter and as much for the
// all-gather to its ring successor) and, per rail, one flow per tree edge and direction.
//
// The aggregation tree of a rail is built from the router's own paths: root = the rail's member in island 0;
// its NIC and leaf switch start the tree; then every other member's route to the root is followed until it
// reaches a vertex already in the tree. Each tree edge carries the shard once up (aggregated in the switch)
// and once down, divided by NCCL's CollNet efficiency (kSharpEfficiency). Needs a switch fabric, the same
// number of members per island and at least two islands (tuner.hpp).
#include "models/collectives/plan.hpp"
#include "sim/errors.hpp"

namespace ttsim {

CollectivePlan build_sharp_plan(const GroupLayout& layout, double bytes, Router& router, double efficiency) {
    const Topology& topo = layout.topology();
    const auto& islands = layout.islands();
    const int m = layout.island_count();
    const int q = layout.min_per_island();
    const double shard = bytes / q;
    PlanPhase phase;
    phase.name = "sharp reduce-scatter + switch aggregation + all-gather pipeline";
    std::vector<LinkId> path;
    if (q > 1) {
        const double intra = bytes * (q - 1) / q;
        for (const GroupIsland& island : islands)
            for (int p = 0; p < q; ++p) {
                router.route_into(island.ranks[static_cast<std::size_t>(p)],
                                  island.ranks[static_cast<std::size_t>((p + 1) % q)], 0, path);
                phase.flows.add(path, intra);  // reduce-scatter share
                phase.flows.add(path, intra);  // all-gather share
            }
    }
    std::vector<std::uint8_t> in_tree(topo.vertex_count(), 0);
    std::vector<Vertex> marked;
    std::vector<LinkId> edges;
    for (int p = 0; p < q; ++p) {
        const int root = islands[0].ranks[static_cast<std::size_t>(p)];
        edges.clear();
        auto mark = [&](Vertex v) {
            if (!in_tree[v]) {
                in_tree[v] = 1;
                marked.push_back(v);
            }
        };
        // The root's own way up: GPU -> NIC -> first switch, the reverse of the tail of any route into it.
        router.route_into(islands[1].ranks[static_cast<std::size_t>(p)], root, static_cast<std::uint64_t>(p), path);
        TTSIM_ASSERT(path.size() >= 3, "an inter-island route has at least GPU->NIC->switch->...->NIC->GPU");
        mark(topo.link(path.back()).to);
        for (std::size_t i = path.size() - 2; i < path.size(); ++i) {
            edges.push_back(path[i] ^ 1u);
            mark(topo.link(path[i]).from);
        }
        for (int k = 1; k < m; ++k) {
            const int member = islands[static_cast<std::size_t>(k)].ranks[static_cast<std::size_t>(p)];
            router.route_into(member, root, static_cast<std::uint64_t>(p), path);
            mark(topo.link(path.front()).from);
            for (const LinkId link : path) {
                const Vertex to = topo.link(link).to;
                edges.push_back(link);
                if (in_tree[to]) break;  // joined the tree: the rest of the way is already there
                mark(to);
            }
        }
        for (const LinkId e : edges) {
            phase.flows.add(std::span<const LinkId>(&e, 1), shard / efficiency);  // up (toward the root)
            const LinkId back = e ^ 1u;
            phase.flows.add(std::span<const LinkId>(&back, 1), shard / efficiency);  // down
        }
        for (const Vertex v : marked) in_tree[v] = 0;
        marked.clear();
    }
    CollectivePlan plan;
    plan.phases.push_back(std::move(phase));
    return plan;
}

}  // namespace ttsim
