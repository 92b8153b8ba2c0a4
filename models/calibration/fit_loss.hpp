// The loss every calibration minimises, one definition for the lumped fit (calibration.cpp) and the operator
// fit (operator_fit.cpp): per result, the squared log error of its predicted time on the clock, or its robust
// soft-L1 version, over its runs one by one where they converged at different points.
#pragma once

#include "models/calibration/calibration.hpp"

namespace ttsim {

// Squared log error, or soft-L1 with scale kRobustScale when `robust`.
double log_error_loss(double log_error, bool robust);

// The loss of one result under `profile` (run logs: mean over its runs, each at its own convergence point).
double point_loss(const CalibrationPoint& point, const ComputeProfile& profile, bool run_logs, bool robust);

}  // namespace ttsim
