#include "tools/report/results_report.hpp"

#include <cctype>
#include <string_view>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/planning/footnotes.hpp"
#include "models/planning/plan_format.hpp"
#include "sim/errors.hpp"
#include "tools/report/percentile_chart.hpp"

namespace ttsim::report {

namespace {

using json = nlohmann::ordered_json;

// How a figure is shown; the exact number is on the cell either way. The rules are the text tables' (plan_format):
// durations in s / min / h, everything else to three significant figures.
enum class Style { duration, significant, count, percent };

constexpr const char* kMissing = "\u2013";   // en dash: no number (a failed row; results.json has null)

std::string shown(const json& v, Style style) {
    const double x = v.get<double>();
    switch (style) {
        case Style::duration: return planning::format_duration(x);
        case Style::count: return v.dump();
        case Style::percent: return (x >= 0 ? "+" : "") + fmt::format("{:.1f}", x) + "%";
        case Style::significant: break;
    }
    return planning::three_significant(x);
}

// A figure of results.json at `pointer` (a JSON pointer), shown in `style`.
Cell figure(const json& root, const std::string& pointer, Style style) {
    const json::json_pointer at(pointer);
    // A failed row has only some of its figures, as null; the others are absent, and then so is the key.
    if (!root.contains(at)) return Cell{kMissing, "", "", true};
    Cell cell{kMissing, pointer, "", true};
    if (!root.at(at).is_number()) return cell;
    cell.value = root.at(at).dump();
    cell.text = shown(root.at(at), style);
    return cell;
}

Cell label(const std::string& text) { return Cell{text, "", "", false}; }

// `object[key]`, or null when the key is absent (a const json's operator[] must not be given a missing key): a
// results.json of an older or newer schema shows dashes, not undefined behaviour.
const json& field(const json& object, const char* key) {
    static const json null_value;   // immutable
    if (!object.is_object()) return null_value;
    const auto it = object.find(key);
    return it == object.end() ? null_value : *it;
}

// A row's figures: JSON pointers relative to the row, each with its style; the columns of a table, in order.
struct Figure {
    const char* pointer;
    Style style;
};
// A series table (scaling-study, sweep): GPUs, batch, TTT p50/p10/p90, speedup, TTT eff., GPU-hours, energy, cost.
const std::vector<Figure> kSeriesFigures = {
    {"/gpus", Style::count}, {"/global_batch", Style::count}, {"/ttt_minutes", Style::duration},
    {"/ttt_p10_minutes", Style::duration}, {"/ttt_p90_minutes", Style::duration}, {"/speedup", Style::significant},
    {"/ttt_efficiency", Style::significant}, {"/gpu_hours", Style::significant},
    {"/energy_kwh/total", Style::significant}, {"/cost/amount", Style::significant}};
// A plan candidate after system, GPUs, feasible: TTT at the confidence, p10/p50/p90, GPU-hours and cost at the
// confidence, energy.
const std::vector<Figure> kCandidateFigures = {
    {"/at_confidence/ttt_minutes", Style::duration}, {"/ttt_p10_minutes", Style::duration},
    {"/ttt_minutes", Style::duration}, {"/ttt_p90_minutes", Style::duration},
    {"/at_confidence/gpu_hours", Style::significant}, {"/at_confidence/cost", Style::significant},
    {"/energy_kwh", Style::significant}};

std::vector<Cell> figures(const json& root, const std::string& row, const std::vector<Figure>& columns) {
    std::vector<Cell> cells;
    for (const Figure& f : columns) cells.push_back(figure(root, row + f.pointer, f.style));
    return cells;
}

std::string text_of(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return kMissing;
    if (v.is_array()) {   // [768, 6912] as the text tables write it: 768/6912
        std::string out;
        for (const json& e : v) out += (out.empty() ? "" : "/") + text_of(e);
        return out;
    }
    return v.dump();
}

// Warnings of a row as footnote marks, shared across the table's rows (footnotes.hpp folds same-shape messages).
std::string marks(const json& warnings, planning::Footnotes& footnotes) {
    std::string out;
    if (!warnings.is_array()) return out;
    for (const json& w : warnings) {
        const std::string mark = "[" + std::to_string(footnotes.add(w.get<std::string>())) + "]";
        if (out.find(mark) == std::string::npos) out += (out.empty() ? "" : " ") + mark;
    }
    return out;
}

void add_models(const json& root, ReportInput& report) {
    if (root.contains("models"))
        for (const auto& [name, text] : field(root, "models").items()) {
            // "speedup: T(N_ref) / T(N) ..."; texts that already start with their name ("break-even: ...") as they are.
            std::string term = name;
            std::replace(term.begin(), term.end(), '_', '-');
            const std::string line = text_of(text);
            report.assumptions.push_back(line.rfind(term, 0) == 0 ? line : name + ": " + line);
        }
    if (root.contains("parameters") && field(root, "parameters").contains("prices"))
        report.assumptions.push_back("prices: " + text_of(field(field(root, "parameters"), "prices")));
}

// --- scaling-study and sweep ---------------------------------------------------------------------------------

ReportInput sweep_report(const json& root, ReportInput report) {
    const json& points = field(root, "points");
    const std::string currency = field(root, "parameters").value("currency", "");
    std::size_t failed = 0;
    std::vector<std::string> failed_points;
    for (const json& p : points)
        if (field(p, "status") != "ok") {
            ++failed;
            failed_points.push_back(text_of(field(p, "workload")) + " on " + field(p, "gpus").dump() + " GPUs of " + text_of(field(p, "system")));
        }
    report.summary.push_back(fmt::format("{} points, {} predicted, {} failed", points.size(), points.size() - failed, failed));
    if (root.contains("interrupted"))
        report.warnings.push_back(fmt::format("interrupted: {} of {} points finished; only those are shown",
                                              text_of(field(field(root, "interrupted"), "points_finished")),
                                              text_of(field(field(root, "interrupted"), "points_requested"))));
    if (failed)
        report.warnings.push_back(fmt::format("{} point{} could not be predicted ({}); {} row{} say{} why", failed,
                                              failed == 1 ? "" : "s", fmt::join(failed_points, ", "),
                                              failed == 1 ? "its" : "their", failed == 1 ? "" : "s", failed == 1 ? "s" : ""));

    Table published{"Published points against ttsim", {}, {"workload", "series", "GPUs", "v4.1 TTT", "results",
                                                        "v4.1 batch", "ttsim@v4.1", "error"}, {}, {}};
    for (const json& series : field(root, "series")) {
        const std::string name = field(series, "workload").get<std::string>() + " on " + field(series, "label").get<std::string>();
        Table table{name, {}, {"GPUs", "batch", "TTT p50", "TTT p10", "TTT p90", "speedup", "TTT eff.", "GPU-hours",
                               "energy kWh", "cost " + currency, "notes"}, {}, {}};
        if (field(series, "reference_gpus").is_number())
            table.lines.push_back("reference " + field(series, "reference_gpus").dump() + " GPUs");
        // The break-even headline and the other answers (knee, paying doubling, cost-optimal), as the table prints.
        if (series.contains("scaling_text") && series["scaling_text"].is_array())
            for (const json& line : series["scaling_text"]) table.lines.push_back(text_of(line));
        else
            table.lines.push_back(text_of(field(series, "break_even_text")));
        planning::Footnotes footnotes;
        const json* fastest = nullptr;
        for (const json& index : field(series, "points")) {
            const std::string at = "/points/" + index.dump();
            const json& p = root.at(json::json_pointer(at));
            std::vector<Cell> row = figures(root, at, kSeriesFigures);
            if (field(p, "status") != "ok") {
                row.push_back(label("not run: " + text_of(field(p, "error"))));
            } else {
                std::string notes = marks(field(p, "warnings"), footnotes);
                if (p.value("pareto_cost", false) && !p.value("pareto", false)) notes = "pareto($) " + notes;
                if (p.value("pareto", false)) notes = "pareto " + notes;
                row.push_back(label(notes));
                if (!fastest || field(p, "ttt_minutes").get<double>() < field((*fastest), "ttt_minutes").get<double>()) fastest = &p;
            }
            table.rows.push_back(std::move(row));
            if (p.contains("published") && field(p, "published").is_object())
                published.rows.push_back({label(field(series, "workload").get<std::string>()), label(field(series, "label").get<std::string>()),
                                          figure(root, at + "/gpus", Style::count),
                                          figure(root, at + "/published/minutes", Style::duration),
                                          figure(root, at + "/published/results", Style::count),
                                          label(text_of(field(field(p, "published"), "global_batches"))),
                                          figure(root, at + "/published/predicted_minutes", Style::duration),
                                          figure(root, at + "/published/error_percent", Style::percent)});
        }
        table.notes = footnotes.lines();
        std::string line = name + ": ";
        line += fastest ? "fastest " + planning::format_duration(field((*fastest), "ttt_minutes").get<double>()) + " on " +
                              field((*fastest), "gpus").dump() + " GPUs"
                        : "no successful point";
        const json& be = field(series, "break_even");
        if (be.is_object() && be.value("rule", "") == "knee")
            line += "; break-even (knee) " + field(be, "gpus").dump() + " GPUs, range " + field(be, "range_low").dump() +
                    ".." + field(be, "range_high").dump() +
                    (be.value("limited_by_sweep", false) ? " (at the sweep's largest count)" : "");
        else if (be.is_object())
            line += "; break-even " + field(field(series, "break_even"), "gpus").dump() + " GPUs" +
                    (field(series, "break_even").value("limited_by_sweep", false) ? " or more (the sweep ends first)" : "");
        report.summary.push_back(line);
        report.tables.push_back(std::move(table));
    }
    // Network what-ifs that changed nothing, with why (unchanged_whatifs.hpp), beside the answer.
    if (root.contains("unchanged_whatifs"))
        for (const json& u : root["unchanged_whatifs"])
            report.summary.push_back("what-if without effect: " + text_of(field(u, "workload")) + " on " +
                                     text_of(field(u, "series")) + " gives the times of " + text_of(field(u, "same_as")) +
                                     ": " + text_of(field(u, "reason")));
    if (!published.rows.empty()) {
        published.lines.push_back("MLPerf Training v4.1 official scores, median of the distinct results at each count; "
                                  "ttsim@v4.1 is ttsim at each result's own batch and layout (as ttsim validate); "
                                  "error = (ttsim@v4.1 - v4.1) / v4.1");
        report.published.push_back(std::move(published));
    }
    add_models(root, report);
    return report;
}

// --- plan -----------------------------------------------------------------------------------------------------

std::string constraints_text(const json& c) {
    std::vector<std::string> parts;
    const std::string at = " at " + text_of(field(c, "confidence"));
    if (field(c, "deadline_minutes").is_number())
        parts.push_back("time-to-train <= " + planning::format_duration(field(c, "deadline_minutes").get<double>()) + at);
    if (field(c, "budget_gpu_hours").is_number())
        parts.push_back(planning::three_significant(field(c, "budget_gpu_hours").get<double>()) + " GPU-hours" + at);
    if (field(c, "budget").is_number())
        parts.push_back("cost <= " + planning::three_significant(field(c, "budget").get<double>()) + " " + text_of(field(c, "currency")) + at);
    std::string text = parts.empty() ? "no constraint" : fmt::format("{}", fmt::join(parts, " and "));
    if (field(c, "margin").is_number() && field(c, "margin").get<double>() > 0)
        text += fmt::format(", less a {:.0f}% margin", 100 * field(c, "margin").get<double>());
    return text;
}

std::vector<Cell> candidate_row(const json& root, const std::string& at, planning::Footnotes& footnotes) {
    const json& c = root.at(json::json_pointer(at));
    std::vector<Cell> row{label(text_of(field(c, "system"))), figure(root, at + "/gpus", Style::count),
                          label(c.value("feasible", false) ? "yes" : "no")};
    for (Cell& cell : figures(root, at, kCandidateFigures)) row.push_back(std::move(cell));
    row.push_back(label(field(c, "status") == "ok" ? marks(c.value("warnings", json::array()), footnotes)
                                            : "not run: " + text_of(field(c, "error"))));
    return row;
}

// Time-to-train of every configuration evaluated, per system, with the deadline (less its margin) and the answer.
PercentileChart plan_chart(const json& root) {
    PercentileChart chart;
    chart.title = text_of(field(root, "workload")) + ": time-to-train of the configurations evaluated";
    for (const json& e : field(root, "evaluated")) {
        if (field(e, "status") != "ok") continue;
        const std::string system = text_of(field(e, "system"));
        auto it = std::find_if(chart.series.begin(), chart.series.end(), [&](const auto& s) { return s.name == system; });
        if (it == chart.series.end()) it = chart.series.insert(chart.series.end(), PercentileSeries{system, {}});
        it->points.push_back({field(e, "gpus").get<int>(), field(e, "ttt_p10_minutes").get<double>(), field(e, "ttt_minutes").get<double>(),
                              field(e, "ttt_p90_minutes").get<double>()});
    }
    const json& c = field(root, "constraints");
    if (field(c, "deadline_minutes").is_number()) {
        const double margin = field(c, "margin").is_number() ? field(c, "margin").get<double>() : 0.0;
        chart.limit_minutes = field(c, "deadline_minutes").get<double>() * (1 - margin);
        chart.limit_label = "deadline " + planning::format_duration(*chart.limit_minutes) + " at " + text_of(field(c, "confidence")) +
                            (margin > 0 ? fmt::format(" ({:.0f}% margin)", 100 * margin) : "");
    }
    if (field(root, "answer").is_object()) {
        chart.chosen = std::pair{text_of(field(field(root, "answer"), "system")), field(field(root, "answer"), "gpus").get<int>()};
        chart.chosen_label = "answer";
    }
    return chart;
}

ReportInput plan_report(const json& root, ReportInput report) {
    const json& c = field(root, "constraints");
    const std::string confidence = text_of(field(c, "confidence")), currency = text_of(field(c, "currency"));
    const std::vector<std::string> columns{"system", "GPUs", "feasible", "TTT at " + confidence, "TTT p10", "TTT p50",
                                           "TTT p90", "GPU-hours at " + confidence, "cost " + currency + " at " + confidence,
                                           "energy kWh", "notes"};
    report.summary.push_back(text_of(field(root, "workload")) + ": " +
                             planning::objective_text(planning::parse_objective(text_of(field(root, "objective")))) + " within " + constraints_text(c) +
                             ", searching " + fmt::format("{}", fmt::join(field(root, "systems").get<std::vector<std::string>>(), ", ")) +
                             " at " + text_of(field(field(root, "search_range"), "from")) + ".." + text_of(field(field(root, "search_range"), "to")) + " GPUs");
    planning::Footnotes footnotes;
    if (field(root, "answer").is_object()) {
        const json& a = field(root, "answer");
        const auto duration = [&](const char* key) { return planning::format_duration(a[key].get<double>()); };
        const json& at = field(a, "at_confidence");
        report.summary.push_back(
            "answer: " + field(a, "gpus").dump() + " GPUs of " + text_of(field(a, "system")) + ": " +
            planning::format_duration(field(at, "ttt_minutes").get<double>()) + " at " + confidence + " (p10 " +
            duration("ttt_p10_minutes") + ", p50 " + duration("ttt_minutes") + ", p90 " + duration("ttt_p90_minutes") +
            "), " + planning::three_significant(field(at, "gpu_hours").get<double>()) + " GPU-hours and " +
            planning::three_significant(field(at, "cost").get<double>()) + " " + currency + " at " + confidence);
        if (a.value("limited_by_search_range", false))
            report.warnings.push_back("the answer is at the largest count searched: the search range may be what limits it");
        Table answer{"Answer", {}, columns, {candidate_row(root, "/answer", footnotes)}, {}};
        report.tables.push_back(std::move(answer));
    } else {
        report.warnings.push_back("no configuration searched meets the constraints (exit 1); the closest are listed");
        Table closest{"Closest configurations", {}, columns, {}, {}};
        for (std::size_t i = 0; root.contains("closest") && i < field(root, "closest").size(); ++i) {
            const std::string at = "/closest/" + std::to_string(i);
            closest.lines.push_back(text_of(root.at(json::json_pointer(at + "/criterion"))) + ": " +
                                    planning::three_significant(root.at(json::json_pointer(at + "/ratio_to_limit")).get<double>()) +
                                    "x the limit");
            closest.rows.push_back(candidate_row(root, at, footnotes));
        }
        report.tables.push_back(std::move(closest));
    }
    if (root.contains("interrupted"))
        report.warnings.push_back("interrupted: " + text_of(field(field(root, "interrupted"), "grid_evaluated")) + " of " +
                                  text_of(field(field(root, "interrupted"), "grid_size")) + " configurations evaluated");
    Table evaluated{"Every configuration evaluated", {}, columns, {}, {}};
    const json& answer = field(root, "answer");
    for (std::size_t i = 0; i < field(root, "evaluated").size(); ++i) {
        const json& e = field(root, "evaluated")[i];
        if (answer.is_object() && field(e, "system") == field(answer, "system") && field(e, "gpus") == field(answer, "gpus"))
            evaluated.marked_rows.push_back(i);
        evaluated.rows.push_back(candidate_row(root, "/evaluated/" + std::to_string(i), footnotes));
    }
    evaluated.notes = footnotes.lines();   // the marks of every table above, numbered once
    report.tables.push_back(std::move(evaluated));

    report.plots.push_back({"p50 time-to-train of every configuration evaluated, its p10..p90 spread as a bar",
                            percentile_chart_svg(plan_chart(root))});
    if (report.plots.back().svg.empty()) report.plots.pop_back();

    // The answer's band: what its p10/p90 hold, the kind of extrapolation and that kind's measured error.
    if (answer.is_object() && answer.contains("band") && !field(answer, "band").get<std::string>().empty())
        report.summary.push_back(text_of(field(answer, "band")));
    report.assumptions.push_back("p10/p50/p90: percentiles of time-to-train over the run-to-run spread of convergence, "
                                 "the fit's parameter uncertainty and the model error of each configuration's kind of "
                                 "extrapolation (docs/uncertainty.md); constraints are judged at " + confidence);
    report.assumptions.push_back("prices: " + text_of(field(root, "prices")));
    report.assumptions.push_back(text_of(field(root, "energy_model")));   // "energy = ..."
    return report;
}

// --- any other results.json ----------------------------------------------------------------------------------

// Scalars become summary facts, objects of scalars assumptions, arrays of records one table each.
ReportInput generic_report(const json& root, ReportInput report) {
    for (const auto& [key, value] : root.items()) {
        if (value.is_primitive()) {
            if (key != "schema" && key != "kind" && key != "name") report.summary.push_back(key + ": " + text_of(value));
        } else if (value.is_object()) {
            for (const auto& [sub, v] : value.items())
                if (v.is_primitive()) report.assumptions.push_back(key + "." + sub + ": " + text_of(v));
        } else if (!value.empty() && value.front().is_object()) {
            Table table{key, {}, {}, {}, {}};
            for (const json& record : value)
                for (const auto& [column, v] : record.items())
                    if (v.is_primitive() && std::find(table.columns.begin(), table.columns.end(), column) == table.columns.end())
                        table.columns.push_back(column);
            for (std::size_t i = 0; i < value.size(); ++i) {
                std::vector<Cell> row;
                for (const std::string& column : table.columns) {
                    const std::string at = "/" + key + "/" + std::to_string(i) + "/" + column;
                    const json* v = value[i].contains(column) ? &value[i][column] : nullptr;
                    row.push_back(v && (v->is_number() || v->is_null())   // null: a failed row's figure
                                      ? figure(root, at, v->is_number_integer() ? Style::count : Style::significant)
                                      : label(v ? text_of(*v) : ""));
                }
                table.rows.push_back(std::move(row));
            }
            report.tables.push_back(std::move(table));
        }
    }
    return report;
}

}  // namespace

ReportInput report_from_results(const std::string& results_json, const std::string& command, std::vector<Plot> plots) {
    const json root = json::parse(results_json);
    ReportInput report;
    report.kind = root.value("kind", "results");
    report.title = root.value("name", "ttsim " + report.kind);
    report.command = command;
    report.results_json = results_json;
    report.plots = std::move(plots);
    if (report.kind == "scaling-study" || report.kind == "sweep") return sweep_report(root, std::move(report));
    if (report.kind == "plan") return plan_report(root, std::move(report));
    return generic_report(root, std::move(report));
}

std::string scenario_command(const std::string& scenario_file) {
    // As the user would type it from here: a merged shard holds the scenario's absolute path, a run the typed one.
    std::error_code ec;
    const std::filesystem::path relative = std::filesystem::proximate(scenario_file, ec);
    return "ttsim run " + (ec ? scenario_file : relative.generic_string());
}

std::string command_as_typed(const std::string& program, const std::vector<std::string>& args) {
    std::string out = program;
    for (const std::string& a : args) {
        const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](unsigned char c) {
            return std::isalnum(c) || std::string_view("-_./=:,%@+").find(static_cast<char>(c)) != std::string_view::npos;
        });
        if (plain) {
            out += " " + a;
            continue;
        }
        std::string quoted = "'";
        for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += " " + quoted + "'";
    }
    return out;
}

std::string results_page(const std::string& results_json, const std::string& command,
                         const std::vector<std::string>& images) {
    return render_html_report(report_from_results(results_json, command, read_svg_plots(images)));
}

std::vector<Plot> read_svg_plots(const std::vector<std::string>& images) {
    std::vector<Plot> plots;
    for (const std::string& image : images) {
        const std::filesystem::path path(image);
        if (path.extension() != ".svg") continue;
        std::ifstream in(image, std::ios::binary);
        if (!in) throw InputError("cannot read the plot '" + image + "' for report.html", {}, "--out");
        std::ostringstream svg;
        svg << in.rdbuf();
        plots.push_back({path.stem().string(), svg.str()});
    }
    return plots;
}

}  // namespace ttsim::report
