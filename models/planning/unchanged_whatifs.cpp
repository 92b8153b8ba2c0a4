#include "models/planning/unchanged_whatifs.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace ttsim::planning {

namespace {

// The ok predictions of a series by GPU count.
std::map<int, const PointResult*> by_gpus(const SweepResult& result, const SeriesSummary& series) {
    std::map<int, const PointResult*> out;
    for (std::size_t i : series.points)
        if (result.points[i].outcome.ok) out[result.points[i].point.gpus] = &result.points[i];
    return out;
}

bool same_group(const PointResult& a, const PointResult& b) {
    return a.point.workload == b.point.workload && a.point.system == b.point.system &&
           a.point.batch.label() == b.point.batch.label() && a.point.network.name != b.point.network.name;
}

std::string reason_for(const std::map<int, const PointResult*>& a, const std::map<int, const PointResult*>& b) {
    const NetworkOption& na = a.begin()->second->point.network;
    const NetworkOption& nb = b.begin()->second->point.network;
    bool sharp_everywhere = true, hidden = true;
    double worst_share = 0;
    for (const auto* side : {&a, &b})
        for (const auto& [gpus, r] : *side) {
            const Prediction& p = r->outcome.prediction;
            if (!b.count(gpus) || !a.count(gpus)) continue;
            sharp_everywhere = sharp_everywhere && p.layout.sharp;
            const double share = p.step_ms > 0 ? p.exposed_comm_ms / p.step_ms : 0.0;
            worst_share = std::max(worst_share, share);
            hidden = hidden && share < kHiddenShare;
        }
    if (hidden)
        return "communication is hidden: exposed communication is under " +
               std::to_string(static_cast<int>(std::lround(100 * kHiddenShare))) +
               " % of every step (compute and the fixed per-step host cost set it), so the network does not show";
    if (sharp_everywhere && na.oversubscription != nb.oversubscription && na.nic == nb.nic)
        return "SHARP's in-network reduction sends one stream per leaf up the aggregation tree, which fits in what "
               "the oversubscribed up-links keep, so the gradient all-reduce is not slowed";
    return "the exposed communication of the steps differs by too little to move the time to train";
}

}  // namespace

std::vector<UnchangedWhatIf> unchanged_whatifs(const SweepResult& result) {
    std::vector<UnchangedWhatIf> out;
    for (std::size_t j = 0; j < result.series.size(); ++j) {
        const auto later = by_gpus(result, result.series[j]);
        if (later.empty()) continue;
        for (std::size_t i = 0; i < j; ++i) {
            const auto earlier = by_gpus(result, result.series[i]);
            if (earlier.empty() || !same_group(*earlier.begin()->second, *later.begin()->second)) continue;
            int shared = 0;
            bool same = true;
            for (const auto& [gpus, r] : later) {
                const auto e = earlier.find(gpus);
                if (e == earlier.end()) continue;
                ++shared;
                same = same && std::abs(r->outcome.prediction.ttt_minutes / e->second->outcome.prediction.ttt_minutes - 1) <=
                                   kSameTimeTolerance;
            }
            if (shared == 0 || !same) continue;
            out.push_back({result.series[j].workload, result.series[j].label, result.series[i].label,
                           reason_for(earlier, later)});
            break;   // one note per what-if series: the first series it equals
        }
    }
    return out;
}

}  // namespace ttsim::planning
