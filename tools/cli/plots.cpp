#include "tools/cli/plots.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "sim/errors.hpp"
#include "sim/units.hpp"
#include "tools/cli/atomic_file.hpp"

namespace ttsim::cli {

namespace {

constexpr const char* kTemporarySuffix = ".tmp-gnuplot";

// Series styles: colours (colour-blind-safe first) without black and red, and open point types, so that the
// published points (black filled diamonds), break-even marks (large red open circles) and the largest counts
// of series whose break-even lies beyond the sweep (large red filled triangles: a lower bound, not a break-even)
// stay unique however many series a plot has.
const std::vector<std::string> kSeriesColours = {"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9",
                                                 "#f0e442", "#8c564b", "#7f7f7f", "#17becf"};
const std::vector<int> kSeriesPointTypes = {1, 2, 3, 4, 8, 10, 12, 14};   // +, x, *, open square/triangles/...
constexpr int kPublishedPointType = 13;    // filled diamond
constexpr int kBreakEvenPointType = 6;     // open circle
constexpr int kBeyondSweepPointType = 9;   // filled triangle

std::string number(double value) { return units::format_number(value, 8); }

// A gnuplot double-quoted string: backslashes and quotes escaped.
std::string gp_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// A POSIX shell single-quoted word.
std::string shell_word(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

bool gnuplot_available() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

}  // namespace

std::vector<std::string> write_sweep_plots(const planning::SweepResult& result, const std::string& out_dir) {
    if (!gnuplot_available())
        throw InputError("plots need gnuplot, which is not installed (apt-get install gnuplot-nox), or set "
                         "'plots: false' in the scenario", {}, "plots");
    // Series grouped by workload, in order of first appearance.
    std::vector<std::string> workloads;
    std::map<std::string, std::vector<const planning::SeriesSummary*>> series_of;
    for (const auto& s : result.series) {
        if (!series_of.count(s.workload)) workloads.push_back(s.workload);
        series_of[s.workload].push_back(&s);
    }
    std::vector<std::string> images;
    for (const std::string& workload : workloads) {
        // A workload none of whose points was predicted has nothing to draw (gnuplot refuses an all-undefined
        // plot); the tables say why each point failed.
        const bool any_predicted = std::any_of(series_of[workload].begin(), series_of[workload].end(), [&](const auto* s) {
            return std::any_of(s->points.begin(), s->points.end(), [&](std::size_t i) { return result.points[i].outcome.ok; });
        });
        if (!any_predicted) continue;
        std::ostringstream data, published, script;
        data << "# gpus ttt_minutes efficiency; one block per series (gnuplot index)\n";
        published << "# gpus published_minutes (MLPerf v4.1 median of distinct results)\n";
        std::map<int, double> published_points;
        std::vector<std::string> titles;
        struct Mark { int gpus; double ttt, efficiency; };
        std::vector<Mark> break_even_marks;   // each series' break-even point
        std::vector<Mark> beyond_marks;       // series whose break-even lies beyond the sweep: the count reached
        for (const auto* s : series_of[workload]) {
            data << "# " << s->label << "\n";
            bool any = false;
            for (std::size_t i : s->points) {
                const auto& r = result.points[i];
                if (!r.outcome.ok) continue;
                any = true;
                data << r.point.gpus << " " << number(r.outcome.prediction.ttt_minutes) << " "
                     << number(r.metrics.efficiency) << "\n";
                if (r.published) published_points[r.point.gpus] = r.published->median_minutes;
                // The break-even the reports lead with: the knee (default) or the doubling walk's count.
                const bool knee = result.options.break_even_rule == planning::BreakEvenRule::knee && s->answer;
                const std::optional<int> mark = knee ? std::optional<int>(s->answer->knee.gpus)
                                                : s->break_even ? std::optional<int>(s->break_even->gpus)
                                                                : std::nullopt;
                const bool beyond = knee ? s->answer->knee.at_largest : s->break_even && s->break_even->limited_by_sweep;
                if (mark == r.point.gpus)
                    (beyond ? beyond_marks : break_even_marks)
                        .push_back({r.point.gpus, r.outcome.prediction.ttt_minutes, r.metrics.efficiency});
            }
            if (!any) data << "nan nan nan\n";   // keeps block numbering aligned with titles
            data << "\n\n";
            titles.push_back(s->label);
        }
        for (const auto& [gpus, minutes] : published_points) published << gpus << " " << number(minutes) << "\n";
        if (published_points.empty()) published << "nan nan\n";

        // The script names its files relative to the output directory (gnuplot runs there), so it is the same
        // whatever the directory is called, and can be re-run after the directory has moved.
        const std::string stem = "plot_" + workload;
        const std::string base = out_dir + "/" + stem;
        write_file_atomically(base + ".dat", data.str());
        write_file_atomically(base + "_published.dat", published.str());

        script << "# ttsim: time-to-train and time-to-train efficiency of " << workload << " (run: gnuplot plot_"
               << workload << ".gp)\n"
               << "dat = " << gp_string(stem + ".dat") << "\npub = " << gp_string(stem + "_published.dat") << "\n"
               << "png_term = (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) ? \"pngcairo\" : \"png\"\n"
               // The legend goes below the plot, under the axis label, in as many columns as fit, so it never
               // eats the plot's width; a small margin around the data keeps end points (and their break-even
               // circles) off the border, without widening a log axis to whole decades (yfix).
               << "set logscale x 2\nset grid\nset key outside below center horizontal font \",13\" samplen 3\n"
               << "set bmargin 9\nset offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\nset autoscale yfix\n"
               << "set xlabel \"GPUs\"\nset format x \"%g\"\n";
        // Break-even points as one marked series ("break-even", one legend entry) rather than a text label per
        // series, which overlap when several series break even at the same count.
        for (const auto& [block, marks] : {std::pair{"$breakeven", &break_even_marks}, std::pair{"$beyond", &beyond_marks}}) {
            script << block << " << EOD\n";
            for (const Mark& m : *marks) script << m.gpus << " " << number(m.ttt) << " " << number(m.efficiency) << "\n";
            script << "EOD\n";
        }
        auto plot_command = [&](int column, bool with_published) {
            std::ostringstream p;
            p << "plot ";
            for (std::size_t k = 0; k < titles.size(); ++k)
                // Series that coincide (a what-if without effect) stay apart: each has its own marker and dash.
                p << (k ? ", " : "") << "dat index " << k << " using 1:" << column << " with linespoints lw 2 dt "
                  << (k % 5) + 1 << " lc rgb "
                  << gp_string(kSeriesColours[k % kSeriesColours.size()]) << " pt "
                  << kSeriesPointTypes[k % kSeriesPointTypes.size()] << " title " << gp_string(titles[k]);
            if (with_published && !published_points.empty())
                p << ", pub using 1:2 with points pt " << kPublishedPointType
                  << " ps 1.6 lc rgb \"black\" title \"MLPerf v4.1 published\"";
            if (!break_even_marks.empty())
                p << ", $breakeven using 1:" << column << " with points pt " << kBreakEvenPointType
                  << " ps 2.5 lw 2 lc rgb \"red\" title \"break-even\"";
            if (!beyond_marks.empty())
                p << ", $beyond using 1:" << column << " with points pt " << kBeyondSweepPointType
                  << " ps 2.5 lw 2 lc rgb \"red\" title \"break-even beyond the sweep (largest count reached)\"";
            return p.str();
        };
        // A log axis fixed to the data (yfix) may span less than a decade: label 1-2-5 steps, not decades only.
        const std::string ttt_title = "set title " + gp_string(workload + ": time-to-train") +
                                      "\nset ylabel \"minutes\"\nset logscale y\nset format y \"%g\"\n"
                                      "set ytics add (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, "
                                      "500, 1000, 2000, 5000, 10000)\n";
        const std::string eff_title = "set title " + gp_string(workload + ": time-to-train efficiency") +
                                      "\nset ylabel \"time-to-train efficiency vs reference\"\nunset logscale y\n"
                                      "set ytics autofreq\nset yrange [0:*]\n";
        struct Output { std::string terminal, file; };
        for (const auto& [kind, header, column, with_published] :
             {std::tuple{std::string("ttt"), ttt_title, 2, true}, std::tuple{std::string("efficiency"), eff_title, 3, false}}) {
            script << header;
            for (const Output& o : {Output{"set terminal @png_term size 900,600 font \"sans,12\"", workload + "_" + kind + ".png"},
                                    Output{"set terminal svg size 900,600 dynamic font \"sans,12\"", workload + "_" + kind + ".svg"}}) {
                // noenhanced: names such as llama2_70b_lora are text, not "_" subscripts.
                // gnuplot writes a temporary name; it is renamed into place once gnuplot succeeded (atomic result).
                script << o.terminal << "\nset termoption noenhanced\nset output " << gp_string(o.file + kTemporarySuffix)
                       << "\n" << plot_command(column, with_published) << "\nset output\n";
                images.push_back(out_dir + "/" + o.file);
            }
        }
        write_file_atomically(base + ".gp", script.str());
        const std::string command =
            "cd " + shell_word(out_dir) + " && gnuplot " + shell_word(stem + ".gp") + " 2>" + shell_word(stem + ".log");
        if (std::system(command.c_str()) != 0) {
            // The folder of a failed run is removed, the log with it: its first lines go into the message.
            std::ifstream log(base + ".log");
            std::string first, line;
            for (int n = 0; n < 4 && std::getline(log, line); ++n) first += (first.empty() ? "" : " | ") + line;
            throw InputError("gnuplot failed on " + stem + ".gp" + (first.empty() ? "" : ": " + first), {}, "plots");
        }
        std::remove((base + ".log").c_str());
        for (std::size_t k = images.size() - 4; k < images.size(); ++k)
            if (std::rename((images[k] + kTemporarySuffix).c_str(), images[k].c_str()) != 0)
                throw InputError("cannot rename " + images[k] + kTemporarySuffix + " into place", {}, "out");
    }
    return images;
}

}  // namespace ttsim::cli
