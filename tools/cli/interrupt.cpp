#include "tools/cli/interrupt.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>

#include <signal.h>

using SigAction = struct ::sigaction;  // named once: `new struct sigaction{}` would declare a new type

namespace ttsim::cli {
namespace {

// The justified exception to "no global mutable state": the only thing a signal handler may touch.
volatile std::sig_atomic_t g_interrupt_count = 0;

extern "C" void on_sigint(int signo) {
    if (g_interrupt_count == 0) {
        g_interrupt_count = 1;
        return;
    }
    // Second Ctrl-C: the user really wants out. Default action, re-raised (async-signal-safe calls only).
    ::signal(signo, SIG_DFL);
    ::raise(signo);
}

}  // namespace

bool interrupted() noexcept { return g_interrupt_count != 0; }
void request_interrupt() noexcept { g_interrupt_count = 1; }
void clear_interrupt() noexcept { g_interrupt_count = 0; }

int report_interrupted(std::size_t finished, std::size_t total, const std::string& unit, const std::string& detail) {
    std::fprintf(stderr, "%sttsim: interrupted: %zu of %zu %s finished%s%s\n", isatty(STDERR_FILENO) ? "\n" : "",
                 finished, total, unit.c_str(), detail.empty() ? "" : "; ", detail.c_str());
    std::fflush(stderr);
    return kExitInterrupted;
}

int report_interrupted_before_start() {
    std::fprintf(stderr, "%sttsim: interrupted before anything ran; nothing was written\n", isatty(STDERR_FILENO) ? "\n" : "");
    std::fflush(stderr);
    return kExitInterrupted;
}

InterruptGuard::InterruptGuard() : previous_(new SigAction()) {
    // The flag is not cleared: a Ctrl-C caught by an outer guard (while the scenario was read) must survive
    // into the sweep's own guard. A process starts with it clear; tests clear it explicitly.
    struct sigaction action {};
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // result writes in flight are not disturbed; the sweep polls the flag
    ::sigaction(SIGINT, &action, static_cast<struct sigaction*>(previous_));
}

InterruptGuard::~InterruptGuard() {
    auto* previous = static_cast<struct sigaction*>(previous_);
    ::sigaction(SIGINT, previous, nullptr);
    delete previous;
}

}  // namespace ttsim::cli
