// Layer descriptions and layout graphs kept for callers that build the same graphs many times: the layout searches
// of a sweep's points, where every system and GPU variant at one GPU count enumerates the same splits (the graph does
// not depend on the GPU), and a search's own enumeration. A graph is a function of its description and build
// options alone (build_layout_graph), so a cached graph is the one a build would return, bit for bit, and results do
// not depend on which points share a cache.
//
// Not thread-safe: one cache per worker thread (the sweep runner's, emptied when the worker moves to another
// workload or GPU count), no shared mutable state. Memory: a 70B decoder's graph is about 0.8 MB (3,400 kernels),
// so a cache holds one group's graphs at a time.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "models/workloads/layers/layer_graph.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config.hpp"

namespace ttsim {

struct ParallelismConfig;

class LayerGraphCache {
public:
    // layer_description(workload), parsed once.
    const ConfigNode& description(const Workload& workload);
    // build_layout_graph(workload, description(workload), layout), built once per description and build options.
    // A build that throws (a split the family refuses) is not kept.
    const layers::LayerGraph& graph(const Workload& workload, const ParallelismConfig& layout);
    std::size_t graphs() const;   // built and kept

private:
    struct Described {
        ConfigNode description;
        std::map<layers::BuildOptions, layers::LayerGraph> graphs;   // ordered by every field (its operator<=>)
    };
    Described& described(const Workload& workload);
    // By the workload's layer description: its file and, for a user's model, its YAML text.
    std::map<std::pair<std::string, std::string>, Described> workloads_;
};

}  // namespace ttsim
