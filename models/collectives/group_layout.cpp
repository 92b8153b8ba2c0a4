// Group layout on the topology (group_layout.hpp).
#include "models/collectives/group_layout.hpp"

#include <algorithm>
#include <map>

#include "sim/errors.hpp"

namespace ttsim {

GroupLayout::GroupLayout(const Topology& topology, const std::vector<int>& group) : topology_(&topology) {
    const int g = topology.gpu_count();
    if (group.empty()) {
        ranks_.resize(static_cast<std::size_t>(g));
        for (int r = 0; r < g; ++r) ranks_[static_cast<std::size_t>(r)] = r;
    } else {
        ranks_ = group;
        for (const int r : ranks_)
            if (r < 0 || r >= g)
                throw InputError("collective group names GPU rank " + std::to_string(r) + ", but the topology has " +
                                 std::to_string(g) + " GPUs (ranks 0.." + std::to_string(g - 1) + ")");
        std::sort(ranks_.begin(), ranks_.end());
        const auto dup = std::adjacent_find(ranks_.begin(), ranks_.end());
        if (dup != ranks_.end())
            throw InputError("collective group lists GPU rank " + std::to_string(*dup) + " twice");
    }
    if (ranks_.empty()) throw InputError("collective group is empty (the topology has no GPUs)");
    root_ = group.empty() ? ranks_.front() : group.front();

    // Islands keyed by NVLink domain, ordered by their first (smallest) member; ranks_ is ascending, so
    // insertion order into the vector is already that order.
    std::map<int, std::size_t> index_of_key;
    for (const int r : ranks_) {
        const GpuInfo& gpu = topology.gpu(r);
        const int key = gpu.nvlink_domain_index >= 0 ? gpu.nvlink_domain_index : -1 - r;
        auto [it, inserted] = index_of_key.emplace(key, islands_.size());
        if (inserted) islands_.push_back(GroupIsland{key, {}});
        islands_[it->second].ranks.push_back(r);
    }
    min_per_island_ = max_per_island_ = static_cast<int>(islands_.front().ranks.size());
    for (const GroupIsland& island : islands_) {
        min_per_island_ = std::min(min_per_island_, static_cast<int>(island.ranks.size()));
        max_per_island_ = std::max(max_per_island_, static_cast<int>(island.ranks.size()));
    }
}

bool GroupLayout::infiniband_fabric() const {
    if (topology_->fabric().switch_count() == 0) return false;
    return std::all_of(ranks_.begin(), ranks_.end(), [&](int r) { return topology_->attached_over_infiniband(r); });
}

bool GroupLayout::single_nvlink_domain() const {
    return islands_.size() == 1 && topology_->gpu(ranks_.front()).nvlink_domain != kNoVertex;
}

}  // namespace ttsim
