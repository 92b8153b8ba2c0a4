#include "models/planning/published_results.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "models/calibration/calibration.hpp"
#include "models/mlperf/results.hpp"
#include "models/workloads/workload.hpp"
#include "sim/statistics.hpp"

namespace ttsim::planning {

std::vector<int> PublishedTime::global_batches() const {
    std::vector<int> batches;
    for (const auto& m : members) batches.push_back(m.global_batch);
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    return batches;
}

PublishedIndex PublishedIndex::load_shipped() {
    PublishedIndex index;
    const auto all = load_mlperf_results();
    for (const MlperfResult& r : distinct_scored_results(all)) {
        if (!r.ttt_minutes_official_scaled) continue;
        // Results that failed the RCP check are not comparable scores (results.hpp); skip them.
        if (!r.rcp_check.empty() && !r.rcp_passed()) continue;
        index.add(find_workload(r.benchmark).name, r.accelerator_family, r.n_accelerators,
                  {*r.ttt_minutes_official_scaled, r.global_batch_size.value_or(0), r.csv_line});
    }
    return index;
}

void PublishedIndex::add(const std::string& workload, const std::string& gpu_family, int gpus,
                         const PublishedResult& result) {
    results_[{workload, gpu_family, gpus}].push_back(result);
}

std::optional<PublishedTime> PublishedIndex::find(const std::string& workload, const std::string& gpu_family,
                                                  int gpus) const {
    const auto it = results_.find({workload, gpu_family, gpus});
    if (it == results_.end() || it->second.empty()) return std::nullopt;
    PublishedTime t;
    t.members = it->second;
    std::stable_sort(t.members.begin(), t.members.end(),
                     [](const PublishedResult& a, const PublishedResult& b) { return a.minutes < b.minutes; });
    std::vector<double> minutes;
    for (const auto& m : t.members) minutes.push_back(m.minutes);
    t.median_minutes = median(minutes);
    t.results = static_cast<int>(t.members.size());
    return t;
}

std::vector<int> PublishedIndex::gpu_counts(const std::string& workload, const std::string& gpu_family) const {
    std::vector<int> counts;
    for (const auto& [key, results] : results_)
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

PublishedPredictor calibration_predictor(const ProfileSet& profiles) {
    // Preparing a result simulates its collectives, so each family is prepared once per process, only when a
    // sweep first compares against it. Entries are never removed, so references into the map stay valid.
    struct Cache {
        std::mutex mutex;
        std::map<std::string, std::map<int, CalibrationPoint>> by_family;   // family -> csv line -> point
    };
    static Cache cache;
    return [&profiles](const std::string& family, const PublishedResult& result) -> std::optional<double> {
        const CalibrationPoint* point = nullptr;
        {
            std::lock_guard<std::mutex> lock(cache.mutex);
            auto [it, inserted] = cache.by_family.try_emplace(family);
            if (inserted) {
                CalibrationOptions options;
                options.families = {family};
                for (CalibrationPoint& p : load_calibration_points(options))
                    it->second.emplace(p.result.csv_line, std::move(p));
            }
            const auto found = it->second.find(result.csv_line);
            if (found == it->second.end()) return std::nullopt;
            point = &found->second;
        }
        return evaluate_point(*point, profiles).predicted_minutes;
    };
}

std::optional<PublishedComparison> compare_with_published(const PublishedTime& published, const std::string& gpu_family,
                                                          const PublishedPredictor& predict) {
    if (!predict) return std::nullopt;
    std::vector<double> predicted;
    for (const PublishedResult& m : published.members)
        if (const auto minutes = predict(gpu_family, m)) predicted.push_back(*minutes);
    if (predicted.empty()) return std::nullopt;
    PublishedComparison c;
    c.predicted_minutes = median(predicted);
    c.error_percent = (c.predicted_minutes - published.median_minutes) / published.median_minutes * 100.0;
    return c;
}

}  // namespace ttsim::planning
