// Scaling metrics of one series (same workload, system, network and batch rule; GPU count varies), and the
// Pareto front of time-to-train against GPU-hours. Pure functions of (GPU count, time-to-train) pairs.
//
//   speedup(N)    = T(N_ref) / T(N)
//   efficiency(N) = speedup(N) / (N / N_ref)                 (1 = perfect linear scaling from the reference)
//   marginal efficiency of doubling to N = T(N/2) / (2 T(N)) (1 = doubling halves the time; 0.5 = no gain)
//
// How many GPUs are worth it (scaling_answer, the default; docs/model.md):
//   knee          = argmin_N T(N)^2 N: time x GPU-hours, equivalently argmax speedup x efficiency. There a
//                   doubling shortens the time by about 1/sqrt(2) (d ln T / d ln N = -1/2). Its range is every
//                   count whose product at its p10 time is no larger than the knee's at its p90 time: the counts
//                   the prediction band cannot tell from it, so two curves 0.01 apart keep one range.
//   cost-optimal  = for a deadline, the count with the fewest GPU-hours (rented, at p90) whose p90 time meets it.
//   paying doubling = the largest N whose doubling to 2N (both in the series) has a marginal efficiency >=
//                   threshold, over every doubling of the series (not stopping at the first that fails).
// The seed's definition (break_even, `metrics: {break_even: doubling-walk}`):
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
    // The prediction band (p10/p90 of time-to-train; 0: the p50 itself) and the GPU-hours billed at p50 (0: GPUs
    // x time), for scaling_answer.
    double ttt_p10_minutes = 0, ttt_p90_minutes = 0;
    double rented_gpu_hours = 0;
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

// Which definition a report leads with (`metrics: {break_even: knee | doubling-walk}`).
enum class BreakEvenRule { knee, doubling_walk };

struct Knee {
    int gpus = 0;
    int range_low = 0, range_high = 0;   // the counts the prediction band cannot tell from it (gpus included)
    double time_x_gpu_hours = 0;         // T(N)^2 N / 60, in minute x GPU-hours, at p50
    bool at_largest = false;             // the series' largest count: the minimum may lie beyond the sweep
};
struct CostOptimal {
    int gpus = 0;
    double ttt_p90_minutes = 0, gpu_hours_p90 = 0;
};
struct PayingDoubling {
    int gpus = 0, to_gpus = 0;           // doubling gpus -> to_gpus still pays
    double efficiency = 0;
};
struct ScalingAnswer {
    Knee knee;
    std::optional<CostOptimal> cost_optimal;        // only with a deadline; nullopt also when no count meets it
    bool deadline_met = false;
    std::optional<PayingDoubling> paying_doubling;  // nullopt: no doubling in the series pays (or none to judge)
    int doublings_judged = 0;
};

// The three answers above for one series (nullopt when it is empty). `deadline_minutes`: the cost-optimal
// count's deadline, if any.
std::optional<ScalingAnswer> scaling_answer(const std::vector<ScalingSample>& series, double threshold,
                                            std::optional<double> deadline_minutes);

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
