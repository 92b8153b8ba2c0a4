#include "tools/report/html_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tools/cli/atomic_file.hpp"

namespace ttsim::report {

std::string escape_html(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace {

std::string escape(const std::string& text) { return escape_html(text); }

void replace_all(std::string& text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
}

// An SVG document as an element of the page: from "<svg" on (no XML prolog, which HTML does not allow), with
// every id and reference to one prefixed: gnuplot names its marker shapes gpPt0.. in every file, and one page
// holding several plots needs them unique.
std::string inline_svg(std::string svg, const std::string& prefix) {
    const std::size_t start = svg.find("<svg");
    if (start == std::string::npos) return "";
    svg.erase(0, start);
    for (const char* quote : {"'", "\""}) {
        replace_all(svg, std::string("id=") + quote, std::string("id=") + quote + prefix);
        replace_all(svg, std::string("href=") + quote + "#", std::string("href=") + quote + "#" + prefix);
    }
    replace_all(svg, "url(#", "url(#" + prefix);
    // The figure says what it is to screen readers; it scales with the page (the viewBox keeps its proportions).
    replace_all(svg.replace(0, 4, "<svg role=\"img\""), "<title>Gnuplot</title>", "");
    return svg;
}

// results.json inside <script type="application/json">: "</" would end the element, "<\/" is the same JSON.
std::string embeddable_json(std::string json) {
    replace_all(json, "</", "<\\/");
    return json;
}

void render_table(std::string& out, const Table& table, const std::string& id) {
    out += "<section class=\"table\" id=\"" + id + "\">\n<h3>" + escape(table.caption) + "</h3>\n";
    for (const std::string& line : table.lines) out += "<p class=\"line\">" + escape(line) + "</p>\n";
    out += "<div class=\"scroll\"><table class=\"results\">\n<thead><tr>";
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        const bool numeric = !table.rows.empty() && c < table.rows.front().size() && table.rows.front()[c].numeric;
        out += std::string("<th") + (numeric ? " class=\"num\"" : "") + " title=\"click to sort\">" +
               escape(table.columns[c]) + "</th>";
    }
    out += "</tr></thead>\n<tbody>\n";
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const auto& row = table.rows[r];
        const bool marked = std::find(table.marked_rows.begin(), table.marked_rows.end(), r) != table.marked_rows.end();
        out += marked ? "<tr class=\"marked\">" : "<tr>";
        for (const Cell& cell : row) {
            out += "<td";
            if (cell.numeric) out += " class=\"num\"";
            if (!cell.key.empty()) out += " data-key=\"" + escape(cell.key) + "\"";
            if (!cell.value.empty()) out += " data-value=\"" + escape(cell.value) + "\"";
            out += ">" + escape(cell.text) + "</td>";
        }
        out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
    if (!table.notes.empty()) {
        out += "<ul class=\"notes\">\n";
        for (const std::string& note : table.notes) out += "<li>" + escape(note) + "</li>\n";
        out += "</ul>\n";
    }
    out += "</section>\n";
}

void render_list(std::string& out, const std::vector<std::string>& items, const std::string& css_class) {
    out += "<ul class=\"" + css_class + "\">\n";
    for (const std::string& item : items) out += "<li>" + escape(item) + "</li>\n";
    out += "</ul>\n";
}

// System fonts only (no web font: nothing to fetch); tabular figures so that columns of numbers line up.
constexpr const char* kStyle = R"(
:root { --ink: #1d2433; --muted: #5b6475; --rule: #d9dee7; --band: #f4f6fa; --accent: #0b5cad; --warn: #fff4d6; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: var(--ink); background: #fff; }
main { max-width: 1240px; margin: 0 auto; padding: 18px 24px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--rule); }
h3 { font-size: 15px; margin: 18px 0 4px; }
.meta { color: var(--muted); margin: 0 0 12px; }
nav { font-size: 13px; margin: 0 0 12px; }
nav a { color: var(--accent); margin-right: 14px; text-decoration: none; }
.meta code { background: var(--band); padding: 1px 5px; border-radius: 3px; }
.summary { background: var(--band); border-left: 4px solid var(--accent); padding: 8px 14px; margin: 0; }
.summary li { margin: 2px 0; }
.warnings { background: var(--warn); border-left: 4px solid #c98a00; padding: 8px 14px 8px 30px; }
.line { margin: 0; color: var(--muted); font-size: 13px; }
.scroll { overflow-x: auto; margin-top: 6px; }
table.results { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
table.results th, table.results td { padding: 3px 9px; border-bottom: 1px solid var(--rule); text-align: left;
                                     white-space: nowrap; }
table.results th { background: var(--band); cursor: pointer; position: sticky; top: 0; }
table.results td.num, table.results th.num { text-align: right; }
table.results td:last-child { white-space: normal; min-width: 14em; }   /* notes and errors wrap */
table.results tbody tr:nth-child(even) { background: #fafbfd; }
table.results tbody tr.marked { background: #e4effb; font-weight: 600; }
ul.notes { font-size: 12px; color: var(--muted); margin: 6px 0 0; padding-left: 0; list-style: none; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 12px; }
figure { margin: 0; border: 1px solid var(--rule); border-radius: 4px; padding: 4px; }
figure:only-child { max-width: 900px; }   /* a lone chart at its drawn size, not blown up to the page width */
figure svg { width: 100%; height: auto; display: block; }
/* gnuplot lays out 900x600 at 10 pt (plots.cpp); two plots a row shrink it to ~0.65: larger text stays legible. */
figure svg g[font-size="10.00"] { font-size: 15px; }
figure svg g[font-size="9.00"] { font-size: 11px; }   /* the legend: gnuplot spaced its columns for 9 */
figcaption { font-size: 12px; color: var(--muted); text-align: center; }
ul.assumptions { font-size: 13px; padding-left: 20px; }
ul.assumptions li { margin: 3px 0; }
)";

// First in <head>: every uncaught script error is kept on <html data-script-errors>, where a test reads it.
constexpr const char* kErrorRecorder = R"(
window.addEventListener("error", function (e) {
  var root = document.documentElement;
  var seen = root.getAttribute("data-script-errors");
  root.setAttribute("data-script-errors", (seen ? seen + " | " : "") + String(e.message));
});
)";

// Last in <body>: the embedded results parse, and a click on a column header sorts its table (numbers by the
// exact value in data-value, other columns as text; a second click reverses; rows without the figure stay last).
// Array.prototype.sort is stable, so equal keys keep their order.
constexpr const char* kBehaviour = R"(
(function () {
  var data = JSON.parse(document.getElementById("results-json").textContent);
  document.querySelectorAll("table.results").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th) {
      th.addEventListener("click", function () {
        var column = th.cellIndex, numeric = th.classList.contains("num");
        var ascending = th.getAttribute("data-sorted") !== "ascending";
        table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("data-sorted"); });
        th.setAttribute("data-sorted", ascending ? "ascending" : "descending");
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var key = function (row) {   // null: no figure (a failed row), sorted last either way
          var cell = row.cells[column];
          if (!cell) return null;
          if (!numeric) return cell.textContent;
          var v = cell.getAttribute("data-value");
          return v === null ? null : Number(v);
        };
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          if (x === null || y === null) return (x === null) - (y === null);
          var order = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  document.documentElement.setAttribute("data-rendered", String(data.schema));
})();
)";

}  // namespace

std::string render_html_report(const ReportInput& input) {
    std::string out;
    out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    // No fetch of any kind: styles, scripts and images are the page's own (and SVG is inline, not an image).
    out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "script-src 'unsafe-inline'; img-src data:\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out += "<title>" + escape(input.title) + " - ttsim</title>\n";
    out += "<script>" + std::string(kErrorRecorder) + "</script>\n";
    out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";
    out += "<h1>" + escape(input.title) + "</h1>\n";
    out += "<p class=\"meta\">ttsim " + escape(input.kind) + " report &middot; <code>" + escape(input.command) +
           "</code> &middot; the figures are those of results.json (embedded below)</p>\n";
    // In-page links to the sections this report has (anchors only: nothing is fetched).
    out += "<nav>";
    if (!input.tables.empty()) out += "<a href=\"#results\">Results</a>";
    if (!input.plots.empty()) out += "<a href=\"#plots\">Plots</a>";
    if (!input.published.empty()) out += "<a href=\"#published\">Published results</a>";
    if (!input.assumptions.empty()) out += "<a href=\"#assumptions\">Assumptions</a>";
    out += "</nav>\n";
    if (!input.warnings.empty()) render_list(out, input.warnings, "warnings");
    if (!input.summary.empty()) render_list(out, input.summary, "summary");

    if (!input.tables.empty()) out += "<h2 id=\"results\">Results</h2>\n";
    for (std::size_t t = 0; t < input.tables.size(); ++t)
        render_table(out, input.tables[t], "table-" + std::to_string(t + 1));

    if (!input.plots.empty()) {
        out += "<h2 id=\"plots\">Plots</h2>\n<div class=\"plots\">\n";
        for (std::size_t p = 0; p < input.plots.size(); ++p)
            out += "<figure>" + inline_svg(input.plots[p].svg, "p" + std::to_string(p + 1) + "-") + "<figcaption>" +
                   escape(input.plots[p].caption) + "</figcaption></figure>\n";
        out += "</div>\n";
    }

    if (!input.published.empty()) out += "<h2 id=\"published\">Published MLPerf Training v4.1 results</h2>\n";
    for (std::size_t t = 0; t < input.published.size(); ++t)
        render_table(out, input.published[t], "published-" + std::to_string(t + 1));

    if (!input.assumptions.empty()) {
        out += "<h2 id=\"assumptions\">Assumptions and models</h2>\n";
        render_list(out, input.assumptions, "assumptions");
    }
    out += "<script type=\"application/json\" id=\"results-json\">\n" + embeddable_json(input.results_json) +
           "</script>\n";
    out += "<script>" + std::string(kBehaviour) + "</script>\n</main>\n</body>\n</html>\n";
    return out;
}

void write_html_report(const std::string& path, const ReportInput& input) {
    cli::write_file_atomically(path, render_html_report(input));
}

}  // namespace ttsim::report
