#include "sim/units.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "sim/errors.hpp"

namespace ttsim::units {
namespace {

struct Quantity {
    double number;
    std::string_view unit;
};

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// Splits "1.5GiB" into 1.5 and "GiB". Whitespace between number and unit is allowed ("400 Gb/s").
Quantity split(std::string_view text, std::string_view what, std::string_view examples) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    if (text.empty()) throw InputError("empty " + std::string(what) + "; expected e.g. " + std::string(examples));
    double number = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, number, std::chars_format::general);
    if (ec != std::errc() || ptr == begin)
        throw InputError("cannot read " + std::string(what) + " " + quoted(text) + "; expected e.g. " +
                         std::string(examples));
    if (!std::isfinite(number))
        throw InputError(std::string(what) + " " + quoted(text) + " is not finite");
    std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    if (unit.empty())
        throw InputError(std::string(what) + " " + quoted(text) + " has no unit; write e.g. " + std::string(examples));
    return {number, unit};
}

double si_prefix(char p) {
    switch (p) {
        case 'k': case 'K': return 1e3;
        case 'M': return 1e6;
        case 'G': return 1e9;
        case 'T': return 1e12;
        case 'P': return 1e15;
        default: return 0;
    }
}

}  // namespace

double parse_number(std::string_view text) {
    double number = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
        throw InputError("expected a number, got " + quoted(text));
    if (!std::isfinite(number)) throw InputError("number " + quoted(text) + " is not finite");
    return number + 0.0;   // -0 reads as 0: no report prints "-0.00" for what a user wrote as -0
}

std::optional<long> parse_whole_number(std::string_view text, long min, long max) {
    const std::string copy(text);   // strtol needs a terminated string
    char* stop = nullptr;
    const long n = std::strtol(copy.c_str(), &stop, 10);
    if (stop == copy.c_str() || *stop != '\0' || n < min || n > max) return std::nullopt;
    return n;
}

std::uint64_t parse_bytes(std::string_view text) {
    constexpr std::string_view examples = "'512B', '64KB', '64KiB', '1.5GB', '8GiB'";
    auto [number, unit] = split(text, "size", examples);
    double scale = 0;
    if (unit == "B") scale = 1;
    else if (unit.size() == 2 && unit[1] == 'B') scale = si_prefix(unit[0]);
    else if (unit.size() == 3 && unit[1] == 'i' && unit[2] == 'B') {
        switch (unit[0]) {
            case 'K': scale = 1024.0; break;
            case 'M': scale = 1024.0 * 1024; break;
            case 'G': scale = 1024.0 * 1024 * 1024; break;
            case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
            default: scale = 0;
        }
    }
    if (scale == 0) throw InputError("unknown size unit '" + std::string(unit) + "'; expected e.g. " + std::string(examples));
    const double bytes = number * scale;
    if (bytes < 0) throw InputError("size " + quoted(text) + " is negative");
    if (bytes > 1.8e19) throw InputError("size " + quoted(text) + " is too large");
    if (std::floor(bytes) != bytes) throw InputError("size " + quoted(text) + " is not a whole number of bytes");
    return static_cast<std::uint64_t>(bytes);
}

double parse_bandwidth(std::string_view text) {
    constexpr std::string_view examples = "'400Gb/s' (bits) or '50GB/s' (bytes)";
    auto [number, unit] = split(text, "bandwidth", examples);
    if (unit.size() < 3 || unit.substr(unit.size() - 2) != "/s")
        throw InputError("unknown bandwidth unit '" + std::string(unit) + "'; expected e.g. " + std::string(examples));
    std::string_view base = unit.substr(0, unit.size() - 2);  // "Gb", "GB", "b", "B"
    const char kind = base.back();
    if (kind != 'b' && kind != 'B')
        throw InputError("unknown bandwidth unit '" + std::string(unit) + "'; expected e.g. " + std::string(examples));
    double scale = 1;
    if (base.size() == 2) scale = si_prefix(base[0]);
    else if (base.size() != 1) scale = 0;
    if (scale == 0) throw InputError("unknown bandwidth unit '" + std::string(unit) + "'; expected e.g. " + std::string(examples));
    const double bytes_per_second = number * scale / (kind == 'b' ? 8.0 : 1.0);
    if (!(bytes_per_second > 0)) throw InputError("bandwidth " + quoted(text) + " must be positive");
    if (bytes_per_second > 1e18) throw InputError("bandwidth " + quoted(text) + " is implausibly large");
    return bytes_per_second;
}

