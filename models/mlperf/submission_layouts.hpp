// How v4.1 results ran where their submitters' own configurations differ from what ttsim otherwise assumes for a
// result (NVIDIA's published layout at the nearest scale, the rules' evaluation schedule):
// models/data/mlperf/v4.1_submission_layouts.yaml.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "models/workloads/workload.hpp"

namespace ttsim {

struct SubmissionFacts {
    std::optional<PublishedParallelism> layout;        // absent: NVIDIA's layout at the nearest scale
    // The evaluation schedule the submitter ran, where it is not the rules' default for its global batch (the rules
    // let a submitter skip fewer of the first evaluations, or evaluate more often): samples before the first
    // evaluation and between evaluations. Absent: the workload's eval_schedule().
    // (The file requires a source for each; it is read, not kept.)
    std::optional<std::uint64_t> eval_first_samples, eval_interval_samples;
};

// Keyed by MlperfResult::key() (submitter/system/benchmark). Strict: unknown keys, a layout that does not
// multiply out, an entry with nothing in it or a repeated result are InputErrors naming the file and line.
// Default: the shipped file.
std::map<std::string, SubmissionFacts> load_submission_facts(const std::optional<std::filesystem::path>& file = std::nullopt);

// `schedule` with the submission's own evaluation points where it states them.
EvalSchedule with_submission_evaluation(EvalSchedule schedule, const SubmissionFacts& facts);

}  // namespace ttsim
