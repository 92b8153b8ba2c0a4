// Hierarchical all-reduce, three sequential phases (no pipelining between them; each is its own NCCL call):
//  1. reduce-scatter inside each island over NVLink: a ring of the q members, q - 1 steps of S / q bytes;
//     afterwards member p holds shard p of its island's partial sum;
//  2. all-reduce of each shard across islands among the members at the same position (the same rail):
//     q concurrent rings of m GPUs, 2(m - 1) steps of S / (q m) bytes, over the NICs;
//  3. all-gather inside each island: the reverse of phase 1 (same flows, q - 1 steps).
// Needs the same number of members in every island (tuner.hpp).
#include "models/collectives/plan.hpp"

namespace ttsim {

CollectivePlan build_hierarchical_plan(const GroupLayout& layout, double bytes, Router& router) {
    const auto& islands = layout.islands();
    const int m = layout.island_count();
    const int q = layout.min_per_island();
    std::vector<LinkId> path;
    CollectivePlan plan;
    if (q > 1) {
        PlanPhase intra;
        intra.name = "intra-island ring step";
        intra.repeat = q - 1;
        for (const GroupIsland& island : islands)
            for (int p = 0; p < q; ++p) {
                router.route_into(island.ranks[static_cast<std::size_t>(p)],
                                  island.ranks[static_cast<std::size_t>((p + 1) % q)], 0, path);
                intra.flows.add(path, bytes / q);
            }
        PlanPhase gather = intra;
        intra.name = "intra-island reduce-scatter step";
        gather.name = "intra-island all-gather step";
        plan.phases.push_back(std::move(intra));
        if (m > 1) plan.phases.push_back(PlanPhase{});  // placeholder, filled below
        plan.phases.push_back(std::move(gather));
    }
    if (m > 1) {
        PlanPhase inter;
        inter.name = "inter-island per-rail ring step";
        inter.repeat = 2 * (m - 1);
        for (int p = 0; p < q; ++p)
            for (int k = 0; k < m; ++k) {
                router.route_into(islands[static_cast<std::size_t>(k)].ranks[static_cast<std::size_t>(p)],
                                  islands[static_cast<std::size_t>((k + 1) % m)].ranks[static_cast<std::size_t>(p)],
                                  static_cast<std::uint64_t>(p), path);
                inter.flows.add(path, bytes / (static_cast<double>(q) * m));
            }
        if (q > 1)
            plan.phases[1] = std::move(inter);
        else
            plan.phases.push_back(std::move(inter));
    }
    return plan;
}

}  // namespace ttsim
