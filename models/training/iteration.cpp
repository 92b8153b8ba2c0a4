#include "models/training/iteration.hpp"

#include <algorithm>

#include <boost/math/distributions/normal.hpp>

#include "sim/errors.hpp"
#include "sim/event_queue.hpp"

namespace ttsim {

double expected_max_standard_normal(long long n) {
    if (n <= 1) return 0.0;
    // Blom's plotting position (n - 3/8) / (n + 1/4) through the inverse standard normal CDF (Boost.Math).
    return boost::math::quantile(boost::math::normal(), (n - 0.375) / (n + 0.25));
}

IterationResult simulate_iteration(const IterationPlan& plan) {
    TTSIM_ASSERT(plan.micro_steps >= 1, "iteration needs at least one micro step");
    TTSIM_ASSERT(plan.straggler_factor >= 1.0, "straggler factor below 1");
    TTSIM_ASSERT(plan.bucket_ready_fractions.empty() || plan.bucket_ready_fractions.size() == plan.bucket_comm_seconds.size(),
                 "one ready point per gradient bucket");
    const double micro = plan.micro_step_compute_seconds * plan.straggler_factor;
    const double forward = micro * (1.0 - plan.backward_share);
    const double backward = micro * plan.backward_share;

    Simulation sim;
    // Compute stream: micro steps 1..k-1 back to back, then the last micro step's forward, then its backward,
    // which releases bucket b at the end of its slice (gradients of later layers are ready first).
    const SimTime last_backward_start = SimTime::from_seconds(micro * (plan.micro_steps - 1) + forward);
    const SimTime backward_end = SimTime::from_seconds(micro * plan.micro_steps);
    const std::size_t buckets = plan.bucket_comm_seconds.size();

    // Communication stream: FIFO of ready buckets, one collective at a time.
    SimTime comm_free = last_backward_start;
    SimTime comm_done = backward_end;
    double comm_busy = 0;
    // Bucket b is ready when its slice of the last backward ends; each ready time is rounded to SimTime once, from
    // the step start, and the last bucket is ready exactly at backward_end, so the exposed wait behind it is its
    // own duration without a tick of rounding drift (keeps exposure monotone across scales with equal tails).
    auto ready_at = [&](std::size_t b) {
        if (b + 1 == buckets) return backward_end;
        const double share = plan.bucket_ready_fractions.empty() ? double(b + 1) / double(buckets)
                                                                 : plan.bucket_ready_fractions[b];
        return SimTime::from_seconds(micro * (plan.micro_steps - 1) + forward + backward * share);
    };
    for (std::size_t b = 0; b < buckets; ++b) {
        const SimTime ready = ready_at(b);
        const double duration = plan.bucket_comm_seconds[b];
        sim.schedule_at(ready, [&sim, &comm_free, &comm_done, &comm_busy, duration] {
            const SimTime start = std::max(sim.now(), comm_free);
            const SimTime end = start + SimTime::from_seconds(duration);
            comm_free = end;
            comm_busy += duration;
            sim.schedule_at(end, [&comm_done, end] { comm_done = std::max(comm_done, end); });
        });
    }
    sim.run();

    std::vector<SimTime> bucket_start;
    if (plan.record_timeline) {
        // Replay the FIFO with the same SimTime arithmetic as the events above (exact same starts).
        SimTime free = last_backward_start;
        for (std::size_t b = 0; b < buckets; ++b) {
            const SimTime ready = ready_at(b);
            const SimTime start = std::max(ready, free);
            bucket_start.push_back(start);
            free = start + SimTime::from_seconds(plan.bucket_comm_seconds[b]);
        }
    }

    IterationResult r;
    const double gradients_ready = comm_done.seconds();
    const double wait = std::max(0.0, gradients_ready - backward_end.seconds());
    r.compute_seconds = micro * plan.micro_steps + plan.optimizer_seconds;
    r.exposed_comm_seconds = wait + plan.param_all_gather_seconds;
    r.total_comm_seconds = comm_busy + plan.param_all_gather_seconds;
    r.fixed_seconds = plan.fixed_step_seconds;
    r.step_seconds = r.compute_seconds + r.exposed_comm_seconds + r.fixed_seconds;
    r.events = sim.events_processed();

    if (plan.record_timeline) {
        auto& t = r.timeline;
        auto span = [&t](const char* stream, std::string name, SimTime start, SimTime duration) {
            t.push_back({stream, std::move(name), start, duration});
        };
        for (int m = 0; m < plan.micro_steps; ++m) {
            const SimTime begin = SimTime::from_seconds(micro * m);
            const SimTime mid = SimTime::from_seconds(micro * m + forward);
            const SimTime end = SimTime::from_seconds(micro * (m + 1));
            span("compute", "forward mb" + std::to_string(m), begin, mid - begin);
            span("compute", "backward mb" + std::to_string(m), mid, end - mid);
        }
        for (std::size_t b = 0; b < buckets; ++b)
            span("comm", plan.bucket_comm_name + " bucket " + std::to_string(b), bucket_start[b],
                 SimTime::from_seconds(plan.bucket_comm_seconds[b]));
        SimTime now = std::max(backward_end, comm_done);
        const SimTime optimizer = SimTime::from_seconds(plan.optimizer_seconds);
        span("compute", "optimizer", now, optimizer);
        now += optimizer;
        if (plan.param_all_gather_seconds > 0) {
            const SimTime gather = SimTime::from_seconds(plan.param_all_gather_seconds);
            span("comm", "param allgather", now, gather);
            now += gather;
        }
        if (plan.fixed_step_seconds > 0) {
            const SimTime fixed = SimTime::from_seconds(plan.fixed_step_seconds);
            span("compute", "fixed step overhead", now, fixed);
            now += fixed;
        }
        if (plan.eval_seconds > 0) span("compute", "eval", now, SimTime::from_seconds(plan.eval_seconds));
    }
    return r;
}

}  // namespace ttsim
