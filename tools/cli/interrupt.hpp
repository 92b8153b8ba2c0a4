// Ctrl-C (SIGINT) for long sweeps: the first SIGINT only sets a flag; the sweep engine checks `interrupted()`
// between points, stops, and writes the rows it has completed (each file written atomically), so an
// interrupted run leaves valid, shorter results and no temp files. A second SIGINT restores the default
// action and re-raises, so a stuck run can still be killed from the keyboard.
//
//   InterruptGuard guard;                 // installs the handler for this scope (restores the old one after)
//   for (point : points) {
//       if (interrupted()) break;         // lock-free: reads a sig_atomic_t
//       rows.push_back(run(point));
//   }
//   write_results(rows);                  // complete rows only
//   if (interrupted()) ...                // e.g. mention "interrupted after N of M points" in the report
//
// The flag is the one piece of process-wide mutable state in ttsim, and it has to be: a signal handler can
// only communicate through a `volatile std::sig_atomic_t` (or a lock-free atomic) with static storage
// duration. Nothing else in ttsim reads or writes globals.
#pragma once

#include <cstddef>
#include <string>

namespace ttsim::cli {

// Exit code of a run stopped by SIGINT (128 + SIGINT, what a shell reports for a process killed by it).
inline constexpr int kExitInterrupted = 130;

// True once SIGINT has arrived while an InterruptGuard was alive (or request_interrupt() was called).
bool interrupted() noexcept;

// Sets the flag as SIGINT would (for tests, and for a sweep that wants to stop its siblings).
void request_interrupt() noexcept;

// Clears the flag (tests; a new top-level command starts un-interrupted).
void clear_interrupt() noexcept;

// RAII: installs the SIGINT handler on construction (the flag keeps its value, so a Ctrl-C caught by an outer
// guard survives into an inner one); restores the previous handler on destruction. Not copyable. Guards may
// nest; the innermost restores what the outer one installed. Commands install one as early as they can (`ttsim
// run` before reading the scenario), so a Ctrl-C during start-up is a clean "nothing ran" and not a kill.
// Writes the one stderr line of an interrupted run, "ttsim: interrupted: 37 of 384 points finished; <detail>",
// (after ending a progress bar's line when stderr is a terminal) and returns kExitInterrupted.
int report_interrupted(std::size_t finished, std::size_t total, const std::string& unit, const std::string& detail);

// The stderr line of a run stopped before its first point ("ttsim: interrupted before anything ran; nothing was
// written"); returns kExitInterrupted.
int report_interrupted_before_start();

class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
    void* previous_;  // the previous struct sigaction, heap-held so this header needs no <signal.h>
};

}  // namespace ttsim::cli
