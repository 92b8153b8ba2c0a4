// Resource guards: refuse a simulation that would not fit in memory or time *before* building it, with the
// estimate, the limit, and how to raise the limit, as an InputError (exit code 2).
//
//   ResourceLimits limits = ResourceLimits::from_environment();          // TTSIM_MAX_GPUS, TTSIM_MAX_MEMORY
//   check_resources({.gpus = 1024, .links = 5000, .flows = 1024 * 1023}, limits, "alltoall on 1024 GPUs");
//
// The estimate is deliberately coarse (an upper-bound-ish model of the flow-level simulator: bytes per GPU,
// per link and per flow, and a time per flow-hop); its job is to stop 10^8 GPUs or 10^10 flows up front, not
// to predict a run's footprint to the byte.
//
// Limits (defaults; environment variables raise or lower them, as do the CLI flags that call with_overrides):
//   max GPUs     262,144        TTSIM_MAX_GPUS    (a whole number)
//   max memory   4 GiB          TTSIM_MAX_MEMORY  (a size with unit, e.g. "16GiB")
//
// Where they are checked: every GPU count a user gives (flags of collective / predict / plan, cluster.gpus,
// sweep and plan `gpus`, a YAML topology's preset) through checked_gpu_request (topologies/presets.hpp) or
// check_preset_cluster (tools/cli/cluster_spec.hpp); a YAML topology's GPUs and, before each link group is
// built, its links (topologies/yaml_topology.cpp); the number of points of a sweep before it is expanded
// (models/planning/sweep_config.cpp). The time of a run is estimated (CostEstimate::seconds) but not limited.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/fields.hpp"

namespace ttsim {

struct ResourceLimits {
    std::int64_t max_gpus = 262'144;
    std::uint64_t max_memory_bytes = 4ULL << 30;

    // Defaults, overridden by TTSIM_MAX_GPUS / TTSIM_MAX_MEMORY when set. A malformed value is an
    // InputError naming the variable.
    static ResourceLimits from_environment();
    // These limits with the values of e.g. --max-memory / --max-gpus flags applied (text as the user wrote it;
    // `source` names the flag or key in error messages).
    ResourceLimits with_max_memory(std::string_view text, std::string_view source) const;
    ResourceLimits with_max_gpus(std::string_view text, std::string_view source) const;
};

struct SimulationSize {
    std::int64_t gpus = 0;
    std::int64_t links = 0;   // directed topology links (0 = estimate from the GPU count)
    std::int64_t flows = 0;   // concurrent flows of the largest phase (0 = one per GPU)
    std::int64_t points = 0;  // sweep points expanded and kept with their results (0 = not a sweep)
};

struct CostEstimate {
    std::uint64_t bytes = 0;  // resident memory, estimated
    double seconds = 0;       // wall-clock time of one simulated phase, order of magnitude
};

// Per-item costs of the model (bytes); exposed so the tests and the message can state them.
inline constexpr std::uint64_t kBytesPerGpu = 2048;   // GPU record, NIC, NVLink port, routing tables
inline constexpr std::uint64_t kBytesPerLink = 256;   // graph edge, capacity, load, max-min bookkeeping
inline constexpr std::uint64_t kBytesPerFlow = 512;   // flow record, path (a few links), rate, events
inline constexpr std::uint64_t kLinksPerGpuEstimate = 6;  // NVLink, PCIe, NIC-leaf, and the fabric above it
inline constexpr std::uint64_t kBytesPerSweepPoint = 4096;  // the point, its prediction, strings and warnings

// The largest GPU count a command or scenario may ask for (and the largest TTSIM_MAX_GPUS): far above any
// cluster ttsim builds, on purpose, so that an absurd request (10^8 GPUs) reaches check_resources and is
// refused with its estimate instead of by a bare range check.
inline constexpr std::int64_t kMaxRequestableGpus = 1'000'000'000'000;

CostEstimate estimate_simulation_cost(const SimulationSize& size);

// Throws InputError when the GPU count or the memory estimate exceeds the limits. The message states the
// estimate, the limit, and the environment variable (and flag, if any) to raise it. `what` names the request
// ("cluster.gpus", "--gpus", "alltoall on 65536 GPUs"); it becomes the error's key.
void check_resources(const SimulationSize& size, const ResourceLimits& limits, std::string_view what);
inline void check_resources(const SimulationSize& size, std::string_view what) {
    check_resources(size, ResourceLimits::from_environment(), what);
}
// The same, under the environment's limits, for a request `field` asked for (the front end names it).
void check_resources(const SimulationSize& size, Field field);

// "4GiB", "1.5GiB", "300MiB": a short human-readable size for messages.
std::string describe_bytes(std::uint64_t bytes);

}  // namespace ttsim
