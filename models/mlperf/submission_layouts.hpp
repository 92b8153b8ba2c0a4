// How v4.1 results ran where their submitters' own configurations differ from what ttsim otherwise assumes for a
// result (NVIDIA's published layout at the nearest scale): models/data/mlperf/v4.1_submission_layouts.yaml.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "models/workloads/workload.hpp"

namespace ttsim {

// Keyed by MlperfResult::key() (submitter/system/benchmark). Strict: unknown keys, a layout that does not
// multiply out or a repeated result are InputErrors naming the file and line. Default: the shipped file.
std::map<std::string, PublishedParallelism> load_submission_layouts(
    const std::optional<std::filesystem::path>& file = std::nullopt);

}  // namespace ttsim
