// Money and the `cost:` / `energy:` sections of sweeps and plans, shared with `ttsim plan`'s flags; read strictly
// (file:line:column and key through sim/config.hpp).
#pragma once

#include <string>

#include "models/planning/cost_energy.hpp"
#include "sim/config.hpp"

namespace ttsim::planning {

struct Money {
    double amount = 0;
    std::string currency;              // empty when the text had none
};
Money parse_money(const std::string& text);   // "5000USD", "5000 EUR", "5000"; InputError otherwise
void read_cost_section(const ConfigNode& node, CostParameters& cost);
void read_energy_section(const ConfigNode& node, EnergyParameters& energy);

}  // namespace ttsim::planning
