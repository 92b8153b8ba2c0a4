// Small order statistics shared by the calibration (logged step, evaluation and excess times per result, the
// logged per-run overhead) and the planning tables (the median published score).
#pragma once

#include <algorithm>
#include <vector>

namespace ttsim {

// The median of `values` (the mean of the middle two for an even count); `values` must not be empty.
inline double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace ttsim
