#include "models/mlperf/results.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>

#include <boost/pending/disjoint_sets.hpp>
#include <fmt/format.h>

#include "models/data_dir.hpp"
#include "models/workloads/workload.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace ttsim {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Column access by header name for one record, with errors that point at the file, line and column.
class RecordReader {
public:
    RecordReader(const std::map<std::string, std::size_t>& columns, const std::vector<std::string>& fields,
                 const std::string& file, int line)
        : columns_(columns), fields_(fields), file_(file), line_(line) {}

    bool has(const std::string& column) const { return columns_.count(column) > 0; }

    const std::string& text(const std::string& column) const {
        const auto it = columns_.find(column);
        TTSIM_ASSERT(it != columns_.end(), "column '" + column + "' not checked at load");
        return fields_[it->second];
    }

    std::optional<double> optional_number(const std::string& column) const {
        const std::string& t = text(column);
        if (t.empty()) return std::nullopt;
        double value = 0;
        const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), value);
        if (error != std::errc() || end != t.data() + t.size())
            throw InputError("not a number: '" + t + "'", SourceLocation{file_, line_, 0}, column);
        if (!std::isfinite(value))   // from_chars reads "inf" and "nan"; no column of these files holds them
            throw InputError("not a finite number: '" + t + "'", SourceLocation{file_, line_, 0}, column);
        return value;
    }

    // A value that must be above zero and at most `max` (a time, a sample count, an interval), or nothing when
    // the field is empty.
    std::optional<double> optional_positive(const std::string& column, double max = kMaxPositive) const {
        const std::optional<double> value = optional_number(column);
        if (value && !(*value > 0))
            throw InputError("must be positive, got '" + text(column) + "'", SourceLocation{file_, line_, 0}, column);
        if (value && *value > max)
            throw InputError("'" + text(column) + "' is above " + fmt::format("{:.0f}", max),
                             SourceLocation{file_, line_, 0}, column);
        return value;
    }

    // A time to train in minutes: 10^6 minutes is about two years, beyond any training run.
    std::optional<double> optional_minutes(const std::string& column) const { return optional_positive(column, 1e6); }

    // A whole number in [min, max], or nothing when the field is empty. The bound keeps every count of these files
    // far inside int, so products such as data parallel x accumulation cannot overflow.
    std::optional<int> optional_int(const std::string& column, int min = -kMaxWhole, int max = kMaxWhole) const {
        const std::optional<double> value = optional_number(column);
        if (!value) return std::nullopt;
        if (!(*value >= min && *value <= max))
            throw InputError("'" + text(column) + "' is outside " + std::to_string(min) + ".." + std::to_string(max),
                             SourceLocation{file_, line_, 0}, column);
        // Some integer columns are written as "1.0000"; accept those, reject fractions.
        if (*value != static_cast<double>(static_cast<int>(*value)))
            throw InputError("not a whole number: '" + text(column) + "'", SourceLocation{file_, line_, 0}, column);
        return static_cast<int>(*value);
    }

    int required_int(const std::string& column, int min = -kMaxWhole, int max = kMaxWhole) const {
        const std::optional<int> value = optional_int(column, min, max);
        if (!value) throw InputError("empty value", SourceLocation{file_, line_, 0}, column);
        return *value;
    }

    // A count of GPUs, nodes, samples in a batch or steps (at least 1).
    std::optional<int> optional_count(const std::string& column) const { return optional_int(column, 1, kMaxCount); }
    int required_count(const std::string& column) const { return required_int(column, 1, kMaxCount); }

    // 10^9: beyond any count these files hold (the largest v4.1 batch is 13,888 samples, the largest system 3,472
    // GPUs) and below 2^31, so a cast to int is defined.
    static constexpr int kMaxWhole = 1'000'000'000;
    // 10^15: beyond any sample count or interval (GPT-3's 175B run trains on 3 x 10^11 tokens).
    static constexpr double kMaxPositive = 1e15;
    // 10^6: counts (GPUs, nodes, batch sizes, accumulation steps) beyond it describe no cluster; products of two
    // such counts (data parallel x accumulation) stay inside int64 and far from int's limit when one is a GPU count.
    static constexpr int kMaxCount = 1'000'000;

    bool boolean(const std::string& column) const {
        const std::string& t = text(column);
        if (t.empty() || t == "False") return false;
        if (t == "True") return true;
        throw InputError("expected True or False, got '" + t + "'", SourceLocation{file_, line_, 0}, column);
    }

private:
    const std::map<std::string, std::size_t>& columns_;
    const std::vector<std::string>& fields_;
    const std::string& file_;
    int line_;
};

