#include <ostream>
#include <string>

#include "sim/errors.hpp"
#include "tools/cli/command_list.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/exit_codes.hpp"

namespace ttsim::cli {

namespace {

void print_overview(std::ostream& out) {
    out << "ttsim — time-to-train simulator for distributed deep-learning training\n\n"
           "usage: ttsim <command> [options]    (ttsim <command> --help for each command's options)\n\n"
           "commands:\n";
    for (const auto& command : all_commands()) {
        out << "  " << command.name;
        for (std::size_t i = command.name.size(); i < 12; ++i) out << ' ';
        out << command.summary << "\n";
    }
    out << "\n  --version   print the version\n  --help      print this overview\n";
    out << "\n" << kExitCodesHelp;
}

}  // namespace

int dispatch(const CommandArgs& args, std::ostream& out) {
    if (args.empty()) {
        // No command is a usage error (exit 2, one line on stderr like every input error), not a request for help.
        std::string names;
        for (const auto& command : all_commands()) names += (names.empty() ? "" : "|") + command.name;
        throw InputError("no command given; usage: ttsim <" + names + "> [options] (see 'ttsim --help')");
    }
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_overview(out);
        return 0;
    }
    if (args[0] == "--version") {
        out << "ttsim 0.1.0\n";
        return 0;
    }
    for (const auto& command : all_commands())
        if (command.name == args[0]) return command.run(CommandArgs(args.begin() + 1, args.end()), out);
    throw InputError("unknown command '" + args[0] + "' (see 'ttsim --help')");
}

}  // namespace ttsim::cli
