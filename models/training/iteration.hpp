// One optimizer step of synchronous data-parallel training, simulated at picosecond resolution (SimTime).
//
// Per GPU there are two streams: compute (forward, backward, optimizer) and communication. Micro steps before the
// last one accumulate gradients locally (no communication). In the last micro step backward produces gradient
// buckets at even intervals; each bucket is reduced on the communication stream (FIFO, one collective at a
// time) while backward continues. Exposed communication = time the step waits for the last bucket after
// backward ends, plus the parameter all-gather of the distributed optimizer (on the critical path before the next
// forward). All data-parallel ranks are symmetric, so ONE rank class is simulated; the slowest of N GPUs sets
// the pace, which enters as the expected maximum of N per-GPU step-time draws (compute stretched by
// 1 + cv * E[max of N standard normals]), so the cost is independent of the GPU count.
//
// At layer granularity (IterationPlan::layers, the operator model: layer_plan.hpp) every micro step runs each
// layer's forward, then in reverse each layer's backward; the compute stream waits the exposed share
// (ComputeProfile::tp_comm_exposed_fraction) of the tensor/context-parallel collectives of a layer that carries
// them after the layer's kernels, and the collectives run on a stream of their own ("tp/cp comm"), ending with that
// wait (the rest of them overlaps the layer's kernels). Gradient buckets are released when the backward of the
// layer completing them ends. Without layers the micro step is one block split by backward_share (the lumped
// model).
//
// The compute stream's times are fixed by the plan, so every collective's ready time is known before the first
// starts: each FIFO stream's schedule follows in one pass over its collectives in (time, issue order), the order
// the event engine (sim/event_queue.hpp) would run them, as start = max(ready, the previous one's end). The
// pipelined step, whose stages wait on each other's messages, runs on the event engine (pipeline_schedule.hpp).
#pragma once

#include <string>
#include <vector>

#include "models/training/pipeline_schedule.hpp"
#include "sim/time.hpp"

namespace ttsim {

// One span of the simulated iteration's timeline, for traces (models/trace). Times are relative to the start of
// the optimizer step (t = 0 at the first micro step's forward) for the representative rank class (all
// data-parallel ranks are symmetric in the model, so every GPU shares this timeline).
//   stream: "compute" (forward, backward, optimizer, fixed host overhead), "comm" (gradient collectives,
//           parameter all-gather), "tp/cp comm" (the layers' tensor/context-parallel collectives) or "eval" (the
//           evaluation, on its own row).
//   name:   "forward mb<k>" / "backward mb<k>" (k = micro step, 0-based), "<bucket_comm_name> bucket <b>"
//           (b = 0-based bucket in emission order, e.g. "allreduce bucket 3"), "optimizer",
//           "param allgather", "fixed step overhead", "eval".
//           At layer granularity the last micro step is drawn per layer: "forward L<i>" / "backward L<i>" (i =
//           index into IterationPlan::layers, `layer` set), "tp/cp exposed L<i>" (the compute stream's wait on
//           the layer's collectives), and on "tp/cp comm" each collective as "<name> L<i>" (`collective` set to its
//           index in IterationPlan::layer_collectives). Earlier micro steps repeat the last one's layers and are
//           drawn as one span per pass, their TP/CP collectives as one "tp/cp collectives mb<k>" span.
// Spans on one stream never overlap. The "eval" span (only when IterationPlan::eval_seconds > 0) is placed
// after the step and is NOT part of step_seconds: an evaluation runs once per evaluation interval, not per step.
// The gap on the compute stream between the last backward and "optimizer" is exposed communication.
struct TimelineSpan {
    std::string stream;
    std::string name;
    SimTime start;
    SimTime duration;
    int layer = -1;                          // IterationPlan::layers index of a per-layer span
    int collective = -1;                     // IterationPlan::layer_collectives index of a TP/CP collective span
};

// A tensor/context-parallel collective that each layer carrying them issues, once per micro step.
struct IterationCollective {
    std::string name;                        // e.g. "tp allgather (attention input)"
    double seconds = 0;                      // on the communication stream
    bool backward = false;                   // issued with the layer's backward (else its forward)
};

// One layer of the compute stream. Times are shares of the micro step's forward pass and of its backward pass
// (the pass as backward_share splits micro_step_compute_seconds), so that the layers tile the passes exactly:
// forward of layer i runs from the previous layer's forward_end to forward_kernels_end (its kernels), then waits
// until forward_end (its exposed collectives); backward in reverse order likewise, the first layer's
// backward_end being 1.
struct IterationLayer {
    double forward_kernels_end = 0, forward_end = 0, backward_kernels_end = 0, backward_end = 0;
    bool collectives = false;                // issues IterationPlan::layer_collectives
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
    // Host work per step that runs while a whole-iteration CUDA graph replays (ComputeProfile::
    // operator_graph_host_overlap): only what the GPU's step does not cover is added to the step.
    double overlapped_host_seconds = 0;
    double param_all_gather_seconds = 0;     // distributed optimizer, after the optimizer step
    double straggler_factor = 1.0;           // 1 + cv * E[max of N]; stretches compute of the slowest rank
    // Layer granularity (see the top); empty: one block per micro step. bucket_ready_fractions then hold each
    // bucket's completing layer's backward_kernels_end.
    std::vector<IterationLayer> layers;      // forward order
    std::vector<IterationCollective> layer_collectives;

