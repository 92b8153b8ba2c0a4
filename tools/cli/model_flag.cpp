#include "tools/cli/model_flag.hpp"

#include "models/calibration/like_system.hpp"
#include "models/mlperf/rounds.hpp"
#include "sim/errors.hpp"

namespace ttsim::cli {

void declare_model_flag(ArgParser& parser) {
    parser.option("model", "M",
                  "compute model: lumped (a calibrated curve per workload and GPU) or operator (the workload's layer "
                  "graph, every kernel priced by its roofline with efficiencies calibrated per GPU)",
                  to_string(kDefaultComputeModel));
}

ComputeModel model_flag(const ArgParser& parser) {
    if (!parser.has("model")) return kDefaultComputeModel;
    const auto model = parse_compute_model(parser.get("model"));
    if (!model) parser.fail("model", "expected 'lumped' or 'operator', got '" + parser.get("model") + "'");
    return *model;
}

ProfileSet load_model_profiles(const ArgParser& parser, bool has_profiles_flag) {
    const ComputeModel model = model_flag(parser);
    // ProfileSet names Field::profiles; the user typed --profiles.
    return parser.naming_flags([&] {
        return load_profiles(has_profiles_flag && parser.has("profiles") ? std::filesystem::path(parser.get("profiles"))
                                                                         : ProfileSet::default_dir(),
                             model);
    });
}

std::string shared_flag_help() {
    return "fit switches (the loss's measurements and weighting, the predictions' convergence lag; the model itself is "
           "--model), comma-separated from: " +
           SharedFit::option_names() + "; or none";
}

std::string default_shared_description() {
    return "operator model: " + SharedFit::operator_defaults().describe() + "; lumped: " + SharedFit{}.describe();
}

SharedFit fit_for_model(const ArgParser& parser, SharedFit parsed) {
    const ComputeModel model = model_flag(parser);
    if (!parser.has("shared") && model == ComputeModel::operator_level) parsed = SharedFit::operator_defaults();
    parsed.operator_model = model == ComputeModel::operator_level;
    return parsed;
}

void declare_round_flag(ArgParser& parser) {
    parser.option("round", "R",
                  "the MLPerf round whose software the prediction assumes (" + mlperf_rounds().names() +
                      "): its fitted speed offset per workload and GPU, from profiles fitted on several rounds "
                      "('ttsim calibrate --rounds')",
                  mlperf_rounds().default_round);
}

ProfileSet apply_round_flag(const ArgParser& parser, ProfileSet profiles, std::vector<std::string>& notes) {
    if (!parser.has("round")) return profiles;
    return parser.get_parsed("round", [&](const std::string& name) {
        return with_round(profiles, mlperf_rounds().find(name).name, mlperf_rounds().default_round, notes);
    });
}

std::vector<std::string> rounds_flag(const ArgParser& parser, bool every_round_by_default) {
    std::vector<std::string> rounds;
    if (!parser.has("rounds")) {
        if (!every_round_by_default) return {mlperf_rounds().default_round};
        for (const MlperfRound& r : mlperf_rounds().rounds) rounds.push_back(r.name);
        return rounds;
    }
    const std::string list = parser.get("rounds");
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = list.find(',', start);
        const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        try {
            rounds.push_back(mlperf_rounds().find(name).name);
        } catch (const InputError& e) {
            parser.fail("rounds", e.message());
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return rounds;
}

}  // namespace ttsim::cli
