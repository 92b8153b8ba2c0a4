#include "models/training/pipeline_schedule.hpp"

#include <algorithm>

#include "sim/errors.hpp"
#include "sim/event_queue.hpp"

namespace ttsim {

const char* to_string(PipeScheduleKind kind) { return kPipeScheduleNames[static_cast<int>(kind)].data(); }

std::optional<PipeScheduleKind> pipe_schedule_named(std::string_view name) {
    for (const auto kind : {PipeScheduleKind::gpipe, PipeScheduleKind::one_f_one_b, PipeScheduleKind::interleaved})
        if (name == to_string(kind)) return kind;
    return std::nullopt;
}

PipeScheduleKind pipe_schedule_of(const std::string& named, int virtual_pipeline) {
    if (named.empty()) return virtual_pipeline > 1 ? PipeScheduleKind::interleaved : PipeScheduleKind::one_f_one_b;
    const std::optional<PipeScheduleKind> kind = pipe_schedule_named(named);
    TTSIM_ASSERT(kind.has_value(), "unknown pipeline schedule '" + named + "'");
    return *kind;
}

std::string schedule_problem(PipeScheduleKind kind, int devices, int chunks, int micro_batches) {
    if (devices < 1 || chunks < 1 || micro_batches < 1) return "pipeline stages, chunks and micro batches must be >= 1";
    if (chunks > 1 && devices < 2)
        return "virtual pipeline stages (VP " + std::to_string(chunks) + ") need pipeline parallelism (PP >= 2)";
    if (chunks > 1 && kind != PipeScheduleKind::interleaved)
        return std::string("virtual pipeline stages need the interleaved schedule, not ") + to_string(kind);
    if (kind == PipeScheduleKind::interleaved && chunks > 1 && micro_batches % devices != 0)
        return "the interleaved schedule needs the micro batches per step (" + std::to_string(micro_batches) +
               ") to be a multiple of PP (" + std::to_string(devices) + "), as Megatron-LM asserts";
    return {};
}

namespace {

// Tasks indexed by (device, chunk, micro, pass), every one of them present in any schedule; the builders differ
// only in each device's order.
struct Indexer {
    int devices, chunks, micro_batches;
    int operator()(int device, int chunk, int micro, bool backward) const {
        return ((device * chunks + chunk) * micro_batches + micro) * 2 + (backward ? 1 : 0);
    }
};

Schedule skeleton(PipeScheduleKind kind, int devices, int chunks, int micro_batches) {
    const std::string problem = schedule_problem(kind, devices, chunks, micro_batches);
    if (!problem.empty()) throw InputError(problem);
    Schedule s;
    s.kind = kind;
    s.devices = devices;
    s.chunks = chunks;
    s.micro_batches = micro_batches;
    const Indexer index{devices, chunks, micro_batches};
    const int stages = devices * chunks;
    s.tasks.resize(static_cast<std::size_t>(devices) * chunks * micro_batches * 2);
    for (int d = 0; d < devices; ++d)
        for (int c = 0; c < chunks; ++c)
            for (int m = 0; m < micro_batches; ++m)
                for (const bool backward : {false, true}) {
                    PipeTask& t = s.tasks[index(d, c, m, backward)];
                    t.device = d;
                    t.chunk = c;
                    t.micro = m;
                    t.backward = backward;
                    const int stage = c * devices + d;
                    if (!backward && stage > 0) {
                        const int prev = stage - 1;
                        t.waits.push_back({index(prev % devices, prev / devices, m, false), prev % devices != d});
                    }
                    if (backward) {
                        t.waits.push_back({index(d, c, m, false), false});
                        if (stage + 1 < stages) {
                            const int next = stage + 1;
                            t.waits.push_back({index(next % devices, next / devices, m, true), next % devices != d});
                        }
                    }
                }
    s.order.assign(devices, {});
    return s;
}

}  // namespace

Schedule gpipe(int devices, int micro_batches) {
    Schedule s = skeleton(PipeScheduleKind::gpipe, devices, 1, micro_batches);
    const Indexer index{devices, 1, micro_batches};
    for (int d = 0; d < devices; ++d) {
        for (int m = 0; m < micro_batches; ++m) s.order[d].push_back(index(d, 0, m, false));
        for (int m = 0; m < micro_batches; ++m) s.order[d].push_back(index(d, 0, m, true));
    }
    return s;
}

Schedule one_f_one_b(int devices, int micro_batches) {
    Schedule s = skeleton(PipeScheduleKind::one_f_one_b, devices, 1, micro_batches);
    const Indexer index{devices, 1, micro_batches};
    for (int d = 0; d < devices; ++d) {
        const int warmup = std::min(devices - d - 1, micro_batches);
        auto& order = s.order[d];
        for (int m = 0; m < warmup; ++m) order.push_back(index(d, 0, m, false));
        for (int i = 0; i < micro_batches - warmup; ++i) {
            order.push_back(index(d, 0, warmup + i, false));
            order.push_back(index(d, 0, i, true));
        }
        for (int m = micro_batches - warmup; m < micro_batches; ++m) order.push_back(index(d, 0, m, true));
    }
    return s;
}

Schedule interleaved(int devices, int chunks, int micro_batches) {
    if (chunks == 1) {
        Schedule s = one_f_one_b(devices, micro_batches);
        s.kind = PipeScheduleKind::interleaved;
        return s;
    }
    Schedule s = skeleton(PipeScheduleKind::interleaved, devices, chunks, micro_batches);
    const Indexer index{devices, chunks, micro_batches};
    const int total = micro_batches * chunks;
    const int group = devices * chunks;
    // The k-th forward (backward) of a device runs chunk (k mod p v) / p (from the last chunk backwards) on micro
    // batch (k / p v) p + k mod p: groups of p micro batches go through each chunk in turn.
    auto micro_of = [&](int k) { return (k / group) * devices + k % devices; };
    auto forward_chunk = [&](int k) { return (k % group) / devices; };
    auto backward_chunk = [&](int k) { return chunks - 1 - (k % group) / devices; };
    for (int d = 0; d < devices; ++d) {
        // Megatron-LM: all forwards first when there are only p micro batches, else (p - d - 1) x 2 + (v - 1) x p.
        const int warmup =
            micro_batches == devices ? total : std::min(total, (devices - d - 1) * 2 + (chunks - 1) * devices);
        auto& order = s.order[d];
        for (int k = 0; k < warmup; ++k) order.push_back(index(d, forward_chunk(k), micro_of(k), false));
        for (int i = 0; i < total - warmup; ++i) {
            const int k = warmup + i;
            order.push_back(index(d, forward_chunk(k), micro_of(k), false));
            order.push_back(index(d, backward_chunk(i), micro_of(i), true));
        }
        for (int k = total - warmup; k < total; ++k) order.push_back(index(d, backward_chunk(k), micro_of(k), true));
    }
    return s;
}

Schedule build_schedule(PipeScheduleKind kind, int devices, int chunks, int micro_batches) {
    switch (kind) {
        case PipeScheduleKind::gpipe:
            if (chunks != 1) throw InputError(schedule_problem(kind, devices, chunks, micro_batches));
            return gpipe(devices, micro_batches);
        case PipeScheduleKind::one_f_one_b:
            if (chunks != 1) throw InputError(schedule_problem(kind, devices, chunks, micro_batches));
            return one_f_one_b(devices, micro_batches);
        case PipeScheduleKind::interleaved: return interleaved(devices, chunks, micro_batches);
    }
    return one_f_one_b(devices, micro_batches);
}

namespace {

// One run of simulate_pipeline: the schedule's state as the events see it. Each event's action captures only a
// pointer to this and two ints, which std::function holds without a heap allocation: a search simulates thousands
// of pipelines of thousands of tasks each.
struct PipelineRun {
    const Schedule& s;
    const StageDurations& d;
    bool record_timeline;
    int devices;
    Simulation sim;
    // The reverse of PipeTask::waits, flat: task i's waiters are waiters[first_waiter[i] .. first_waiter[i + 1]).
    std::vector<PipeTask::Wait> waiters;
    std::vector<std::size_t> first_waiter;
    std::vector<int> pending;                           // waits each task still has
    std::vector<std::size_t> next;
    std::vector<char> busy;
    std::vector<SimTime> busy_time;
    // Directed p2p links between devices (from x devices + to), each free from its time on; a device's DP stream.
    std::vector<SimTime> link_free, dp_free;
    std::vector<int> backwards_done;
    SimTime compute_end = SimTime::zero(), step_end = SimTime::zero();
    double p2p_busy = 0;
    PipeResult r;

