// SHARP tree latency above the leaf (sharp_latency.hpp).
#include "models/collectives/sharp_latency.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace ttsim {

double sharp_tree_climb_us(const Topology& topology) {
    constexpr std::array<VertexKind, 3> kTiers{VertexKind::LeafSwitch, VertexKind::SpineSwitch, VertexKind::CoreSwitch};
    // up[t] / down[t]: the fastest link from tier t - 1 into tier t, and from tier t into tier t - 1.
    std::array<std::optional<SimTime>, kTiers.size()> up, down;
    auto keep_min = [](std::optional<SimTime>& slot, SimTime latency) {
        slot = slot ? std::min(*slot, latency) : latency;
    };
    // Tier-to-tier links join two network switches, so the fabric's switch-to-switch hops hold them all: a
    // few thousand links instead of every NIC and NVLink port of the cluster.
    for (const LinkId id : topology.fabric().hop_link) {
        const LinkSpec& link = topology.link(id);
        const VertexKind from = topology.vertex(link.from).kind;
        const VertexKind to = topology.vertex(link.to).kind;
        for (std::size_t t = 1; t < kTiers.size(); ++t) {
            if (from == kTiers[t - 1] && to == kTiers[t]) keep_min(up[t], link.latency);
            if (from == kTiers[t] && to == kTiers[t - 1]) keep_min(down[t], link.latency);
        }
    }
    double us = 0.0;
    for (std::size_t t = 1; t < kTiers.size(); ++t)
        if (up[t] && down[t]) us += (*up[t] + *down[t]).microseconds_f();
    return us;
}

}  // namespace ttsim
