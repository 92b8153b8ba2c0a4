#include "tools/cli/command_list.hpp"

namespace ttsim::cli {

std::vector<Command> all_commands() {
    return {
        {"collective", "nccl-tests-like sweep of one collective over message sizes", run_collective},
        {"run", "run a YAML scenario (scenarios/*.yaml)", run_scenario},
    };
}

}  // namespace ttsim::cli
