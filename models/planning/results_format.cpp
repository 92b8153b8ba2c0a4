#include "models/planning/results_format.hpp"

#include "models/training/layout_search.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "models/planning/footnotes.hpp"
#include "models/planning/plan_format.hpp"
#include "models/planning/unchanged_whatifs.hpp"
#include "sim/units.hpp"

namespace ttsim::planning {

std::string wrap_text(const std::string& first, std::size_t indent, const std::string& text, std::size_t width) {
    std::string out, line = first;
    const std::string pad(indent, ' ');
    std::size_t start = line.size();   // where the current line's text begins (nothing to wrap before it)
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t space = text.find(' ', i);
        std::string word = text.substr(i, space == std::string::npos ? std::string::npos : space - i);
        i = space == std::string::npos ? text.size() : space + 1;
        if (word.empty()) continue;
        const bool line_has_text = line.size() > start;
        if (line.size() + (line_has_text ? 1 : 0) + word.size() > width && line_has_text) {
            out += line + "\n";
            line = pad;
            start = line.size();
        }
        if (line.size() > start) line += ' ';
        while (line.size() + word.size() > width && width > line.size() + 1) {   // a word longer than a line
            const std::size_t take = width - line.size();
            out += line + word.substr(0, take) + "\n";
            word.erase(0, take);
            line = pad;
            start = line.size();
        }
        line += word;
    }
    return out + line + "\n";
}


std::string csv_number(double value) { return units::format_number(value, 8); }

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string layout_choice_text(const Prediction& p) { return p.layout_choice.empty() ? "published" : p.layout_choice; }

nlohmann::ordered_json fabric_shape_json(const FabricShape& shape) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    if (shape.planes) j["planes"] = *shape.planes;
    if (shape.switch_ports) j["switch_ports"] = *shape.switch_ports;
    if (shape.tiers) j["tiers"] = *shape.tiers;
    if (shape.spine_oversubscription) j["spine_oversubscription"] = *shape.spine_oversubscription;
    if (shape.superspine_oversubscription) j["superspine_oversubscription"] = *shape.superspine_oversubscription;
    if (shape.rail_optimized) j["rail_optimized"] = *shape.rail_optimized;
    return j;
}

nlohmann::ordered_json published_alternative_json(const Prediction::Alternative& a) {
    return {{"basis", a.label}, {"layout", describe_layout(a.layout)}, {"ttt_minutes", a.ttt_minutes},
            {"step_ms", a.step_ms}, {"memory_per_gpu_bytes", a.memory_per_gpu_bytes}, {"memory_fits", a.memory_fits}};
}

std::string mfu_csv_fields(const Prediction& p) {
    if (!(p.model_flops_utilisation > 0)) return ",";
    return csv_number(p.model_flops_utilisation) + "," + csv_number(p.model_flops_per_gpu / 1e12);
}

void add_mfu_json(nlohmann::ordered_json& j, const Prediction& p) {
    const bool known = p.model_flops_utilisation > 0;
    j["mfu"] = known ? nlohmann::ordered_json(p.model_flops_utilisation) : nlohmann::ordered_json(nullptr);
    j["model_tflops_per_gpu"] = known ? nlohmann::ordered_json(p.model_flops_per_gpu / 1e12) : nlohmann::ordered_json(nullptr);
}

std::string reliability_csv_fields(const Prediction& p) {
    if (!p.reliability) return ",,,,";
    const reliability::RunReliability& r = *p.reliability;
    return csv_number(r.runs.goodput) + "," + csv_number(r.runs.mean_interruptions) + "," +
           csv_number(r.checkpoint_interval_minutes) + "," + csv_number(r.expected_wall_minutes()) + "," +
           csv_number(r.wall_p90_at_p90_minutes);
}