    PipelineRun(const Schedule& schedule, const StageDurations& durations, bool record)
        : s(schedule), d(durations), record_timeline(record), devices(schedule.devices), first_waiter(schedule.tasks.size() + 1, 0),
          pending(schedule.tasks.size(), 0), next(static_cast<std::size_t>(devices), 0),
          busy(static_cast<std::size_t>(devices), 0), busy_time(static_cast<std::size_t>(devices), SimTime::zero()),
          link_free(static_cast<std::size_t>(devices) * devices, SimTime::zero()),
          dp_free(static_cast<std::size_t>(devices), SimTime::zero()),
          backwards_done(static_cast<std::size_t>(devices) * schedule.chunks, 0) {
        const std::size_t n = s.tasks.size();
        for (std::size_t i = 0; i < n; ++i)
            for (const PipeTask::Wait& w : s.tasks[i].waits) {
                ++first_waiter[static_cast<std::size_t>(w.task) + 1];
                ++pending[i];
            }
        for (std::size_t i = 0; i < n; ++i) first_waiter[i + 1] += first_waiter[i];
        waiters.resize(first_waiter[n]);
        std::vector<std::size_t> filled(first_waiter.begin(), first_waiter.end() - 1);
        for (std::size_t i = 0; i < n; ++i)
            for (const PipeTask::Wait& w : s.tasks[i].waits)
                waiters[filled[static_cast<std::size_t>(w.task)]++] = {static_cast<int>(i), w.remote};
    }

