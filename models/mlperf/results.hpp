// MLPerf Training published results (models/data/mlperf/v<round>_results.csv, one row per result folder
// results/<system>/<benchmark> of mlcommons/training_results_v<round>; rounds.yaml lists them), the calibration and
// validation target.
//
// Counting distinct results (distinct_scored_results): the file has 110 rows, but not every row is a separate
// measurement. The rule, applied in this order:
//  1. Drop rows without a score (`ttt_minutes_official_scaled` empty: logs were not available).
//  2. Rows linked by `same_run_times_as` to another row of their round ("v4.1:<submitter>/<system>/<benchmark>")
//     that is present and scored carry the same run times: of each such linked group only the row that comes first
//     in the file is kept. (In v4.1 this is the Dell 8xXE9680 / 8xXE9680-POWER Llama2-LoRA pair, which point at
//     each other.) Links to other rounds ("v4.0:...", "v5.0:...") point outside this file and drop nothing:
//     the row is still one distinct v4.1 result; `log_predates_round` tells whether its logs are older.
//  3. Then the caller's filter (benchmark, accelerator family, status, whether to admit reused older logs and
//     results that failed the RCP check).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/file_reading.hpp"

namespace ttsim {

// The CSV inputs (results, run logs, timings, a user's measured runs): the shipped ones are under 1 MiB, so a
// quarter of a gigabyte is no table of runs.
inline constexpr InputFileKind kCsvInputFile{"a CSV file", 256u << 20, "a CSV of results or runs is at most 256MiB"};

// RFC 4180 CSV: fields separated by ',', records by LF or CRLF; a field in double quotes may contain commas,
// line breaks and doubled quotes ("" = one "). `source_name` names the input in errors (InputError with line).
// `record_lines`, when given, receives the 1-based line on which each record starts (blank lines are skipped and
// quoted fields may span lines, so the record index is not the line).
std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source_name,
                                                std::vector<int>* record_lines = nullptr);

struct MlperfResult {
    int csv_line = 0;                        // 1-based line of the record in the file, for messages
    std::string round;                       // "4.1" (the `round` column; empty in a file without it)
    std::string benchmark;                   // "bert", "llama2_70b_lora", "ssd", "stable_diffusion"
    std::string submitter;
    std::string system;
    std::string status;                      // "available" or "preview"
    std::string accelerator;                 // as submitted, e.g. "NVIDIA H100-SXM5-80GB"
    std::string accelerator_family;          // normalised: "H100-SXM", "H200-SXM", "B200", "TPU v5p", ...
    int n_accelerators = 0;
    int n_nodes = 0;
    int accel_per_node = 0;
    std::string interconnect;
    std::optional<int> global_batch_size;
    std::optional<int> local_batch_size;     // NVIDIA BERT: packed rows (global = 2 x GPUs x local)
    int n_runs = 0;
    std::optional<double> ttt_minutes_olympic;
    std::optional<double> ttt_minutes_official_scaled;   // the published score; empty when not scored
    std::optional<double> samples_to_converge_mean;
    std::optional<double> epochs_to_converge_mean;
    std::optional<double> eval_interval;     // as logged, in eval_interval_unit
    std::optional<int> gradient_accumulation_steps;   // empty where the column is absent or the field empty
    std::string eval_interval_unit;
    std::string rcp_check;                   // e.g. "RCP Interpolation: pass"
    bool log_predates_round = false;         // logs reused from an earlier round
    std::string same_run_times_as;           // "v4.0:NVIDIA/eos_.../bert" or empty
    std::string hparams_json;                // logged hyperparameters, JSON text

    // "<submitter>/<system>/<benchmark>", the form same_run_times_as uses after "v4.1:".
    std::string key() const { return submitter + "/" + system + "/" + benchmark; }
    bool rcp_passed() const;                 // rcp_check ends in "pass"
};

// Loads the shipped v4.1_results.csv (or `path`). Columns are found by header name; a missing column or a
// malformed number is an InputError with file, line and column name.
std::vector<MlperfResult> load_mlperf_results(const std::optional<std::filesystem::path>& path = std::nullopt);

