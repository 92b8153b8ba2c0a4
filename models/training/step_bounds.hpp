// Lower bounds of a pipelined layout's step and time to train that need no simulation, for the layout search's
// branch and bound (layout_search.cpp): a bound here is at most the simulated one.
#pragma once

#include <optional>

#include "models/compute/compute_profile.hpp"
#include "models/training/iteration.hpp"
#include "models/training/predict.hpp"

namespace ttsim {

// At most simulate_pipelined_iteration(plan)'s makespan of the passes (its step less optimizer, exposed gradient
// communication and fixed costs), whatever the p2p and reduction times: over the devices, the busiest chain of
// work that must run one after another. Device d runs m x (F + B) of its chunks; micro batch 0 reaches it only
// after its forwards through the d virtual stages before its first chunk; under 1F1B its last task is the last
// micro batch's backward (interleaved: through chunk 0), after which the d stages before it run theirs. With even
// stages and one chunk per device that is busy + (p - 1)(F + B), the 1F1B bubble itself; interleaved,
// busy + (p - 1)(F + B) / v, its bubble.
double pipeline_makespan_lower_bound(const IterationPlan& plan);

// At most ttt_lower_bound_minutes(without_collectives, profile), without simulating the pipeline: its step is
// pipeline_makespan_lower_bound plus 1/PP of the optimizer (the busiest device holds at least that share),
// against the host work beside the graph, plus the fixed costs, as simulate_pipelined_iteration adds them. For
// PP = 1 it is ttt_lower_bound_minutes itself (there is no pipeline to simulate). Null where that is.
std::optional<double> ttt_unsimulated_lower_bound_minutes(const PreparedScenario& without_collectives,
                                                          const ComputeProfile& profile);

}  // namespace ttsim
