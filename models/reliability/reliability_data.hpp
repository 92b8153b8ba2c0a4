// Reference figures for failures, checkpoints and restarts (models/data/reliability.yaml, each value with its
// source), read once per process into an immutable object and passed down.
//
// Failure rates are per part and hour, one per component. They come from a reference job's interruptions by root
// cause (Llama 3 405B: 419 in 54 days on 16,384 H100s) divided by how many of that part the job held and for
// how long, so a job of any size fails at
//
//   lambda [1/h] = sum over components c of rate_c [1/(part h)] x parts_c(job)
//
// (independent parts, each failing at a constant rate: the exponential model every MTTF projection in the
// sources uses). Other clusters keep the reference job's mix of causes and scale it to their measured MTTF.
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ttsim::reliability {

// The parts of a job that fail and interrupt it. `software`: the job's own processes (one per GPU).
enum class Component { gpu, hbm, nic, network_switch, host, software };
inline constexpr std::array kComponents{Component::gpu,  Component::hbm,  Component::nic,
                                        Component::network_switch, Component::host, Component::software};
const char* to_string(Component component);   // "gpu", "hbm", "nic", "switch", "host", "software"
// Whether a failure of this part takes a host out of the job until it is repaired (so a hot spare, or the
// repair, must stand in before the restart): every part of a host; not a switch or cable (the fabric routes
// around it) nor a software fault (the same hosts restart).
bool takes_host_out(Component component);

// How many of each part a job holds.
struct JobParts {
    std::array<double, kComponents.size()> count{};
    double of(Component c) const { return count[static_cast<std::size_t>(c)]; }
};
// A job of `gpus` GPUs on hosts of `gpus_per_host`, `nics_per_gpu` scale-out NICs each, using `switches` switch
// equivalents (topologies/superpod_fabric.hpp superpod_switch_equivalents).
JobParts job_parts(int gpus, int gpus_per_host, double nics_per_gpu, double switches);

struct FailureRates {
    std::string name;                                        // "production-h100"
    std::array<double, kComponents.size()> per_part_hour{};  // failures per part per hour
    double of(Component c) const { return per_part_hour[static_cast<std::size_t>(c)]; }
    // The job's failure rate, 1/h: the sum above.
    double job_rate_per_hour(const JobParts& parts) const;
    // Its mean time to failure, hours (infinite for a job with no parts that fail).
    double job_mttf_hours(const JobParts& parts) const;
};

struct ReliabilityData {
    std::vector<FailureRates> rate_sets;    // the reference job's first, then the scaled clusters
    std::string default_rates;              // the name of the set a prediction uses unless asked otherwise
    double weights_bytes_per_parameter = 0, optimizer_bytes_per_parameter = 0;
    double storage_bytes_per_s = 0;         // the shared file system's sustained rate (write and read)
    double host_storage_bytes_per_s = 0;    // what one host moves to storage at most
    double detection_seconds = 0, reinitialisation_seconds = 0, repair_seconds = 0;
    // The set named `name`; InputError keyed Field::failure_rates listing the names otherwise.
    const FailureRates& rates(std::string_view name) const;
    std::vector<std::string> rate_set_names() const;
};

// Parses a reliability.yaml; missing or unknown keys, missing sources and wrong units are InputErrors at
// file:line:column.
ReliabilityData load_reliability_data(const std::filesystem::path& path);
// The shipped models/data/reliability.yaml, loaded on first use (thread-safe) and immutable afterwards.
const ReliabilityData& reliability_data();

}  // namespace ttsim::reliability
