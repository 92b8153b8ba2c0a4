#include "tools/cli/price_flags.hpp"

#include <algorithm>
#include <sstream>

#include "models/hardware/system.hpp"
#include "sim/units.hpp"
#include "tools/cli/args.hpp"

namespace ttsim::cli {

void declare_price_flags(ArgParser& args) {
    args.option("price", "P | S=P,...", "price per GPU-hour, one for all or per system",
                "dgx-h100=2.5,dgx-h200=3.5,dgx-b200=5,gb200-nvl72=6 (estimates)")
        .option("currency", "C", "currency of the prices (and of plan's --budget)", "USD");
}

planning::CostParameters price_flags(const ArgParser& args, const std::vector<std::string>& systems) {
    planning::CostParameters cost;
    cost.currency = args.get("currency");
    const std::optional<std::string> price = args.has("price") ? args.get_optional("price") : std::nullopt;
    // The default prices are USD estimates (models/data/prices.yaml): relabelling them would misstate the cost.
    if (!price && cost.currency != "USD")
        args.fail("currency", "the default prices are USD estimates; give --price in " + cost.currency + " as well");
    if (!price) return cost;
    if (price->find('=') == std::string::npos) {
        cost.price_per_gpu_hour.clear();
        cost.default_price = args.get_double("price", 0.0, 1e6);
        cost.default_given_by_user = true;
        return cost;
    }
    std::stringstream entries(*price);
    for (std::string entry; std::getline(entries, entry, ',');) {
        if (entry.empty()) continue;
        const auto eq = entry.find('=');
        if (eq == std::string::npos) args.fail("price", "expected SYSTEM=PRICE, got '" + entry + "'");
        const std::string system =
            args.get_parsed("price", [&](const std::string&) { return resolve_system(entry.substr(0, eq)).name; });
        const double value =
            args.get_parsed("price", [&](const std::string&) { return units::parse_number(entry.substr(eq + 1)); });
        if (value < 0) args.fail("price", "must not be negative");
        if (std::find(systems.begin(), systems.end(), system) == systems.end())
            args.fail("price", "a price for " + system + ", which --system does not name");
        cost.price_per_gpu_hour[system] = value;
        cost.given_by_user.insert(system);
    }
    return cost;
}

}  // namespace ttsim::cli
