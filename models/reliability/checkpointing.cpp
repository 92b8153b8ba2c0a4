#include "models/reliability/checkpointing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/errors.hpp"

namespace ttsim::reliability {

double young_interval_seconds(double checkpoint_seconds, double mttf_seconds) {
    TTSIM_ASSERT(checkpoint_seconds >= 0 && mttf_seconds > 0, "checkpoint time >= 0 and MTTF > 0");
    return std::sqrt(2.0 * checkpoint_seconds * mttf_seconds);
}

double daly_interval_seconds(double checkpoint_seconds, double mttf_seconds) {
    TTSIM_ASSERT(checkpoint_seconds >= 0 && mttf_seconds > 0, "checkpoint time >= 0 and MTTF > 0");
    if (checkpoint_seconds >= 2.0 * mttf_seconds) return mttf_seconds;
    const double x = checkpoint_seconds / (2.0 * mttf_seconds);
    return std::sqrt(2.0 * checkpoint_seconds * mttf_seconds) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) -
           checkpoint_seconds;
}

double daly_expected_wall_seconds(double work_seconds, double interval_seconds, double checkpoint_seconds,
                                  double restart_seconds, double mttf_seconds) {
    TTSIM_ASSERT(interval_seconds > 0 && mttf_seconds > 0, "interval and MTTF > 0");
    const double m = mttf_seconds;
    const double t = m * std::exp(restart_seconds / m) * std::expm1((interval_seconds + checkpoint_seconds) / m) *
                     work_seconds / interval_seconds;
    return std::isfinite(t) ? t : std::numeric_limits<double>::infinity();
}

double checkpoint_bytes(double total_parameters, double trainable_parameters, double weights_bytes_per_parameter,
                        double optimizer_bytes_per_parameter) {
    return total_parameters * weights_bytes_per_parameter + trainable_parameters * optimizer_bytes_per_parameter;
}

double storage_seconds(double bytes, double storage_bytes_per_s, double hosts, double host_storage_bytes_per_s) {
    TTSIM_ASSERT(storage_bytes_per_s > 0 && hosts > 0 && host_storage_bytes_per_s > 0, "positive storage rates");
    return bytes / std::min(storage_bytes_per_s, hosts * host_storage_bytes_per_s);
}

}  // namespace ttsim::reliability
