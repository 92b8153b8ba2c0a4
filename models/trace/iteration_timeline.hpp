// The timeline of one simulated optimizer step as a Chrome/Perfetto trace: simulate_iteration()'s own timeline
// (models/training/iteration.hpp, IterationPlan::record_timeline) of the plan evaluate() runs
// (make_iteration_plan), drawn for the first GPUs of the job, plus per-GPU link utilisation counters.
#pragma once

#include <string>

#include "models/compute/compute_profile.hpp"
#include "models/trace/trace_writer.hpp"
#include "models/training/predict.hpp"

namespace ttsim::trace {

// One iteration of `scenario` for the first `gpus_shown` GPUs (all data-parallel ranks are symmetric in the
// model, so they share one timeline). Link utilisation counters (NVLink, NIC) are estimated per gradient
// collective from the bytes it moves: nccl-tests' bus traffic 2(n-1)/n x bytes over the link's bandwidth
// (AnalyticCommModel's NCCL-effective figures), as a share of the collective's duration, capped at 1.
Trace iteration_trace(const PreparedScenario& scenario, const ComputeProfile& profile, int gpus_shown,
                      const std::string& title);

}  // namespace ttsim::trace
