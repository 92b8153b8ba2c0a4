// NCCL ring collectives (all-reduce, reduce-scatter, all-gather, broadcast) as ONE simulated ring step.
//
// Layout. With m islands (NVLink domains) of q members, NCCL runs one ring per NIC (channel c = 0..C-1,
// C = q). Every ring visits every GPU; inside island k it enters at position e = (c - k) mod q, walks the
// members in ascending cyclic order over NVLink and leaves from position (e - 1) mod q = (c - k - 1) mod q,
// the entry position of island k + 1. Members are in rank order, so the exit GPU and the next island's entry
// GPU sit on the same rail: the inter-node hop leaves through one NIC and enters the same rail's NIC, one
// leaf switch apart (only the wrap from the last island to island 0 may change rail when m is not a
// multiple of q; that hop crosses the spine). Over the C channels every GPU is the exit exactly once, so
// each NIC carries one ring's inter-node traffic and NVLink carries the other C - 1 rings.
//
// One step. Every GPU sends one chunk of S / (n C) bytes to its successor in every ring, all at once. The
// C - 1 chunks a GPU sends to the SAME intra-island successor travel the same two links (GPU -> NVSwitch ->
// GPU), which no other flow of the step uses in that direction, so they are one flow of (C - 1) chunks:
// same finishing time, C x fewer flows. Inter-island chunks are separate flows (different NIC paths).
// All 2(n - 1) steps of an all-reduce (n - 1 for reduce-scatter / all-gather) move the same amounts over
// the same links, so the step is simulated once and repeated.
//
// Broadcast is the pipelined chain root -> ... -> predecessor of root in each ring: in steady state every
// hop but the one into the root forwards S / C bytes at once, which is the phase simulated (repeat 1).
#include <algorithm>

#include "models/collectives/plan.hpp"

namespace ttsim {

CollectivePlan build_ring_plan(const GroupLayout& layout, CollectiveOp op, double bytes, Router& router) {
    const auto& islands = layout.islands();
    const int n = layout.size();
    const int m = layout.island_count();
    // One island: all rings are the same cycle, so one ring carries the whole step (same bandwidth).
    const int channels = m == 1 ? 1 : layout.min_per_island();
    const bool broadcast = op == CollectiveOp::Broadcast;
    const double chunk = broadcast ? bytes / channels : bytes / (static_cast<double>(n) * channels);
    const int root = layout.root();

    PlanPhase phase;
    phase.name = broadcast ? "ring broadcast pipeline" : "ring step";
    phase.repeat = op == CollectiveOp::AllReduce ? 2 * (n - 1) : (broadcast ? 1 : n - 1);

    std::vector<LinkId> path;
    std::vector<int> exits;  // per position: channels in which it is the island's exit
    for (int k = 0; k < m; ++k) {
        const std::vector<int>& members = islands[static_cast<std::size_t>(k)].ranks;
        const int q = static_cast<int>(members.size());
        if (q < 2) continue;
        exits.assign(static_cast<std::size_t>(q), 0);
        if (m > 1)
            for (int c = 0; c < channels; ++c) ++exits[static_cast<std::size_t>(positive_mod(c - k - 1, q))];
        for (int p = 0; p < q; ++p) {
            const int src = members[static_cast<std::size_t>(p)];
            const int dst = members[static_cast<std::size_t>((p + 1) % q)];
            if (broadcast && dst == root) continue;  // the chain ends before the root
            const int carried = channels - exits[static_cast<std::size_t>(p)];
            if (carried == 0) continue;
            router.route_into(src, dst, 0, path);
            phase.flows.add(path, chunk * carried);
        }
    }
    if (m > 1) {
        for (int c = 0; c < channels; ++c) {
            for (int k = 0; k < m; ++k) {
                const int k2 = (k + 1) % m;
                const std::vector<int>& from = islands[static_cast<std::size_t>(k)].ranks;
                const std::vector<int>& to = islands[static_cast<std::size_t>(k2)].ranks;
                const int src = from[static_cast<std::size_t>(positive_mod(c - k - 1, static_cast<int>(from.size())))];
                const int dst = to[static_cast<std::size_t>(positive_mod(c - k2, static_cast<int>(to.size())))];
                if (broadcast && dst == root) continue;
                router.route_into(src, dst, static_cast<std::uint64_t>(c), path);
                phase.flows.add(path, chunk);
            }
        }
    }
    CollectivePlan plan;
    plan.phases.push_back(std::move(phase));
    return plan;
}

}  // namespace ttsim
