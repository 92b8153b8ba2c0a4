// One optimizer step of a pipelined layout (IterationPlan::pipeline_parallel > 1): the micro step's layers, as the
// operator model priced them for this GPU's TP/CP shard with their exposed TP/CP waits, split into PP x VP
// contiguous stages, and the schedule simulated on the event engine (pipeline_schedule.hpp).
#include <algorithm>
#include <numeric>

#include "models/training/iteration.hpp"
#include "models/training/pipeline_schedule.hpp"
#include "models/training/step_bounds.hpp"
#include "models/workloads/layers/layer_graph.hpp"
#include "sim/errors.hpp"

namespace ttsim {

namespace {

// Each virtual stage's forward and backward seconds of one micro batch (StageDurations, no p2p or reductions yet)
// and the gradient bytes it holds, in virtual stage order (chunk c of device d is stage c x PP + d).
struct StageWork {
    StageDurations d;
    std::vector<double> gradients;
};

StageWork stage_work(const IterationPlan& plan) {
    const int stages = plan.pipeline_parallel * plan.virtual_pipeline;
    const std::size_t n = plan.layers.size();
    TTSIM_ASSERT(n > 0 && plan.layer_is_block.size() == n && plan.layer_gradient_bytes.size() == n,
                 "a pipelined step needs its layers, their roles and their gradients");
    const std::vector<layers::LayerRange> ranges = layers::pipeline_stages(plan.layer_is_block, stages);
    TTSIM_ASSERT(!ranges.empty(), "the stages do not divide the blocks (checked where the layout was made)");
    const double micro = plan.micro_step_compute_seconds * plan.straggler_factor;
    const double forward = micro * (1.0 - plan.backward_share), backward = micro * plan.backward_share;

    // Each layer's forward and backward seconds, from its shares of the passes (iteration.hpp IterationLayer: the
    // backward ends are cumulative in backward order, last layer first).
    StageWork work;
    StageDurations& d = work.d;
    std::vector<double>& stage_gradients = work.gradients;
    for (const layers::LayerRange& r : ranges) {
        double f = 0, b = 0, g = 0;
        for (std::size_t i = r.first; i < r.last; ++i) {
            f += forward * (plan.layers[i].forward_end - (i == 0 ? 0.0 : plan.layers[i - 1].forward_end));
            b += backward * (plan.layers[i].backward_end - (i + 1 == n ? 0.0 : plan.layers[i + 1].backward_end));
            g += plan.layer_gradient_bytes[i];
        }
        d.forward.push_back(f);
        d.backward.push_back(b);
        stage_gradients.push_back(g);
    }
    return work;
}

}  // namespace

double pipeline_makespan_lower_bound(const IterationPlan& plan) {
    const int p = plan.pipeline_parallel, v = plan.virtual_pipeline;
    const StageWork work = stage_work(plan);
    const double m = plan.micro_steps;
    // Device d is busy m x (its chunks' F + B); its first task, micro batch 0's forward through its first chunk
    // (virtual stage d), waits for that micro batch's forwards through virtual stages 0..d-1 on the devices before
    // it. Its last task is the last micro batch's backward through its first chunk (1F1B: its only one; interleaved:
    // chunk 0, which Megatron-LM's order runs last, as interleaved() does), after which virtual stages d-1..0 still
    // run theirs. p2p counts as free.
    double bound = 0, prefix_forward = 0, suffix_backward = 0;
    for (int dev = 0; dev < p; ++dev) {
        double busy = 0;
        for (int c = 0; c < v; ++c) {
            const auto s = static_cast<std::size_t>(c * p + dev);
            busy += m * (work.d.forward[s] + work.d.backward[s]);
        }
        bound = std::max(bound, prefix_forward + busy + suffix_backward);
        prefix_forward += work.d.forward[static_cast<std::size_t>(dev)];
        suffix_backward += work.d.backward[static_cast<std::size_t>(dev)];
    }
    return bound;
}

IterationResult simulate_pipelined_iteration(const IterationPlan& plan) {
    const int p = plan.pipeline_parallel, v = plan.virtual_pipeline, stages = p * v;
    StageWork work = stage_work(plan);
    StageDurations& d = work.d;
    const std::vector<double>& stage_gradients = work.gradients;
    for (int s = 0; s + 1 < stages; ++s)
        d.p2p.push_back(plan.pp_send_seconds.empty() ? 0.0 : plan.pp_send_seconds[static_cast<std::size_t>(s % p)]);
    // The reductions: bucket_comm_seconds reduce an average device's gradients (1/PP of them); each stage takes its
    // own gradients' share of that time. Devices: the largest holding sets the optimizer and the gather.
    const double total_gradients = std::accumulate(stage_gradients.begin(), stage_gradients.end(), 0.0);
    const double average_device = total_gradients / p;
    const double reduce_seconds = std::accumulate(plan.bucket_comm_seconds.begin(), plan.bucket_comm_seconds.end(), 0.0);
    double largest_device = 0;
    for (int dev = 0; dev < p; ++dev) {
        double g = 0;
        for (int c = 0; c < v; ++c) g += stage_gradients[static_cast<std::size_t>(c * p + dev)];
        largest_device = std::max(largest_device, g);
    }
    for (int s = 0; s < stages; ++s)
        d.dp_reduce.push_back(average_device > 0 ? reduce_seconds * stage_gradients[static_cast<std::size_t>(s)] / average_device
                                                 : 0.0);
    const double device_share = total_gradients > 0 ? largest_device / total_gradients : 1.0 / p;

    const Schedule schedule = build_schedule(plan.pipeline_schedule, p, v, plan.micro_steps);
    const PipeResult pipe = simulate_pipeline(schedule, d, plan.record_timeline);

    IterationResult r;
    const double optimizer = plan.optimizer_seconds * device_share;
    const double gather = average_device > 0 ? plan.param_all_gather_seconds * largest_device / average_device : 0.0;
    r.compute_seconds = pipe.busy_seconds + optimizer;
    r.optimizer_seconds = optimizer;
    r.bubble_seconds = pipe.makespan_seconds - pipe.busy_seconds;
    r.bubble_fraction = pipe.bubble_fraction;
    r.exposed_comm_seconds = pipe.exposed_dp_seconds + gather;
    r.total_comm_seconds = reduce_seconds * largest_device / std::max(average_device, 1e-300) + gather;
    const double host_wait =
        std::max(0.0, plan.overlapped_host_seconds - (r.compute_seconds + r.bubble_seconds + r.exposed_comm_seconds));
    r.fixed_seconds = plan.fixed_step_seconds + host_wait;
    r.step_seconds = r.compute_seconds + r.bubble_seconds + r.exposed_comm_seconds + r.fixed_seconds;
    r.events = pipe.events;
    if (plan.record_timeline) {
        for (const PipeSpan& span : pipe.timeline)
            r.timeline.push_back({"pp" + std::to_string(span.device) + " " + span.stream, span.name, span.start, span.duration});
        SimTime now = SimTime::from_seconds(pipe.step_seconds);
        auto add = [&](const char* stream, const char* name, double seconds) {
            if (seconds <= 0) return;
            const SimTime length = SimTime::from_seconds(seconds);
            r.timeline.push_back({stream, name, now, length});
            now += length;
        };
        add("compute", "optimizer", optimizer);
        add("comm", "param allgather", gather);
        add("compute", "wait for host", host_wait);
        add("compute", "fixed step overhead", plan.fixed_step_seconds);
        if (plan.eval_seconds > 0) r.timeline.push_back({"eval", "eval", now, SimTime::from_seconds(plan.eval_seconds)});
    }
    return r;
}

}  // namespace ttsim
