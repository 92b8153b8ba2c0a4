// The shape of a scale-out fabric a request asks for on top of a system's own (planes per NIC, switch radix, spine
// oversubscription): declared once, with its limits, for every front end. `ttsim predict`, `plan` and
// `collective` read it from --planes, --switch-ports and --spine-oversubscription; scenarios from the keys
// `planes`, `switch_ports` and `spine_oversubscription` of a `cluster:` (collective) or `network:` option (sweep,
// scaling study, plan, user model).
#pragma once

#include <optional>
#include <string>

#include "sim/config.hpp"
#include "sim/fields.hpp"
#include "topologies/presets.hpp"

namespace ttsim {

// Accepted values (what check_cluster enforces on a built fabric, and what the readers accept). Planes: 1 to 8 (a
// ConnectX-8 splits into at most 2 x 400G, a what-if may go further). Radix: an even count of ports from 8 (the
// smallest useful leaf) to 512 (a chassis switch's order), half down, half up at a leaf. Spine
// oversubscription: 1 (non-blocking) to 64.
inline constexpr int kMaxPlanes = 8;
inline constexpr int kMinSwitchPorts = 8;
inline constexpr int kMaxSwitchPorts = 512;
inline constexpr double kMaxSpineOversubscription = 64.0;

struct FabricShape {
    std::optional<int> planes = std::nullopt;
    std::optional<int> switch_ports = std::nullopt;
    std::optional<double> spine_oversubscription = std::nullopt;

    bool any() const { return planes || switch_ports || spine_oversubscription; }
    // The first field set (planes, switch_ports, spine_oversubscription): what a refusal of the whole shape blames.
    Field first_field() const;
    // `options` with every field set here replacing its own.
    FabricOptions applied_to(FabricOptions options) const;
    // For a network option's name: "2planes-144ports-spine7" (the fields set, in that order); "" when none is.
    std::string label() const;
    // For headers: "2 planes, 144-port switches, spines 7:1 oversubscribed" (the fields set); "" when none is.
    std::string describe() const;
    friend bool operator==(const FabricShape&, const FabricShape&) = default;
};

// The shape keys a mapping may carry besides its own (for its check_keys list).
inline constexpr const char* kFabricShapeKeys[] = {"planes", "switch_ports", "spine_oversubscription"};

// Reads `planes`, `switch_ports` and `spine_oversubscription` from `node` where present (the caller checks the
// mapping's keys); out-of-range values fail at their key. An odd radix fails at `switch_ports`.
FabricShape read_fabric_shape(const ConfigNode& node);

// InputError naming the shape's radix (switch_ports) when `gpus` GPUs of `node` cannot be held by three tiers of
// the radix `options` has (max_cluster_gpus); nothing otherwise. For the readers of a shape: a radix too small for
// the GPU count asked for is the radix's fault, not the count's.
void check_radix_holds(const PresetInfo& node, int gpus, const FabricOptions& options);

}  // namespace ttsim
