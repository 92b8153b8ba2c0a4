#include "sim/resource_guard.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {
namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// a * b + acc, saturating at 2^64 - 1 (the inputs can be absurd on purpose: 10^8 GPUs squared).
std::uint64_t mul_add_saturating(std::uint64_t a, std::uint64_t b, std::uint64_t acc) {
    if (a != 0 && b > kU64Max / a) return kU64Max;
    const std::uint64_t product = a * b;
    return product > kU64Max - acc ? kU64Max : product + acc;
}

std::uint64_t non_negative(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

std::int64_t parse_gpu_limit(std::string_view text, std::string_view source) {
    double value = 0;
    try {
        value = units::parse_number(text);
    } catch (const InputError& e) {
        throw InputError(e.message(), {}, std::string(source));
    }
    if (value < 1 || value > static_cast<double>(kMaxRequestableGpus) || std::floor(value) != value)
        throw InputError("expected a whole number of GPUs between 1 and 10^12, got '" + std::string(text) + "'", {},
                         std::string(source));
    return static_cast<std::int64_t>(value);
}

std::uint64_t parse_memory_limit(std::string_view text, std::string_view source) {
    std::uint64_t bytes = 0;
    try {
        bytes = units::parse_bytes(text);
    } catch (const InputError& e) {
        throw InputError(e.message(), {}, std::string(source));
    }
    if (bytes < (1ULL << 20))
        throw InputError("a memory limit below 1MiB cannot hold any simulation, got '" + std::string(text) + "'", {},
                         std::string(source));
    return bytes;
}

}  // namespace

ResourceLimits ResourceLimits::from_environment() {
    ResourceLimits limits;
    if (const char* gpus = std::getenv("TTSIM_MAX_GPUS"); gpus != nullptr && *gpus != '\0')
        limits = limits.with_max_gpus(gpus, "TTSIM_MAX_GPUS");
    if (const char* memory = std::getenv("TTSIM_MAX_MEMORY"); memory != nullptr && *memory != '\0')
        limits = limits.with_max_memory(memory, "TTSIM_MAX_MEMORY");
    return limits;
}

ResourceLimits ResourceLimits::with_max_memory(std::string_view text, std::string_view source) const {
    ResourceLimits out = *this;
    out.max_memory_bytes = parse_memory_limit(text, source);
    return out;
}

ResourceLimits ResourceLimits::with_max_gpus(std::string_view text, std::string_view source) const {
    ResourceLimits out = *this;
    out.max_gpus = parse_gpu_limit(text, source);
    return out;
}

CostEstimate estimate_simulation_cost(const SimulationSize& size) {
    const std::uint64_t gpus = non_negative(size.gpus);
    const std::uint64_t links =
        size.links > 0 ? non_negative(size.links) : mul_add_saturating(gpus, kLinksPerGpuEstimate, 0);
    const std::uint64_t flows = size.flows > 0 ? non_negative(size.flows) : gpus;
    std::uint64_t bytes = mul_add_saturating(gpus, kBytesPerGpu, 0);
    bytes = mul_add_saturating(links, kBytesPerLink, bytes);
    bytes = mul_add_saturating(flows, kBytesPerFlow, bytes);
    bytes = mul_add_saturating(non_negative(size.points), kBytesPerSweepPoint, bytes);
    // Max-min sharing touches every (flow, link on its path) pair a few times per rate change; a path is
    // a handful of links. ~1e8 such touches per second on one core.
    const double touches = static_cast<double>(flows) * 6.0 * 4.0 + static_cast<double>(links);
    return CostEstimate{bytes, touches / 1e8};
}

std::string describe_bytes(std::uint64_t bytes) {
    const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double value = static_cast<double>(bytes);
    int index = 0;
    while (index < 6 && value >= 1024.0) {
        value /= 1024.0;
        ++index;
    }
    return value < 10 && index > 0 ? fmt::format("{:.1f}{}", value, names[index])
                                   : fmt::format("{:.0f}{}", value, names[index]);
}

namespace {

// Why `size` does not fit `limits`, or empty when it does.
std::string over_limits(const SimulationSize& size, const ResourceLimits& limits) {
    if (size.gpus > limits.max_gpus)
        return std::to_string(size.gpus) + " GPUs exceed the simulation limit of " + std::to_string(limits.max_gpus) +
               " GPUs (estimated memory " + describe_bytes(estimate_simulation_cost(size).bytes) +
               "); raise it with TTSIM_MAX_GPUS if you mean it";
    const CostEstimate cost = estimate_simulation_cost(size);
    if (cost.bytes > limits.max_memory_bytes) {
        std::vector<std::string> held;
        if (size.gpus > 0) {
            held.push_back(fmt::format("{} GPUs", size.gpus));
            if (size.links > 0) held.push_back(fmt::format("{} links", size.links));
            held.push_back(fmt::format("{} concurrent flows", size.flows > 0 ? size.flows : size.gpus));
        }
        if (size.points > 0) held.push_back(fmt::format("{} sweep points", size.points));
        const std::string per_phase = size.gpus > 0 ? fmt::format("; ~{:.3g} s per phase", cost.seconds) : "";
        return fmt::format("the simulation would need about {} of memory ({}{}), above the limit of {}; "
                           "raise it with TTSIM_MAX_MEMORY (e.g. TTSIM_MAX_MEMORY=64GiB) if you mean it",
                           describe_bytes(cost.bytes), fmt::join(held, ", "), per_phase,
                           describe_bytes(limits.max_memory_bytes));
    }
    return {};
}

}  // namespace

void check_resources(const SimulationSize& size, const ResourceLimits& limits, std::string_view what) {
    if (const std::string problem = over_limits(size, limits); !problem.empty())
        throw InputError(problem, {}, std::string(what));
}

void check_resources(const SimulationSize& size, Field field) {
    if (const std::string problem = over_limits(size, ResourceLimits::from_environment()); !problem.empty())
        throw InputError(problem, field);
}

}  // namespace ttsim
