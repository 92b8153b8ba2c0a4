#include "models/training/iteration.hpp"

#include <algorithm>

#include <boost/math/distributions/normal.hpp>

#include "sim/errors.hpp"

namespace ttsim {

double expected_max_standard_normal(long long n) {
    if (n <= 1) return 0.0;
    // Blom's plotting position (n - 3/8) / (n + 1/4) through the inverse standard normal CDF (Boost.Math).
    return boost::math::quantile(boost::math::normal(), (n - 0.375) / (n + 0.25));
}

namespace {

// One entry of a communication stream's FIFO: a gradient bucket (bucket >= 0), or a layer's TP/CP collectives of
// one pass, back to back (the pass's IterationCollectives in plan order).
struct CommItem {
    SimTime ready, duration;
    double seconds = 0;
    int bucket = -1;
    int layer = -1, micro = -1;
    bool backward = false;
};

}  // namespace

IterationResult simulate_iteration(const IterationPlan& plan) {
    if (plan.pipeline_parallel > 1) return simulate_pipelined_iteration(plan);
    TTSIM_ASSERT(plan.micro_steps >= 1, "iteration needs at least one micro step");
    TTSIM_ASSERT(plan.straggler_factor >= 1.0, "straggler factor below 1");
    TTSIM_ASSERT(plan.bucket_ready_fractions.empty() || plan.bucket_ready_fractions.size() == plan.bucket_comm_seconds.size(),
                 "one ready point per gradient bucket");
    const double micro = plan.micro_step_compute_seconds * plan.straggler_factor;
    const double forward = micro * (1.0 - plan.backward_share);
    const double backward = micro * plan.backward_share;
    const int micro_steps = plan.micro_steps;

    // Compute stream: micro steps back to back, each its forward then its backward; positions are shares of a
    // micro step's passes, each rounded to SimTime once from the step start (no drift along the layers).
    auto at_forward = [&](int m, double share) { return SimTime::from_seconds(micro * m + forward * share); };
    auto at_backward = [&](int m, double share) {
        return share >= 1.0 ? SimTime::from_seconds(micro * (m + 1))
                            : SimTime::from_seconds(micro * m + forward + backward * share);
    };
    // Micro step m's layers in execution order (forward first to last, then backward last to first): each layer
    // pass's start, the end of its kernels and its end (after the wait on its exposed collectives).
    auto for_each_layer_pass = [&](int m, auto&& visit) {
        double previous = 0;
        for (std::size_t i = 0; i < plan.layers.size(); ++i) {
            const IterationLayer& layer = plan.layers[i];
            visit(i, false, at_forward(m, previous), at_forward(m, layer.forward_kernels_end), at_forward(m, layer.forward_end));
            previous = layer.forward_end;
        }
        previous = 0;
        for (std::size_t i = plan.layers.size(); i-- > 0;) {
            const IterationLayer& layer = plan.layers[i];
            visit(i, true, at_backward(m, previous), at_backward(m, layer.backward_kernels_end),
                  at_backward(m, layer.backward_end));
            previous = layer.backward_end;
        }
    };
    const SimTime backward_end = SimTime::from_seconds(micro * micro_steps);
    const std::size_t buckets = plan.bucket_comm_seconds.size();

    // Communication streams, each a FIFO of ready collectives, one at a time: the gradient buckets of the last micro
    // step's backward on "comm", and the layers' TP/CP collectives on their own stream, as Megatron-LM issues them
    // on other NCCL communicators than the data-parallel gradient reduction (so neither queues behind the other).
    // A layer's collectives of one pass are issued back to back so that they end with the compute stream's wait on
    // them (the layer's end), or at the layer's start if they take longer than it.
    SimTime pass_duration[2];   // forward, backward: one carrying layer's collectives
    double pass_seconds[2] = {0, 0};
    for (const IterationCollective& c : plan.layer_collectives) {
        pass_duration[c.backward ? 1 : 0] += SimTime::from_seconds(c.seconds);
        pass_seconds[c.backward ? 1 : 0] += c.seconds;
    }
    std::vector<CommItem> items;
    std::vector<SimTime> item_start;
    std::vector<std::size_t> order;   // items in the order the streams serve them
    SimTime comm_done, tp_free;
    double comm_busy = 0;   // the gradient buckets' (the data-parallel communication IterationResult reports)
    // Simulates the TP/CP collectives of micro steps first_micro.. and the buckets. Micro steps are identical, so
    // when the last one's TP/CP collectives, starting on an idle stream, end within it, every earlier one's ended
    // within its own too and none delays the last: only the last is simulated (first_micro = last), which keeps
    // a step of many micro steps as cheap as one. Otherwise (TP/CP communication longer than the compute) all are.
    auto simulate = [&](int first_micro) {
        items.clear();
        auto issue_layer = [&](int m, std::size_t i, bool in_backward, SimTime layer_start, SimTime layer_end) {
            const int pass = in_backward ? 1 : 0;
            if (pass_duration[pass] == SimTime::zero()) return;
            const SimTime before_end = SimTime::from_seconds(std::max(0.0, layer_end.seconds() - pass_seconds[pass]));
            items.push_back({std::max(layer_start, before_end), pass_duration[pass], pass_seconds[pass], -1,
                             static_cast<int>(i), m, in_backward});
        };
        if (!plan.layer_collectives.empty())
            for (int m = first_micro; m < micro_steps; ++m)
                for_each_layer_pass(m, [&](std::size_t i, bool in_backward, SimTime start, SimTime, SimTime end) {
                    if (plan.layers[i].collectives) issue_layer(m, i, in_backward, start, end);
                });
        // Bucket b is ready when its slice of the last backward ends; each ready time is rounded to SimTime once,
        // from the step start, and the last bucket is ready exactly at backward_end, so the exposed wait behind it
        // is its own duration without a tick of rounding drift (keeps exposure monotone across scales with equal
        // tails).
        for (std::size_t b = 0; b < buckets; ++b) {
            SimTime ready = backward_end;
            if (b + 1 != buckets) {
                const double share = plan.bucket_ready_fractions.empty() ? double(b + 1) / double(buckets)
                                                                         : plan.bucket_ready_fractions[b];
                ready = SimTime::from_seconds(micro * (micro_steps - 1) + forward + backward * share);
            }
            const double seconds = plan.bucket_comm_seconds[b];
            items.push_back({ready, SimTime::from_seconds(seconds), seconds, static_cast<int>(b), -1, micro_steps - 1, true});
        }

        // Each stream serves its items one at a time in the order they become ready, ties in issue order (the
        // (time, sequence) order of the event engine), and every ready time is known before the first item
        // starts: a stream's schedule is Lindley's recursion, start = max(ready, the previous item's end), with
        // no queue of events to keep.
        order.resize(items.size());
        for (std::size_t k = 0; k < items.size(); ++k) order[k] = k;
        const auto earlier = [&items](std::size_t a, std::size_t b) { return items[a].ready < items[b].ready; };
        if (!std::is_sorted(order.begin(), order.end(), earlier)) std::stable_sort(order.begin(), order.end(), earlier);
        SimTime comm_free[2] = {SimTime::zero(), SimTime::zero()};   // gradient buckets, TP/CP collectives
        comm_done = backward_end;
        comm_busy = 0;
        item_start.assign(items.size(), SimTime::zero());
        for (const std::size_t k : order) {
            const CommItem& item = items[k];
            SimTime& free = comm_free[item.bucket >= 0 ? 0 : 1];
            const SimTime start = std::max(item.ready, free);
            item_start[k] = start;
            free = start + item.duration;
            if (item.bucket >= 0) comm_busy += item.seconds;
            comm_done = std::max(comm_done, free);
        }
        tp_free = comm_free[1];
    };
    int first_micro = micro_steps - 1;
    simulate(first_micro);
    if (first_micro > 0 && tp_free > backward_end) simulate(first_micro = 0);

    IterationResult r;
    const double gradients_ready = comm_done.seconds();
    const double wait = std::max(0.0, gradients_ready - backward_end.seconds());
    r.compute_seconds = micro * plan.micro_steps + plan.optimizer_seconds;
    r.optimizer_seconds = plan.optimizer_seconds;
    r.exposed_comm_seconds = wait + plan.param_all_gather_seconds;
    r.total_comm_seconds = comm_busy + plan.param_all_gather_seconds;
    // The host prepares the step while the graph replays: it waits only for what the GPU's step does not cover.
    const double host_wait =
        std::max(0.0, plan.overlapped_host_seconds - (r.compute_seconds + r.exposed_comm_seconds));
    r.fixed_seconds = plan.fixed_step_seconds + host_wait;
    r.step_seconds = r.compute_seconds + r.exposed_comm_seconds + r.fixed_seconds;

    if (plan.record_timeline) {
        auto& t = r.timeline;
        auto span = [&t](const char* stream, std::string name, SimTime start, SimTime end, int layer = -1,
                         int collective = -1) { t.push_back({stream, std::move(name), start, end - start, layer, collective}); };
        const bool by_layer = !plan.layers.empty();
        for (int m = 0; m < micro_steps; ++m) {
            const SimTime begin = at_forward(m, 0), mid = at_forward(m, 1), end = at_backward(m, 1);
            if (!by_layer || m + 1 < micro_steps) {
                span("compute", "forward mb" + std::to_string(m), begin, mid);
                span("compute", "backward mb" + std::to_string(m), mid, end);
                continue;
            }
            // The last micro step, layer by layer: kernels, then the wait on the layer's exposed collectives.
            for_each_layer_pass(m, [&](std::size_t i, bool in_backward, SimTime start, SimTime kernels, SimTime done) {
                const int index = static_cast<int>(i);
                span("compute", (in_backward ? "backward L" : "forward L") + std::to_string(i), start, kernels, index);
                if (done > kernels) span("compute", "tp/cp exposed L" + std::to_string(i), kernels, done, index);
            });
        }
        // The communication streams in FIFO order: each TP/CP collective of the last micro step; earlier micro
        // steps' as one span each (shifted copies of the last one's when they were not simulated, see above).
        SimTime last_first = SimTime::max(), last_end = SimTime::zero();
        for (std::size_t k = 0; k < items.size(); ++k) {
            const CommItem& item = items[k];
            SimTime start = item_start[k];
            if (item.bucket >= 0) {
                span("comm", plan.bucket_comm_name + " bucket " + std::to_string(item.bucket), start, start + item.duration);
                continue;
            }
            if (item.micro + 1 < micro_steps) {
                SimTime end = start;
                const int m = item.micro;
                for (; k < items.size() && items[k].bucket < 0 && items[k].micro == m; ++k)
                    end = item_start[k] + items[k].duration;
                --k;
                span("tp/cp comm", "tp/cp collectives mb" + std::to_string(m), start, end);
                continue;
            }
            last_first = std::min(last_first, start);
            last_end = std::max(last_end, start + item.duration);
            for (std::size_t c = 0; c < plan.layer_collectives.size(); ++c) {
                const IterationCollective& collective = plan.layer_collectives[c];
                if (collective.backward != item.backward) continue;
                const SimTime end = start + SimTime::from_seconds(collective.seconds);
                span("tp/cp comm", collective.name + " L" + std::to_string(item.layer), start, end, item.layer,
                     static_cast<int>(c));
                start = end;
            }
        }
        if (first_micro > 0 && last_end > SimTime::zero()) {
            const SimTime last_start = at_forward(micro_steps - 1, 0);
            for (int m = 0; m + 1 < micro_steps; ++m) {
                const SimTime shift_to = at_forward(m, 0);
                span("tp/cp comm", "tp/cp collectives mb" + std::to_string(m), shift_to + (last_first - last_start),
                     shift_to + (last_end - last_start));
            }
        }
        SimTime now = std::max(backward_end, comm_done);
        const SimTime optimizer = SimTime::from_seconds(plan.optimizer_seconds);
        span("compute", "optimizer", now, now + optimizer);
        now += optimizer;
        if (plan.param_all_gather_seconds > 0) {
            const SimTime gather = SimTime::from_seconds(plan.param_all_gather_seconds);
            span("comm", "param allgather", now, now + gather);
            now += gather;
        }
        if (plan.overlapped_host_seconds > 0) {
            span("host", "step host work (beside the graph)", SimTime::zero(),
                 SimTime::from_seconds(plan.overlapped_host_seconds));
            if (host_wait > 0) {
                const SimTime wait = SimTime::from_seconds(host_wait);
                span("compute", "wait for host", now, now + wait);
                now += wait;
            }
        }
        if (plan.fixed_step_seconds > 0) {
            const SimTime fixed = SimTime::from_seconds(plan.fixed_step_seconds);
            span("compute", "fixed step overhead", now, now + fixed);
            now += fixed;
        }
        if (plan.eval_seconds > 0) span("eval", "eval", now, now + SimTime::from_seconds(plan.eval_seconds));
    }
    return r;
}

}  // namespace ttsim
