// Samples to converge as a function of global batch, from MLPerf's reference convergence points (RCPs).
//
// How MLPerf's rcp_checker (mlcommons/logging, mlperf_logging/rcp_checker/rcp_checker.py, rules 4.1.0) uses
// the RCP files, and how we mirror it:
//  1. Per RCP record (one global batch): sort the runs' convergence points, drop the lowest and the highest,
//     and average the rest -> "olympic mean". Stdev is the population stdev of all runs (numpy std).
//  2. Pruning: drop every record whose batch is smaller than that of the record with the lowest olympic mean;
//     then walk the remaining records in batch order and drop record i when its mean is above the linear
//     interpolation of its current neighbours i-1 and i+1 (after a drop the walk continues at the same index,
//     without revisiting earlier points - "not the lower convex envelope", as the checker says). The survivors
//     are exactly the `kept_after_pruning` = True rows of rcps_summary_4.1.csv.
//  3. A submission's batch that matches a surviving record uses it; between two survivors, mean and stdev are
//     interpolated linearly in batch (numpy.interp) between the nearest survivor below and above.
// Outside the checker's range we extend it ourselves:
//  - below the smallest surviving batch: that record's mean and stdev (the checker compares such submissions with
//    the smallest RCP too); a note is added to `warnings`;
//  - above the largest: linear extrapolation of the mean from the last two survivors, stdev scaled to keep the
//    largest record's coefficient of variation, and the warning "global batch X exceeds the largest RCP batch Y;
//    convergence extrapolated"; beyond max_extrapolation_factor x the largest batch: InputError.
// Epoch-counted benchmarks (RetinaNet) are converted to samples with the workload's dataset size.
//
// Spread: a score averages `runs_per_result` runs olympic-style, so its convergence varies less than one run.
// We model each run's convergence as Normal(mean, stdev) and take the 10th and 90th percentile of the olympic
// mean of N such runs by a seeded Monte Carlo: the olympic mean of N draws is mean + stdev * Z_N, where Z_N is
// the olympic mean of N standard normals, so we estimate Z_N's quantiles once (std::mt19937_64 with a fixed seed,
// our own Box-Muller transform - the standard library's distributions differ between implementations - and
// 20,000 trials by default). p10/p90 = mean + stdev * quantile(Z_N, 0.1 / 0.9).
// Both are computed once per process: the shipped RCP tables are parsed on first use per (file, workload), and
// the Monte Carlo runs once per (runs, trials, seed); both caches are thread-safe and hand out the same numbers
// a fresh computation gives, so results do not depend on call order or thread count.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/workloads/workload.hpp"

namespace ttsim {

struct RcpRecord {
    std::string name;                // e.g. "bert_ref_448"
    int global_batch = 0;
    int runs = 0;
    double olympic_mean = 0;         // in the RCP's unit (samples or epochs)
    double stdev = 0;                // population stdev over all runs, same unit
    bool kept_after_pruning = false;
};

struct RcpTable {
    std::string benchmark;                   // MLPerf id, e.g. "ssd"
    ConvergenceUnit unit = ConvergenceUnit::samples;
    std::vector<RcpRecord> records;          // all records, ascending global batch

    std::vector<RcpRecord> kept() const;     // the pruned set used for interpolation, ascending batch
};

// Reads models/data/mlperf/rcps/rcps_<benchmark>.json (or `path`), computes olympic means and stdevs and prunes
// as the rcp_checker does. Malformed files throw InputError naming the file and record.
RcpTable load_rcp_table(const Workload& workload, const std::optional<std::filesystem::path>& path = std::nullopt);

struct ConvergenceOptions {
    double max_extrapolation_factor = 2.0;   // refuse global batches above this x the largest RCP batch
    std::optional<int> runs_per_result;      // default: the workload's (10; RetinaNet 5)
    int monte_carlo_trials = 20'000;
    std::uint64_t seed = 20'241'011;         // fixed: results are reproducible run to run and machine to machine
};

struct ConvergenceEstimate {
    double samples_mean = 0;                 // expected olympic-mean samples to converge
    double samples_p10 = 0;                  // 10th percentile of the olympic mean of runs_per_result runs
    double samples_p90 = 0;                  // 90th percentile
    double samples_stdev_per_run = 0;        // one run's stdev (interpolated RCP stdev), samples
    std::vector<std::string> warnings;       // extrapolation / clamping notes, empty when interpolated
};

// Quantile q (0..1) of the olympic mean of `runs` independent standard normal draws (drop lowest and highest,
// average the rest), by the seeded Monte Carlo described above; deterministic for a given (runs, trials, seed).
double olympic_mean_standard_quantile(int runs, double q, int trials, std::uint64_t seed);

class ConvergenceModel {
public:
    ConvergenceModel(const Workload& workload, RcpTable table, ConvergenceOptions options = {});

    // Loads the workload's shipped RCP table.
    static ConvergenceModel for_workload(const Workload& workload, ConvergenceOptions options = {});

    // Samples to converge at `global_batch` (>= 1). InputError beyond the extrapolation limit.
    ConvergenceEstimate samples_to_converge(std::int64_t global_batch) const;

    const RcpTable& table() const { return table_; }
    int runs_per_result() const { return runs_; }

private:
    double to_samples(double value_in_rcp_unit) const;

    std::string workload_name_;
    double samples_per_rcp_unit_ = 1.0;   // 1 (samples), the training set (epochs), 1 / tokens per sample (tokens)
    RcpTable table_;
    std::vector<RcpRecord> kept_;
    ConvergenceOptions options_;
    int runs_ = 10;
    double z_p10_ = 0;                       // quantiles of the standard olympic mean of runs_ draws
    double z_p90_ = 0;
};

}  // namespace ttsim
