#include "tools/cli/scenario_profiles.hpp"

#include <filesystem>

#include "models/mlperf/rounds.hpp"


namespace ttsim::cli {

ScenarioProfiles read_scenario_profiles(const ConfigNode& root, ComputeModel model, const std::vector<std::string>& gpus) {
    ScenarioProfiles out;
    if (const auto node = root.optional("profiles")) {
        std::filesystem::path dir = node->as_string();
        if (dir.is_relative()) dir = std::filesystem::path(node->location().file).parent_path() / dir;
        out.profiles = node->feeding([&] { return load_profiles(dir, model); });
        out.source = profile_file(dir, model).string();
    } else {
        out.profiles = load_profiles(ProfileSet::default_dir(), model);
        out.source = "shipped " + std::string(to_string(model)) + " profiles";
    }
    out.before_like = out.profiles;
    // `round: 5.0`: that round's software (predict --round).
    if (const auto node = root.optional("round"))
        out.profiles = node->feeding([&] {
            return with_round(out.profiles, mlperf_rounds().find(node->as_string()).name, mlperf_rounds().default_round,
                              out.notes[""]);
        });
    if (const auto node = root.optional("like"))
        out.profiles = node->feeding([&] { return with_like(out.profiles, node->as_string(), gpus, out.notes); });
    return out;
}

}  // namespace ttsim::cli
