// One optimizer step of synchronous data-parallel training, simulated on the event engine (sim/event_queue.hpp).
//
// Per GPU there are two streams: compute (forward, backward, optimizer) and communication. Micro steps before the
// last one accumulate gradients locally (no communication). In the last micro step backward produces gradient
// buckets at even intervals; each bucket is reduced on the communication stream (FIFO, one collective at a
// time) while backward continues. Exposed communication = time the step waits for the last bucket after
// backward ends, plus the parameter all-gather of the distributed optimizer (on the critical path before the next
// forward). All data-parallel ranks are symmetric, so ONE rank class is simulated; the slowest of N GPUs sets
// the pace, which enters as the expected maximum of N per-GPU step-time draws (compute stretched by
// 1 + cv * E[max of N standard normals]), so the cost is independent of the GPU count.
#pragma once

#include <string>
#include <vector>

#include "sim/time.hpp"

namespace ttsim {

// One span of the simulated iteration's timeline, for traces (models/trace). Times are relative to the start of
// the optimizer step (t = 0 at the first micro step's forward) for the representative rank class (all
// data-parallel ranks are symmetric in the model, so every GPU shares this timeline).
//   stream: "compute" (forward, backward, optimizer, fixed host overhead, evaluation) or "comm" (gradient
//           collectives, parameter all-gather).
//   name:   "forward mb<k>" / "backward mb<k>" (k = micro step, 0-based), "<bucket_comm_name> bucket <b>"
//           (b = 0-based bucket in emission order, e.g. "allreduce bucket 3"), "optimizer",
//           "param allgather", "fixed step overhead", "eval".
// Spans on one stream never overlap. The "eval" span (only when IterationPlan::eval_seconds > 0) is placed
// after the step and is NOT part of step_seconds: an evaluation runs once per evaluation interval, not per step.
// The gap on the compute stream between the last backward and "optimizer" is exposed communication.
struct TimelineSpan {
    std::string stream;
    std::string name;
    SimTime start;
    SimTime duration;
};

struct IterationPlan {
    int micro_steps = 1;                     // gradient accumulation
    double micro_step_compute_seconds = 0;   // forward + backward of one micro step (incl. exposed TP/CP comm)
    double backward_share = 2.0 / 3.0;       // backward = 2x forward FLOPs
    std::vector<double> bucket_comm_seconds; // one per gradient bucket, in emission order (last layer first)
    // When each bucket is ready, as a share of the last micro step's backward (non-decreasing, the last 1): from
    // the layers' gradients (operator model, operator_step.hpp). Empty: at even intervals (lumped model).
    std::vector<double> bucket_ready_fractions;
    double optimizer_seconds = 0;
    double fixed_step_seconds = 0;           // host overhead per optimizer step
    double param_all_gather_seconds = 0;     // distributed optimizer, after the optimizer step
    double straggler_factor = 1.0;           // 1 + cv * E[max of N]; stretches compute of the slowest rank

    // Timeline (traces only; off on the hot path). When record_timeline is set, IterationResult::timeline is
    // filled; the step time is identical either way.
    bool record_timeline = false;
    std::string bucket_comm_name = "allreduce";   // span name prefix of the gradient bucket collectives
    double eval_seconds = 0;                 // one evaluation, shown as an "eval" span after the step (timeline only)
};

struct IterationResult {
    double step_seconds = 0;
    double compute_seconds = 0;              // forward+backward of all micro steps + optimizer (straggler incl.)
    double exposed_comm_seconds = 0;
    double total_comm_seconds = 0;           // busy time of the communication stream
    double fixed_seconds = 0;
    unsigned long long events = 0;
    std::vector<TimelineSpan> timeline;      // empty unless IterationPlan::record_timeline (see TimelineSpan)
};

IterationResult simulate_iteration(const IterationPlan& plan);

// E[max of n i.i.d. standard normals], Blom's approximation Phi^-1((n - 0.375) / (n + 0.25)); 0 for n <= 1.
double expected_max_standard_normal(long long n);

}  // namespace ttsim