const std::vector<std::string> kRequiredColumns{
    "benchmark", "submitter", "system", "status", "accelerator", "accelerator_family", "n_accelerators", "n_nodes",
    "accel_per_node", "interconnect", "global_batch_size", "local_batch_size", "n_runs", "ttt_minutes_olympic",
    "ttt_minutes_official_scaled", "samples_to_converge_mean", "epochs_to_converge_mean", "eval_interval",
    "eval_interval_unit", "rcp_check", "log_predates_round", "same_run_times_as", "hparams_json"};

}  // namespace

std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source_name,
                                                std::vector<int>* record_lines) {
    // A UTF-8 byte-order mark (Excel's "CSV UTF-8" writes one) is not part of the first column's name.
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    // Labels and names reach the JSON outputs, which hold UTF-8 only.
    require_utf8(text, source_name, "not UTF-8 text (save the CSV as UTF-8)");
    std::vector<std::vector<std::string>> records;
    int record_line = 1;
    std::vector<std::string> record;
    std::string field;
    bool in_quotes = false;
    bool field_was_quoted = false;
    bool record_has_content = false;
    int line = 1;
    int quote_line = 0;

    auto end_field = [&] {
        record.push_back(std::move(field));
        field.clear();
        field_was_quoted = false;
    };
    auto end_record = [&] {
        end_field();
        if (record_lines) record_lines->push_back(record_line);
        records.push_back(std::move(record));
        record.clear();
        record_has_content = false;
    };

    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (!in_quotes && !record_has_content && field.empty() && record.empty()) record_line = line;
        if (in_quotes) {
            if (c == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    in_quotes = false;
                }
            } else {
                if (c == '\n') ++line;
                field += c;
            }
            continue;
        }
        switch (c) {
            case '"':
                if (!field.empty() || field_was_quoted)
                    throw InputError("stray double quote inside an unquoted field", SourceLocation{source_name, line, 0});
                in_quotes = true;
                field_was_quoted = true;
                quote_line = line;
                record_has_content = true;
                break;
            case ',':
                end_field();
                record_has_content = true;
                break;
            case '\r':
                if (i + 1 < text.size() && text[i + 1] == '\n') break;   // CRLF: the LF ends the record
                throw InputError("bare carriage return", SourceLocation{source_name, line, 0});
            case '\n':
                if (record_has_content || !field.empty()) end_record();   // blank lines are skipped
                ++line;
                break;
            default:
                if (field_was_quoted)
                    throw InputError("text after a closing double quote", SourceLocation{source_name, line, 0});
                field += c;
                record_has_content = true;
        }
    }
    if (in_quotes) throw InputError("unterminated quoted field", SourceLocation{source_name, quote_line, 0});
    if (record_has_content || !field.empty()) end_record();
    return records;
}

bool MlperfResult::rcp_passed() const { return ends_with(lower(rcp_check), "pass"); }

namespace {

// A CSV file's records with its columns by header name; every required column present (else InputError naming it).
struct CsvTable {
    std::string name;
    std::vector<std::vector<std::string>> rows;
    std::vector<int> lines;                 // line on which each row starts
    std::map<std::string, std::size_t> columns;
};

CsvTable read_table(const std::filesystem::path& file, const std::vector<std::string>& required) {
    CsvTable table;
    table.name = file.string();
    table.rows = parse_csv(read_input_file(table.name, kCsvInputFile), table.name, &table.lines);
    if (table.rows.empty()) throw InputError("empty CSV file", SourceLocation{table.name, 1, 0});
    for (std::size_t i = 0; i < table.rows[0].size(); ++i) table.columns[table.rows[0][i]] = i;
    for (const std::string& column : required)
        if (!table.columns.count(column)) throw InputError("missing column", SourceLocation{table.name, 1, 0}, column);
    return table;
}

// One `Record` per data row of `table`, made by `read(reader, line)`; a row with another field count than the
// header is an InputError at its line.
template <typename Record, typename Read>
std::vector<Record> read_records(const CsvTable& table, Read read) {
    std::vector<Record> records;
    for (std::size_t r = 1; r < table.rows.size(); ++r) {
        const int line = table.lines[r];
        const std::vector<std::string>& fields = table.rows[r];
        if (fields.size() != table.rows[0].size())
            throw InputError("record has " + std::to_string(fields.size()) + " fields, header has " +
                                 std::to_string(table.rows[0].size()),
                             SourceLocation{table.name, line, 0});
        records.push_back(read(RecordReader(table.columns, fields, table.name, line), line));
    }
    return records;
}

}  // namespace

