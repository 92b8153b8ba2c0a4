// ttsim's exit codes, one place for the program, its commands and `--help`, so scripts can rely on them:
//   0   answered: the command did what was asked (a plan found a configuration, a sweep ran at least one point)
//   1   nothing feasible: a plan found no configuration meeting its constraints, or every point of a sweep failed
//       (the report is still written: it says why, and for a plan which configuration came closest)
//   2   bad input: scenario, flag or data (the message names file:line:column and key, or the flag)
//   3   internal error: a bug in ttsim
//   130 interrupted by Ctrl-C (a sweep or plan keeps what it finished)
#pragma once

namespace ttsim::cli {

inline constexpr int kExitAnswered = 0;
inline constexpr int kExitNothingFeasible = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternalError = 3;

// The legend printed by `ttsim --help` and each command's --help.
inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 answered; 1 nothing feasible (a plan met no constraint, or every point of a sweep failed;\n"
    "the report is still printed); 2 bad input (scenario, flag or data); 3 internal error; 130 interrupted\n"
    "(Ctrl-C; a sweep or plan keeps what it finished).\n";

}  // namespace ttsim::cli
