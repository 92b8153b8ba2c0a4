// The outputs of a sweep: a human table (one block per series, warnings folded into numbered footnotes), CSV
// (one row per point) and JSON (schema "ttsim.results/1", docs/results-schema.md). All three are pure functions
// of the SweepResult, with fixed number formatting and no timestamps, so equal results give equal bytes.
#pragma once

#include <string>

#include "models/planning/sweep_runner.hpp"

namespace ttsim::planning {

inline constexpr const char* kResultsSchema = "ttsim.results/1";

std::string format_sweep_table(const std::string& title, const SweepResult& result);
std::string format_sweep_csv(const SweepResult& result);
std::string format_sweep_json(const std::string& kind, const std::string& name, const SweepResult& result);

// The break-even definition and energy model lines every report carries.
std::string describe_break_even(const SweepOptions& options);

}  // namespace ttsim::planning
