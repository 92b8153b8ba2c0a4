// Default prices and non-GPU power for cost and energy estimates, as data: models/data/prices.yaml (each value
// with its source) read once per process into an immutable object. CostParameters and EnergyParameters
// (cost_energy.hpp) take their defaults from here; users override them per scenario or flag.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace ttsim::planning {

struct ReferencePrices {
    std::string currency;                              // e.g. "USD"
    std::map<std::string, double> price_per_gpu_hour;  // by canonical system name, currency per GPU-hour
    double default_price = 0;                          // for systems not listed, currency per GPU-hour
    double node_watts = 0;                             // non-GPU draw of one 8-GPU node, W
    // Whole-rack power (GPUs included) of each rack-scale system by canonical name, W; the GPUs' share is
    // taken out where it is used (cost_energy.hpp, non_gpu_watts_per_unit).
    std::map<std::string, double> rack_watts;
    double switch_watts = 0;                           // one 64-port scale-out switch with optics, W
    double pue = 0;                                    // facility overhead factor (1 = IT energy only)
};

// Parses a prices.yaml. Prices are written "2.5USD/GPU-hour" in the file's currency; powers in watts ("2500W").
// Unknown or missing keys, missing sources, unknown systems and wrong units are InputErrors at file:line:column.
ReferencePrices load_reference_prices(const std::filesystem::path& path);

// The shipped models/data/prices.yaml, loaded on first use (thread-safe) and immutable afterwards.
const ReferencePrices& reference_prices();

}  // namespace ttsim::planning
