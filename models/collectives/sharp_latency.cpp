// SHARP tree latency above the leaf (sharp_latency.hpp).
#include "models/collectives/sharp_latency.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace ttsim {

double sharp_tree_climb_us(const Topology& topology) {
    // Tier of a switch kind, 1 (leaf) to 4 (core); 0 for anything else. A core is the top whatever the tier count
    // (a three-tier fabric has no super-spines), so tiers are compared, not required to be adjacent.
    auto tier_of = [](VertexKind kind) {
        switch (kind) {
            case VertexKind::LeafSwitch: return 1;
            case VertexKind::SpineSwitch: return 2;
            case VertexKind::SuperSpineSwitch: return 3;
            case VertexKind::CoreSwitch: return 4;
            default: return 0;
        }
    };
    // up[t] / down[t]: the fastest link from a lower tier into tier t, and from tier t into a lower one.
    std::array<std::optional<SimTime>, 5> up, down;
    auto keep_min = [](std::optional<SimTime>& slot, SimTime latency) {
        slot = slot ? std::min(*slot, latency) : latency;
    };
    // Tier-to-tier links join two network switches, so the fabric's switch-to-switch hops hold them all: a
    // few thousand links instead of every NIC and NVLink port of the cluster.
    for (const LinkId id : topology.fabric().hop_link) {
        const LinkSpec& link = topology.link(id);
        const int from = tier_of(topology.vertex(link.from).kind);
        const int to = tier_of(topology.vertex(link.to).kind);
        if (from == 0 || to == 0) continue;
        if (to > from) keep_min(up[static_cast<std::size_t>(to)], link.latency);
        if (to < from) keep_min(down[static_cast<std::size_t>(from)], link.latency);
    }
    double us = 0.0;
    for (std::size_t t = 2; t < up.size(); ++t)
        if (up[t] && down[t]) us += (*up[t] + *down[t]).microseconds_f();
    return us;
}

}  // namespace ttsim
