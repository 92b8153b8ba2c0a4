// The submitters' own layouts of v4.1 results (submission_layouts.hpp), read strictly.
#include "models/mlperf/submission_layouts.hpp"

#include "models/data_dir.hpp"
#include "sim/config.hpp"

namespace ttsim {

std::map<std::string, PublishedParallelism> load_submission_layouts(const std::optional<std::filesystem::path>& file) {
    const std::filesystem::path path = file ? *file : data_file("mlperf/v4.1_submission_layouts.yaml");
    const ConfigNode root = ConfigNode::load_file(path.string());
    root.check_keys({"format", "results"});
    const ConfigNode format = root.required("format");
    if (format.as_string() != "ttsim-submission-layouts-1") format.fail("expected 'ttsim-submission-layouts-1'");
    std::map<std::string, PublishedParallelism> layouts;
    for (const ConfigNode& entry : root.required("results").items()) {
        entry.check_keys({"submitter", "system", "benchmark", "layout"});
        const std::string key = entry.required("submitter").as_string() + "/" + entry.required("system").as_string() +
                                "/" + entry.required("benchmark").as_string();
        if (!layouts.emplace(key, read_published_layout(entry.required("layout"))).second)
            entry.fail("a second layout for " + key);
    }
    return layouts;
}

}  // namespace ttsim
