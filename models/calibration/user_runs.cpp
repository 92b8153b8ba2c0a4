#include "models/calibration/user_runs.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/compute/compute_profile.hpp"
#include "models/mlperf/results.hpp"
#include "models/workloads/layers/layer_graph.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {

namespace {

// The columns of the format (docs/user-runs.md), required first.
const std::vector<std::string> kRequired = {"workload", "system", "gpus", "global_batch"};
const std::vector<std::string> kOptional = {"tp",          "cp",        "micro",         "accumulation",
                                            "distributed_optimizer",     "cuda_graphs",   "step_time",
                                            "time_to_train",             "samples_to_converge", "label"};

struct CsvFile {
    std::string name;
    std::vector<std::vector<std::string>> records;
    std::vector<int> lines;
};

// The file's records; lines starting with '#' are comments (blanked, so record lines stay the file's lines).
CsvFile read_records(const std::filesystem::path& file) {
    std::istringstream in(read_input_file(file.string(), kCsvInputFile));
    std::string text, line;
    while (std::getline(in, line)) text += (line.rfind('#', 0) == 0 ? std::string() : line) + "\n";
    CsvFile csv{file.string(), {}, {}};
    csv.records = parse_csv(text, csv.name, &csv.lines);
    if (csv.records.empty()) throw InputError("empty file: expected a header line", SourceLocation{csv.name, 1});
    return csv;
}

bool has_column(const std::vector<std::string>& header, const std::string& name) {
    return std::find(header.begin(), header.end(), name) != header.end();
}

// One row's cells by column name, with FILE:LINE:column errors.
class Row {
public:
    Row(const CsvFile& csv, const std::map<std::string, std::size_t>& columns, std::size_t index)
        : csv_(csv), columns_(columns), cells_(csv.records[index]), line_(csv.lines[index]) {}

