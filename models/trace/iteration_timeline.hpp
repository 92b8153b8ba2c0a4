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
// model, so they share one timeline). Each gradient bucket's span names the collectives the simulation ran for it
// (size, ranks, algorithm and protocol `auto` chose), and a counter shows the busiest link's utilisation as the
// flow simulation measured it (PreparedScenario::bucket_collectives).
Trace iteration_trace(const PreparedScenario& scenario, const ComputeProfile& profile, int gpus_shown,
                      const std::string& title);

}  // namespace ttsim::trace
