#include "topologies/fabric_shape.hpp"

#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {

Field FabricShape::first_field() const {
    return planes ? Field::planes : switch_ports ? Field::switch_ports : Field::spine_oversubscription;
}

FabricOptions FabricShape::applied_to(FabricOptions options) const {
    if (planes) options.planes = *planes;
    if (switch_ports) options.switch_ports = *switch_ports;
    if (spine_oversubscription) options.spine_oversubscription = *spine_oversubscription;
    return options;
}

std::string FabricShape::label() const {
    std::string text;
    auto add = [&](const std::string& part) { text += (text.empty() ? "" : "-") + part; };
    if (planes) add(std::to_string(*planes) + "planes");
    if (switch_ports) add(std::to_string(*switch_ports) + "ports");
    if (spine_oversubscription) add("spine" + units::format_number(*spine_oversubscription));
    return text;
}

std::string FabricShape::describe() const {
    std::string text;
    auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    if (planes) add(std::to_string(*planes) + (*planes == 1 ? " plane" : " planes"));
    if (switch_ports) add(std::to_string(*switch_ports) + "-port switches");
    if (spine_oversubscription) add("spines " + units::format_number(*spine_oversubscription) + ":1 oversubscribed");
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
    if (auto x = node.optional("spine_oversubscription"))
        shape.spine_oversubscription = x->as_double(1.0, kMaxSpineOversubscription);
    return shape;
}

void check_radix_holds(const PresetInfo& node, int gpus, const FabricOptions& options) {
    if (const int most = max_cluster_gpus(node, options); gpus > most)
        throw InputError(std::to_string(options.switch_ports) + "-port switches hold at most " + std::to_string(most) +
                             " " + node.name + " GPUs in three tiers; " + std::to_string(gpus) +
                             " asked for (a larger radix holds more)",
                         Field::switch_ports);
}

}  // namespace ttsim
