// Which compute model a prediction uses, and the shipped profile file of each (models/profiles/):
//   lumped    profiles.yaml           the per-(workload, GPU) curve of compute_profile.hpp
//   operator  operator_profiles.yaml  kernel-class efficiencies per GPU for the layer graphs (operator_step.hpp)
// Both are written by `ttsim calibrate` (`--model`), and `ttsim validate --compare` reports them side by side.
// The default is the model forward-chaining cross-validation picks (README "Calibration and validation").
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "models/compute/compute_profile.hpp"

namespace ttsim {

enum class ComputeModel { lumped, operator_level };

// "lumped" or "operator"; nullopt for anything else.
std::optional<ComputeModel> parse_compute_model(const std::string& text);
const char* to_string(ComputeModel model);

// The model shipped as the default: operator (`ttsim validate --compare` prints both models' figures).
inline constexpr ComputeModel kDefaultComputeModel = ComputeModel::operator_level;

std::filesystem::path profile_file(const std::filesystem::path& dir, ComputeModel model);
// ProfileSet::load_file of the model's file in `dir` (InputError keyed Field::profiles when it is missing).
ProfileSet load_profiles(const std::filesystem::path& dir, ComputeModel model);

}  // namespace ttsim
