// The event engine: one queue with a total, deterministic order — by time, then by insertion sequence.
// Two events at the same picosecond run in the order they were scheduled, whatever the platform or thread
// count. A Simulation owns its clock; there is no global state, so many simulations run side by side.
#pragma once

#include <cstdint>
#include <functional>
#include <algorithm>
#include <vector>

#include "sim/errors.hpp"
#include "sim/time.hpp"

namespace ttsim {

class Simulation {
public:
    using Action = std::function<void()>;

    SimTime now() const { return now_; }
    std::uint64_t events_processed() const { return processed_; }
    bool idle() const { return queue_.empty(); }
    // Room for `events` pending at once, so a simulation that knows its size does not regrow the heap.
    void reserve(std::size_t events) { queue_.reserve(events); }

    // Schedules `action` at absolute time `at` (never in the past).
    void schedule_at(SimTime at, Action action) {
        TTSIM_ASSERT(at >= now_, "event scheduled in the past");
        queue_.push_back(Event{at, next_sequence_++, std::move(action)});
        std::push_heap(queue_.begin(), queue_.end(), Later{});
    }
    void schedule_after(SimTime delay, Action action) { schedule_at(now_ + delay, std::move(action)); }

    // Runs one event; returns false when the queue is empty.
    bool step() {
        if (queue_.empty()) return false;
        std::pop_heap(queue_.begin(), queue_.end(), Later{});
        Event event = std::move(queue_.back());
        queue_.pop_back();
        now_ = event.at;
        ++processed_;
        // Fold (time, sequence) into a running fingerprint of the trajectory (FNV-1a style mixing).
        fingerprint_ = (fingerprint_ ^ static_cast<std::uint64_t>(event.at.ps())) * 0x100000001b3ULL;
        event.action();
        return true;
    }
    void run() { while (step()) {} }
    // Runs events up to and including time `until`.
    void run_until(SimTime until) {
        while (!queue_.empty() && queue_.front().at <= until) step();
        if (now_ < until) now_ = until;
    }
    // A hash of every processed event's time, in order: equal trajectories give equal fingerprints.
    std::uint64_t fingerprint() const { return fingerprint_; }

private:
    struct Event {
        SimTime at;
        std::uint64_t sequence;
        Action action;
    };
    struct Later {
        bool operator()(const Event& a, const Event& b) const {
            if (a.at != b.at) return a.at > b.at;
            return a.sequence > b.sequence;
        }
    };
    std::vector<Event> queue_;   // a binary heap under Later: the earliest (time, sequence) at the front
    SimTime now_ = SimTime::zero();
    std::uint64_t next_sequence_ = 0;
    std::uint64_t processed_ = 0;
    std::uint64_t fingerprint_ = 0xcbf29ce484222325ULL;
};

}  // namespace ttsim