    [[noreturn]] void fail(const std::string& column, const std::string& message) const {
        throw InputError(message, SourceLocation{csv_.name, line_}, column);
    }
    int line() const { return line_; }
    // The cell, or "" when the column is absent or the cell empty.
    std::string text(const std::string& column) const {
        const auto it = columns_.find(column);
        return it == columns_.end() ? std::string() : cells_[it->second];
    }
    std::string required(const std::string& column) const {
        std::string value = text(column);
        if (value.empty()) fail(column, "empty; this column is required on every row");
        return value;
    }
    std::optional<int> whole(const std::string& column) const {
        const std::string value = text(column);
        if (value.empty()) return std::nullopt;
        const std::optional<long> n = units::parse_whole_number(value, 1, 1 << 20);
        if (!n) fail(column, "expected a whole number from 1 to 1048576, got '" + value + "'");
        return static_cast<int>(*n);
    }
    // A positive quantity read by `parse` (units::parse_time_seconds: a duration with its unit, "85ms",
    // "12.5min"; units::parse_number: a plain number).
    template <typename Parse>
    std::optional<double> positive(const std::string& column, Parse parse) const {
        const std::string value = text(column);
        if (value.empty()) return std::nullopt;
        double x = 0;
        try {
            x = parse(value);
        } catch (const InputError& e) {
            fail(column, e.message());
        }
        if (!(x > 0) || !std::isfinite(x)) fail(column, "must be positive, got '" + value + "'");
        return x;
    }

private:
    const CsvFile& csv_;
    const std::map<std::string, std::size_t>& columns_;
    const std::vector<std::string>& cells_;
    int line_;
};

// The column a prediction's InputError field stands for in this format.
std::string column_of(const InputError& e) {
    if (!e.field()) return "gpus";
    switch (*e.field()) {
        case Field::workload: return "workload";
        case Field::system: return "system";
        case Field::global_batch:
        case Field::batch_per_rank: return "global_batch";
        case Field::tensor_parallel: return "tp";
        case Field::context_parallel: return "cp";
        default: return "gpus";
    }
}

// Runs `body` (a prediction's preparation), re-raising its InputError at this row and the column it blames.
template <typename Body>
decltype(auto) at_row(const Row& row, Body body) {
    try {
        return body();
    } catch (const InputError& e) {
        if (!e.where().file.empty()) throw;
        row.fail(column_of(e), e.message());
    }
}

CalibrationPoint point_of(const Row& row) {
    const std::string workload_name = row.required("workload");
    const Workload& workload = at_row(row, [&]() -> const Workload& { return find_workload(workload_name); });
    PredictionRequest request;
    request.workload = workload.name;
    request.system = row.required("system");
    const System system = at_row(row, [&] { return resolve_system(request.system); });
    if (!row.whole("gpus")) row.fail("gpus", "empty; this column is required on every row");
    request.gpus = *row.whole("gpus");
    request.global_batch = row.whole("global_batch");
    if (!request.global_batch) row.fail("global_batch", "empty; this column is required on every row");
    request.tensor_parallel = row.whole("tp");
    request.context_parallel = row.whole("cp");
    request.gradient_accumulation = row.whole("accumulation");
    request.layout.mode = LayoutMode::published;
    PreparedScenario s = at_row(row, [&] { return prepare(request); });

    // micro batch: the accumulation that gives it at this data-parallel size.
    if (const auto micro = row.whole("micro")) {
        const int share = s.layout.global_batch / s.layout.data_parallel;
        if (share % *micro != 0)
            row.fail("micro", fmt::format("micro batch {} does not divide the {} samples each of the {} data-parallel "
                                          "ranks takes per step (global batch {})",
                                          *micro, share, s.layout.data_parallel, s.layout.global_batch));
        if (request.gradient_accumulation && *request.gradient_accumulation * *micro != share)
            row.fail("micro", fmt::format("micro {} x accumulation {} x data-parallel {} is not the global batch {}",
                                          *micro, *request.gradient_accumulation, s.layout.data_parallel,
                                          s.layout.global_batch));
        if (s.layout.gradient_accumulation != share / *micro) {
            request.gradient_accumulation = share / *micro;
            s = at_row(row, [&] { return prepare(request); });
        }
    }
    ParallelismConfig layout = s.layout;
    bool relayout = false;
    if (const std::string value = row.text("distributed_optimizer"); !value.empty()) {
        if (value != "on" && value != "off") row.fail("distributed_optimizer", "expected on or off, got '" + value + "'");
        set_distributed_optimizer(layout, value == "on");
        if (layout.distributed_optimizer && layout.weight_replicas() == 1)
            row.fail("distributed_optimizer", "on needs more than one data- or context-parallel rank (this layout has 1)");
        relayout = relayout || layout.distributed_optimizer != s.layout.distributed_optimizer;
    }
    if (const std::string value = row.text("cuda_graphs"); !value.empty()) {
        const std::vector<std::string> modes = {"none", "per_layer", "segmented", "full_iteration"};
        if (std::find(modes.begin(), modes.end(), value) == modes.end())
            row.fail("cuda_graphs", "expected none, per_layer, segmented or full_iteration, got '" + value + "'");
        layout.cuda_graphs = value;
        relayout = true;
    }
    if (relayout) {
        PreparedScenario again = at_row(row, [&] { return prepare_with_layout(workload, s.system, s.gpus, layout); });
        again.defaults = s.defaults;
        s = std::move(again);
    }
    // Memory per GPU (the operator model's estimate: weights, gradients, optimizer shard, activations).
    if (s.operator_table && !s.operator_table->memory.fits)
        row.fail(!row.text("micro").empty()                          ? "micro"
                 : !row.text("tp").empty() || !row.text("cp").empty() ? "tp"
                                                                       : "gpus",
                 "this layout does not fit in HBM: " + s.operator_table->memory.summary);

    CalibrationPoint p;
    MlperfResult& r = p.result;
    r.csv_line = row.line();
    r.benchmark = workload.mlperf_benchmark;
    const std::string label = row.text("label");
    const std::size_t slash = label.find('/');
    if (!label.empty() && (slash == 0 || slash == std::string::npos || slash + 1 == label.size()))
        row.fail("label", "expected SUBMITTER/SYSTEM, got '" + label + "'");
    r.submitter = label.empty() ? "user" : label.substr(0, slash);
    r.system = label.empty() ? "line " + std::to_string(row.line()) : label.substr(slash + 1);
    r.accelerator_family = r.accelerator = s.gpu->name;
    r.n_accelerators = s.gpus;
    r.global_batch_size = s.layout.global_batch;
    p.scenario = s;
    p.fit_scenario = s;
    if (const auto samples = row.positive("samples_to_converge", units::parse_number)) {
        p.fit_scenario.samples_mean = p.fit_scenario.samples_p10 = p.fit_scenario.samples_p90 = *samples;
        p.fit_scenario.samples_from_rcps = false;
        p.published_convergence = true;
    }
    p.measured_step_seconds = row.positive("step_time", units::parse_time_seconds);
    if (const auto ttt = row.positive("time_to_train", units::parse_time_seconds)) {
        p.published_minutes = *ttt / 60.0;
        r.ttt_minutes_official_scaled = p.published_minutes;
    } else if (p.published_convergence) {
        row.fail("samples_to_converge", "given without a time_to_train to go with it");
    }
    if (!p.measured_step_seconds && p.published_minutes <= 0)
        row.fail("step_time", "neither step_time nor time_to_train given: a row needs what was measured");
    // Nothing trains faster than its FLOPs at the GPUs' dense tensor-core peak (every kernel at 100 %, no
    // communication, no other cost): a measurement below that is a unit slip (ms for min) or another workload.
    const double flops = s.workload->train_flops_per_sample * s.layout.global_batch;
    if (flops > 0) {
        const double step_floor = flops / (static_cast<double>(s.gpus) * peak_flops(*s.gpu, s.layout.fp8));
        if (p.measured_step_seconds && *p.measured_step_seconds < step_floor)
            row.fail("step_time", fmt::format("{} s is below the step's FLOPs at the GPUs' peak ({} s): check the unit",
                                              units::format_number(*p.measured_step_seconds),
                                              units::format_number(step_floor)));
        const double steps = std::ceil(p.fit_scenario.samples_mean / s.layout.global_batch - 1e-9);
        if (p.published_minutes > 0 && p.published_minutes * 60 < steps * step_floor)
            row.fail("time_to_train", fmt::format("{} s is below {} steps at the GPUs' peak ({} s): check the unit",
                                                  units::format_number(p.published_minutes * 60),
                                                  units::format_number(steps), units::format_number(steps * step_floor)));
    }
    return p;
}

}  // namespace

