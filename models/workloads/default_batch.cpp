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

}  // namespace

std::vector<CountBatch> default_batches_below(const DefaultBatchRequest& r) {
    TTSIM_ASSERT(r.workload && r.gpus_per_node > 0, "default batch needs a workload and a node size");
    std::vector<CountBatch> walk;
    long long envelope = 0;
    for (int m = r.gpus_per_node; m < r.gpus; m += r.gpus_per_node) {
        ParallelismChoice choice;
        try {
            choice = default_parallelism(*r.workload, r.system_family, m);
        } catch (const InputError&) {
            continue;   // a count the default layout cannot hold has no default batch
        }
        const long long dp = choice.config.data_parallel;
        const long long below = envelope;   // the largest target at fewer GPUs
        envelope = std::max(clamp_to_rcps(choice.batch_target, r.smallest_rcp, r.largest_rcp), envelope);
        const long long batch = round_to_data_parallel(envelope, dp, std::max<long long>(below, r.smallest_rcp));
        walk.push_back({m, static_cast<int>(dp), static_cast<int>(envelope), static_cast<int>(batch)});
    }
    return walk;
}

int default_target_below(const DefaultBatchRequest& r) {
    const std::vector<CountBatch> walk = default_batches_below(r);
    return walk.empty() ? 0 : walk.back().target;
}

BatchChoice scaled_default_batch(const DefaultBatchRequest& r) {
    BatchBounds bounds;
    bounds.smallest_rcp = r.smallest_rcp;
    bounds.largest_rcp = r.largest_rcp;
    bounds.at_fewer_gpus = default_target_below(r);
    return default_global_batch(r.target, largest_published_micro_batch(*r.workload), r.data_parallel, bounds, r.source);
}

}  // namespace ttsim
