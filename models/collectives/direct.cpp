// All-to-all as point-to-point transfers (what NCCL does: grouped send/recv to every peer). Each GPU sends
// S / n to each of the n - 1 others.
//  - n <= kAllPairsLimit: every pair at once, one phase (n (n - 1) flows).
//  - larger groups: n (n - 1) flows would be O(n^2); the transfers are organised as n - 1 shift rounds
//    (round s: member i sends to member (i + s) mod n, a permutation), run one after another, and only a
//    representative round per stratum of kSampledRounds equal-width strata of shifts is simulated,
//    weighted by the stratum's size. Sequential rounds cannot overlap NVLink and NIC traffic of different
//    rounds, which overstates the time slightly; sampling is exact when the rounds of a stratum cross the
//    same kinds of links (true on rail-optimised fat trees for all shifts >= the island size).
#include <algorithm>

#include "models/collectives/plan.hpp"

namespace ttsim {
namespace {
constexpr int kAllPairsLimit = 64;
constexpr int kSampledRounds = 64;
}  // namespace

CollectivePlan build_direct_plan(const GroupLayout& layout, double bytes, Router& router) {
    const std::vector<int>& ranks = layout.ranks();
    const int n = layout.size();
    const double per_peer = bytes / n;
    std::vector<LinkId> path;
    CollectivePlan plan;
    if (n <= kAllPairsLimit) {
        PlanPhase phase;
        phase.name = "all-to-all, all pairs";
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                if (i == j) continue;
                router.route_into(ranks[static_cast<std::size_t>(i)], ranks[static_cast<std::size_t>(j)],
                                  static_cast<std::uint64_t>(positive_mod(j - i, n)), path);
                phase.flows.add(path, per_peer);
            }
        plan.phases.push_back(std::move(phase));
        return plan;
    }
    const int strata = std::min(kSampledRounds, n - 1);
    for (int s = 0; s < strata; ++s) {
        const auto lo = static_cast<int>(1 + static_cast<std::int64_t>(s) * (n - 1) / strata);
        const auto hi = static_cast<int>(1 + static_cast<std::int64_t>(s + 1) * (n - 1) / strata);  // exclusive
        if (hi <= lo) continue;
        PlanPhase phase;
        phase.name = "all-to-all round, shift " + std::to_string(lo);
        phase.repeat = hi - lo;
        for (int i = 0; i < n; ++i) {
            router.route_into(ranks[static_cast<std::size_t>(i)], ranks[static_cast<std::size_t>((i + lo) % n)],
                              static_cast<std::uint64_t>(lo), path);
            phase.flows.add(path, per_peer);
        }
        plan.phases.push_back(std::move(phase));
    }
    return plan;
}

}  // namespace ttsim
