// `--workload W` of predict and plan: a catalog workload's name, or a user model's YAML file
// (models/workloads/custom_workload.hpp): "how long does my 70B take", "fewest H100s to train it in 14 days".
#pragma once

#include <optional>
#include <string>

#include "models/workloads/custom_workload.hpp"
#include "tools/cli/args.hpp"

namespace ttsim::cli {

// The flag's help text, one for both commands.
std::string workload_flag_help();

// The user model --workload names, or nullopt for a catalog workload's name. An unknown name, or a file that cannot be
// read is refused naming --workload; a mistake inside it names its file, line and key.
std::optional<UserModel> user_model_flag(const ArgParser& parser);
// A user model is priced by the operator model alone (its layer graph): `--model lumped` with one is refused
// naming --model. Nothing to check for a catalog workload (nullopt).
void require_operator_model(const ArgParser& parser, const std::optional<UserModel>& model);

}  // namespace ttsim::cli