double parse_time_seconds(std::string_view text) {
    constexpr std::string_view examples = "'250ps', '1.5us', '10ms', '3s', '5min', '2h', '14d'";
    auto [number, unit] = split(text, "time", examples);
    double scale = 0;
    if (unit == "ps") scale = 1e-12;
    else if (unit == "ns") scale = 1e-9;
    else if (unit == "us" || unit == "µs") scale = 1e-6;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "s") scale = 1;
    else if (unit == "min") scale = 60;
    else if (unit == "h") scale = 3600;
    else if (unit == "d") scale = 86400;   // days (a pre-training deadline: 14d)
    // "m" is minutes to some tools and milli to others: refused, with both spellings.
    if (unit == "m") throw InputError("time unit 'm' is ambiguous: write 'min' for minutes or 'ms' for milliseconds");
    if (scale == 0) throw InputError("unknown time unit '" + std::string(unit) + "'; expected e.g. " + std::string(examples));
    const double seconds = number * scale;
    if (seconds < 0) throw InputError("time " + quoted(text) + " is negative");
    // "1e308h" overflows to infinity: refuse it rather than hand an infinite duration on.
    if (!std::isfinite(seconds) || seconds > 1e15) throw InputError("time " + quoted(text) + " is too large");
    return seconds;
}

SimTime parse_time(std::string_view text) {
    const double seconds = parse_time_seconds(text);
    // SimTime holds about 106 days; anything longer is not a latency or step time.
    if (seconds > 9.0e6) throw InputError("time " + quoted(text) + " is too large for simulated time");
    return SimTime::from_seconds(seconds);
}

double parse_power(std::string_view text) {
    constexpr std::string_view examples = "'700W', '1.2kW'";
    auto [number, unit] = split(text, "power", examples);
    double scale = 0;
    if (unit == "W") scale = 1;
    else if (unit == "kW") scale = 1e3;
    else if (unit == "MW") scale = 1e6;
    else if (unit == "mW") scale = 1e-3;
    if (scale == 0) throw InputError("unknown power unit '" + std::string(unit) + "'; expected e.g. " + std::string(examples));
    const double watts = number * scale;
    if (watts < 0) throw InputError("power " + quoted(text) + " is negative");
    if (!std::isfinite(watts) || watts > 1e15) throw InputError("power " + quoted(text) + " is too large");
    return watts;
}

double parse_flop_rate(std::string_view text) {
    constexpr std::string_view examples = "'989.4TFLOP/s', '2.5PFLOP/s'";
    auto [number, unit] = split(text, "compute rate", examples);
    constexpr std::string_view base = "FLOP/s";
    double scale = 0;
    if (unit == base) scale = 1;
    else if (unit.size() == base.size() + 1 && unit.substr(1) == base) scale = si_prefix(unit[0]);
    if (scale == 0)
        throw InputError("unknown compute-rate unit '" + std::string(unit) + "'; expected e.g. " + std::string(examples));
    const double flops = number * scale;
    if (!(flops > 0)) throw InputError("compute rate " + quoted(text) + " must be positive");
    if (!std::isfinite(flops) || flops > 1e21) throw InputError("compute rate " + quoted(text) + " is implausibly large");
    return flops;
}

double parse_number_in_unit(std::string_view text, std::string_view unit) {
    const std::string example = "'1.5" + std::string(unit) + "'";
    auto [number, written] = split(text, "quantity", example);
    if (written != unit)
        throw InputError("unit '" + std::string(written) + "' where this table is written in '" + std::string(unit) +
                         "'; expected e.g. " + example);
    return number;
}

std::string format_bytes(std::uint64_t bytes) {
    const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int index = 0;
    std::uint64_t value = bytes;
    while (index < 4 && value >= 1024 && value % 1024 == 0) {
        value /= 1024;
        ++index;
    }
    return std::to_string(value) + names[index];
}

std::string format_number(double value, int significant) {
    return fmt::format("{:.{}g}", value, significant);
}

}  // namespace ttsim::units
