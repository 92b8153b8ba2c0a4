#include "models/compute/profile_files.hpp"

#include "sim/errors.hpp"
#include "sim/file_reading.hpp"

namespace ttsim {

std::optional<ComputeModel> parse_compute_model(const std::string& text) {
    if (text == "lumped") return ComputeModel::lumped;
    if (text == "operator") return ComputeModel::operator_level;
    return std::nullopt;
}

const char* to_string(ComputeModel model) { return model == ComputeModel::lumped ? "lumped" : "operator"; }

std::filesystem::path profile_file(const std::filesystem::path& dir, ComputeModel model) {
    return dir / (model == ComputeModel::lumped ? "profiles.yaml" : "operator_profiles.yaml");
}

ProfileSet load_profiles(const std::filesystem::path& dir, ComputeModel model) {
    const auto file = profile_file(dir, model);
    if (!regular_file_exists(file)) {
        // The folder may hold the other model's file: say so, since choosing that model is the quick fix.
        const ComputeModel other = model == ComputeModel::lumped ? ComputeModel::operator_level : ComputeModel::lumped;
        const std::string other_note =
            regular_file_exists(profile_file(dir, other))
                ? std::string("; the folder has ") + profile_file(dir, other).filename().string() + ": use --model " +
                      to_string(other) + " (model: " + to_string(other) + " in a scenario) to price with it"
                : "";
        throw InputError("profile file " + file.string() + " not found (write one with 'ttsim calibrate --model " +
                             to_string(model) + " --out " + dir.string() + "')" + other_note,
                         Field::profiles);
    }
    ProfileSet set = ProfileSet::load_file(file);
    for (const auto& [key, profile] : set.all())
        if (profile.operator_efficiency.has_value() != (model == ComputeModel::operator_level))
            throw InputError(file.string() + ": the profile of " + key.first + " on " + key.second + " is " +
                                 (profile.operator_efficiency ? "an operator" : "a lumped") + " profile, not " +
                                 (model == ComputeModel::lumped ? "lumped" : "operator"),
                             Field::profiles);
    return set;
}

}  // namespace ttsim
