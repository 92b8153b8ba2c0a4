// A progress bar on stderr for anything that may run for more than a second (collective size sweeps, sweeps,
// plan searches): "\r<label> [#####.........] 12/48 <unit>". It draws only when stderr is a terminal (isatty),
// and only once the run has taken more than a second (a quick run stays silent), so tests, pipes and redirected
// output are never touched. Redrawn at most once per percent. Thread-safe (sweep workers report from TBB threads).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace ttsim::cli {

class ProgressBar {
public:
    ProgressBar(std::string label, std::string unit);
    ~ProgressBar();   // ends a drawn bar's line
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    bool active() const { return terminal_; }
    void update(std::size_t done, std::size_t total);
    // Erases a drawn bar, so that a line written to stdout on the same terminal is not mixed into it; the next
    // update() draws it again below that line.
    void erase();

private:
    void draw_locked();
    std::string label_, unit_;
    bool terminal_ = false;
    std::chrono::steady_clock::time_point start_;
    std::mutex mutex_;
    int drawn_percent_ = -1;
    bool on_screen_ = false;
    std::size_t done_ = 0, total_ = 0;
};

// A callback for SweepOptions::progress: a ProgressBar counting "points", or an empty function when stderr is
// not a terminal.
std::function<void(std::size_t, std::size_t)> make_progress_bar(const std::string& label);

}  // namespace ttsim::cli