std::vector<MlperfResult> load_mlperf_results(const std::optional<std::filesystem::path>& path) {
    const std::filesystem::path file = path ? *path : data_file("mlperf/v4.1_results.csv");
    const CsvTable table = read_table(file, kRequiredColumns);
    return read_records<MlperfResult>(table, [](const RecordReader& read, int line) {
        MlperfResult m;
        m.csv_line = line;
        if (read.has("round")) m.round = read.text("round");
        m.benchmark = read.text("benchmark");
        m.submitter = read.text("submitter");
        m.system = read.text("system");
        m.status = read.text("status");
        m.accelerator = read.text("accelerator");
        m.accelerator_family = read.text("accelerator_family");
        m.n_accelerators = read.required_count("n_accelerators");
        m.n_nodes = read.required_count("n_nodes");
        m.accel_per_node = read.required_count("accel_per_node");
        m.interconnect = read.text("interconnect");
        m.global_batch_size = read.optional_count("global_batch_size");
        m.local_batch_size = read.optional_count("local_batch_size");
        m.n_runs = read.required_int("n_runs", 0, RecordReader::kMaxCount);
        m.ttt_minutes_olympic = read.optional_minutes("ttt_minutes_olympic");
        m.ttt_minutes_official_scaled = read.optional_minutes("ttt_minutes_official_scaled");
        m.samples_to_converge_mean = read.optional_positive("samples_to_converge_mean");
        m.epochs_to_converge_mean = read.optional_positive("epochs_to_converge_mean");
        m.eval_interval = read.optional_positive("eval_interval");
        // Optional column: the shipped CSV has it, a user's MLPerf-format CSV may not.
        if (read.has("gradient_accumulation_steps"))
            m.gradient_accumulation_steps = read.optional_count("gradient_accumulation_steps");
        m.eval_interval_unit = read.text("eval_interval_unit");
        m.rcp_check = read.text("rcp_check");
        m.log_predates_round = read.boolean("log_predates_round");
        m.same_run_times_as = read.text("same_run_times_as");
        m.hparams_json = read.text("hparams_json");
        return m;
    });
}

std::vector<MlperfRun> load_mlperf_runs(const std::optional<std::filesystem::path>& path) {
    const std::filesystem::path file = path ? *path : data_file("mlperf/v4.1_runs.csv");
    const CsvTable table = read_table(file, {"submitter", "system", "benchmark", "status", "ttt_minutes",
                                             "conv_point", "n_evals", "global_batch_size"});
    return read_records<MlperfRun>(table, [&table](const RecordReader& read, int line) {
        MlperfRun run;
        run.csv_line = line;
        run.submitter = read.text("submitter");
        run.system = read.text("system");
        run.benchmark = read.text("benchmark");
        const std::string& status = read.text("status");
        if (status != "success" && status != "aborted" && !status.empty())
            throw InputError("unknown run status '" + status + "' (expected success, aborted or empty)",
                             SourceLocation{table.name, line, 0}, "status");
        run.success = status == "success";
        run.minutes = read.optional_minutes("ttt_minutes");
        run.convergence_point = read.optional_positive("conv_point");
        if (run.success)
            for (const auto& [value, column] : {std::pair{run.minutes, "ttt_minutes"},
                                                std::pair{run.convergence_point, "conv_point"}})
                if (!value || !(*value > 0))
                    throw InputError("a successful run needs a positive value", SourceLocation{table.name, line, 0},
                                     column);
        run.evaluations = read.optional_int("n_evals", 0, RecordReader::kMaxCount);
        run.global_batch_size = read.optional_count("global_batch_size");
        return run;
    });
}

std::optional<double> MlperfTiming::first_segment_excess_seconds() const {
    if (!step_ms || !(*step_ms > 0) || !global_batch || !first_segment_seconds || !first_segment_samples)
        return std::nullopt;
    return *first_segment_seconds - static_cast<double>(*first_segment_samples) / *global_batch * *step_ms / 1e3;
}

std::optional<double> MlperfTiming::final_scoring_seconds() const {
    if (!eval_async || !eval_blocking_minutes || !eval_on_clock_minutes || !evaluations || *evaluations < 2)
        return std::nullopt;
    return std::max(0.0, (*eval_on_clock_minutes - *eval_blocking_minutes) * 60.0 / (*evaluations - 1));
}

std::optional<double> MlperfTiming::eval_blocking_seconds() const {
    if (!eval_blocking_minutes || !evaluations || *evaluations <= 0 || !(*eval_blocking_minutes > 0)) return std::nullopt;
    const double blocking = *eval_blocking_minutes * 60.0;
    const double scoring = final_scoring_seconds().value_or(0.0);
    return std::max(0.0, blocking - scoring) / *evaluations;
}

