#include "models/training/layer_graph_cache.hpp"

#include "models/training/operator_step.hpp"
#include "models/workloads/layers/layer_workload.hpp"
#include "sim/errors.hpp"

namespace ttsim {

LayerGraphCache::Described& LayerGraphCache::described(const Workload& workload) {
    TTSIM_ASSERT(workload.layer_model.has_value(), "workload " + workload.name + " has no layer graph");
    const LayerModelRef& ref = *workload.layer_model;
    auto key = std::make_pair(ref.file, ref.description_yaml);
    auto it = workloads_.find(key);
    if (it == workloads_.end()) it = workloads_.emplace(std::move(key), Described{layer_description(workload), {}}).first;
    return it->second;
}

const ConfigNode& LayerGraphCache::description(const Workload& workload) { return described(workload).description; }

const layers::LayerGraph& LayerGraphCache::graph(const Workload& workload, const ParallelismConfig& layout) {
    Described& d = described(workload);
    const layers::BuildOptions o = layout_graph_options(workload, layout);
    auto it = d.graphs.find(o);
    if (it == d.graphs.end())
        it = d.graphs.emplace(o, layers::build_layer_graph(d.description, workload.layer_model->file, o)).first;
    return it->second;
}

std::size_t LayerGraphCache::graphs() const {
    std::size_t n = 0;
    for (const auto& [key, d] : workloads_) n += d.graphs.size();
    return n;
}

}  // namespace ttsim
