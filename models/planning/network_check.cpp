#include "models/planning/network_check.hpp"

#include <algorithm>

#include "topologies/fabric_shape.hpp"

namespace ttsim::planning {

bool network_option_unused(const NetworkOption& option, const std::vector<System>& systems, int largest) {
    return option.shapes_scale_out() &&
           std::none_of(systems.begin(), systems.end(), [&](const System& s) { return s.spans_domains(largest); });
}

void check_network_option_holds(const NetworkOption& option, const std::vector<System>& systems, int largest) {
    if (!option.shape.sets_capacity()) return;
    for (const System& system : systems)
        check_radix_holds(system.node_shape(), largest, option.shape.applied_to(system.fabric));
}

}  // namespace ttsim::planning