void add_reliability_json(nlohmann::ordered_json& j, const Prediction& p) {
    if (!p.reliability) {
        for (const char* key : {"goodput", "interruptions", "checkpoint_interval_minutes", "reliability"}) j[key] = nullptr;
        return;
    }
    const reliability::RunReliability& r = *p.reliability;
    j["goodput"] = r.runs.goodput;
    j["interruptions"] = r.runs.mean_interruptions;
    j["checkpoint_interval_minutes"] = r.checkpoint_interval_minutes;
    j["reliability"] = {{"failure_rates", r.failure_rates},
                        {"mttf_hours", r.mttf_hours},
                        {"checkpoint_bytes", r.checkpoint_bytes},
                        {"checkpoint_write_seconds", r.checkpoint_write_seconds},
                        {"restart_seconds", r.restart_seconds},
                        {"checkpoint_interval", r.interval_pinned ? "pinned" : "Daly optimum"},
                        {"checkpoints", r.runs.mean_checkpoints},
                        {"wall_minutes", {{"mean", r.expected_wall_minutes()},
                                          {"p10", r.runs.p10_wall_seconds / 60},
                                          {"p50", r.runs.p50_wall_seconds / 60},
                                          {"p90", r.runs.p90_wall_seconds / 60},
                                          {"p90_at_p90_convergence", r.wall_p90_at_p90_minutes}}},
                        {"trials", r.runs.trials}};
}

namespace {

std::string number(double value) { return csv_number(value); }


// The SHARP the point asked for (its network option's, else the sweep's `sharp:`); whether it ran is the
// layout's (sharp_used, layout.sharp).
std::string sharp_text(const SweepPoint& point) {
    const std::optional<bool> sharp = point.requested_sharp();
    return sharp ? (*sharp ? "on" : "off") : "default";
}

std::vector<std::string> point_messages(const PointResult& r) {
    std::vector<std::string> messages = r.outcome.prediction.warnings;
    messages.insert(messages.end(), r.outcome.notes.begin(), r.outcome.notes.end());
    messages.insert(messages.end(), r.notes.begin(), r.notes.end());
    return messages;
}

std::string signed_percent(double value) { return (value >= 0 ? "+" : "") + fmt::format("{:.1f}", value) + "%"; }

std::string join_numbers(const std::vector<int>& values, const std::string& separator) {
    std::string out;
    for (int v : values) out += (out.empty() ? "" : separator) + std::to_string(v);
    return out;
}

// The systems whose prices a sweep used, each (label, base system): the base systems, and a variant where it has
// a price of its own.
std::vector<std::pair<std::string, std::string>> priced_systems(const SweepResult& result, const CostParameters& cost) {
    std::vector<std::pair<std::string, std::string>> systems;
    for (const PointResult& r : result.points) {
        const std::string& base = r.point.base_system;
        const std::pair<std::string, std::string> entry{cost.has_own_price(r.point.system, base) ? r.point.system : base, base};
        if (std::find(systems.begin(), systems.end(), entry) == systems.end()) systems.push_back(entry);
    }
    return systems;
}

}  // namespace

std::string decision_value(double value, double threshold) {
    // Two decimals unless they hide the comparison (0.4965 is "0.50", like a 0.50 threshold): then as many more
    // as it takes for value and threshold to print differently.
    int digits = 2;
    while (digits < 8 && value != threshold && fmt::format("{:.{}f}", value, digits) == fmt::format("{:.{}f}", threshold, digits)) ++digits;
    return fmt::format("{:.{}f}", value, digits) + (value < threshold ? " < " : " >= ") + fmt::format("{:.{}f}", threshold, digits);
}

std::string describe_break_even(const SweepOptions& options) {
    const std::string threshold = fmt::format("{:.2f}", options.break_even_threshold);
    const std::string walk =
        "the largest N reached by doubling from the reference with every doubling's marginal efficiency "
        "T(N/2)/(2 T(N)) >= " + threshold + ", every one landing on the series' Pareto front of time and GPU-hours";
    const std::string knee =
        "the knee: the count minimising time x GPU-hours (T^2 N), with the counts the p10-p90 band cannot tell from "
        "it; largest doubling that pays: the largest N whose doubling to 2N keeps T(N)/(2 T(2N)) >= " + threshold +
        ", over every doubling" +
        (options.deadline_minutes ? "; cheapest within the deadline: the fewest GPU-hours whose p90 time meets it" : "");
    return options.break_even_rule == BreakEvenRule::knee
               ? "break-even: " + knee + " (docs/model.md; metrics.break_even: doubling-walk for " + walk + ")"
               : "break-even: " + walk + " (metrics.break_even: doubling-walk; where the sweep ends first, the largest "
                                         "count reached is only a lower bound); also " + knee;
}

