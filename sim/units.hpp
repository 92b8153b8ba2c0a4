// Strict parsing of quantities with units, as written in scenarios and on the command line.
//   sizes      "512B", "64KB", "1.5GB" (powers of 1000), "64KiB", "8GiB" (powers of 1024)
//   bandwidth  "400Gb/s", "50GB/s", "900Mb/s", "1.2TB/s" (bits b or bytes B per second, SI prefixes)
//   time       "250ps", "1.5ns", "2us", "10ms", "3s", "5min", "2h"
//   power      "700W", "1.2kW"
//   compute    "989.4TFLOP/s", "2.5PFLOP/s" (floating-point operations per second, SI prefixes)
// A bare number without unit is rejected: an ambiguous unit is the classic configuration bug.
// Failures throw InputError (without location; the caller adds file, line and key).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/time.hpp"

namespace ttsim::units {

std::uint64_t parse_bytes(std::string_view text);     // bytes; must be a whole, non-negative count
double parse_bandwidth(std::string_view text);        // bytes per second, > 0
SimTime parse_time(std::string_view text);            // >= 0
double parse_time_seconds(std::string_view text);     // >= 0, as double seconds (for long durations)
double parse_power(std::string_view text);            // watts, >= 0
double parse_flop_rate(std::string_view text);        // FLOP/s, > 0
double parse_number(std::string_view text);           // a plain finite number (no unit)
// A count written as a whole decimal number in [min, max] ("4"), or nullopt: for callers that word the error
// themselves (a CSV cell, a --layout pin).
std::optional<long> parse_whole_number(std::string_view text, long min, long max);
// The number of a quantity that must be written in exactly `unit` ("6.6us" with unit "us" -> 6.6), not
// converted: for reference tables kept in their source's own unit, where a round trip through SI could change
// the last bit of a value. Any other unit is an InputError naming the expected one.
double parse_number_in_unit(std::string_view text, std::string_view unit);

// Formatting for reports: "8GiB", "1MiB", "3000B".
std::string format_bytes(std::uint64_t bytes);
// A number as people write it, with at most `significant` digits ("%g"): 2, 0.5, 1.5e+06. For messages and
// fixed-format outputs (8 digits there: enough to compare runs, stable across IEEE platforms).
std::string format_number(double value, int significant = 6);

}  // namespace ttsim::units