std::vector<MlperfTiming> load_mlperf_timing(const std::optional<std::filesystem::path>& path) {
    const std::filesystem::path file = path ? *path : data_file("mlperf/v4.1_timing.csv");
    const CsvTable table = read_table(file, {"submitter", "system", "benchmark", "log_status", "step_ms_from_segments",
                                             "eval_minutes_blocking", "eval_minutes_on_clock", "eval_async",
                                             "n_evals_on_clock", "global_batch_size",
                                             "first_segment_s", "first_segment_samples"});
    return read_records<MlperfTiming>(table, [&table](const RecordReader& read, int line) {
        MlperfTiming t;
        t.csv_line = line;
        t.submitter = read.text("submitter");
        t.system = read.text("system");
        t.benchmark = read.text("benchmark");
        t.log_read = read.text("log_status") == "ok";
        t.step_ms = read.optional_number("step_ms_from_segments");
        t.eval_blocking_minutes = read.optional_number("eval_minutes_blocking");
        t.eval_on_clock_minutes = read.optional_number("eval_minutes_on_clock");
        const std::string async = read.text("eval_async");
        if (async != "True" && async != "False" && !async.empty())
            throw InputError("expected True, False or empty, got '" + async + "'", SourceLocation{table.name, line, 0},
                             "eval_async");
        t.eval_async = async == "True";
        t.evaluations = read.optional_int("n_evals_on_clock", 0, RecordReader::kMaxCount);
        t.global_batch = read.optional_int("global_batch_size");
        t.first_segment_seconds = read.optional_number("first_segment_s");
        t.first_segment_samples = read.optional_int("first_segment_samples");
        for (const auto& [value, column] : {std::pair{t.step_ms, "step_ms_from_segments"},
                                            std::pair{t.eval_blocking_minutes, "eval_minutes_blocking"},
                                            std::pair{t.eval_on_clock_minutes, "eval_minutes_on_clock"},
                                            std::pair{t.first_segment_seconds, "first_segment_s"}})
            if (value && !(*value >= 0))
                throw InputError("a time cannot be negative", SourceLocation{table.name, line, 0}, column);
        if (t.global_batch && *t.global_batch <= 0)
            throw InputError("a global batch must be positive", SourceLocation{table.name, line, 0}, "global_batch_size");
        if (t.first_segment_samples && *t.first_segment_samples < 0)
            throw InputError("a sample count cannot be negative", SourceLocation{table.name, line, 0},
                             "first_segment_samples");
        return t;
    });
}

std::vector<MlperfResult> distinct_scored_results(const std::vector<MlperfResult>& results,
                                                  const ResultFilter& filter) {
    // Step 1: scored rows only.
    std::vector<const MlperfResult*> scored;
    for (const MlperfResult& m : results)
        if (m.ttt_minutes_official_scaled) scored.push_back(&m);

    // Step 2: group rows that share run times within their round; keep the first of each group.
    std::map<std::string, std::size_t> index_of_key;
    for (std::size_t i = 0; i < scored.size(); ++i) index_of_key.emplace(scored[i]->key(), i);
    boost::disjoint_sets_with_storage<> groups(scored.size());  // rows that share run times
    for (std::size_t i = 0; i < scored.size(); ++i) {
        const std::string& link = scored[i]->same_run_times_as;
        // A file without a round column is one round: any link whose key it holds is within it.
        const std::string own_round = scored[i]->round.empty() ? link.substr(0, link.find(':') + 1)
                                                                : "v" + scored[i]->round + ":";
        if (link.empty() || link.rfind(own_round, 0) != 0) continue;   // empty, or another round's result
        const auto other = index_of_key.find(link.substr(own_round.size()));
        if (other == index_of_key.end()) continue;      // the twin is absent or unscored
        groups.union_set(i, other->second);
    }

    // Step 3: the caller's filter.
    // A benchmark renamed between rounds (ssd, then retinanet) is one workload: names compare by what they stand for.
    const Workload* benchmark = filter.benchmark ? &find_workload(*filter.benchmark) : nullptr;
    std::vector<MlperfResult> out;
    std::vector<std::uint8_t> group_seen(scored.size(), 0);  // by the group's representative
    for (std::size_t i = 0; i < scored.size(); ++i) {
        std::uint8_t& seen = group_seen[groups.find_set(i)];
        if (seen) continue;  // the group's earliest row stands for it
        seen = 1;
        const MlperfResult& m = *scored[i];
        if (benchmark && &find_workload(m.benchmark) != benchmark) continue;
        if (filter.accelerator_family && lower(m.accelerator_family) != lower(*filter.accelerator_family)) continue;
        if (!filter.include_preview && m.status == "preview") continue;
        if (!filter.include_predating_logs && m.log_predates_round) continue;
        if (filter.require_rcp_pass && !m.rcp_passed()) continue;
        out.push_back(m);
    }
    return out;
}

}  // namespace ttsim
