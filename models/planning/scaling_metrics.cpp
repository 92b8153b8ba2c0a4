#include "models/planning/scaling_metrics.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "sim/errors.hpp"

namespace ttsim::planning {

std::optional<int> reference_gpus(const std::vector<ScalingSample>& series, std::optional<int> requested) {
    if (series.empty()) return std::nullopt;
    if (requested)
        for (const auto& s : series)
            if (s.gpus == *requested) return requested;
    int smallest = series.front().gpus;
    for (const auto& s : series) smallest = std::min(smallest, s.gpus);
    return smallest;
}

std::vector<ScalingMetrics> scaling_metrics(const std::vector<ScalingSample>& series, int reference) {
    std::map<int, double> time_by_gpus;
    for (const auto& s : series) time_by_gpus[s.gpus] = s.ttt_minutes;
    const auto ref = time_by_gpus.find(reference);
    TTSIM_ASSERT(ref != time_by_gpus.end(), "reference GPU count not in the series");
    std::vector<ScalingMetrics> metrics;
    for (const auto& s : series) {
        TTSIM_ASSERT(s.ttt_minutes > 0, "non-positive time-to-train");
        ScalingMetrics m;
        m.speedup = ref->second / s.ttt_minutes;
        m.efficiency = m.speedup / (static_cast<double>(s.gpus) / reference);
        if (s.gpus % 2 == 0) {
            const auto half = time_by_gpus.find(s.gpus / 2);
            if (half != time_by_gpus.end()) m.marginal_doubling_efficiency = half->second / (2.0 * s.ttt_minutes);
        }
        metrics.push_back(m);
    }
    return metrics;
}

std::optional<BreakEven> break_even(const std::vector<ScalingSample>& series, int reference, double threshold) {
    std::map<int, double> time_by_gpus;
    std::map<int, bool> pareto_by_gpus;
    for (const auto& s : series) time_by_gpus[s.gpus] = s.ttt_minutes, pareto_by_gpus[s.gpus] = s.pareto;
    if (!time_by_gpus.count(reference)) return std::nullopt;
    BreakEven result;
    result.definition = fmt::format(
        "largest N reached by doubling from {} GPUs with every doubling's T(N/2)/(2 T(N)) >= {:.2f}", reference, threshold);
    result.gpus = reference;
    for (long long n = 2LL * reference;; n *= 2) {
        const auto it = time_by_gpus.find(static_cast<int>(n));
        if (n > (1LL << 30) || it == time_by_gpus.end()) {
            result.limited_by_sweep = true;
            break;
        }
        const double marginal = time_by_gpus.at(static_cast<int>(n / 2)) / (2.0 * it->second);
        ++result.doublings_judged;
        if (marginal < threshold) {
            result.first_below = static_cast<int>(n);
            result.first_below_efficiency = marginal;
            break;
        }
        // A good ratio is not enough: a count that a smaller count matches in time (so for fewer GPU-hours) is no
        // break-even. One off the front only because a larger count beats it (a superlinear point further on)
        // is no reason to stop: the walk goes on to that count.
        if (!pareto_by_gpus.at(it->first)) {
            for (const auto& [gpus, ttt] : time_by_gpus)
                if (gpus < it->first && ttt <= it->second &&
                    (!result.off_front_beaten_by || ttt < time_by_gpus.at(*result.off_front_beaten_by)))
                    result.off_front_beaten_by = gpus;
            if (result.off_front_beaten_by) {
                result.off_front = it->first;
                break;
            }
        }
        result.gpus = static_cast<int>(n);
    }
    if (result.doublings_judged == 0) return std::nullopt;
    return result;
}

std::optional<ScalingAnswer> scaling_answer(const std::vector<ScalingSample>& series, double threshold,
                                            std::optional<double> deadline_minutes) {
    if (series.empty()) return std::nullopt;
    std::map<int, const ScalingSample*> by_gpus;
    for (const auto& s : series) {
        TTSIM_ASSERT(s.ttt_minutes > 0, "non-positive time-to-train");
        by_gpus[s.gpus] = &s;
    }
    const auto p10 = [](const ScalingSample& s) { return s.ttt_p10_minutes > 0 ? s.ttt_p10_minutes : s.ttt_minutes; };
    const auto p90 = [](const ScalingSample& s) { return s.ttt_p90_minutes > 0 ? s.ttt_p90_minutes : s.ttt_minutes; };
    // T^2 N in minute x GPU-hours (T x GPU-hours), at a given time.
    const auto product = [](const ScalingSample& s, double minutes) { return minutes * minutes * s.gpus / 60.0; };
    ScalingAnswer a;
    // Knee: the smallest product at p50 (ties: the fewer GPUs, first in the map's order).
    const ScalingSample* knee = nullptr;
    for (const auto& [gpus, s] : by_gpus)
        if (!knee || product(*s, s->ttt_minutes) < product(*knee, knee->ttt_minutes)) knee = s;
    a.knee.gpus = knee->gpus;
    a.knee.time_x_gpu_hours = product(*knee, knee->ttt_minutes);
    a.knee.at_largest = knee->gpus == by_gpus.rbegin()->first && by_gpus.size() > 1;
    const double worst_knee = product(*knee, p90(*knee));
    a.knee.range_low = a.knee.range_high = knee->gpus;
    for (const auto& [gpus, s] : by_gpus)
        if (product(*s, p10(*s)) <= worst_knee) {
            a.knee.range_low = std::min(a.knee.range_low, gpus);
            a.knee.range_high = std::max(a.knee.range_high, gpus);
        }
    // Cost-optimal within the deadline, judged at p90 (the billed GPU-hours scale with the time).
    if (deadline_minutes) {
        for (const auto& [gpus, s] : by_gpus) {
            if (p90(*s) > *deadline_minutes) continue;
            a.deadline_met = true;
            const double hours = (s->rented_gpu_hours > 0 ? s->rented_gpu_hours : s->gpus * s->ttt_minutes / 60.0) *
                                 p90(*s) / s->ttt_minutes;
            if (!a.cost_optimal || hours < a.cost_optimal->gpu_hours_p90) a.cost_optimal = CostOptimal{gpus, p90(*s), hours};
        }
    }
    // The largest doubling that pays, over every doubling of the series.
    for (const auto& [gpus, s] : by_gpus) {
        const auto twice = by_gpus.find(2 * gpus);
        if (twice == by_gpus.end()) continue;
        ++a.doublings_judged;
        const double e = s->ttt_minutes / (2.0 * twice->second->ttt_minutes);
        if (e >= threshold) a.paying_doubling = PayingDoubling{gpus, twice->first, e};
    }
    return a;
}

std::vector<std::size_t> pareto_front(const std::vector<ParetoCandidate>& candidates) {
    std::vector<std::size_t> order(candidates.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Sort by time, then spend, then index; sweep keeping points that lower the best spend so far.
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (candidates[a].ttt_minutes != candidates[b].ttt_minutes)
            return candidates[a].ttt_minutes < candidates[b].ttt_minutes;
        if (candidates[a].spend != candidates[b].spend) return candidates[a].spend < candidates[b].spend;
        return a < b;
    });
    std::vector<std::size_t> front;
    for (std::size_t i : order) {
        // Sorted by time, a point is dominated exactly when an earlier one spends less, or the same
        // and less time; an exact twin of the last front point dominates nothing and joins the front too.
        if (!front.empty()) {
            const ParetoCandidate& last = candidates[front.back()];
            const bool twin = candidates[i].ttt_minutes == last.ttt_minutes && candidates[i].spend == last.spend;
            if (!twin && candidates[i].spend >= last.spend) continue;
        }
        front.push_back(i);
    }
    return front;
}

}  // namespace ttsim::planning
