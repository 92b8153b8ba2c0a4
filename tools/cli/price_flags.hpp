// --price and --currency, read the same way by every command that prices a run (`ttsim plan`, `ttsim predict`):
// one price per GPU-hour for all systems ("--price 3"), or per system ("--price dgx-h100=2.5,dgx-b200=5"), else
// the estimates of models/data/prices.yaml (and every report says which prices are estimates).
#pragma once

#include <string>
#include <vector>

#include "models/planning/cost_energy.hpp"

namespace ttsim::cli {

class ArgParser;

void declare_price_flags(ArgParser& args);

// The cost parameters of the flags. A per-system price must name one of `systems` (the systems the command
// runs); anything else is refused naming --price.
planning::CostParameters price_flags(const ArgParser& args, const std::vector<std::string>& systems);

}  // namespace ttsim::cli
