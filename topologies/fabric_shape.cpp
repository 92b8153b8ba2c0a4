#include "topologies/fabric_shape.hpp"

#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {

Field FabricShape::first_field() const {
    return planes ? Field::planes
           : switch_ports ? Field::switch_ports
           : tiers ? Field::tiers
           : spine_oversubscription ? Field::spine_oversubscription
           : superspine_oversubscription ? Field::superspine_oversubscription
                                         : Field::rail_optimized;
}

FabricOptions FabricShape::applied_to(FabricOptions options) const {
    if (planes) options.planes = *planes;
    if (switch_ports) options.switch_ports = *switch_ports;
    if (tiers) options.tiers = *tiers;
    if (spine_oversubscription) options.spine_oversubscription = *spine_oversubscription;
    if (superspine_oversubscription) options.superspine_oversubscription = *superspine_oversubscription;
    if (rail_optimized) options.rail_optimized = *rail_optimized;
    return options;
}

std::string FabricShape::label() const {
    std::string text;
    auto add = [&](const std::string& part) { text += (text.empty() ? "" : "-") + part; };
    if (planes) add(std::to_string(*planes) + "planes");
    if (switch_ports) add(std::to_string(*switch_ports) + "ports");
    if (tiers) add(std::to_string(*tiers) + "tiers");
    if (spine_oversubscription) add("spine" + units::format_number(*spine_oversubscription));
    if (superspine_oversubscription) add("superspine" + units::format_number(*superspine_oversubscription));
    if (rail_optimized) add(*rail_optimized ? "rails" : "norails");
    return text;
}

std::string FabricShape::describe() const {
    std::string text;
    auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    if (planes) add(std::to_string(*planes) + (*planes == 1 ? " plane" : " planes"));
    if (switch_ports) add(std::to_string(*switch_ports) + "-port switches");
    if (tiers) add(std::to_string(*tiers) + " tiers");
    if (spine_oversubscription) add("spines " + units::format_number(*spine_oversubscription) + ":1 oversubscribed");
    if (superspine_oversubscription)
        add("super-spines " + units::format_number(*superspine_oversubscription) + ":1 oversubscribed");
    if (rail_optimized) add(*rail_optimized ? "rail-optimised leaves" : "leaves not rail-optimised");
    return text;
}

FabricShape read_fabric_shape(const ConfigNode& node) {
    FabricShape shape;
    if (auto x = node.optional("planes")) shape.planes = static_cast<int>(x->as_int(1, kMaxPlanes));
    if (auto x = node.optional("switch_ports")) {
        shape.switch_ports = static_cast<int>(x->as_int(kMinSwitchPorts, kMaxSwitchPorts));
        if (*shape.switch_ports % 2 != 0)
            x->fail("a switch's ports split half down, half up at a leaf: give an even radix (got " +
                    std::to_string(*shape.switch_ports) + ")");
    }
    if (auto x = node.optional("tiers")) shape.tiers = static_cast<int>(x->as_int(kMinFabricTiers, kMaxFabricTiers));
    if (auto x = node.optional("spine_oversubscription"))
        shape.spine_oversubscription = x->as_double(1.0, kMaxSpineOversubscription);
    if (auto x = node.optional("superspine_oversubscription"))
        shape.superspine_oversubscription = x->as_double(1.0, kMaxSpineOversubscription);
    if (auto x = node.optional("rail_optimized")) shape.rail_optimized = x->as_bool();
    return shape;
}

void check_radix_holds(const PresetInfo& node, int gpus, const FabricOptions& options) {
    if (const int most = max_cluster_gpus(node, options); gpus > most)
        throw InputError(std::to_string(options.switch_ports) + "-port switches hold at most " + std::to_string(most) +
                             " " + node.name + " GPUs in " + fabric_tiers_phrase(options) + "; " + std::to_string(gpus) +
                             " asked for (" +
                             (options.tiers != 0 && options.tiers < kMaxFabricTiers ? "more tiers or a larger radix hold"
                                                                                     : "a larger radix holds") +
                             " more)",
                         options.tiers != 0 ? Field::tiers : Field::switch_ports);
}

}  // namespace ttsim