bool is_user_runs_csv(const std::filesystem::path& file) {
    const CsvFile csv = read_records(file);
    const auto& header = csv.records.front();
    if (has_column(header, "workload")) return true;
    if (has_column(header, "benchmark")) return false;
    throw InputError("header has neither 'workload' (the user-runs format, docs/user-runs.md) nor 'benchmark' (the "
                     "MLPerf v4.1 results format)",
                     SourceLocation{csv.name, csv.lines.front()});
}

std::vector<CalibrationPoint> load_user_runs(const std::filesystem::path& file) {
    const CsvFile csv = read_records(file);
    const auto& header = csv.records.front();
    const SourceLocation header_at{csv.name, csv.lines.front()};
    std::map<std::string, std::size_t> columns;
    for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string& name = header[i];
        if (std::find(kRequired.begin(), kRequired.end(), name) == kRequired.end() &&
            std::find(kOptional.begin(), kOptional.end(), name) == kOptional.end())
            throw InputError(fmt::format("unknown column (expected {}, {})", fmt::join(kRequired, ", "),
                                         fmt::join(kOptional, ", ")),
                             header_at, name);
        if (!columns.emplace(name, i).second) throw InputError("column given twice", header_at, name);
    }
    for (const std::string& name : kRequired)
        if (!columns.count(name)) throw InputError("missing required column", header_at, name);
    if (!columns.count("step_time") && !columns.count("time_to_train"))
        throw InputError("missing the measurement: a step_time or a time_to_train column", header_at, "step_time");
    if (csv.records.size() == 1) throw InputError("no runs after the header", header_at);
    std::vector<CalibrationPoint> points;
    for (std::size_t i = 1; i < csv.records.size(); ++i) {
        if (csv.records[i] == header)
            throw InputError("the header again", SourceLocation{csv.name, csv.lines[i]});
        if (csv.records[i].size() != header.size())
            throw InputError(fmt::format("{} fields, the header has {}", csv.records[i].size(), header.size()),
                             SourceLocation{csv.name, csv.lines[i]});
        points.push_back(point_of(Row(csv, columns, i)));
    }
    return points;
}

