// A ReportInput (html_report.hpp) read from a results.json: the page is built from the very JSON the command
// wrote, so every figure on it is that file's (one source), with its JSON pointer and exact value on the cell.
// Kinds: scaling-study and sweep (a table per series, the published v4.1 points, break-even), plan (the answer,
// its percentiles and measured model error, every configuration evaluated); any other kind (a command that has
// results.json but no layout here yet) gets its top-level facts and one table per array of records.
#pragma once

#include <string>
#include <vector>

#include "tools/report/html_report.hpp"

namespace ttsim::report {

// `results_json`: the text of results.json (InputError-free: it is ttsim's own output; a parse error is a bug and
// throws nlohmann's exception). `command`: how it was produced, shown on the page. `plots`: SVGs to inline.
ReportInput report_from_results(const std::string& results_json, const std::string& command,
                                std::vector<Plot> plots = {});

// The whole page in one call, for a command's --out hook: report_from_results, its plots the SVG files among
// `images` (paths), rendered. Write it with write_file_atomically or an output folder's writer.
std::string results_page(const std::string& results_json, const std::string& command,
                         const std::vector<std::string>& images = {});

// The command a scenario's report names as its source: "ttsim run FILE", without --out DIR, so that the page is
// the same wherever it was written (two runs into two folders give byte-identical reports, as
// tests/cli/shipped_scenarios.sh checks).
std::string scenario_command(const std::string& scenario_file);
// A command as the user typed it, for the report's header: `program` ("ttsim predict") and its arguments, each
// quoted for a POSIX shell where it holds anything but letters, digits and -_./=:,%@+.
std::string command_as_typed(const std::string& program, const std::vector<std::string>& args);

// The SVG plots among `images` (paths, as write_sweep_plots returns them), read from disk, captioned by file name.
std::vector<Plot> read_svg_plots(const std::vector<std::string>& images);

}  // namespace ttsim::report
