// Pipeline-parallel schedules as data, and one optimizer step of a pipeline simulated on the event engine.
//
// A pipeline of p devices (PP ranks) holds v model chunks each (virtual pipeline, VP): virtual stage
// s = chunk x p + device holds the s-th of p x v contiguous layer ranges (Megatron-LM's interleaved assignment).
// A schedule is, per device, the order in which it runs the forward (F) and backward (B) pass of each micro batch
// through each of its chunks; every task also lists what it waits for:
//   F(s, m) waits for F(s-1, m)'s activations to arrive from the device of s-1 (a p2p send over the fabric),
//   B(s, m) waits for its own F(s, m) and for B(s+1, m)'s gradients to arrive from the device of s+1.
// Builders give GPipe (all forwards, then all backwards), 1F1B (PipeDream-flush: p-1-d warm-up forwards, then one
// forward one backward, then the cool-down backwards) and interleaved 1F1B (Narayanan et al. SC'21, arXiv
// 2104.04473 §2.2; the order Megatron-LM's forward_backward_pipelining_with_interleaving runs).
//
// simulate_pipeline() runs a schedule as a list scheduler: each device runs its tasks in its order, each as soon as
// the device is free and what it waits for has arrived; each p2p message queues on the directed link between its two
// devices (FIFO, one message at a time, its time `p2p_seconds` of that boundary). After a device's last backward
// of a chunk that chunk's gradients are reduced over data parallelism on the device's own communication stream
// (Megatron's overlapped gradient reduction per model chunk); the step ends when every device's gradients are
// reduced. The bubble, stage imbalance and exposed p2p are read off the timeline, not from a formula:
// with free p2p and even stages 1F1B's idle share is (p-1)/m and interleaved's (p-1)/(v m) (tests).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/errors.hpp"
#include "sim/time.hpp"

namespace ttsim {

enum class PipeScheduleKind { gpipe, one_f_one_b, interleaved };
const char* to_string(PipeScheduleKind kind);
// The names a layout gives the schedules (`--layout schedule=`, a scenario's `layout: {schedule: ...}`), in enum
// order; to_string writes them.
inline constexpr std::string_view kPipeScheduleNames[] = {"gpipe", "1f1b", "interleaved"};
// The schedule `name` names; nullopt for another name.
std::optional<PipeScheduleKind> pipe_schedule_named(std::string_view name);
// A layout's schedule (ParallelismConfig::pipeline_schedule): the one it names, else interleaved with VP > 1 and
// 1F1B without.
PipeScheduleKind pipe_schedule_of(const std::string& named, int virtual_pipeline);

struct PipeTask {
    int device = 0, chunk = 0, micro = 0;
    bool backward = false;
    // Indices into Schedule::tasks this one waits for; `remote` ones arrive over a p2p link (the other device's
    // output sent to this one), the rest are on this device.
    struct Wait {
        int task = -1;
        bool remote = false;
    };
    // A task waits for at most two others (a backward: its own forward and the next stage's backward), held in
    // place: a search builds thousands of schedules of thousands of tasks.
    struct Waits {
        Wait items[2];
        int count = 0;
        void push_back(Wait w) {
            TTSIM_ASSERT(count < 2, "a pipeline task waits for at most two others");
            items[count++] = w;
        }
        const Wait* begin() const { return items; }
        const Wait* end() const { return items + count; }
        std::size_t size() const { return static_cast<std::size_t>(count); }
    };
    Waits waits;
    int virtual_stage(int devices) const { return chunk * devices + device; }
};

struct Schedule {
    PipeScheduleKind kind = PipeScheduleKind::one_f_one_b;
    int devices = 1, chunks = 1, micro_batches = 1;
    std::vector<PipeTask> tasks;
    std::vector<std::vector<int>> order;   // per device: indices into tasks, in the order the device runs them
    int virtual_stages() const { return devices * chunks; }
};

// The rules a schedule of `devices` x `chunks` over `micro_batches` needs, as a sentence naming the failed one;
// empty when it can be built. Interleaving needs the micro batches to be a multiple of the devices (Megatron-LM
// asserts num_microbatches % pipeline_parallel_size == 0).
std::string schedule_problem(PipeScheduleKind kind, int devices, int chunks, int micro_batches);

Schedule gpipe(int devices, int micro_batches);
Schedule one_f_one_b(int devices, int micro_batches);
Schedule interleaved(int devices, int chunks, int micro_batches);
// The builder for `kind` (interleaved with chunks == 1 is 1F1B).
Schedule build_schedule(PipeScheduleKind kind, int devices, int chunks, int micro_batches);

// Per virtual stage: one micro batch's forward and backward seconds, and the seconds one p2p message (activations
// forward, gradients backward: the same size) takes over the boundary from stage s to s+1 (size stages-1).
// dp_reduce_seconds: per virtual stage, the data-parallel reduction of its gradients after its last backward.
struct StageDurations {
    std::vector<double> forward, backward, p2p, dp_reduce;
};

struct PipeSpan {
    int device = 0;
    std::string stream;                    // "compute", "p2p", "dp comm"
    std::string name;                      // "F c1 mb3", "B c0 mb2", "send act s3->s4 mb3", "reduce-scatter c1"
    SimTime start, duration;
};

struct PipeResult {
    double makespan_seconds = 0;           // first forward to the last device's last backward
    double step_seconds = 0;               // to the end of the last gradient reduction
    double busy_seconds = 0;               // the busiest device's compute
    double bubble_fraction = 0;            // (makespan - busiest device's compute) / busiest device's compute
    double p2p_busy_seconds = 0;           // all p2p messages' link time, summed over links
    double exposed_dp_seconds = 0;         // step_seconds - makespan_seconds
    std::uint64_t events = 0;
    std::vector<PipeSpan> timeline;        // only with record_timeline
};

PipeResult simulate_pipeline(const Schedule& schedule, const StageDurations& durations, bool record_timeline = false);

}  // namespace ttsim
