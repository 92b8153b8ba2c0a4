// Published MLPerf Training v4.1 times to set predictions against: each distinct scored result once
// (models/mlperf/results.hpp), by workload, GPU family and GPU count. Where several submitters published the
// same count, the median of their scores is shown together with how many there are.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace ttsim::planning {

struct PublishedTime {
    double median_minutes = 0;
    int results = 0;                     // distinct results at this count
};

class PublishedIndex {
public:
    // Loads the shipped v4.1 results (InputError if the data file is broken).
    static PublishedIndex load_shipped();
    void add(const std::string& workload, const std::string& gpu_family, int gpus, double minutes);

    std::optional<PublishedTime> find(const std::string& workload, const std::string& gpu_family, int gpus) const;
    std::vector<int> gpu_counts(const std::string& workload, const std::string& gpu_family) const;

private:
    std::map<std::tuple<std::string, std::string, int>, std::vector<double>> minutes_;
};

// The shipped index, loaded once on first use (immutable afterwards, so safe to share between threads).
const PublishedIndex& shipped_published_index();

// For SweepSpec expansion (PublishedCountsFn).
std::vector<int> shipped_published_counts(const std::string& workload, const std::string& gpu_family);

}  // namespace ttsim::planning
