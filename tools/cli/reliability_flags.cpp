#include "tools/cli/reliability_flags.hpp"

#include <fmt/format.h>

#include "models/reliability/reliability_data.hpp"
#include "sim/units.hpp"

namespace ttsim::cli {

void declare_reliability_flags(ArgParser& args) {
    const reliability::ReliabilityData& data = reliability::reliability_data();
    std::string names;
    for (const std::string& name : data.rate_set_names()) names += (names.empty() ? "" : ", ") + name;
    args.option("failure-rates", "NAME",
                "failure rates per GPU, HBM, NIC, switch, host and process (models/data/reliability.yaml): " + names,
                data.default_rates)
        .option("checkpoint-interval", "TIME", "work between two checkpoints, with its unit: 30min, 2h",
                "Daly's optimum for the job's MTTF and checkpoint time")
        .option("storage-bandwidth", "RATE", "the checkpoint file system's sustained rate, with its unit: 2TB/s",
                fmt::format("{:.0f}TB/s", data.storage_bytes_per_s / 1e12))
        .option("hot-spares", "N", "spare hosts standing by to replace a failed one (each back after a day's repair)",
                "never short of one");
}

reliability::ReliabilityRequest reliability_flags(const ArgParser& args) {
    reliability::ReliabilityRequest r;
    if (args.has("failure-rates")) r.failure_rates = args.get("failure-rates");
    if (args.has("checkpoint-interval"))
        r.checkpoint_interval_seconds =
            args.get_parsed("checkpoint-interval", [](const std::string& s) { return units::parse_time_seconds(s); });
    if (args.has("storage-bandwidth"))
        r.storage_bytes_per_s =
            args.get_parsed("storage-bandwidth", [](const std::string& s) { return units::parse_bandwidth(s); });
    if (args.has("hot-spares")) r.hot_spares = static_cast<int>(args.get_int("hot-spares", 0, 1 << 20));
    args.naming_flags([&] { reliability::check_reliability_request(r, reliability::reliability_data()); });
    return r;
}

}  // namespace ttsim::cli
