#include "sim/time.hpp"

#include <cstdio>

namespace ttsim {

std::string SimTime::to_string() const {
    const double ps = static_cast<double>(ps_);
    char buffer[48];
    if (ps_ < 1'000 && ps_ > -1'000) std::snprintf(buffer, sizeof buffer, "%lldps", static_cast<long long>(ps_));
    else if (ps < 1e6 && ps > -1e6) std::snprintf(buffer, sizeof buffer, "%.3fns", ps * 1e-3);
    else if (ps < 1e9 && ps > -1e9) std::snprintf(buffer, sizeof buffer, "%.3fus", ps * 1e-6);
    else if (ps < 1e12 && ps > -1e12) std::snprintf(buffer, sizeof buffer, "%.3fms", ps * 1e-9);
    else std::snprintf(buffer, sizeof buffer, "%.3fs", ps * 1e-12);
    return buffer;
}

}  // namespace ttsim
