#include "topologies/routing.hpp"

#include <algorithm>
#include <span>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/pending/queue.hpp>
#include <boost/property_map/property_map.hpp>

#include "sim/errors.hpp"

namespace ttsim {
namespace {

// SplitMix64 finaliser: a fixed, platform-independent mix, so ECMP choices never depend on std::hash.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

std::uint64_t ecmp_hash(int src, int dst, std::uint64_t flow_key, std::uint32_t hop) {
    std::uint64_t h = mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32 |
                          static_cast<std::uint32_t>(dst));
    h = mix(h ^ flow_key);
    return mix(h ^ hop);
}

}  // namespace

Router::Router(const Topology& topology)
    : topology_(topology), fabric_(topology.fabric()), slot_by_switch_(topology.fabric().switch_count()) {}

std::vector<LinkId> Router::route(int src_rank, int dst_rank, std::uint64_t flow_key) {
    std::vector<LinkId> path;
    route_into(src_rank, dst_rank, flow_key, path);
    return path;
}

Router::Distances Router::distances_to_nic_of(int dst_rank) {
    const auto r = static_cast<std::size_t>(dst_rank);
    const std::uint32_t first = fabric_.attachment_begin[r];
    const std::uint32_t last = fabric_.attachment_begin[r + 1];
    TTSIM_ASSERT(first < last, "destination NIC has no switch (connectivity was validated at build)");

    Slot* slot = nullptr;
    if (last - first == 1) {
        slot = &slot_by_switch_[fabric_.attachments[first].switch_index];
    } else {
        slot = &slot_by_multihomed_rank_.try_emplace(dst_rank).first->second;
    }
    if (slot->map < 0) {
        std::vector<std::size_t> sources;
        for (std::uint32_t a = first; a < last; ++a) sources.push_back(fabric_.attachments[a].switch_index);
        std::sort(sources.begin(), sources.end());
        sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
        if (twin_leader_.empty()) find_twins();
        const auto target = static_cast<std::uint32_t>(sources.front());
        const std::uint32_t twin = sources.size() == 1 ? twin_leader_[target] : target;
        if (twin != target) {
            // The twin's own map (a BFS from it, computed once for the whole class), read with two overrides.
            Slot& twin_slot = slot_by_switch_[twin];
            if (twin_slot.map < 0) {
                twin_slot.map = static_cast<std::int32_t>(distance_maps_.size());
                distance_maps_.push_back(bfs_distances({twin}));
            }
            *slot = Slot{twin_slot.map, target, twin};
        } else {
            slot->map = static_cast<std::int32_t>(distance_maps_.size());
            distance_maps_.push_back(bfs_distances(sources));
        }
    }
    return Distances{distance_maps_[static_cast<std::size_t>(slot->map)].data(), slot->target, slot->twin};
}

std::vector<std::uint16_t> Router::bfs_distances(const std::vector<std::size_t>& sources) {
    // One multi-source BFS from the destination's switches. Links are full duplex (both directions always
    // exist), so hop distances from the targets equal hop distances to them.
    const std::size_t switches = fabric_.switch_count();
    std::vector<std::uint16_t> distances(switches, kUnreachable);
    for (std::size_t s : sources) distances[s] = 0;
    bfs_colors_.resize(switches);
    const auto index = boost::get(boost::vertex_index, *fabric_.graph);
    auto distance_map = boost::make_iterator_property_map(distances.begin(), index);
    auto color_map = boost::make_iterator_property_map(bfs_colors_.begin(), index);
    boost::queue<std::size_t> queue;
    boost::breadth_first_search(
        *fabric_.graph, sources.begin(), sources.end(), queue,
        boost::make_bfs_visitor(boost::record_distances(distance_map, boost::on_tree_edge())), color_map);
    return distances;
}