UserCalibration calibrate_user_runs(const std::vector<CalibrationPoint>& points, const std::string& description,
                                    SharedFit shared, const ProfileSet& fallback) {
    shared.step_logs = true;   // the measured step times are what a user's runs are for
    const bool any_time_to_train =
        std::any_of(points.begin(), points.end(), [](const CalibrationPoint& p) { return p.published_minutes > 0; });
    // The operator model's physics (kernel-class efficiencies, launch and per-kernel costs, GPU speeds) stay the
    // fallback's: a few rows move their stack's offset and their workload's own terms, not what every prediction
    // shares (calibrate_operator_points).
    const ProfileSet* held = shared.operator_model ? &fallback : nullptr;
    if (any_time_to_train) return {calibrate_points(points, description, shared, held), {}};
    // A step time holds neither the per-run cost nor the evaluations: the fits do not search them (no result
    // shows them), and they are taken from the shipped profiles below.
    CalibrationReport report = calibrate_points(points, description, shared, held);
    ProfileSet fixed;
    fixed.stack_speeds = report.profiles.stack_speeds;
    std::string values;
    for (const auto& [key, fitted] : report.profiles.all()) {
        ComputeProfile p = fitted;
        const ComputeProfile shipped = fallback.find(find_workload(p.workload), find_gpu(p.gpu));
        p.run_overhead_seconds = shipped.run_overhead_seconds;
        p.eval_fixed_seconds = shipped.eval_fixed_seconds;
        p.eval_forward_factor = shipped.eval_forward_factor;
        p.eval_step_seconds = shipped.eval_step_seconds;
        p.eval_host_kernels_per_sample = shipped.eval_host_kernels_per_sample;
        values += fmt::format("{}{}/{} run overhead {} s, evaluation cost {} s", values.empty() ? "" : "; ", p.workload,
                              p.gpu, units::format_number(p.run_overhead_seconds, 4),
                              units::format_number(p.eval_fixed_seconds, 4));
        fixed.add(std::move(p));
    }
    report.profiles = std::move(fixed);
    const std::string note = "only step times measured: the time-to-train terms (per-run overhead, per-evaluation cost) "
                             "are not identifiable from them and were not fitted; taken from the shipped profiles: " +
                             values;
    report.data_description += "\n" + note;
    return {std::move(report), note};
}

std::string format_user_run_table(const std::vector<CalibrationPoint>& points, const ProfileSet& profiles) {
    std::string out = fmt::format("{:>5} {:<28} {:<17} {:<9} {:>6} {:>6} {:>10} {:>10} {:>7} {:>10} {:>10} {:>7}\n",
                                  "line", "label", "workload", "gpu", "gpus", "batch", "step ms", "predicted", "err%",
                                  "TTT min", "predicted", "err%");
    for (const CalibrationPoint& p : points) {
        const PointError e = evaluate_point(p, profiles);
        auto measured = [](bool has, double value, double predicted) {
            return has ? fmt::format("{:>10.4g} {:>10.4g} {:>+7.2f}", value, predicted, 100.0 * (predicted / value - 1))
                       : fmt::format("{:>10} {:>10.4g} {:>7}", "-", predicted, "");
        };
        const std::string label = (p.result.submitter + "/" + p.result.system).substr(0, 28);
        fmt::format_to(std::back_inserter(out), "{:>5} {:<28} {:<17} {:<9} {:>6} {:>6} {} {}\n", p.result.csv_line, label,
                       e.workload, e.gpu, e.gpus, e.global_batch,
                       measured(p.measured_step_seconds.has_value(), e.published_ms, e.predicted_ms),
                       measured(p.published_minutes > 0, e.published_minutes, e.predicted_minutes));
    }
    return out;
}

}  // namespace ttsim
