// Published MLPerf Training v4.1 times to set predictions against: each distinct scored result once
// (models/mlperf/results.hpp), by workload, GPU family and GPU count. Where several submitters published the
// same count, the median of their scores is shown together with how many there are.
//
// Like with like: a result ran its own global batch and layout, which need not be the batch a sweep point uses
// at that count (BERT on 48 H100s: Clemson ran 6,912, the default rule gives 3,600). The error against a
// published score is therefore computed from a prediction AT THAT RESULT'S OWN batch and layout - exactly what
// `ttsim validate` evaluates (models/calibration: load_calibration_points / evaluate_point) - never from the
// sweep point's own prediction.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/compute/compute_profile.hpp"

namespace ttsim::planning {

// One published result: its score and the global batch it ran; `csv_line` identifies it in the results file.
struct PublishedResult {
    double minutes = 0;
    int global_batch = 0;
    int csv_line = 0;
};

struct PublishedTime {
    double median_minutes = 0;
    int results = 0;                     // distinct results at this count
    std::vector<PublishedResult> members;   // those results, ascending by score
    std::vector<int> global_batches() const;   // their distinct global batches, ascending
};

class PublishedIndex {
public:
    // Loads the shipped v4.1 results (InputError if the data file is broken).
    static PublishedIndex load_shipped();
    void add(const std::string& workload, const std::string& gpu_family, int gpus, const PublishedResult& result);

    std::optional<PublishedTime> find(const std::string& workload, const std::string& gpu_family, int gpus) const;
    std::vector<int> gpu_counts(const std::string& workload, const std::string& gpu_family) const;

private:
    std::map<std::tuple<std::string, std::string, int>, std::vector<PublishedResult>> results_;
};

// The shipped index, loaded once on first use (immutable afterwards, so safe to share between threads).
const PublishedIndex& shipped_published_index();

// For SweepSpec expansion (PublishedCountsFn).
std::vector<int> shipped_published_counts(const std::string& workload, const std::string& gpu_family);

// ttsim's predicted time-to-train (minutes) of one published result of `gpu_family`, at the result's own
// global batch and layout; nullopt when it cannot be predicted (then no error is reported for it).
using PublishedPredictor = std::function<std::optional<double>(const std::string& gpu_family, const PublishedResult&)>;

// The predictor `ttsim validate` uses: the shipped results prepared by load_calibration_points (each family's
// results prepared once, on first use, thread-safely) and evaluated with `profiles` by evaluate_point.
// `profiles` must outlive the predictor.
PublishedPredictor calibration_predictor(const ProfileSet& profiles);

// The comparison shown next to a sweep point: the median of the predictions at the published results' own
// batches and layouts against the median published score. nullopt when no member could be predicted.
struct PublishedComparison {
    double predicted_minutes = 0;        // median over the members' predictions
    double error_percent = 0;            // (predicted - published median) / published median x 100
};
std::optional<PublishedComparison> compare_with_published(const PublishedTime& published, const std::string& gpu_family,
                                                          const PublishedPredictor& predict);

}  // namespace ttsim::planning
