#include "sim/errors.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/command_list.hpp"

namespace ttsim::cli {
int run_collective(const CommandArgs& args, std::ostream& out) {
    throw InputError("'ttsim collective' is not implemented yet");
}
int run_scenario(const CommandArgs& args, std::ostream& out) {
    throw InputError("'ttsim run' is not implemented yet");
}
}  // namespace ttsim::cli
