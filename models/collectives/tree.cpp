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
// Whole data passes every edge once each way; pipelining makes all of it concurrent, which is the phase.
// Intra-island edges that several channels use are merged into one flow (same argument as ring.cpp).
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
    const int channels = 2 * rails;
    const double per_channel = bytes / channels;

    PlanPhase phase;
    phase.name = "tree reduce+broadcast pipeline";
    phase.repeat = 1;
    std::vector<LinkId> path;
    std::vector<int> heads;
    for (const GroupIsland& island : islands) {
        const int q = static_cast<int>(island.ranks.size());
        if (q < 2) continue;
        heads.assign(static_cast<std::size_t>(q), 0);
        for (int r = 0; r < rails; ++r) heads[static_cast<std::size_t>(r % q)] += 2;  // both trees
        for (int p = 0; p < q; ++p) {
            // Edge between position p and its chain predecessor p - 1; absent in channels headed at p.
            const int carried = channels - heads[static_cast<std::size_t>(p)];
            if (carried == 0) continue;
            const int me = island.ranks[static_cast<std::size_t>(p)];
            const int prev = island.ranks[static_cast<std::size_t>(positive_mod(p - 1, q))];
            router.route_into(me, prev, 0, path);  // up: partial sums toward the head
            phase.flows.add(path, per_channel * carried);
            router.route_into(prev, me, 0, path);  // down: results away from the head
            phase.flows.add(path, per_channel * carried);
        }
    }
    if (m > 1) {
        for (int r = 0; r < rails; ++r) {
            for (int t = 0; t < 2; ++t) {
                const auto key = static_cast<std::uint64_t>(2 * r + t);
                for (int k = 0; k < m; ++k) {
                    const int parent = parent_in_tree(t, k, m);
                    if (parent < 0) continue;
                    const auto& mine = islands[static_cast<std::size_t>(k)].ranks;
                    const auto& theirs = islands[static_cast<std::size_t>(parent)].ranks;
                    const int head = mine[static_cast<std::size_t>(r % static_cast<int>(mine.size()))];
                    const int parent_head = theirs[static_cast<std::size_t>(r % static_cast<int>(theirs.size()))];
                    router.route_into(head, parent_head, key, path);
                    phase.flows.add(path, per_channel);
                    router.route_into(parent_head, head, key, path);
                    phase.flows.add(path, per_channel);
                }
            }
        }
    }
    CollectivePlan plan;
    plan.phases.push_back(std::move(phase));
    return plan;
}

}  // namespace ttsim
