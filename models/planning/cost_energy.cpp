#include "models/planning/cost_energy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/errors.hpp"
#include "topologies/superpod_fabric.hpp"

namespace ttsim::planning {

namespace {
constexpr double kJoulesPerKwh = 3.6e6;
}

double CostParameters::price_for(const std::string& system) const {
    const auto it = price_per_gpu_hour.find(system);
    return it == price_per_gpu_hour.end() ? default_price : it->second;
}

bool CostParameters::price_is_estimate(const std::string& system) const {
    if (given_by_user.count(system)) return false;
    return price_per_gpu_hour.count(system) ? true : !default_given_by_user;
}

bool CostParameters::has_own_price(const std::string& label, const std::string& base) const {
    return label != base && given_by_user.count(label) > 0;
}

double CostParameters::price_of(const std::string& label, const std::string& base) const {
    return has_own_price(label, base) ? price_per_gpu_hour.at(label) : price_for(base);
}

bool CostParameters::price_of_is_estimate(const std::string& label, const std::string& base) const {
    return has_own_price(label, base) ? false : price_is_estimate(base);
}

std::string CostParameters::describe_prices(const std::vector<std::string>& catalog_systems) const {
    std::vector<std::pair<std::string, std::string>> systems;
    for (const std::string& s : catalog_systems) systems.emplace_back(s, s);
    return describe_prices(systems);
}

std::string CostParameters::describe_prices(const std::vector<std::pair<std::string, std::string>>& systems) const {
    std::string text;
    bool any_estimate = false;
    for (const auto& [label, base] : systems) {
        const bool estimate = price_of_is_estimate(label, base);
        any_estimate = any_estimate || estimate;
        text += fmt::format("{}{} {:.2f} {}{}", text.empty() ? "" : ", ", label, price_of(label, base), currency,
                            estimate ? " (default estimate)" : "");
    }
    if (any_estimate)
        text += "; default estimates are on-demand cloud list prices (models/planning/cost_energy.hpp), set your own "
                "with cost.price_per_gpu_hour or --price";
    return text;
}

EnergyBreakdown energy_of(const RunProfile& run, const EnergyParameters& p) {
    TTSIM_ASSERT(run.busy_seconds <= run.ttt_seconds * (1 + 1e-9) + 1e-9, "busy time exceeds the run time");
    TTSIM_ASSERT(run.rented_gpus >= run.gpus && run.units >= 1, "a job rents at least its own GPUs in whole units");
    const double busy = std::clamp(run.busy_seconds, 0.0, run.ttt_seconds);
    EnergyBreakdown e;
    e.gpu_kwh = (run.gpus * (busy * run.gpu_tdp_watts + (run.ttt_seconds - busy) * run.gpu_idle_watts) +
                 (run.rented_gpus - run.gpus) * run.ttt_seconds * run.gpu_idle_watts) /
                kJoulesPerKwh;
    e.node_kwh = run.units * run.unit_watts * run.ttt_seconds / kJoulesPerKwh;
    e.network_kwh = run.network_switches * p.switch_watts * run.ttt_seconds / kJoulesPerKwh;
    e.it_kwh = e.gpu_kwh + e.node_kwh + e.network_kwh;
    e.facility_kwh = e.it_kwh * p.pue;
    return e;
}

double non_gpu_watts_per_unit(const System& system, const EnergyParameters& p) {
    if (!system.rack_scale) return p.node_watts;
    const auto rack = p.rack_watts.find(system.preset);
    if (rack == p.rack_watts.end()) throw InternalError("no rack power for " + system.preset + " (prices.yaml power.rack)");
    // The rack figure holds the catalog GPUs (reference_prices.cpp checks it exceeds their TDP); a what-if GPU's
    // own TDP enters the GPU term only.
    const double rest = rack->second - system.gpus_per_nvlink_domain * system.catalog_gpu->tdp_watts;
    return rest * system.allocation_unit_gpus / system.gpus_per_nvlink_domain;
}

double rented_gpu_hours(const System& system, int gpus, double ttt_minutes) {
    return static_cast<double>(system.allocation_units(gpus)) * system.allocation_unit_gpus * ttt_minutes / 60.0;
}

double network_switches_for(int gpus, int gpus_per_node, const FabricOptions& fabric) {
    return fabric_switch_equivalents(gpus, gpus_per_node, fabric);
}

std::string describe_energy_model(const EnergyParameters& p) {
    std::string racks;
    for (const auto& [system, watts] : p.rack_watts)
        racks += fmt::format(", {} rack {:.0f} kW less its GPUs' TDP (a tray its share)", system, watts / 1e3);
    return fmt::format(
        "energy = PUE {:.2f} x (GPUs x (compute time x TDP + other time x idle power) + rented GPUs unused x idle "
        "power x TTT + rented units x non-GPU power x TTT (node {:.0f} W{}) + switch equivalents x {:.0f} W x TTT); "
        "compute = forward/backward/optimizer/evaluation at TDP, exposed communication and host overhead at idle "
        "power (a lower bound); switch equivalents = planes x GPUs x (2 tiers - 1) / switch ports of the fat tree (64 "
        "on a DGX SuperPOD)",
        p.pue, p.node_watts, racks, p.switch_watts);
}

}  // namespace ttsim::planning
