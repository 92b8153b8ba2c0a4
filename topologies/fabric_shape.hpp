// The shape of a scale-out fabric a request asks for on top of a system's own (planes per NIC, switch radix, switch
// tiers, the spine and super-spine tiers' oversubscription, rail-optimised leaves): declared once, with its limits,
// for every front end. `ttsim predict`, `plan` and `collective` read it from --planes, --switch-ports, --tiers,
// --spine-oversubscription, --superspine-oversubscription and --rail-optimized; scenarios from the keys `planes`,
// `switch_ports`, `tiers`, `spine_oversubscription`, `superspine_oversubscription` and `rail_optimized` of a
// `cluster:` (collective) or `network:` option (sweep, scaling study, plan, user model).
//
// Oversubscription is one ratio per tier boundary, each named by the switches whose uplinks it thins:
// `oversubscription` the leaves' (FabricOptions, beside the NIC: it predates the shape and shapes the analytic
// model too), `spine_oversubscription` the spines', `superspine_oversubscription` a four-tier fabric's
// super-spines'. The top tier has no uplinks, so Meta's 1:7 between pods (arXiv 2407.21783 section 3.3.1) is
// `spine_oversubscription: 7` on three tiers and `superspine_oversubscription: 7` on four.
#pragma once

#include <optional>
#include <string>

#include "sim/config.hpp"
#include "sim/fields.hpp"
#include "topologies/presets.hpp"
#include "topologies/superpod_fabric.hpp"

namespace ttsim {

// Accepted values (what check_cluster enforces on a built fabric, and what the readers accept). Planes: 1 to 8 (a
// ConnectX-8 splits into at most 2 x 400G, a what-if may go further). Radix: an even count of ports from 8 (the
// smallest useful leaf) to 512 (a chassis switch's order), half down, half up at a leaf. Tiers: 2 to 4
// (kMinFabricTiers..kMaxFabricTiers). Spine and super-spine oversubscription: 1 (non-blocking) to 64.
inline constexpr int kMaxPlanes = 8;
inline constexpr int kMinSwitchPorts = 8;
inline constexpr int kMaxSwitchPorts = 512;
inline constexpr double kMaxSpineOversubscription = 64.0;

struct FabricShape {
    std::optional<int> planes = std::nullopt;
    std::optional<int> switch_ports = std::nullopt;
    std::optional<int> tiers = std::nullopt;
    std::optional<double> spine_oversubscription = std::nullopt;
    std::optional<double> superspine_oversubscription = std::nullopt;
    std::optional<bool> rail_optimized = std::nullopt;

    bool any() const {
        return planes || switch_ports || tiers || spine_oversubscription || superspine_oversubscription || rail_optimized;
    }
    // The radix or the tiers are set: what decides how many GPUs the fabric holds (check_radix_holds).
    bool sets_capacity() const { return switch_ports || tiers; }
    // The first field set (planes, switch_ports, tiers, spine_oversubscription, superspine_oversubscription,
    // rail_optimized): what a refusal of the whole shape blames.
    Field first_field() const;
    // `options` with every field set here replacing its own.
    FabricOptions applied_to(FabricOptions options) const;
    // For a network option's name: "2planes-144ports-4tiers-spine7-superspine7-norails" (the fields set, in that
    // order); "" when none is.
    std::string label() const;
    // For headers: "2 planes, 144-port switches, 4 tiers, spines 7:1 oversubscribed, super-spines 7:1
    // oversubscribed, leaves not rail-optimised" (the fields set); "" when none is.
    std::string describe() const;
    friend bool operator==(const FabricShape&, const FabricShape&) = default;
};

// The shape keys a mapping may carry besides its own (for its check_keys list).
inline constexpr const char* kFabricShapeKeys[] = {"planes", "switch_ports", "tiers", "spine_oversubscription",
                                                   "superspine_oversubscription", "rail_optimized"};

// Reads the keys of kFabricShapeKeys from `node` where present (the caller checks the mapping's keys); out-of-range
// values fail at their key. An odd radix fails at `switch_ports`.
FabricShape read_fabric_shape(const ConfigNode& node);

// InputError when `gpus` GPUs of `node` cannot be held by the tiers (three when not set) of the radix `options`
// has (max_cluster_gpus), naming the tiers when `options` sets them, else the radix (switch_ports); nothing
// otherwise. For the readers of a shape (FabricShape::sets_capacity): a radix or a tier count too small for the
// GPU count asked for is at fault, not the count.
void check_radix_holds(const PresetInfo& node, int gpus, const FabricOptions& options);

}  // namespace ttsim
