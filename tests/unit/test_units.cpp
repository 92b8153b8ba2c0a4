#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "sim/errors.hpp"
#include "sim/time.hpp"
#include "sim/units.hpp"

using namespace ttsim;

TEST_CASE("sizes parse with SI and binary prefixes", "[units]") {
    CHECK(units::parse_bytes("512B") == 512);
    CHECK(units::parse_bytes("64KB") == 64'000);
    CHECK(units::parse_bytes("64KiB") == 65'536);
    CHECK(units::parse_bytes("1.5GB") == 1'500'000'000ULL);
    CHECK(units::parse_bytes("8GiB") == 8ULL << 30);
    CHECK(units::parse_bytes("1 MiB") == 1ULL << 20);
    CHECK(units::format_bytes(8ULL << 30) == "8GiB");
    CHECK(units::format_bytes(3000) == "3000B");
}

TEST_CASE("bandwidth distinguishes bits from bytes", "[units]") {
    CHECK(units::parse_bandwidth("400Gb/s") == Approx(50e9));
    CHECK(units::parse_bandwidth("50GB/s") == Approx(50e9));
    CHECK(units::parse_bandwidth("1.2TB/s") == Approx(1.2e12));
    CHECK(units::parse_bandwidth("8b/s") == Approx(1.0));
}

TEST_CASE("times parse to exact picoseconds", "[units]") {
    CHECK(units::parse_time("250ps").ps() == 250);
    CHECK(units::parse_time("1.5ns").ps() == 1'500);
    CHECK(units::parse_time("1.5us").ps() == 1'500'000);
    CHECK(units::parse_time("10ms").ps() == 10'000'000'000LL);
    CHECK(units::parse_time("3s").ps() == 3'000'000'000'000LL);
    CHECK(units::parse_time_seconds("5min") == Approx(300));
    CHECK(units::parse_power("700W") == Approx(700));
    CHECK(units::parse_power("1.2kW") == Approx(1200));
}

TEST_CASE("bad quantities are rejected with a reason", "[units]") {
    CHECK_THROWS_AS(units::parse_bytes("512"), InputError);         // no unit
    CHECK_THROWS_AS(units::parse_bytes("12XB"), InputError);        // unknown unit
    CHECK_THROWS_AS(units::parse_bytes("-1KB"), InputError);        // negative
    CHECK_THROWS_AS(units::parse_bytes("0.5B"), InputError);        // fraction of a byte
    CHECK_THROWS_AS(units::parse_bytes("1e30GB"), InputError);      // absurd
    CHECK_THROWS_AS(units::parse_bandwidth("400Gbps"), InputError); // ambiguous spelling
    CHECK_THROWS_WITH(units::parse_time_seconds("1m"), Catch::Contains("'min' for minutes"));   // minutes or milli?
    CHECK_THROWS_AS(units::parse_bandwidth("0GB/s"), InputError);   // zero
    CHECK_THROWS_AS(units::parse_bandwidth("nanGB/s"), InputError);
    CHECK_THROWS_AS(units::parse_bandwidth("infGB/s"), InputError);
    CHECK_THROWS_AS(units::parse_time("1.5"), InputError);
    CHECK_THROWS_AS(units::parse_time("-2us"), InputError);
    CHECK_THROWS_AS(units::parse_time("1e9h"), InputError);
    CHECK_THROWS_AS(units::parse_power("700"), InputError);
    CHECK_THROWS_AS(units::parse_power("700J"), InputError);
    CHECK_THROWS_WITH(units::parse_bytes("512"), Catch::Contains("no unit"));
}

TEST_CASE("SimTime rounds once, to the nearest picosecond", "[units][time]") {
    CHECK(SimTime::from_seconds(1e-12).ps() == 1);
    CHECK(SimTime::from_seconds(1.4e-12).ps() == 1);
    CHECK(SimTime::from_seconds(1.6e-12).ps() == 2);
    CHECK(SimTime::microseconds(3) == SimTime::nanoseconds(3000));
    CHECK(SimTime::from_seconds(1e30) == SimTime::max());
    CHECK((SimTime::microseconds(2) + SimTime::nanoseconds(500)).ps() == 2'500'000);
    // std::llround's rounding, halves away from zero, at the edges of the double's fractions.
    const double two52 = 4503599627370496.0;
    for (const double ps : {0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994, 1e-3,
                            -1e-3, 12345.5, 999999.4999, two52 - 0.5, two52 + 0.5, -(two52 + 0.5), two52 * 2 + 1,
                            9.1e18, -9.1e18, 1.7e12 / 3, -1.7e12 / 3}) {
        INFO(ps);
        CHECK(SimTime::from_seconds(ps * 1e-12).ps() == std::llround(ps * 1e-12 * 1e12));
    }
    // And at every scale from femtoseconds to days, where most ps have a fraction, or halves (k / 2 x 10^-12).
    std::uint64_t state = 88172645463325252ULL;   // xorshift64: a fixed, portable sequence
    int mismatches = 0;
    for (int i = 0; i < 20000; ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        const double unit = static_cast<double>(state >> 11) / 9007199254740992.0;   // [0, 1)
        const double seconds = i % 4 == 0 ? static_cast<double>(state % 100000) * 0.5e-12
                                          : (i % 2 ? 1 : -1) * unit * std::pow(10.0, i % 20 - 15);
        mismatches += SimTime::from_seconds(seconds).ps() != std::llround(seconds * 1e12);
    }
    CHECK(mismatches == 0);
}
