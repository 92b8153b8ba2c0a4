// The outputs of a sweep: a human table (one block per series, warnings folded into numbered footnotes), CSV
// (one row per point) and JSON (schema "ttsim.results/2", docs/results-schema.md). All three are pure functions
// of the SweepResult, with fixed number formatting and no timestamps, so equal results give equal bytes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/planning/sweep_runner.hpp"

namespace ttsim::planning {

// 2: `efficiency` became `ttt_efficiency` (distinct from predict's throughput efficiency); published comparisons
// are at the published results' own batches (docs/results-schema.md).
inline constexpr const char* kResultsSchema = "ttsim.results/2";

// A CSV field: quoted (RFC 4180) when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);
// A CSV number: eight significant digits, enough to compare runs, stable across platforms with IEEE doubles.
std::string csv_number(double value);

// How a prediction's layout was chosen: the search's words ("fastest of 20 layouts that fit ..."), or "published"
// (v4.1's layout at the nearest scale: `layout: published`, the lumped model). One text for every output.
std::string layout_choice_text(const Prediction& p);
// A prediction's model FLOPs utilisation and model TFLOP/s per GPU as two CSV fields ("0.41,404.5"), both empty
// where the workload states no FLOPs; the JSON outputs write them as numbers or null (`mfu`,
// `model_tflops_per_gpu`).
std::string mfu_csv_fields(const Prediction& p);
// The same two as JSON keys of `j` (`mfu`, `model_tflops_per_gpu`): numbers, or null without FLOPs.
void add_mfu_json(nlohmann::ordered_json& j, const Prediction& p);
// A prediction's failures and checkpoints (Prediction::reliability, models/reliability/job_reliability.hpp) as
// the CSV columns kReliabilityCsvColumns names: goodput (failure-free time over expected wall time), expected
// interruptions, the checkpoint interval, the expected wall time and its p90 at the p90 convergence; all empty
// where the prediction has none.
inline constexpr const char* kReliabilityCsvColumns =
    "goodput,interruptions,checkpoint_interval_minutes,expected_wall_minutes,wall_p90_minutes";
std::string reliability_csv_fields(const Prediction& p);
// The same as JSON keys of `j` (`goodput`, `interruptions`, `checkpoint_interval_minutes`, written beside
// `ttt_minutes`) and a `reliability` object with the rest (rates, MTTF, checkpoint size and times, wall-time
// distribution); nulls where the prediction has none.
void add_reliability_json(nlohmann::ordered_json& j, const Prediction& p);
// A network option's fabric shape as JSON: the fields it sets (FabricShape: planes, switch_ports, tiers, ...).
nlohmann::ordered_json fabric_shape_json(const FabricShape& shape);
// The published layout's prediction beside a searched one (Prediction::published), as every JSON output writes it.
nlohmann::ordered_json published_alternative_json(const Prediction::Alternative& a);

std::string format_sweep_table(const std::string& title, const SweepResult& result);
std::string format_sweep_csv(const SweepResult& result);
std::string format_sweep_json(const std::string& kind, const std::string& name, const SweepResult& result);

// The break-even definition and energy model lines every report carries.
std::string describe_break_even(const SweepOptions& options);
// One series' break-even headline under the options' rule: the knee with its range, or the doubling walk's count
// and why it ends there, or why it was not judged.
std::string describe_series_break_even(const SeriesSummary& series, const SweepOptions& options);
// The headline, then the other answers (the knee under the walk rule, the largest doubling that pays, the
// cheapest count within the deadline), one line each.
std::vector<std::string> describe_series_scaling(const SeriesSummary& series, const SweepOptions& options);
// Text for a terminal: `first` (a label, or nothing) then `text` word-wrapped so that no line exceeds `width`
// characters, continuation lines indented by `indent` spaces; a word longer than a line (a path) is cut. Ends
// with a newline. Every table line of predict and plan goes through it.
inline constexpr std::size_t kTextWidth = 120;
std::string wrap_text(const std::string& first, std::size_t indent, const std::string& text,
                      std::size_t width = kTextWidth);

// "0.497 < 0.500": `value` against `threshold` with as many decimals (at least 2) as the comparison needs.
std::string decision_value(double value, double threshold);

}  // namespace ttsim::planning
