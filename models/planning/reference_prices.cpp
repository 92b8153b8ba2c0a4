#include "models/planning/reference_prices.hpp"

#include "models/data_dir.hpp"
#include "models/reference_data.hpp"
#include "models/training/predict.hpp"

namespace ttsim::planning {
namespace {

// A price per GPU-hour in the file's currency, e.g. "2.5USD/GPU-hour"; 1e6 per GPU-hour bounds any real price.
double price(const ConfigNode& value, const std::string& currency) {
    const double amount = value.as_number_in_unit(currency + "/GPU-hour");
    if (!(amount > 0) || amount > 1e6) value.fail("a price per GPU-hour must be in (0, 1e6]");
    return amount;
}

}  // namespace

ReferencePrices load_reference_prices(const std::filesystem::path& path) {
    const ConfigNode root = load_reference_file(path, {"currency", "price_per_gpu_hour", "default_price", "power"});
    ReferencePrices out;
    out.currency = sourced(root, "currency").as_string();
    const ConfigNode prices = root.required("price_per_gpu_hour");
    prices.check_keys(prices.keys());   // refuses duplicate keys (yaml-cpp keeps both)
    for (const std::string& system : prices.keys()) {
        const ConfigNode value = sourced(prices, system);
        // Keys are canonical system names: a misspelt one would silently never be used.
        const std::string canonical = prices.required(system).feeding([&] { return resolve_system(system).name; });
        if (canonical != system) prices.required(system).fail("write the system's canonical name '" + canonical + "'");
        out.price_per_gpu_hour[system] = price(value, out.currency);
    }
    out.default_price = price(sourced(root, "default_price"), out.currency);
    const ConfigNode power = root.required("power");
    power.check_keys({"node", "rack", "switch", "pue"});
    out.node_watts = sourced(power, "node").as_power();
    const ConfigNode racks = power.required("rack");
    racks.check_keys(racks.keys());   // refuses duplicate keys
    for (const std::string& name : racks.keys()) {
        const System system = racks.required(name).feeding([&] { return resolve_system(name); });
        if (system.name != name) racks.required(name).fail("write the system's canonical name '" + system.name + "'");
        if (!system.rack_scale) racks.required(name).fail(name + " is rented by the node; its power is power.node");
        const double watts = sourced(racks, name).as_power();
        // The rack holds its GPUs: a total at or below their TDP leaves nothing (or less) for the rest of it.
        const double gpu_watts = system.gpus_per_nvlink_domain * system.catalog_gpu->tdp_watts;
        if (!(watts > gpu_watts))
            racks.required(name).fail("a rack's power includes its " + std::to_string(system.gpus_per_nvlink_domain) +
                                      " GPUs' TDP (" + std::to_string(static_cast<int>(gpu_watts)) + " W): it must exceed it");
        out.rack_watts[name] = watts;
    }
    for (const std::string& name : system_names())
        if (resolve_system(name).rack_scale && !out.rack_watts.count(resolve_system(name).name))
            racks.fail("no power for rack-scale system " + name);
    out.switch_watts = sourced(power, "switch").as_power();
    out.pue = sourced(power, "pue").as_double(1.0, 3.0);   // the range a scenario's energy.pue accepts
    return out;
}

const ReferencePrices& reference_prices() {
    // Function-local static: loaded once, thread-safe (C++11), immutable afterwards.
    static const ReferencePrices prices = load_reference_prices(data_file("prices.yaml"));
    return prices;
}

}  // namespace ttsim::planning
