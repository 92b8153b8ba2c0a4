#include "tools/cli/progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

namespace ttsim::cli {

namespace {
// Runs shorter than this draw nothing: a bar that flashes for a fraction of a second is noise.
constexpr std::chrono::seconds kQuietStart{1};
constexpr int kWidth = 30;   // characters of the bar itself
}  // namespace

ProgressBar::ProgressBar(std::string label, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), terminal_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
    if (!terminal_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (on_screen_) std::fprintf(stderr, "\n");
}

void ProgressBar::draw_locked() {
    const int percent = total_ ? static_cast<int>(100 * done_ / total_) : 100;
    const int filled = percent * kWidth / 100;
    std::fprintf(stderr, "\r%s [%s%s] %zu/%zu %s", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), done_, total_, unit_.c_str());
    std::fflush(stderr);
    drawn_percent_ = percent;
    on_screen_ = true;
}

void ProgressBar::update(std::size_t done, std::size_t total) {
    if (!terminal_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = done;
    total_ = total;
    if (std::chrono::steady_clock::now() - start_ < kQuietStart) return;
    const int percent = total ? static_cast<int>(100 * done / total) : 100;
    if (drawn_percent_ == 100 || (on_screen_ && percent <= drawn_percent_)) return;
    draw_locked();
    if (done == total) {   // finished: the full bar stays, and what is printed next starts on a new line
        std::fprintf(stderr, "\n");
        on_screen_ = false;
    }
}

void ProgressBar::erase() {
    if (!terminal_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!on_screen_) return;
    std::fprintf(stderr, "\r\033[2K");   // carriage return + "erase line" (ECMA-48 EL 2)
    std::fflush(stderr);
    on_screen_ = false;
}

std::function<void(std::size_t, std::size_t)> make_progress_bar(const std::string& label) {
    if (!isatty(STDERR_FILENO)) return {};
    auto bar = std::make_shared<ProgressBar>(label, "points");
    return [bar](std::size_t done, std::size_t total) { bar->update(done, total); };
}

}  // namespace ttsim::cli
