// Money, `cost:` and `energy:` sections of sweeps and plans (and `ttsim plan`'s flags), read strictly.
#include "models/planning/cost_config.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/training/predict.hpp"
#include "sim/units.hpp"

namespace ttsim::planning {

Money parse_money(const std::string& text) {
    std::size_t end = 0;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
    Money m;
    try {
        if (end == 0) throw InputError("");
        m.amount = units::parse_number(text.substr(0, end));
    } catch (const InputError&) {
        throw InputError("expected an amount of money such as 5000USD, got '" + text + "'");
    }
    std::string rest = text.substr(end);
    rest.erase(0, rest.find_first_not_of(' '));
    for (char c : rest)
        if (!std::isalpha(static_cast<unsigned char>(c)))
            throw InputError("expected an amount of money such as 5000USD, got '" + text + "'");
    m.currency = rest;
    if (m.amount <= 0) throw InputError("an amount of money must be positive, got '" + text + "'");
    return m;
}

void read_cost_section(const ConfigNode& node, CostParameters& cost, const std::vector<std::string>& priced_systems,
                       const std::string& owner, const std::vector<std::string>& variant_names) {
    node.check_keys({"price_per_gpu_hour", "currency"});
    if (auto currency = node.optional("currency")) {
        cost.currency = currency->as_string();
        // The default prices are USD estimates (models/data/prices.yaml): relabelling them would misstate the cost.
        if (cost.currency != "USD" && !node.has("price_per_gpu_hour"))
            currency->fail("the default prices are USD estimates; give price_per_gpu_hour in " + cost.currency + " as well");
    }
    if (auto price = node.optional("price_per_gpu_hour")) {
        if (price->is_map()) {
            std::map<std::string, std::string> key_of;   // system -> the key that priced it
            for (const std::string& key : price->keys()) {
                const ConfigNode entry = price->required(key);
                // A hypothetical variant is priced under its own name (else as its base system); keys() has
                // refused a second entry under the same name.
                if (std::find(variant_names.begin(), variant_names.end(), key) != variant_names.end()) {
                    cost.price_per_gpu_hour[key] = entry.as_double(0.0, 1e6);
                    cost.given_by_user.insert(key);
                    continue;
                }
                const std::string system = entry.feeding([&] { return resolve_system(key).name; });
                if (const auto [it, fresh] = key_of.emplace(system, key); !fresh)
                    entry.fail("a second price for " + system + " (also priced as '" + it->second + "')");
                if (std::none_of(priced_systems.begin(), priced_systems.end(),
                                 [&](const std::string& s) { return resolve_system(s).name == system; }))
                {
                    std::vector<std::string> listed;   // once each: a sweep's variants share their base system
                    for (const std::string& s : priced_systems)
                        if (std::find(listed.begin(), listed.end(), s) == listed.end()) listed.push_back(s);
                    entry.fail("a price for " + system + ", which " + owner + " (systems: " +
                               fmt::format("{}", fmt::join(listed, ", ")) + ")");
                }
                cost.price_per_gpu_hour[system] = entry.as_double(0.0, 1e6);
                cost.given_by_user.insert(system);
            }
        } else {
            const double value = price->as_double(0.0, 1e6);
            cost.price_per_gpu_hour.clear();
            cost.default_price = value;
            cost.default_given_by_user = true;
        }
    }
}

void read_energy_section(const ConfigNode& node, EnergyParameters& energy) {
    node.check_keys({"node_power", "switch_power", "pue"});
    if (auto x = node.optional("node_power")) energy.node_watts = x->as_power();
    if (auto x = node.optional("switch_power")) energy.switch_watts = x->as_power();
    if (auto x = node.optional("pue")) energy.pue = x->as_double(1.0, 3.0);
}

}  // namespace ttsim::planning