namespace {
// The seed's doubling walk in words: the count and why it ends there, or why it was not judged.
std::string describe_doubling_walk(const SeriesSummary& series, const SweepOptions& options) {
    if (!series.reference_gpus) return "break-even: not judged (no successful point)";
    const int reference = *series.reference_gpus;
    if (!series.break_even)
        return "break-even: not judged: " + std::to_string(2 * reference) + " GPUs (a doubling of the reference " +
               std::to_string(reference) + ") is not in this series, so there is no doubling to judge";
    const BreakEven& b = *series.break_even;
    const std::string doublings =
        std::to_string(b.doublings_judged) + " doubling" + (b.doublings_judged == 1 ? "" : "s") + " from " +
        std::to_string(reference) + " GPUs";
    if (b.off_front)
        return "break-even " + std::to_string(b.gpus) + " GPUs: doubling to " + std::to_string(*b.off_front) +
               " GPUs leaves the Pareto front" +
               (b.off_front_beaten_by ? " (" + std::to_string(*b.off_front_beaten_by) +
                                         " GPUs are at least as fast, for fewer GPU-hours)" : "");
    if (b.first_below)
        return "break-even " + std::to_string(b.gpus) + " GPUs: doubling to " + std::to_string(*b.first_below) +
               " gives T(N/2)/(2 T(N)) = " + decision_value(*b.first_below_efficiency, options.break_even_threshold);
    return "break-even beyond the sweep (at least " + std::to_string(b.gpus) + " GPUs): " +
           (b.doublings_judged == 1 ? "the " : "all ") + doublings + " stayed >= " +
           fmt::format("{:.2f}", options.break_even_threshold) + ", and " + std::to_string(2 * b.gpus) +
           " GPUs is not in this series to judge the next";
}

std::string describe_knee(const Knee& k) {
    std::string text = "break-even (knee of time x GPU-hours) " + std::to_string(k.gpus) + " GPUs, range " +
                       std::to_string(k.range_low) + ".." + std::to_string(k.range_high) + " under the p10-p90 band";
    if (k.at_largest) text += "; at the sweep's largest count, so the knee may lie beyond it";
    return text;
}
}  // namespace

std::string describe_series_break_even(const SeriesSummary& series, const SweepOptions& options) {
    if (options.break_even_rule == BreakEvenRule::doubling_walk || !series.answer)
        return describe_doubling_walk(series, options);
    return describe_knee(series.answer->knee);
}

std::vector<std::string> describe_series_scaling(const SeriesSummary& series, const SweepOptions& options) {
    std::vector<std::string> lines{describe_series_break_even(series, options)};
    if (!series.answer) return lines;
    const ScalingAnswer& a = *series.answer;
    if (options.break_even_rule != BreakEvenRule::knee) lines.push_back(describe_knee(a.knee));
    const std::string threshold = fmt::format("{:.2f}", options.break_even_threshold);
    if (a.paying_doubling)
        lines.push_back(fmt::format("largest doubling that pays (>= {}): {} -> {} GPUs (T(N)/(2 T(2N)) = {:.3f})",
                                    threshold, a.paying_doubling->gpus, a.paying_doubling->to_gpus,
                                    a.paying_doubling->efficiency));
    else
        lines.push_back(a.doublings_judged == 0
                            ? "largest doubling that pays: no count and its double are both in this series"
                            : fmt::format("largest doubling that pays (>= {}): none of the {} doublings", threshold,
                                          a.doublings_judged));
    if (options.deadline_minutes) {
        if (a.cost_optimal)
            lines.push_back(fmt::format("cheapest within {} at p90: {} GPUs ({} at p90, {} GPU-hours)",
                                        format_duration(*options.deadline_minutes), a.cost_optimal->gpus,
                                        format_duration(a.cost_optimal->ttt_p90_minutes),
                                        three_significant(a.cost_optimal->gpu_hours_p90)));
        else
            lines.push_back("cheapest within " + format_duration(*options.deadline_minutes) +
                            " at p90: no count of this series meets it");
    }
    return lines;
}

