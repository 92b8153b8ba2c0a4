// How a group of GPUs sits on the topology: which NVLink domains ("islands", NCCL's nodes) it spans and
// which members each holds. Every algorithm builds its flow pattern from this.
#pragma once

#include <vector>

#include "topologies/topology.hpp"

namespace ttsim {

struct GroupIsland {
    int key = 0;             // NVLink domain index, or -1 - rank for a GPU without NVLink (an island of one)
    std::vector<int> ranks;  // members, ascending global rank: position p in the island = p-th member
};

class GroupLayout {
public:
    // `group` empty = every GPU. InputError for an out-of-range or repeated rank.
    GroupLayout(const Topology& topology, const std::vector<int>& group);

    const Topology& topology() const { return *topology_; }
    const std::vector<int>& ranks() const { return ranks_; }  // ascending
    int root() const { return root_; }                        // first rank of the caller's list (broadcast)
    int size() const { return static_cast<int>(ranks_.size()); }
    const std::vector<GroupIsland>& islands() const { return islands_; }  // ordered by first member
    int island_count() const { return static_cast<int>(islands_.size()); }
    int min_per_island() const { return min_per_island_; }
    int max_per_island() const { return max_per_island_; }
    bool uniform() const { return min_per_island_ == max_per_island_; }
    // All members in one NVLink switch domain (NVLS applies).
    bool single_nvlink_domain() const;
    // Every member's NIC attaches to the scale-out switch fabric over InfiniBand links (the switches SHARP
    // aggregates in). False without a switch fabric, and on Ethernet or mixed fabrics (YAML topologies).
    bool infiniband_fabric() const;

private:
    const Topology* topology_;
    std::vector<int> ranks_;
    int root_ = 0;
    std::vector<GroupIsland> islands_;
    int min_per_island_ = 0, max_per_island_ = 0;
};

}  // namespace ttsim
