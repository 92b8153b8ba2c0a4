#include "sim/time.hpp"

#include <fmt/format.h>

namespace ttsim {

std::string SimTime::to_string() const {
    const double ps = static_cast<double>(ps_);
    if (ps_ < 1'000 && ps_ > -1'000) return fmt::format("{}ps", ps_);
    if (ps < 1e6 && ps > -1e6) return fmt::format("{:.3f}ns", ps * 1e-3);
    if (ps < 1e9 && ps > -1e9) return fmt::format("{:.3f}us", ps * 1e-6);
    if (ps < 1e12 && ps > -1e12) return fmt::format("{:.3f}ms", ps * 1e-9);
    return fmt::format("{:.3f}s", ps * 1e-12);
}

}  // namespace ttsim
