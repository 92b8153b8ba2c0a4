// Simulated time: a signed 64-bit count of picoseconds in a strong type.
//
// Why integers: event order must be exact and identical on every machine and thread count; doubles compared
// with tolerances are not. 2^63 ps is about 106 days of simulated time, far beyond any training run we model
// step by step (time-to-train over many steps is computed as a double in minutes, not as a SimTime).
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>

namespace ttsim {

class SimTime {
public:
    constexpr SimTime() = default;

    static constexpr SimTime picoseconds(std::int64_t ps) { return SimTime(ps); }
    static constexpr SimTime nanoseconds(std::int64_t ns) { return SimTime(ns * 1'000); }
    static constexpr SimTime microseconds(std::int64_t us) { return SimTime(us * 1'000'000); }
    static constexpr SimTime milliseconds(std::int64_t ms) { return SimTime(ms * 1'000'000'000); }
    // The one rounding function from real-valued seconds: round to the nearest picosecond, saturating.
    static SimTime from_seconds(double seconds);
    static SimTime from_microseconds(double us) { return from_seconds(us * 1e-6); }
    static constexpr SimTime zero() { return SimTime(0); }
    static constexpr SimTime max() { return SimTime(std::numeric_limits<std::int64_t>::max()); }

    constexpr std::int64_t ps() const { return ps_; }
    constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
    constexpr double microseconds_f() const { return static_cast<double>(ps_) * 1e-6; }
    constexpr double milliseconds_f() const { return static_cast<double>(ps_) * 1e-9; }

    constexpr auto operator<=>(const SimTime&) const = default;
    constexpr SimTime operator+(SimTime o) const { return SimTime(ps_ + o.ps_); }
    constexpr SimTime operator-(SimTime o) const { return SimTime(ps_ - o.ps_); }
    constexpr SimTime& operator+=(SimTime o) { ps_ += o.ps_; return *this; }
    constexpr SimTime& operator-=(SimTime o) { ps_ -= o.ps_; return *this; }
    constexpr SimTime operator*(std::int64_t k) const { return SimTime(ps_ * k); }

    std::string to_string() const;  // human readable, e.g. "12.5us"

private:
    constexpr explicit SimTime(std::int64_t ps) : ps_(ps) {}
    std::int64_t ps_ = 0;
};

inline SimTime SimTime::from_seconds(double seconds) {
    const double ps = seconds * 1e12;
    if (!(ps == ps)) return SimTime(0);  // NaN never reaches here from validated input; keep it defined
    if (ps >= 9.2e18) return max();
    if (ps <= -9.2e18) return SimTime(std::numeric_limits<std::int64_t>::min());
    // std::llround (halves away from zero) without the library call, which the calibration's step simulations
    // spend a twentieth of their time in: below 2^63 the truncation is exact and so is the remainder (a number
    // with a fraction is below 2^52, and its integer part is within a factor 2 of it; from 2^53 on, ps is whole).
    auto whole = static_cast<std::int64_t>(ps);
    const double rest = ps - static_cast<double>(whole);
    if (rest >= 0.5) ++whole;
    else if (rest <= -0.5) --whole;
    return SimTime(whole);
}

}  // namespace ttsim