// One run log of a result (models/data/mlperf/v4.1_runs.csv): its minutes on the clock, the convergence point it
// stopped at (samples; epochs for RetinaNet, MLPerf's "ssd") and its number of on-the-clock evaluations.
struct MlperfRun {
    int csv_line = 0;
    std::string submitter, system, benchmark;
    bool success = false;                    // status "success" (reached the target)
    std::optional<double> minutes;
    std::optional<double> convergence_point;
    std::optional<int> evaluations;
    std::optional<int> global_batch_size;
    std::string key() const { return submitter + "/" + system + "/" + benchmark; }
};

// Loads the shipped v4.1_runs.csv (or `path`); InputError with file, line and column on malformed data: a status
// other than success/aborted/empty, or a successful run without positive minutes and convergence point.
std::vector<MlperfRun> load_mlperf_runs(const std::optional<std::filesystem::path>& path = std::nullopt);

// One run log's timing (models/data/mlperf/v4.1_timing.csv, read from the log's MLLOG time stamps; the columns
// are described in models/data/README.md): the mean step inside the training segments between evaluations
// (global batch / median segment rate, first segment dropped as warm-up) and the on-the-clock evaluation time
// during which no training ran (RetinaNet scores epoch k while epoch k+1 trains; elsewhere all of it).
struct MlperfTiming {
    int csv_line = 0;
    std::string submitter, system, benchmark;
    bool log_read = false;                   // log_status "ok"
    std::optional<double> step_ms;           // step_ms_from_segments
    std::optional<double> eval_blocking_minutes;   // eval_minutes_blocking
    std::optional<double> eval_on_clock_minutes;   // eval_minutes_on_clock
    bool eval_async = false;                 // eval_async: training restarts before eval_stop (RetinaNet)
    std::optional<int> evaluations;          // n_evals_on_clock
    std::optional<int> global_batch;         // global_batch_size
    std::optional<double> first_segment_seconds;   // first_segment_s: run_start to the end of the first segment
    std::optional<int> first_segment_samples;      // first_segment_samples
    // The first training segment's seconds beyond its steps at the steady step time: startup plus slow early
    // steps, time the clock counts once per run. Not the column startup_overhead_s, the time before the first
    // progress record (about 0 for LoRA, whose early steps are the slow ones). May be negative (NVIDIA-style SD
    // logs: the first block is shorter than the steady ones, models/data/README.md). None where a column is missing.
    std::optional<double> first_segment_excess_seconds() const;
    // One evaluation's blocking seconds. Where scoring runs asynchronously (RetinaNet: COCO scoring in a CPU
    // process while the next epoch trains), only the final, converging evaluation blocks for its scoring as well,
    // so the blocking minutes hold n inferences plus one scoring. Each earlier evaluation's scoring is its
    // on-the-clock time beyond the blocking part: scoring = (on clock - blocking) / (n - 1), and one evaluation
    // blocks for (blocking - scoring) / n; the final scoring is time the clock counts once per run (the workload's
    // run overhead). Elsewhere blocking / n. None without evaluations.
    std::optional<double> eval_blocking_seconds() const;
    // The final evaluation's scoring seconds (asynchronous scoring, at least 2 evaluations); none otherwise.
    std::optional<double> final_scoring_seconds() const;
    std::string key() const { return submitter + "/" + system + "/" + benchmark; }
};

// Loads the shipped v4.1_timing.csv (or `path`); InputError with file, line and column on malformed data.
std::vector<MlperfTiming> load_mlperf_timing(const std::optional<std::filesystem::path>& path = std::nullopt);

struct ResultFilter {
    std::optional<std::string> benchmark;            // a workload's name, MLPerf id or alias (workload_catalog.yaml)
    std::optional<std::string> accelerator_family;   // exact, case-insensitive ("H100-SXM")
    bool include_preview = true;
    bool include_predating_logs = true;              // admit results whose logs come from an earlier round
    bool require_rcp_pass = false;                   // drop results that failed the RCP check
};

// Each distinct scored result once (rule in the comment at the top), then filtered; file order.
std::vector<MlperfResult> distinct_scored_results(const std::vector<MlperfResult>& results,
                                                  const ResultFilter& filter = {});

}  // namespace ttsim