std::string describe_reference(const SeriesSummary& series) {
    if (!series.reference_gpus) return "";
    std::string text = "reference " + std::to_string(*series.reference_gpus) + " GPUs";
    if (series.requested_reference_gpus)
        text += " (substituted: metrics.reference_gpus " + std::to_string(*series.requested_reference_gpus) +
                " has no successful point in this series, so its smallest successful count is the reference)";
    return text;
}

std::string format_sweep_table(const std::string& title, const SweepResult& result) {
    std::ostringstream out;
    const SweepOptions& o = result.options;
    out << title << "\n";
    bool any_published = false;
    for (const SeriesSummary& series : result.series) {
        const PointResult& first = result.points[series.points.front()];
        out << "\n" << series.workload << " on " << series.label;
        if (first.outcome.ok) out << " (" << first.outcome.prediction.gpu << ")";
        if (series.reference_gpus) out << ", " << describe_reference(series);
        out << "\n";
        for (const std::string& line : describe_series_scaling(series, o)) out << wrap_text("  ", 4, line);
        // One row layout for the header and every point.
        constexpr const char* kRow = "  {:>6} {:>7} {:>9} {:>8} {:>8} {:>10} {:>10} {:>10} {:>14} {:>10} {:>10} {:>7}  {}\n";
        out << fmt::format(kRow, "GPUs", "batch", "TTT", "speedup", "TTT eff.", "GPU-hours", "energy kWh",
                           "cost " + o.cost.currency, "v4.1 TTT (n)", "v4.1 batch", "ttsim@v4.1", "error", "notes");
        // Warnings become numbered footnotes, one per shape of message per series (footnotes.hpp).
        Footnotes footnotes;
        for (std::size_t i : series.points) {
            const PointResult& r = result.points[i];
            if (!r.outcome.ok) {
                out << fmt::format("  {:>6}  not run: {}\n", r.point.gpus, r.outcome.error);
                continue;
            }
            const Prediction& p = r.outcome.prediction;
            std::string published = "-", batch = "-", model = "-", error = "-";
            if (r.published) {
                any_published = true;
                published = format_duration(r.published->median_minutes) + " (" + std::to_string(r.published->results) + ")";
                batch = join_numbers(r.published->global_batches(), "/");
                if (r.comparison) {
                    model = format_duration(r.comparison->predicted_minutes);
                    error = signed_percent(r.comparison->error_percent);
                }
            }
            std::vector<std::string> marks;
            for (const std::string& message : point_messages(r)) {
                const std::string mark = "[" + std::to_string(footnotes.add(message)) + "]";
                if (std::find(marks.begin(), marks.end(), mark) == marks.end()) marks.push_back(mark);
            }
            if (r.pareto_cost && !r.pareto) marks.insert(marks.begin(), "pareto($)");
            if (r.pareto) marks.insert(marks.begin(), "pareto");
            out << fmt::format(kRow, r.point.gpus, p.global_batch, format_duration(p.ttt_minutes),
                               fmt::format("{:.2f}", r.metrics.speedup), fmt::format("{:.2f}", r.metrics.efficiency),
                               fmt::format("{:.1f}", p.gpu_hours), fmt::format("{:.1f}", r.energy.facility_kwh),
                               fmt::format("{:.2f}", r.cost), published, batch, model, error, fmt::join(marks, " "));
        }
        for (const std::string& line : footnotes.lines()) out << wrap_text("  ", 6, line);
    }
    // What-ifs that change nothing say why (unchanged_whatifs.hpp): part of the answer, before the legend.
    const std::vector<UnchangedWhatIf> unchanged = unchanged_whatifs(result);
    if (!unchanged.empty()) out << "\n";
    for (const UnchangedWhatIf& u : unchanged)
        out << wrap_text("", 2, "what-if without effect: " + u.workload + " on " + u.series_label + " gives the times of " +
                                    u.same_as_label + " (within " + fmt::format("{:g}", 100 * kSameTimeTolerance) +
                                    " %): " + u.reason);
    // What the columns mean, once, after the tables, each wrapped to the terminal width.
    std::vector<std::string> legend{
        "TTT: time-to-train, three significant figures, in s under a minute, min under two hours, else h",
        "speedup = T(N_ref) / T(N) in time-to-train; TTT eff. = time-to-train efficiency = speedup / (N / N_ref), "
        "which includes convergence (larger batches need more samples); not the throughput efficiency of "
        "`ttsim predict` (per-GPU samples/s relative to 8 GPUs)",
        describe_break_even(o),
        "pareto: no other point of the workload is both faster and uses fewer GPU-hours; pareto($): the same "
        "with cost instead of GPU-hours, where prices differ",
        "cost = rented GPU-hours x price per GPU-hour: " + o.cost.describe_prices(priced_systems(result, o.cost)) + "; " +
            kBillingRule,
        describe_energy_model(o.energy)};
    std::size_t searched = 0, ran = 0;
    for (const PointResult& r : result.points)
        if (r.outcome.ok) {
            ++ran;
            searched += r.outcome.prediction.layout_choice.empty() ? 0 : 1;
        }
    if (ran > 0)
        legend.push_back(
            "layout: " +
            (searched == ran    ? std::string("at every point")
             : searched > 0     ? "at " + std::to_string(searched) + " of " + std::to_string(ran) + " points"
                                : std::string("at no point")) +
            " the fastest TP x CP x DP x micro batch x accumulation that fits in HBM (operator model, as `ttsim "
            "predict`)" +
            (searched == ran ? "" : ", elsewhere v4.1's published layout at the nearest scale") +
            "; `layout: published` keeps v4.1's; results.csv/json give each point's layout, how it was chosen "
            "(layout_choice) and the published layout's time (published_layout_minutes)");
    if (any_published)
        legend.push_back(
            "v4.1 TTT (n): MLPerf Training v4.1 official score, median of the n distinct results at that count; "
            "v4.1 batch: their global batch; ttsim@v4.1: ttsim's prediction at each result's own batch and layout "
            "(as `ttsim validate`), median; error = (ttsim@v4.1 - v4.1 TTT) / v4.1 TTT: like with like, "
            "independent of this row's batch");
    out << "\n";
    for (const std::string& line : legend) out << wrap_text("", 2, line);
    return out.str();
}

