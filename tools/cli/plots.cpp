#include "tools/cli/plots.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "sim/errors.hpp"
#include "sim/units.hpp"
#include "tools/cli/atomic_file.hpp"

namespace ttsim::cli {

namespace {

constexpr const char* kTemporarySuffix = ".tmp-gnuplot";

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
        std::ostringstream data, published, script;
        data << "# gpus ttt_minutes efficiency; one block per series (gnuplot index)\n";
        published << "# gpus published_minutes (MLPerf v4.1 median of distinct results)\n";
        std::map<int, double> published_points;
        std::vector<std::string> titles;
        struct Mark { int gpus; double ttt, efficiency; };
        std::vector<Mark> break_even_marks;   // each series' break-even point
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
                if (s->break_even && s->break_even->gpus == r.point.gpus)
                    break_even_marks.push_back({r.point.gpus, r.outcome.prediction.ttt_minutes, r.metrics.efficiency});
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

        script << "# ttsim: time-to-train and scaling efficiency of " << workload << " (run: gnuplot plot_" << workload
               << ".gp)\n"
               << "dat = " << gp_string(stem + ".dat") << "\npub = " << gp_string(stem + "_published.dat") << "\n"
               << "png_term = (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) ? \"pngcairo\" : \"png\"\n"
               << "set logscale x 2\nset grid\nset key outside right top\nset xlabel \"GPUs\"\n"
               << "set format x \"%g\"\n";
        auto mark_break_even = [&](bool efficiency) {
            std::ostringstream labels;
            labels << "unset label\n";
            for (std::size_t k = 0; k < break_even_marks.size(); ++k)
                labels << "set label " << k + 1 << " \"break-even\" at " << break_even_marks[k].gpus << ","
                       << number(efficiency ? break_even_marks[k].efficiency : break_even_marks[k].ttt)
                       << " point pt 7 ps 1.5 lc rgb \"red\" offset 1,1\n";
            return labels.str();
        };
        auto plot_command = [&](int column, bool with_published) {
            std::ostringstream p;
            p << "plot ";
            for (std::size_t k = 0; k < titles.size(); ++k)
                p << (k ? ", " : "") << "dat index " << k << " using 1:" << column << " with linespoints lw 2 title "
                  << gp_string(titles[k]);
            if (with_published) p << ", pub using 1:2 with points pt 9 ps 1.6 lc rgb \"black\" title \"MLPerf v4.1 published\"";
            return p.str();
        };
        const std::string ttt_title = "set title " + gp_string(workload + ": time-to-train") +
                                      "\nset ylabel \"minutes\"\nset logscale y\n" + mark_break_even(false);
        const std::string eff_title = mark_break_even(true) + "set title " + gp_string(workload + ": scaling efficiency") +
                                      "\nset ylabel \"efficiency vs reference\"\nunset logscale y\nset yrange [0:*]\n";
        struct Output { std::string terminal, file; };
        for (const auto& [kind, header, column, with_published] :
             {std::tuple{std::string("ttt"), ttt_title, 2, true}, std::tuple{std::string("efficiency"), eff_title, 3, false}}) {
            script << header;
            for (const Output& o : {Output{"set terminal @png_term size 900,560 font \"sans,10\"", workload + "_" + kind + ".png"},
                                    Output{"set terminal svg size 900,560 dynamic font \"sans,10\"", workload + "_" + kind + ".svg"}}) {
                // gnuplot writes a temporary name; it is renamed into place once gnuplot succeeded (atomic result).
                script << o.terminal << "\nset output " << gp_string(o.file + kTemporarySuffix) << "\n" << plot_command(column, with_published)
                       << "\nset output\n";
                images.push_back(out_dir + "/" + o.file);
            }
        }
        write_file_atomically(base + ".gp", script.str());
        const std::string command =
            "cd " + shell_word(out_dir) + " && gnuplot " + shell_word(stem + ".gp") + " 2>" + shell_word(stem + ".log");
        if (std::system(command.c_str()) != 0)
            throw InputError("gnuplot failed on " + base + ".gp (its messages are in " + base + ".log)", {}, "plots");
        std::remove((base + ".log").c_str());
        for (std::size_t k = images.size() - 4; k < images.size(); ++k)
            if (std::rename((images[k] + kTemporarySuffix).c_str(), images[k].c_str()) != 0)
                throw InputError("cannot rename " + images[k] + kTemporarySuffix + " into place", {}, "out");
    }
    return images;
}

}  // namespace ttsim::cli
