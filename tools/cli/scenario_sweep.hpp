// Shared pieces of the planning commands (`ttsim run` on scaling-study / sweep / plan scenarios, `ttsim plan`):
// a progress bar that only draws when stderr is a terminal, the trace of one chosen point, and the exit of an
// interrupted plan.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "models/planning/plan_query.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/planning/sweep_runner.hpp"

namespace ttsim::cli {

class ArgParser;

// The --threads option (0 = all cores), at most the hardware threads TBB can use: more would only make TBB
// print its own warning and ignore them, so it is capped here with one note on stderr (results do not depend on
// the thread count). Negative or absurd (> 1024) values are refused naming the flag.
int worker_threads(const ArgParser& args);

// A progress callback for SweepOptions::progress: "\r[#####.....] 12/48 points" on stderr, redrawn at most
// once per percent, only when stderr is a terminal (isatty); otherwise an empty function. Thread-safe.
std::function<void(std::size_t, std::size_t)> make_progress_bar(const std::string& label);

// Writes trace.json (Chrome/Perfetto) of one iteration of the point chosen by `choice` into `out_dir`.
// Returns a one-line description of the traced point, or an empty string when no ok point matches.
std::string write_point_trace(const planning::SweepResult& result, const planning::TraceChoice& choice,
                              const ProfileSet& profiles, const std::string& out_dir);

// The end of a planning run (`ttsim plan`, `scenario: plan`): 0 with an answer; 1 (a stderr line) when no
// configuration meets the constraints; or, when SIGINT cut the search short, the one stderr line saying how much
// was evaluated and kExitInterrupted (130). Flushes `out` first.
// The exit code of a finished sweep: 0 when at least one point was predicted, else 1 (exit_codes.hpp).
int sweep_exit_code(const planning::SweepResult& result);

int finish_plan(const planning::PlanAnswer& answer, std::ostream& out, const std::optional<std::string>& out_dir);

}  // namespace ttsim::cli