std::string format_sweep_csv(const SweepResult& result) {
    std::ostringstream out;
    out << "index,workload,system,gpu,network,nic,sharp,oversubscription,batch_rule,gpus,status,error,global_batch,"
           "tp,cp,dp,micro_batch,gradient_accumulation,ttt_minutes,ttt_p10_minutes,ttt_p90_minutes,steps,step_ms,"
           "compute_ms,exposed_comm_ms,fixed_ms,eval_minutes,samples_to_converge,reference_gpus,speedup,ttt_efficiency,"
           "marginal_doubling_efficiency,gpu_hours,rented_gpu_hours,price_per_gpu_hour,price_is_estimate,cost,currency,gpu_kwh,node_kwh,"
           "network_kwh,energy_kwh,pareto,published_minutes,published_results,published_global_batch,"
           "published_predicted_minutes,error_percent,warnings,routing,sharp_used,pareto_cost,layout_choice,"
           "published_layout_minutes,mfu,model_tflops_per_gpu,"
        << kReliabilityCsvColumns << "\n";
    for (const PointResult& r : result.points) {
        const SweepPoint& pt = r.point;
        out << pt.index << "," << csv_field(pt.workload) << "," << csv_field(pt.system) << ",";
        const Prediction& p = r.outcome.prediction;
        out << csv_field(r.outcome.ok ? p.gpu : "") << "," << csv_field(pt.network.name) << ","
            << csv_field(pt.network.nic.label()) << "," << sharp_text(pt) << ","
            << number(pt.network.oversubscription) << "," << csv_field(pt.batch.label()) << "," << pt.gpus << ",";
        if (!r.outcome.ok) {
            out << "error," << csv_field(r.outcome.error) << std::string(37, ',') << "," << to_string(pt.routing)
                << ",,,,,,,,,,,\n";   // then the five reliability columns, empty
            continue;
        }
        const ParallelismConfig& c = p.layout;
        out << "ok,," << p.global_batch << "," << c.tensor_parallel << "," << c.context_parallel << ","
            << c.data_parallel << "," << c.samples_per_micro_batch << "," << c.gradient_accumulation << ","
            << number(p.ttt_minutes) << "," << number(p.ttt_p10_minutes) << "," << number(p.ttt_p90_minutes) << ","
            << p.steps << "," << number(p.step_ms) << "," << number(p.compute_ms) << "," << number(p.exposed_comm_ms)
            << "," << number(p.fixed_ms) << "," << number(p.eval_minutes) << "," << number(p.samples_to_converge)
            << "," << r.reference_gpus << "," << number(r.metrics.speedup) << "," << number(r.metrics.efficiency)
            << "," << (r.metrics.marginal_doubling_efficiency ? number(*r.metrics.marginal_doubling_efficiency) : "")
            << "," << number(p.gpu_hours) << "," << number(r.rented_gpu_hours) << "," << number(r.price_per_gpu_hour) << ","
            << (result.options.cost.price_of_is_estimate(pt.system, pt.base_system) ? "true" : "false") << "," << number(r.cost) << ","
            << csv_field(result.options.cost.currency) << "," << number(r.energy.gpu_kwh) << ","
            << number(r.energy.node_kwh) << "," << number(r.energy.network_kwh) << "," << number(r.energy.facility_kwh)
            << "," << (r.pareto ? "true" : "false") << ","
            << (r.published ? number(r.published->median_minutes) : "") << ","
            << (r.published ? std::to_string(r.published->results) : "") << ","
            << (r.published ? join_numbers(r.published->global_batches(), "/") : "") << ","
            << (r.comparison ? number(r.comparison->predicted_minutes) : "") << ","
            << (r.comparison ? number(r.comparison->error_percent) : "") << "," << csv_field(fmt::format("{}", fmt::join(point_messages(r), "; ")))
            << "," << to_string(pt.routing) << "," << (c.sharp ? "true" : "false") << ","
            << (r.pareto_cost ? "true" : "false") << "," << csv_field(layout_choice_text(p)) << ","
            << (p.published ? number(p.published->ttt_minutes) : "") << "," << mfu_csv_fields(p) << ","
            << reliability_csv_fields(p) << "\n";
    }
    return out.str();
}

