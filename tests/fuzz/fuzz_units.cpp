// libFuzzer target: the unit parser must either return a value in range or throw InputError — never crash,
// never throw anything else, never hang. Results are checked: sizes whole, bandwidths > 0, times and powers
// finite and >= 0.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/errors.hpp"
#include "sim/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const double bw = ttsim::units::parse_bandwidth(text);
        if (!(bw > 0)) __builtin_trap();
    } catch (const ttsim::InputError&) {}
    try {
        const auto t = ttsim::units::parse_time(text);
        if (t.ps() < 0) __builtin_trap();
    } catch (const ttsim::InputError&) {}
    try {
        const double seconds = ttsim::units::parse_time_seconds(text);
        if (!(seconds >= 0) || !std::isfinite(seconds)) __builtin_trap();
    } catch (const ttsim::InputError&) {}
    try {
        const double watts = ttsim::units::parse_power(text);
        if (!(watts >= 0) || !std::isfinite(watts)) __builtin_trap();
    } catch (const ttsim::InputError&) {}
    try {
        const std::uint64_t bytes = ttsim::units::parse_bytes(text);
        (void)ttsim::units::format_bytes(bytes);
    } catch (const ttsim::InputError&) {}
    try { (void)ttsim::units::parse_number(text); } catch (const ttsim::InputError&) {}
    return 0;
}
