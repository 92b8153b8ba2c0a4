// report.html: one self-contained page a planner can share. Everything is inline: CSS, the
// plots as SVG, a few lines of script (sortable tables, and a recorder of script errors that tests read), and
// results.json itself; a Content-Security-Policy forbids the page any fetch, so it renders the same offline.
//
// The writer knows nothing about sweeps or plans: any command fills a ReportInput (results_report.hpp builds
// one from a results.json, so the page shows exactly the numbers that file holds) and calls write_html_report.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ttsim::report {

// One table cell. A number carries where it came from: `key`, a JSON pointer into results.json
// ("/points/3/ttt_minutes"), and `value`, the number as results.json writes it (empty when the JSON has null), so
// a reader or a test can check every figure on the page against the file. `text` is what a person reads.
struct Cell {
    std::string text;
    std::string key;     // empty: not a figure of results.json (a label, a footnote mark)
    std::string value;   // JSON text of the number; empty when `key` points at null
    bool numeric = false;   // right-aligned, sorted by value
};

struct Table {
    std::string caption;
    std::vector<std::string> lines;     // under the caption: break-even, reference, ... (one line each)
    std::vector<std::string> columns;
    std::vector<std::vector<Cell>> rows;
    std::vector<std::string> notes;     // footnotes, "[1] ..." in the order their marks appear
    std::vector<std::size_t> marked_rows = {};   // rows drawn highlighted (a plan's answer among all evaluated)
};

struct Plot {
    std::string caption;
    std::string svg;   // an SVG document (gnuplot's output); its XML prolog is dropped and its ids made unique
};

struct ReportInput {
    std::string title;
    std::string command;                 // what produced it, e.g. "ttsim run scenarios/default.yaml --out out/"
    std::string kind;                    // results.json "kind": scaling-study, sweep, plan, ...
    std::vector<std::string> summary;    // the answer in sentences, shown first
    std::vector<std::string> warnings;   // things a reader must not miss (interrupted, infeasible, ...)
    std::vector<Table> tables;           // the results, same rows and figures as results.json
    std::vector<Plot> plots;
    std::vector<Table> published;        // the published MLPerf points compared with ttsim, where there are any
    std::vector<std::string> assumptions;   // models, prices, energy, defaults taken, measured model error
    std::string results_json;            // the text of results.json, embedded verbatim for scripts
};

// Text as HTML or SVG character data or a quoted attribute value: & < > " escaped.
std::string escape_html(const std::string& text);

// The page (pure: the same input gives the same bytes).
std::string render_html_report(const ReportInput& input);

// Renders and writes `path` atomically (atomic_file.hpp); InputError naming --out when it cannot be written.
void write_html_report(const std::string& path, const ReportInput& input);

}  // namespace ttsim::report
