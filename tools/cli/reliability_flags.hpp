// The flags and the scenario block that set a long job's failures and checkpoints
// (models/reliability/job_reliability.hpp ReliabilityRequest), each declared once here:
//   --failure-rates NAME  --checkpoint-interval 30min  --storage-bandwidth 2TB/s  --hot-spares N
// (a scenario's `reliability:` block: read_reliability_request, job_reliability.hpp).
#pragma once

#include "models/reliability/job_reliability.hpp"
#include "tools/cli/args.hpp"

namespace ttsim::cli {

void declare_reliability_flags(ArgParser& args);
// InputErrors name the flag.
reliability::ReliabilityRequest reliability_flags(const ArgParser& args);

}  // namespace ttsim::cli
