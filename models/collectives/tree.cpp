// NCCL's tree all-reduce: a double binary tree across islands, a chain inside each island, simulated as the
// pipelined steady state in which reduction (up) and broadcast (down) run at once.
//
// Channels. NCCL gives each NIC (rail r) two channels, one on each of the two trees, so every NIC carries
// the traffic of a node's interior role in one tree and its leaf role in the other (that balance is the
// point of the double binary tree). Each of the 2R channels carries S / (2R) bytes.
//
// Trees over islands 0..m-1 (our construction, written from the definition, with the DBT property):
//   tree 0: heap order, parent(k) = (k - 1) / 2, root 0 (leaves are the upper half of the indices);
//   tree 1: its mirror, parent1(k) = m - 1 - parent0(m - 1 - k), root m - 1 (leaves the lower half),
// so a node interior in one tree is (nearly always) a leaf in the other.
//
// Inside island k, channel (r, t) enters at the head, position r mod q (the GPU whose NIC is rail r), and
// chains through the other members in ascending cyclic order. Up: each chain member sends its partial sum
// to its predecessor, the head sends to the parent island's head on the same rail; down: the reverse.
//
// One channel = one flow. A channel is a pipeline: NCCL moves its data in chunks through a few buffer slots
// per hop (NCCL_STEPS = 8), so no edge of the channel can run ahead of the others; in steady state every
// edge, up and down, forwards the channel's S / (2R) bytes at the same rate, set by the channel's most
// contended link. That is exactly a single flow of S / (2R) bytes whose path is every link of every edge of
// the channel, each listed once per crossing (a link crossed by k edges of the channel carries k times its
// rate; the max-min solver loads a link once per listing). Channels are independent pipelines sharing links
// max-min. This couples what an edge-per-flow model would let finish early (an edge with a free path
// cannot drain before the chunks reach it), and it keeps the simulation at 2R flows whatever the group size:
// with static ECMP, per-edge flows over a contended spine finish at hundreds of distinct instants, each one
// a max-min re-solve over O(n) flows (O(n^2) work; minutes at 4,096 GPUs). The long paths cost no solve
// time either: the links of a uniform group fall into a few classes with identical channel loads, which
// simulate_plan merges (phase_runner.hpp).
#include "models/collectives/plan.hpp"

namespace ttsim {
namespace {

int parent_in_tree(int tree, int k, int m) {
    if (tree == 0) return k == 0 ? -1 : (k - 1) / 2;
    const int mirrored = m - 1 - k;
    return mirrored == 0 ? -1 : m - 1 - (mirrored - 1) / 2;
}

}  // namespace

CollectivePlan build_tree_plan(const GroupLayout& layout, double bytes, Router& router) {
    const auto& islands = layout.islands();
    const int m = layout.island_count();
    const int rails = m == 1 ? 1 : layout.min_per_island();
    const double per_channel = bytes / (2 * rails);

    PlanPhase phase;
    phase.name = "tree reduce+broadcast pipeline";
    phase.repeat = 1;
    std::vector<LinkId> path, channel;
    // Both directions of an edge: up (partial sums toward the root) and down (results away from it).
    auto add_edge = [&](int below, int above, std::uint64_t key) {
        router.route_into(below, above, key, path);
        channel.insert(channel.end(), path.begin(), path.end());
        router.route_into(above, below, key, path);
        channel.insert(channel.end(), path.begin(), path.end());
    };
    // The chain of rail r in an island is its cycle of member-to-predecessor edges without the one out of the
    // head: every rail's chain is cut from the same q edges, so each edge is routed once, not once per rail.
    // edge_links[edge_begin[e] ..): both directions of edge e = (member p -> p - 1), islands in order.
    std::vector<LinkId> edge_links;
    std::vector<std::size_t> edge_begin{0}, island_first_edge;
    for (const GroupIsland& island : islands) {
        const int q = static_cast<int>(island.ranks.size());
        island_first_edge.push_back(edge_begin.size() - 1);
        channel.clear();
        for (int p = 0; p < q && q > 1; ++p) {
            add_edge(island.ranks[static_cast<std::size_t>(p)],
                     island.ranks[static_cast<std::size_t>(positive_mod(p - 1, q))], 0);
            edge_links.insert(edge_links.end(), channel.begin(), channel.end());
            edge_begin.push_back(edge_links.size());
            channel.clear();
        }
    }
    std::vector<LinkId> chains;  // the islands' chains of rail r, the same in both trees
    for (int r = 0; r < rails; ++r) {
        channel.clear();
        for (std::size_t i = 0; i < islands.size(); ++i) {
            const int q = static_cast<int>(islands[i].ranks.size());
            const int head = r % q;
            // Chain head, head + 1, ...: every member but the head hangs below its predecessor.
            for (int step = 1; step < q; ++step) {
                const std::size_t e = island_first_edge[i] + static_cast<std::size_t>((head + step) % q);
                channel.insert(channel.end(), edge_links.begin() + static_cast<std::ptrdiff_t>(edge_begin[e]),
                               edge_links.begin() + static_cast<std::ptrdiff_t>(edge_begin[e + 1]));
            }
        }
        chains.swap(channel);
        for (int t = 0; t < 2; ++t) {
            const auto key = static_cast<std::uint64_t>(2 * r + t);
            channel = chains;
            for (int k = 0; k < m; ++k) {
                const int parent = parent_in_tree(t, k, m);
                if (parent < 0) continue;
                const auto& mine = islands[static_cast<std::size_t>(k)].ranks;
                const auto& theirs = islands[static_cast<std::size_t>(parent)].ranks;
                add_edge(mine[static_cast<std::size_t>(r % static_cast<int>(mine.size()))],
                         theirs[static_cast<std::size_t>(r % static_cast<int>(theirs.size()))], key);
            }
            // Channels are about equally long: room for all of them at once (they run to ~10^7 link ids).
            if (r == 0 && t == 0) phase.flows.links.reserve(channel.size() * 2 * static_cast<std::size_t>(rails) * 9 / 8);
            phase.flows.add(channel, per_channel);
        }
    }
    CollectivePlan plan;
    plan.phases.push_back(std::move(phase));
    return plan;
}

}  // namespace ttsim
