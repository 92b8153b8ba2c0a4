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

#include "models/planning/plan_format.hpp"
#include "models/planning/plan_query.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/planning/sweep_runner.hpp"
#include "tools/cli/output_dir.hpp"
#include "tools/cli/progress_bar.hpp"   // make_progress_bar

namespace ttsim::cli {

class ArgParser;

// The --threads option (0 = all cores), at most the hardware threads TBB can use: more would only make TBB
// print its own warning and ignore them, so it is capped here with one note on stderr (results do not depend on
// the thread count). Negative or absurd (> 1024) values are refused naming the flag.
int worker_threads(const ArgParser& args);

// Writes trace.json (Chrome/Perfetto) of one iteration of the point chosen by `choice` into `output`.
// Returns a one-line description of the traced point, or an empty string when no ok point matches.
std::string write_point_trace(const planning::SweepResult& result, const planning::TraceChoice& choice,
                              const ProfileSet& profiles, OutputDir& output);

// `evaluate`, counting its calls on a progress bar (progress_bar.hpp: stderr terminals only, after a second) whose
// total is the query's grid (systems x GPU counts; the refinement around the answer that follows is not counted).
// Returns `evaluate` itself when stderr is not a terminal.
// `evaluate` with `notes` (what --like / like: did) added to every evaluation's warnings.
planning::PlanEvaluator with_notes(planning::PlanEvaluator evaluate, const std::vector<std::string>& notes);
planning::PlanEvaluator with_plan_progress(planning::PlanEvaluator evaluate, const planning::PlanQuery& query);

// Writes trace.json of one optimizer step of `scenario` (its first node's GPUs) into `output`.
void write_iteration_trace(const PreparedScenario& scenario, const ComputeProfile& profile,
                           const std::string& description, OutputDir& output);

// The end of a planning run (`ttsim plan`, `scenario: plan`): 0 with an answer; 1 (a stderr line) when no
// configuration meets the constraints; or, when SIGINT cut the search short, the one stderr line saying how much
// was evaluated and kExitInterrupted (130). Flushes `out` first.
// The exit code of a finished sweep: 0 when at least one point was predicted, else 1 (exit_codes.hpp).
int sweep_exit_code(const planning::SweepResult& result);

int finish_plan(const planning::PlanAnswer& answer, std::ostream& out, const std::optional<std::string>& out_dir);

// A plan's answer (`ttsim plan`, `scenario: plan`): results.csv, results.json and report.html (titled with
// `command`) into `output` when given, the
// report in `format` (table, csv or json) on `out`, then finish_plan's exit code.
int print_plan(const std::string& name, const std::string& command, const std::string& format,
               const planning::PlanReportContext& report, const planning::PlanAnswer& answer, std::ostream& out, std::optional<OutputDir>& output);

}  // namespace ttsim::cli
