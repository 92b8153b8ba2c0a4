// The subcommands of the `ttsim` program. Each parses its own arguments (tools/cli/args.hpp), runs, writes
// its report to `out`, and returns an exit code; errors are thrown (InputError / InternalError) and turned
// into exit codes by main() only.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace ttsim::cli {

using CommandArgs = std::vector<std::string>;

struct Command {
    std::string name;
    std::string summary;
    std::function<int(const CommandArgs&, std::ostream& out)> run;
};

// All subcommands, in the order `ttsim --help` lists them.
std::vector<Command> all_commands();

// Runs `ttsim <args...>`; `args` excludes the program name.
int dispatch(const CommandArgs& args, std::ostream& out);

}  // namespace ttsim::cli
