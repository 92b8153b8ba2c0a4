// `--model lumped|operator` (models/compute/profile_files.hpp), one declaration and reading for every command
// that loads or writes compute profiles.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/compute/profile_files.hpp"
#include "tools/cli/args.hpp"

namespace ttsim::cli {

void declare_model_flag(ArgParser& parser);
ComputeModel model_flag(const ArgParser& parser);
// The profiles of the chosen model, from --profiles DIR when the command has it and it is given, else shipped.
ProfileSet load_model_profiles(const ArgParser& parser, bool has_profiles_flag = true);

// --shared's help text (the fit switches, calibration.hpp SharedFit) and its default: the switches each compute
// model uses without the flag.
std::string shared_flag_help();
std::string default_shared_description();

// The fit --shared and --model ask for together: --model operator without --shared takes the operator model's
// default switches (SharedFit::operator_defaults). `parsed` is --shared's value (or the default).
SharedFit fit_for_model(const ArgParser& parser, SharedFit parsed);

// --round R: the MLPerf round whose software a prediction assumes (its fitted offsets per workload and GPU,
// software_stack.hpp); the default round without the flag. apply_round_flag returns `profiles` with them applied
// and appends what it did to `notes`; an unknown round or a set without its offsets fails naming --round.
void declare_round_flag(ArgParser& parser);
ProfileSet apply_round_flag(const ArgParser& parser, ProfileSet profiles, std::vector<std::string>& notes);

// --rounds LIST: MLPerf rounds (models/data/mlperf/rounds.yaml), comma-separated ("4.0,v5.0"); without the flag
// every round or the default round. An unknown round fails naming --rounds.
std::vector<std::string> rounds_flag(const ArgParser& parser, bool every_round_by_default);

}  // namespace ttsim::cli
