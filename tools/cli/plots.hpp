// Plots of a sweep, made by gnuplot (an external program; Debian package gnuplot-nox): per workload, time-to-train
// and efficiency against GPU count, one line per series, the published MLPerf v4.1 points overlaid and each
// series' break-even point marked. For every workload W this writes into the output directory:
//   plot_W.dat, plot_W_published.dat, plot_W.gp (the data and the script, to re-run or edit by hand) and
//   W_ttt.png, W_ttt.svg, W_efficiency.png, W_efficiency.svg.
#pragma once

#include <string>
#include <vector>

#include "models/planning/sweep_runner.hpp"

namespace ttsim::cli {

// Returns the image files written. InputError when gnuplot is not installed or fails (the message says what to
// install, or how to turn plots off).
std::vector<std::string> write_sweep_plots(const planning::SweepResult& result, const std::string& out_dir);

}  // namespace ttsim::cli
