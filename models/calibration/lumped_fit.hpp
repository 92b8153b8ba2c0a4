// Calibration of the lumped model (a calibrated curve per workload and GPU) on the MLPerf v4.1 results, with the
// loss and options of calibration.hpp; selected when SharedFit::operator_model is off.
#pragma once

#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim {

CalibrationReport calibrate_lumped_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                          const SharedFit& shared, const ConvergenceLags& convergence_lags = {});

}  // namespace ttsim
