// Scaling metrics of one series (same workload, system, network and batch rule; GPU count varies), and the
// Pareto front of time-to-train against GPU-hours. Pure functions of (GPU count, time-to-train) pairs.
//
//   speedup(N)    = T(N_ref) / T(N)
//   efficiency(N) = speedup(N) / (N / N_ref)                 (1 = perfect linear scaling from the reference)
//   marginal efficiency of doubling to N = T(N/2) / (2 T(N)) (1 = doubling halves the time; 0.5 = no gain)
//   break-even N  = the largest N reached from N_ref by successive doublings, every one of which has a
//                   marginal efficiency >= threshold (default 0.5: past it, a doubling buys less than half of
//                   the ideal speed-up, i.e. the extra GPUs cost more GPU-hours than they save in time), and
//                   every one of which lands on the series' Pareto front of (time, GPU-hours): a count that some
//                   smaller count beats in time is never a break-even, whatever its doubling ratio.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ttsim::planning {

struct ScalingSample {
    int gpus = 0;
    double ttt_minutes = 0;
    bool pareto = true;                  // on the series' Pareto front of (time-to-train, GPU-hours)
};

struct ScalingMetrics {
    double speedup = 0;
    double efficiency = 0;
    std::optional<double> marginal_doubling_efficiency;   // when N/2 is in the series
};

// The reference GPU count: `requested` if it is in the series, else the smallest count (nullopt if empty).
std::optional<int> reference_gpus(const std::vector<ScalingSample>& series, std::optional<int> requested);

// Metrics per sample (same order). `reference` must be one of the series' GPU counts.
std::vector<ScalingMetrics> scaling_metrics(const std::vector<ScalingSample>& series, int reference);

struct BreakEven {
    int gpus = 0;                        // the break-even GPU count
    int doublings_judged = 0;            // doublings from the reference found in the series (>= 1)
    bool limited_by_sweep = false;       // every doubling judged stayed at or above the threshold
    std::optional<int> first_below;      // the doubling target whose marginal efficiency fell below it
    std::optional<double> first_below_efficiency;
    std::optional<int> off_front;        // the doubling target a smaller count matches in time (ends the walk)
    std::optional<int> off_front_beaten_by;   // the fastest smaller count at least as fast as it
    std::string definition;              // one line, for reports
};

// Break-even as defined above. nullopt when the reference is not in the series or 2 x the reference is not
// (no doubling to judge: saying "every doubling stayed above the threshold" would be vacuous).
std::optional<BreakEven> break_even(const std::vector<ScalingSample>& series, int reference, double threshold);

// Indices of the points on the Pareto front of (time-to-train, spend), both minimised: no other point is at
// least as good in both and strictly better in one, so points with equal time and equal spend are all on the
// front (none dominates the other). Returned ascending by time-to-train (ties: index). Spend is GPU-hours (the
// sweep's `pareto`) or money (`pareto_cost`, which differs when systems have different prices).
struct ParetoCandidate {
    double ttt_minutes = 0;
    double spend = 0;
};
std::vector<std::size_t> pareto_front(const std::vector<ParetoCandidate>& candidates);

}  // namespace ttsim::planning
