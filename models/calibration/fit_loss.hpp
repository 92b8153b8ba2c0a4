// The loss every calibration minimises, one definition for the lumped fit (calibration.cpp) and the operator
// fit (operator_fit.cpp): per result, the squared log error of its predicted time on the clock, or its robust
// soft-L1 version, over its runs one by one where they converged at different points.
#pragma once

#include <functional>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim {

// Robust fits (SharedFit::robust) replace the square by soft-L1: quadratic below kRobustScale, linear above, so a
// result that no parameter can explain (another software release, another cluster) pulls the shared parameters
// with a bounded force. Scale 5 % of a log error: the spread of same-configuration results across submitters.
// Priors are written in the same units: a parameter z prior sigmas from its centre costs what a log error of
// z x kRobustScale does.
inline constexpr double kRobustScale = 0.05;

// Squared log error, or soft-L1 with scale kRobustScale when `robust`.
double log_error_loss(double log_error, bool robust);

// The loss of one result under `profile` (run logs: mean over its runs, each at its own convergence point), plus
// with `step_logs` the log error of its measured step time and with `eval_logs` that of its seconds per evaluation,
// where it has them (the rounds' logs, or a user's runs). A point with only a step time (published_minutes 0) has
// only the measured terms.
// `sums`: the point's kernel_sums under `profile` (predict.hpp), where the caller has them.
double point_loss(const CalibrationPoint& point, const ComputeProfile& profile, const LossTerms& terms,
                  const ScenarioKernelSums* sums = nullptr);
// The time-to-train part of point_loss, for a run clock already built.
double time_to_train_loss(const CalibrationPoint& point, const RunClock& clock, bool run_logs, bool robust);

// Minimises `objective` over `x` (updated in place) within [lower, upper] with NLopt's derivative-free BOBYQA
// (Nelder-Mead for one variable, which BOBYQA cannot take), relative x tolerance 1e-6, absolute f tolerance 1e-12,
// at most `max_evaluations` evaluations from an initial step of `initial_step` in every coordinate. Reaching the
// round-off limit counts as converged: x holds the best point found. With `extra_starts` > 0 the search also
// starts from that many Sobol points spread over the box, keeps the best optimum, and restarts from it (a fresh
// trust region) while that still lowers the objective.
void minimise_bounded(const std::function<double(const std::vector<double>&)>& objective, std::vector<double>& x,
                      const std::vector<double>& lower, const std::vector<double>& upper, int max_evaluations,
                      double initial_step, int extra_starts = 0);

}  // namespace ttsim
