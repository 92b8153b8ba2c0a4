// The submitters' own layouts and evaluation schedules of v4.1 results (submission_layouts.hpp), read strictly.
#include "models/mlperf/submission_layouts.hpp"

#include "models/data_dir.hpp"
#include "sim/config.hpp"

namespace ttsim {

std::map<std::string, SubmissionFacts> load_submission_facts(const std::optional<std::filesystem::path>& file) {
    const std::filesystem::path path = file ? *file : data_file("mlperf/v4.1_submission_layouts.yaml");
    const ConfigNode root = ConfigNode::load_file(path.string());
    root.check_keys({"format", "results"});
    const ConfigNode format = root.required("format");
    if (format.as_string() != "ttsim-submission-layouts-1") format.fail("expected 'ttsim-submission-layouts-1'");
    constexpr std::int64_t kMaxSamples = std::int64_t{1} << 40;
    std::map<std::string, SubmissionFacts> all;
    for (const ConfigNode& entry : root.required("results").items()) {
        entry.check_keys({"submitter", "system", "benchmark", "layout", "evaluation"});
        const std::string key = entry.required("submitter").as_string() + "/" + entry.required("system").as_string() +
                                "/" + entry.required("benchmark").as_string();
        SubmissionFacts facts;
        if (const auto layout = entry.optional("layout")) facts.layout = read_published_layout(*layout);
        if (const auto eval = entry.optional("evaluation")) {
            eval->check_keys({"first", "every", "source"});
            facts.eval_first_samples = static_cast<std::uint64_t>(eval->required("first").as_int(1, kMaxSamples));
            facts.eval_interval_samples = static_cast<std::uint64_t>(eval->required("every").as_int(1, kMaxSamples));
            const ConfigNode source = eval->required("source");
            if (source.as_string().find_first_not_of(" \t") == std::string::npos) source.fail("source must not be blank");
        }
        if (!facts.layout && !facts.eval_first_samples) entry.fail("neither a layout nor an evaluation for " + key);
        if (!all.emplace(key, std::move(facts)).second) entry.fail("a second entry for " + key);
    }
    return all;
}

EvalSchedule with_submission_evaluation(EvalSchedule schedule, const SubmissionFacts& facts) {
    if (facts.eval_first_samples) schedule.first_eval_samples = *facts.eval_first_samples;
    if (facts.eval_interval_samples) schedule.interval_samples = *facts.eval_interval_samples;
    return schedule;
}

}  // namespace ttsim