    // Pipeline parallelism (pipeline_step.cpp): PP devices of VP chunks each run the micro steps through their
    // stages in `pipeline_schedule` (GPipe, 1F1B or interleaved with VP > 1: pipeline_schedule.hpp); the layers above (which
    // must be given) are split into PP x VP stages (layers::pipeline_stages over layer_is_block). Each stage's
    // gradients are reduced after its last backward: bucket_comm_seconds' total is one average device's
    // (1/PP of the gradients), scaled per stage by layer_gradient_bytes. pp_send_seconds: one micro batch's
    // message from device d to (d+1) mod PP (empty: free).
    int pipeline_parallel = 1, virtual_pipeline = 1;
    PipeScheduleKind pipeline_schedule = PipeScheduleKind::one_f_one_b;
    std::vector<bool> layer_is_block;
    std::vector<double> layer_gradient_bytes;
    std::vector<double> pp_send_seconds;

    // Timeline (traces only; off on the hot path). When record_timeline is set, IterationResult::timeline is
    // filled; the step time is identical either way.
    bool record_timeline = false;
    std::string bucket_comm_name = "allreduce";   // span name prefix of the gradient bucket collectives
    double eval_seconds = 0;                 // one evaluation, shown as an "eval" span after the step (timeline only)
};

struct IterationResult {
    double step_seconds = 0;
    double compute_seconds = 0;              // forward+backward of all micro steps + optimizer (straggler incl.)
    double optimizer_seconds = 0;            // the optimizer update's part of compute_seconds
    double exposed_comm_seconds = 0;
    double total_comm_seconds = 0;           // busy time of the communication stream
    double fixed_seconds = 0;
    // Pipeline parallelism: the busiest device's idle time between its first and last pass (fill and drain,
    // imbalance, waits on p2p), and that over its compute: the simulated bubble fraction.
    double bubble_seconds = 0, bubble_fraction = 0;
    unsigned long long events = 0;           // the pipelined step's simulated events (a data-parallel step has none)
    std::vector<TimelineSpan> timeline;      // empty unless IterationPlan::record_timeline (see TimelineSpan)
};

IterationResult simulate_iteration(const IterationPlan& plan);
// The pipelined step (pipeline_parallel > 1); simulate_iteration() calls it for such plans.
IterationResult simulate_pipelined_iteration(const IterationPlan& plan);

// E[max of n i.i.d. standard normals], Blom's approximation Phi^-1((n - 0.375) / (n + 0.25)); 0 for n <= 1.
double expected_max_standard_normal(long long n);

}  // namespace ttsim