void Router::find_twins() {
    const std::size_t switches = fabric_.switch_count();
    // Each switch's neighbour set, sorted and without the repeats of parallel cables.
    std::vector<std::uint32_t> begin(switches + 1, 0), neighbors;
    std::vector<std::uint64_t> digest(switches);
    for (std::size_t s = 0; s < switches; ++s) {
        const auto from = neighbors.size();
        neighbors.insert(neighbors.end(), fabric_.hop_neighbor.begin() + fabric_.hop_begin[s],
                         fabric_.hop_neighbor.begin() + fabric_.hop_begin[s + 1]);
        std::sort(neighbors.begin() + static_cast<std::ptrdiff_t>(from), neighbors.end());
        neighbors.erase(std::unique(neighbors.begin() + static_cast<std::ptrdiff_t>(from), neighbors.end()),
                        neighbors.end());
        begin[s + 1] = static_cast<std::uint32_t>(neighbors.size());
        std::uint64_t h = neighbors.size() - from;
        for (auto i = from; i < neighbors.size(); ++i) h = mix(h ^ neighbors[i]);
        digest[s] = h;
    }
    auto set_of = [&](std::size_t s) {
        return std::span<const std::uint32_t>(neighbors.data() + begin[s], begin[s + 1] - begin[s]);
    };
    // Switches in (digest, index) order: twins are adjacent in it, each run led by its lowest index.
    std::vector<std::uint32_t> order(switches);
    for (std::size_t s = 0; s < switches; ++s) order[s] = static_cast<std::uint32_t>(s);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return digest[a] != digest[b] ? digest[a] < digest[b] : a < b;
    });
    twin_leader_.resize(switches);
    std::vector<std::uint32_t> leaders;  // of the current run of equal digests
    for (std::size_t i = 0; i < switches; ++i) {
        const std::uint32_t s = order[i];
        if (i == 0 || digest[order[i - 1]] != digest[s]) leaders.clear();
        std::uint32_t leader = s;
        if (begin[s + 1] > begin[s])
            for (const std::uint32_t candidate : leaders)
                if (std::ranges::equal(set_of(s), set_of(candidate))) {
                    leader = candidate;
                    break;
                }
        if (leader == s) leaders.push_back(s);
        twin_leader_[s] = leader;
    }
}

void Router::route_into(int src_rank, int dst_rank, std::uint64_t flow_key, std::vector<LinkId>& path) {
    path.clear();
    TTSIM_ASSERT(src_rank >= 0 && src_rank < topology_.gpu_count() && dst_rank >= 0 &&
                     dst_rank < topology_.gpu_count(),
                 "route between invalid ranks " + std::to_string(src_rank) + " -> " + std::to_string(dst_rank));
    if (src_rank == dst_rank) return;
    const GpuInfo& src = topology_.gpu(src_rank);
    const GpuInfo& dst = topology_.gpu(dst_rank);

    if (src.nvlink_domain != kNoVertex && src.nvlink_domain == dst.nvlink_domain) {
        path.push_back(src.nvlink_up);
        path.push_back(dst.nvlink_down);
        return;
    }

    const Distances distance = distances_to_nic_of(dst_rank);
    const auto& attachments = fabric_.attachments;
    std::uint32_t hop = 0;
    // Collects the indices in [begin, end) satisfying `ok`, in adjacency order, and picks one by hash.
    auto pick = [&](std::uint32_t begin, std::uint32_t end, auto ok) {
        const std::uint32_t this_hop = hop++;
        candidates_.clear();
        for (std::uint32_t i = begin; i < end; ++i)
            if (ok(i)) candidates_.push_back(i);
        TTSIM_ASSERT(!candidates_.empty(), "no next hop towards the destination (connectivity was validated)");
        if (candidates_.size() == 1) return candidates_.front();
        const std::uint64_t h = ecmp_hash(src_rank, dst_rank, flow_key, this_hop);
        return candidates_[static_cast<std::size_t>(h % candidates_.size())];
    };

    path.push_back(src.pcie_up);
    // First switch: the closest of the source NIC's attachments.
    const auto src_begin = fabric_.attachment_begin[static_cast<std::size_t>(src_rank)];
    const auto src_end = fabric_.attachment_begin[static_cast<std::size_t>(src_rank) + 1];
    std::uint16_t best = kUnreachable;
    for (auto a = src_begin; a < src_end; ++a) best = std::min(best, distance[attachments[a].switch_index]);
    TTSIM_ASSERT(best != kUnreachable, "source NIC cannot reach the destination (validated at build)");
    const auto first = pick(src_begin, src_end, [&](std::uint32_t a) {
        return distance[attachments[a].switch_index] == best;
    });
    path.push_back(attachments[first].up);
    std::uint32_t at = attachments[first].switch_index;

    // Down the distance gradient, one switch per step.
    for (std::uint16_t d = best; d > 0; --d) {
        const std::uint32_t* neighbor = fabric_.hop_neighbor.data();
        const auto next = pick(fabric_.hop_begin[at], fabric_.hop_begin[at + 1],
                               [&](std::uint32_t h) { return distance[neighbor[h]] == d - 1; });
        path.push_back(fabric_.hop_link[next]);
        at = neighbor[next];
    }

    // Last switch -> destination NIC (any of the parallel links from this switch) -> destination GPU.
    const auto dst_begin = fabric_.attachment_begin[static_cast<std::size_t>(dst_rank)];
    const auto dst_end = fabric_.attachment_begin[static_cast<std::size_t>(dst_rank) + 1];
    const auto last = pick(dst_begin, dst_end, [&](std::uint32_t a) { return attachments[a].switch_index == at; });
    path.push_back(attachments[last].down);
    path.push_back(dst.pcie_down);
}

}  // namespace ttsim
