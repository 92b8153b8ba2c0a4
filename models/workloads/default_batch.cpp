// The default batch over GPU counts (declared and explained in workload.hpp, beside default_global_batch).
#include "models/workloads/workload.hpp"

#include <algorithm>
#include <vector>

#include "sim/errors.hpp"

namespace ttsim {

namespace {

long long clamp_to_rcps(long long target, int smallest_rcp, int largest_rcp) {
    if (largest_rcp > 0) target = std::min<long long>(target, largest_rcp);
    if (smallest_rcp > 0) target = std::max<long long>(target, smallest_rcp);
    return target;
}

// The walk below r.gpus, and the largest v4.1 batch (within the RCPs) published at a smaller count.
std::vector<CountBatch> walk_below(const DefaultBatchRequest& r, long long& published) {
    TTSIM_ASSERT(r.workload && r.gpus_per_node > 0, "default batch needs a workload and a node size");
    std::vector<CountBatch> walk;
    published = 0;
    for (int m = r.gpus_per_node; m < r.gpus; m += r.gpus_per_node) {
        ParallelismChoice choice;
        try {
            choice = default_parallelism(*r.workload, r.system_family, m);
        } catch (const InputError&) {
            continue;   // a count the default layout cannot hold has no default batch
        }
        const long long dp = choice.config.data_parallel;
        const long long own = clamp_to_rcps(choice.batch_target, r.smallest_rcp, r.largest_rcp);
        const long long target = std::max(own, published);
        const long long batch = round_to_data_parallel(target, dp, published, r.smallest_rcp, r.largest_rcp);
        walk.push_back({m, static_cast<int>(dp), static_cast<int>(target), static_cast<int>(batch)});
        // A count where v4.1 published a layout of the basis family: its batch is what a larger job never falls
        // below (an interpolated target between two scales is not: it rises with every node, so holding a larger
        // count to it would forbid rounding down at all, RetinaNet's 2,217 at 2,048 GPUs becoming 4,096).
        if (choice.basis.gpus == m) published = std::max(published, own);
    }
    return walk;
}

}  // namespace

std::vector<CountBatch> default_batches_below(const DefaultBatchRequest& r) {
    long long published = 0;
    return walk_below(r, published);
}

int default_target_below(const DefaultBatchRequest& r) {
    long long published = 0;
    walk_below(r, published);
    return static_cast<int>(published);
}

BatchChoice scaled_default_batch(const DefaultBatchRequest& r) {
    BatchBounds bounds;
    bounds.smallest_rcp = r.smallest_rcp;
    bounds.largest_rcp = r.largest_rcp;
    bounds.at_fewer_gpus = default_target_below(r);
    return default_global_batch(r.target, largest_published_micro_batch(*r.workload), r.data_parallel, bounds, r.source);
}

}  // namespace ttsim
