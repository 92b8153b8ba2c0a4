// Money and the `cost:` / `energy:` sections of sweeps and plans, shared with `ttsim plan`'s flags; read strictly
// (file:line:column and key through sim/config.hpp).
#pragma once

#include <string>
#include <vector>

#include "models/planning/cost_energy.hpp"
#include "sim/config.hpp"

namespace ttsim::planning {

struct Money {
    double amount = 0;
    std::string currency;              // empty when the text had none
};
Money parse_money(const std::string& text);   // "5000USD", "5000 EUR", "5000"; InputError otherwise
// `priced_systems`: the systems the scenario runs (presets or GPU names, a variant as its base system). A price
// keyed to any other system is refused at its key ("a price for X, which this <owner>"): a typo or a leftover
// would otherwise silently price nothing.
// `variant_names`: the scenario's hypothetical systems: a price keyed to one's name is that variant's own
// (CostParameters::price_of); a variant without one is priced as its base system.
void read_cost_section(const ConfigNode& node, CostParameters& cost, const std::vector<std::string>& priced_systems,
                       const std::string& owner, const std::vector<std::string>& variant_names = {});
void read_energy_section(const ConfigNode& node, EnergyParameters& energy);

}  // namespace ttsim::planning