    SimTime duration_of(const PipeTask& t) const {
        const int stage = t.virtual_stage(devices);
        return SimTime::from_seconds(t.backward ? d.backward[stage] : d.forward[stage]);
    }
    void span(int device, const char* stream, std::string name, SimTime start, SimTime length) {
        r.timeline.push_back({device, stream, std::move(name), start, length});
    }
    std::string label(const PipeTask& t) const {
        return std::string(t.backward ? "B" : "F") + (s.chunks > 1 ? " c" + std::to_string(t.chunk) : "") + " mb" +
               std::to_string(t.micro);
    }

    void release(int task) {
        if (--pending[static_cast<std::size_t>(task)] == 0) try_start(s.tasks[static_cast<std::size_t>(task)].device);
    }
    void try_start(int device) {
        const auto dev = static_cast<std::size_t>(device);
        if (busy[dev] || next[dev] >= s.order[dev].size()) return;
        const int task = s.order[dev][next[dev]];
        if (pending[static_cast<std::size_t>(task)] > 0) return;
        const PipeTask& t = s.tasks[static_cast<std::size_t>(task)];
        busy[dev] = 1;
        ++next[dev];
        const SimTime length = duration_of(t);
        busy_time[dev] += length;
        if (record_timeline) span(device, "compute", label(t), sim.now(), length);
        sim.schedule_after(length, [run = this, task, device] { run->finish(task, device); });
    }
    void finish(int task, int device) {
        const auto dev = static_cast<std::size_t>(device);
        const PipeTask& done = s.tasks[static_cast<std::size_t>(task)];
        busy[dev] = 0;
        compute_end = std::max(compute_end, sim.now());
        step_end = std::max(step_end, sim.now());
        for (std::size_t k = first_waiter[static_cast<std::size_t>(task)]; k < first_waiter[static_cast<std::size_t>(task) + 1]; ++k) {
            const PipeTask::Wait& w = waiters[k];
            if (!w.remote) {
                release(w.task);
                continue;
            }
            // The message crosses the boundary between this stage and the waiter's (neighbours).
            const PipeTask& to = s.tasks[static_cast<std::size_t>(w.task)];
            const int boundary = std::min(done.virtual_stage(devices), to.virtual_stage(devices));
            SimTime& free = link_free[dev * static_cast<std::size_t>(devices) + static_cast<std::size_t>(to.device)];
            const SimTime start = std::max(sim.now(), free);
            const SimTime length = SimTime::from_seconds(d.p2p[static_cast<std::size_t>(boundary)]);
            free = start + length;
            p2p_busy += d.p2p[static_cast<std::size_t>(boundary)];
            if (record_timeline)
                span(device, "p2p",
                     std::string(done.backward ? "send grad s" : "send act s") + std::to_string(done.virtual_stage(devices)) +
                         "->s" + std::to_string(to.virtual_stage(devices)) + " mb" + std::to_string(done.micro),
                     start, length);
            sim.schedule_at(free, [run = this, waiter = w.task] { run->release(waiter); });
        }
        if (done.backward && !d.dp_reduce.empty() &&
            ++backwards_done[dev * static_cast<std::size_t>(s.chunks) + static_cast<std::size_t>(done.chunk)] ==
                s.micro_batches) {
            // This chunk's gradients are complete: reduce them over data parallelism on the device's DP stream.
            const SimTime start = std::max(sim.now(), dp_free[dev]);
            const SimTime length = SimTime::from_seconds(d.dp_reduce[static_cast<std::size_t>(done.virtual_stage(devices))]);
            dp_free[dev] = start + length;
            step_end = std::max(step_end, dp_free[dev]);
            if (record_timeline)
                span(device, "dp comm",
                     "gradient reduction" + (s.chunks > 1 ? " c" + std::to_string(done.chunk) : std::string()), start,
                     length);
        }
        try_start(device);
    }
};

}  // namespace

PipeResult simulate_pipeline(const Schedule& s, const StageDurations& d, bool record_timeline) {
    const int stages = s.virtual_stages();
    TTSIM_ASSERT(static_cast<int>(d.forward.size()) == stages && static_cast<int>(d.backward.size()) == stages,
                 "one forward and one backward duration per virtual stage");
    TTSIM_ASSERT(static_cast<int>(d.p2p.size()) == std::max(0, stages - 1), "one p2p time per stage boundary");
    TTSIM_ASSERT(d.dp_reduce.empty() || static_cast<int>(d.dp_reduce.size()) == stages, "one reduction per stage");
    PipelineRun run(s, d, record_timeline);
    run.sim.reserve(static_cast<std::size_t>(s.devices) * 4);   // per device: a task's end and its sends in flight
    const int devices = s.devices;
    for (int device = 0; device < devices; ++device)
        run.sim.schedule_at(SimTime::zero(), [r = &run, device] { r->try_start(device); });
    run.sim.run();
    for (int device = 0; device < devices; ++device)
        TTSIM_ASSERT(run.next[static_cast<std::size_t>(device)] == s.order[static_cast<std::size_t>(device)].size(),
                     "pipeline schedule deadlocked: a task waits for one that never runs");

    PipeResult r = std::move(run.r);
    r.makespan_seconds = run.compute_end.seconds();
    r.step_seconds = run.step_end.seconds();
    r.busy_seconds = std::max_element(run.busy_time.begin(), run.busy_time.end())->seconds();
    r.bubble_fraction = r.busy_seconds > 0 ? (r.makespan_seconds - r.busy_seconds) / r.busy_seconds : 0.0;
    r.p2p_busy_seconds = run.p2p_busy;
    r.exposed_dp_seconds = r.step_seconds - r.makespan_seconds;
    r.events = run.sim.events_processed();
    return r;
}

}  // namespace ttsim
