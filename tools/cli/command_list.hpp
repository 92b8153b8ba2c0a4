// Internal: the entry points of each subcommand (one file each under tools/cli/).
#pragma once
#include "tools/cli/commands.hpp"

namespace ttsim::cli {
int run_collective(const CommandArgs& args, std::ostream& out);
int run_scenario(const CommandArgs& args, std::ostream& out);
}  // namespace ttsim::cli
namespace ttsim::cli {
int run_predict(const CommandArgs& args, std::ostream& out);
int run_calibrate(const CommandArgs& args, std::ostream& out);
int run_validate(const CommandArgs& args, std::ostream& out);
int run_plan(const CommandArgs& args, std::ostream& out);
int run_merge(const CommandArgs& args, std::ostream& out);
}  // namespace ttsim::cli
