// Whether a network option can act on the jobs it is given to, and whether its fabric holds them: one check for
// every front end that takes a `network:` option or its flags (sweeps and scaling studies, plans from the command
// line or a scenario, user models). Each caller says where and how the user wrote the option; the rule is here.
#pragma once

#include <vector>

#include "models/hardware/system.hpp"
#include "models/planning/sweep_spec.hpp"

namespace ttsim::planning {

// True when the option shapes the scale-out fabric (a NIC, an oversubscription or a fabric shape:
// NetworkOption::shapes_scale_out) and no system spans two NVLink domains at `largest` GPUs, the largest count it
// is asked for: no job would use a NIC or a switch, so the option would change nothing.
bool network_option_unused(const NetworkOption& option, const std::vector<System>& systems, int largest);

// Where the option sets a radix or tiers (FabricShape::sets_capacity): InputError naming the tiers or the radix
// (check_radix_holds) when they cannot hold `largest` GPUs of one of `systems` on its own fabric with the option's
// shape applied. Nothing otherwise. (A plan searches a range over several systems and needs only one to hold it:
// check_plan_range, plan_query.hpp.)
void check_network_option_holds(const NetworkOption& option, const std::vector<System>& systems, int largest);

}  // namespace ttsim::planning
