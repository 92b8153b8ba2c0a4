// What-if GPUs of sweeps and plans (`gpu_variants:`): each a catalog system's GPU with some figures changed, every
// figure inside its physical range (a value outside is a typo, refused at its key).
#pragma once

#include <string>
#include <vector>

#include "models/planning/sweep_spec.hpp"
#include "sim/config.hpp"

namespace ttsim::planning {

// A `gpu_variants:` list, names unique.
std::vector<HardwareVariant> read_variants(const ConfigNode& list);
// Refuses a variant that `systems` does not name (nothing would price it); `systems_given` false: `systems` is the
// default list, which the message names.
void require_variants_used(const ConfigNode& variants, const std::vector<HardwareVariant>& read,
                           const std::vector<std::string>& systems, bool systems_given);
// The catalog system a sweep's or plan's system label runs on: a variant's base, or the label itself.
std::string base_system_of(const std::string& label, const std::vector<HardwareVariant>& variants);
// base_system_of for each of `labels`, in order.
std::vector<std::string> base_systems_of(const std::vector<std::string>& labels, const std::vector<HardwareVariant>& variants);
// Each variant's name: what read_cost_section takes to price a variant under its own name.
std::vector<std::string> variant_names(const std::vector<HardwareVariant>& variants);
// The catalog GPU each of `systems` runs (through base_system_of), once each, in name order.
std::vector<std::string> catalog_gpus(const std::vector<std::string>& systems, const std::vector<HardwareVariant>& variants);

}  // namespace ttsim::planning