std::string format_sweep_json(const std::string& kind, const std::string& name, const SweepResult& result) {
    using json = nlohmann::ordered_json;
    const SweepOptions& o = result.options;
    json j;
    j["schema"] = kResultsSchema;
    j["kind"] = kind;
    j["name"] = name;
    if (result.interrupted)   // SIGINT: only the finished points are listed
        j["interrupted"] = {{"points_finished", result.points.size()}, {"points_requested", result.points_requested}};
    j["models"] = {{"speedup", "T(N_ref) / T(N), T = time-to-train"},
                   {"ttt_efficiency", "time-to-train efficiency: speedup / (N / N_ref); includes convergence, unlike "
                                      "the throughput efficiency of ttsim predict (per-GPU samples/s vs 8 GPUs)"},
                   {"break_even", describe_break_even(o)},
                   {"energy", describe_energy_model(o.energy)},
                   {"cost", "rented GPU-hours x price per GPU-hour"},
                   {"published", "MLPerf Training v4.1 official score, median of distinct results at that GPU count; "
                                 "predicted_minutes: ttsim at each result's own global batch and layout (as ttsim "
                                 "validate), median; error_percent = (predicted_minutes - minutes) / minutes x 100"}};
    j["parameters"] = {{"reference_gpus", o.reference_gpus ? json(*o.reference_gpus) : json(nullptr)},
                       {"break_even_threshold", o.break_even_threshold},
                       {"break_even", o.break_even_rule == BreakEvenRule::knee ? "knee" : "doubling-walk"},
                       {"deadline_minutes", o.deadline_minutes ? json(*o.deadline_minutes) : json(nullptr)},
                       {"node_watts", o.energy.node_watts},
                       {"switch_watts", o.energy.switch_watts},
                       {"pue", o.energy.pue},
                       {"currency", o.cost.currency},
                       {"prices", o.cost.describe_prices(priced_systems(result, o.cost))}};
    json series = json::array();
    for (const SeriesSummary& s : result.series) {
        json e;
        e["workload"] = s.workload;
        e["label"] = s.label;
        // What tells the series apart, as the points carry it: system, network option and batch rule.
        if (!s.points.empty()) {
            const SweepPoint& first = result.points[s.points.front()].point;
            e["system"] = first.system;
            e["network"] = first.network.name;
            e["batch_rule"] = first.batch.label();
        }
        e["reference_gpus"] = s.reference_gpus ? json(*s.reference_gpus) : json(nullptr);
        e["requested_reference_gpus"] = s.requested_reference_gpus ? json(*s.requested_reference_gpus) : json(nullptr);
        e["break_even_text"] = describe_series_break_even(s, o);
        e["scaling_text"] = describe_series_scaling(s, o);
        if (s.answer) {
            const ScalingAnswer& a = *s.answer;
            e["knee"] = {{"gpus", a.knee.gpus}, {"range_low", a.knee.range_low}, {"range_high", a.knee.range_high},
                         {"time_x_gpu_hours", a.knee.time_x_gpu_hours}, {"at_largest", a.knee.at_largest}};
            e["largest_paying_doubling"] =
                a.paying_doubling ? json{{"gpus", a.paying_doubling->gpus}, {"to_gpus", a.paying_doubling->to_gpus},
                                         {"efficiency", a.paying_doubling->efficiency}}
                                  : json(nullptr);
            e["cost_optimal"] =
                a.cost_optimal ? json{{"gpus", a.cost_optimal->gpus}, {"ttt_p90_minutes", a.cost_optimal->ttt_p90_minutes},
                                      {"gpu_hours_p90", a.cost_optimal->gpu_hours_p90}}
                               : json(nullptr);
        }
        if (o.break_even_rule == BreakEvenRule::knee && s.answer) {
            // The headline under the default rule; `limited_by_sweep` as the walk's: the sweep may end too soon.
            e["break_even"] = {{"rule", "knee"}, {"gpus", s.answer->knee.gpus},
                               {"range_low", s.answer->knee.range_low}, {"range_high", s.answer->knee.range_high},
                               {"limited_by_sweep", s.answer->knee.at_largest}};
        } else if (s.break_even) {
            e["break_even"] = {{"rule", "doubling-walk"}, {"gpus", s.break_even->gpus},
                               {"doublings_judged", s.break_even->doublings_judged},
                               {"limited_by_sweep", s.break_even->limited_by_sweep},
                               {"first_below_gpus", s.break_even->first_below ? json(*s.break_even->first_below) : json(nullptr)},
                               {"first_below_efficiency",
                                s.break_even->first_below_efficiency ? json(*s.break_even->first_below_efficiency) : json(nullptr)},
                               {"off_front_gpus", s.break_even->off_front ? json(*s.break_even->off_front) : json(nullptr)}};
        } else {
            e["break_even"] = nullptr;
        }
        json indices = json::array();
        for (std::size_t i : s.points) indices.push_back(i);
        e["points"] = indices;
        series.push_back(e);
    }
    j["series"] = series;
    json unchanged = json::array();
    for (const UnchangedWhatIf& u : unchanged_whatifs(result))
        unchanged.push_back({{"workload", u.workload}, {"series", u.series_label}, {"same_as", u.same_as_label},
                             {"tolerance", kSameTimeTolerance}, {"reason", u.reason}});
    j["unchanged_whatifs"] = unchanged;
    json points = json::array();
    for (const PointResult& r : result.points) {
        const SweepPoint& pt = r.point;
        const Prediction& p = r.outcome.prediction;
        json e;
        e["index"] = pt.index;
        e["workload"] = pt.workload;
        e["system"] = pt.system;
        e["gpus"] = pt.gpus;
        e["network"] = {{"name", pt.network.name}, {"nic", pt.network.nic.label()},
                        {"nic_gbit_per_s", pt.network.nic.gigabits_per_second()},
                        {"sharp", sharp_text(pt)}, {"oversubscription", pt.network.oversubscription}};
        // The shape only where the option sets one (planes, radix, spine tier); absent, the system's own.
        if (pt.network.shape.any()) e["network"]["fabric_shape"] = fabric_shape_json(pt.network.shape);
        e["routing"] = to_string(pt.routing);
        e["batch_rule"] = pt.batch.label();
        e["status"] = r.outcome.ok ? "ok" : "error";
        if (!r.outcome.ok) {
            e["error"] = r.outcome.error;
            // The numbers a consumer sorts or sums by are present as null, never 0 (CSV: empty).
            for (const char* key : {"global_batch", "ttt_minutes", "ttt_p10_minutes", "ttt_p90_minutes", "gpu_hours",
                                    "rented_gpu_hours", "cost", "energy_kwh", "mfu", "model_tflops_per_gpu",
                                    "goodput", "interruptions", "checkpoint_interval_minutes", "reliability"})
                e[key] = nullptr;
            points.push_back(e);
            continue;
        }
        e["gpu"] = p.gpu;
        e["layout"] = {{"tp", p.layout.tensor_parallel}, {"cp", p.layout.context_parallel},
                       {"dp", p.layout.data_parallel}, {"micro_batch", p.layout.samples_per_micro_batch},
                       {"gradient_accumulation", p.layout.gradient_accumulation}, {"sharp", p.layout.sharp}};
        e["global_batch"] = p.global_batch;
        e["ttt_minutes"] = p.ttt_minutes;
        e["ttt_p10_minutes"] = p.ttt_p10_minutes;
        e["ttt_p90_minutes"] = p.ttt_p90_minutes;
        add_reliability_json(e, p);   // goodput, interruptions, checkpoint interval beside ttt_minutes
        e["steps"] = p.steps;
        e["step_ms"] = p.step_ms;
        e["compute_ms"] = p.compute_ms;
        e["exposed_comm_ms"] = p.exposed_comm_ms;
        e["fixed_ms"] = p.fixed_ms;
        e["eval_minutes"] = p.eval_minutes;
        e["samples_to_converge"] = p.samples_to_converge;
        add_mfu_json(e, p);
        e["reference_gpus"] = r.reference_gpus;
        e["speedup"] = r.metrics.speedup;
        e["ttt_efficiency"] = r.metrics.efficiency;
        e["marginal_doubling_efficiency"] =
            r.metrics.marginal_doubling_efficiency ? json(*r.metrics.marginal_doubling_efficiency) : json(nullptr);
        e["gpu_hours"] = p.gpu_hours;
        e["rented_gpu_hours"] = r.rented_gpu_hours;
        e["cost"] = {{"amount", r.cost}, {"currency", o.cost.currency}, {"price_per_gpu_hour", r.price_per_gpu_hour},
                     {"price_is_estimate", o.cost.price_of_is_estimate(pt.system, pt.base_system)}};
        e["energy_kwh"] = {{"gpu", r.energy.gpu_kwh}, {"nodes", r.energy.node_kwh}, {"network", r.energy.network_kwh},
                           {"it", r.energy.it_kwh}, {"total", r.energy.facility_kwh}};
        e["pareto"] = r.pareto;
        e["pareto_cost"] = r.pareto_cost;
        e["layout_choice"] = layout_choice_text(p);
        if (p.published)
            e["published_layout"] = published_alternative_json(*p.published);
        else
            e["published_layout"] = nullptr;
        if (r.published)
            e["published"] = {{"minutes", r.published->median_minutes}, {"results", r.published->results},
                              {"global_batches", r.published->global_batches()},
                              {"predicted_minutes", r.comparison ? json(r.comparison->predicted_minutes) : json(nullptr)},
                              {"error_percent", r.comparison ? json(r.comparison->error_percent) : json(nullptr)}};
        else
            e["published"] = nullptr;
        e["warnings"] = point_messages(r);
        points.push_back(e);
    }
    j["points"] = points;
    return j.dump(2) + "\n";
}

}  // namespace ttsim::planning
