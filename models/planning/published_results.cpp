#include "models/planning/published_results.hpp"

#include <algorithm>

#include "models/mlperf/results.hpp"
#include "models/workloads/workload.hpp"

namespace ttsim::planning {

PublishedIndex PublishedIndex::load_shipped() {
    PublishedIndex index;
    const auto all = load_mlperf_results();
    for (const MlperfResult& r : distinct_scored_results(all)) {
        if (!r.ttt_minutes_official_scaled) continue;
        // Results that failed the RCP check are not comparable scores (results.hpp); skip them.
        if (!r.rcp_check.empty() && !r.rcp_passed()) continue;
        index.add(find_workload(r.benchmark).name, r.accelerator_family, r.n_accelerators, *r.ttt_minutes_official_scaled);
    }
    return index;
}

void PublishedIndex::add(const std::string& workload, const std::string& gpu_family, int gpus, double minutes) {
    minutes_[{workload, gpu_family, gpus}].push_back(minutes);
}

std::optional<PublishedTime> PublishedIndex::find(const std::string& workload, const std::string& gpu_family,
                                                  int gpus) const {
    const auto it = minutes_.find({workload, gpu_family, gpus});
    if (it == minutes_.end() || it->second.empty()) return std::nullopt;
    std::vector<double> sorted = it->second;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    PublishedTime t;
    t.median_minutes = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    t.results = static_cast<int>(n);
    return t;
}

std::vector<int> PublishedIndex::gpu_counts(const std::string& workload, const std::string& gpu_family) const {
    std::vector<int> counts;
    for (const auto& [key, minutes] : minutes_)
        if (std::get<0>(key) == workload && std::get<1>(key) == gpu_family) counts.push_back(std::get<2>(key));
    return counts;   // ascending: the map orders by count within (workload, family)
}

const PublishedIndex& shipped_published_index() {
    // A function-local static is initialised once, thread-safely (C++11 magic statics), and never modified.
    static const PublishedIndex index = PublishedIndex::load_shipped();
    return index;
}

std::vector<int> shipped_published_counts(const std::string& workload, const std::string& gpu_family) {
    return shipped_published_index().gpu_counts(workload, gpu_family);
}

}  // namespace ttsim::planning
