#include "models/planning/results_format.hpp"

#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/units.hpp"

namespace ttsim::planning {

namespace {

// Eight significant digits: enough to compare runs, stable across platforms with IEEE doubles.
std::string number(double value) { return units::format_number(value, 8); }

std::string fixed(double value, int decimals) {
    char text[40];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string sharp_text(const NetworkOption& n) { return n.sharp ? (*n.sharp ? "on" : "off") : "default"; }

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

std::vector<std::string> point_messages(const PointResult& r) {
    std::vector<std::string> messages = r.outcome.prediction.warnings;
    messages.insert(messages.end(), r.outcome.notes.begin(), r.outcome.notes.end());
    return messages;
}

}  // namespace

std::string describe_break_even(const SweepOptions& options) {
    return "break-even: the largest N reached by doubling from the reference with every doubling's marginal "
           "efficiency T(N/2)/(2 T(N)) >= " + fixed(options.break_even_threshold, 2);
}

std::string format_sweep_table(const std::string& title, const SweepResult& result) {
    std::ostringstream out;
    const SweepOptions& o = result.options;
    out << title << "\n";
    out << "speedup and efficiency vs the reference GPU count of each series; " << describe_break_even(o) << "\n";
    out << describe_energy_model(o.energy) << "\n";
    out << "published: MLPerf Training v4.1 official score, median of the distinct results at that count (n)\n";
    for (const SeriesSummary& series : result.series) {
        const PointResult& first = result.points[series.points.front()];
        out << "\n" << series.workload << " on " << series.label;
        if (first.outcome.ok) out << " (" << first.outcome.prediction.gpu << ")";
        if (series.reference_gpus) out << ", reference " << *series.reference_gpus << " GPUs";
        out << "\n";
        if (series.break_even) {
            const BreakEven& b = *series.break_even;
            out << "  break-even " << b.gpus << " GPUs";
            if (b.first_below)
                out << " (doubling to " << *b.first_below << " gives " << fixed(*b.first_below_efficiency, 2) << ")";
            else
                out << " (every doubling in the sweep stayed above the threshold)";
            out << "\n";
        }
        char header[256];
        std::snprintf(header, sizeof header, "  %6s %7s %9s %8s %6s %10s %10s %10s %15s %7s  %s\n", "GPUs", "batch",
                      "TTT min", "speedup", "eff.", "GPU-hours", "energy kWh", ("cost " + o.cost.currency).c_str(),
                      "v4.1 min (n)", "error", "notes");
        out << header;
        // Warnings become numbered footnotes, each text once per series.
        std::vector<std::string> footnotes;
        std::map<std::string, int> footnote_number;
        for (std::size_t i : series.points) {
            const PointResult& r = result.points[i];
            char line[320];
            if (!r.outcome.ok) {
                std::snprintf(line, sizeof line, "  %6d  not run: %s\n", r.point.gpus, r.outcome.error.c_str());
                out << line;
                continue;
            }
            const Prediction& p = r.outcome.prediction;
            std::string published = "-", error = "-";
            if (r.published) {
                published = fixed(r.published->median_minutes, 2) + " (" + std::to_string(r.published->results) + ")";
                error = (*r.error_percent >= 0 ? "+" : "") + fixed(*r.error_percent, 1) + "%";
            }
            std::vector<std::string> marks;
            for (const std::string& message : point_messages(r)) {
                auto [it, inserted] = footnote_number.emplace(message, static_cast<int>(footnotes.size()) + 1);
                if (inserted) footnotes.push_back(message);
                marks.push_back("[" + std::to_string(it->second) + "]");
            }
            if (r.pareto) marks.insert(marks.begin(), "pareto");
            std::snprintf(line, sizeof line, "  %6d %7d %9s %8s %6s %10s %10s %10s %15s %7s  %s\n", r.point.gpus,
                          p.global_batch, fixed(p.ttt_minutes, 2).c_str(), fixed(r.metrics.speedup, 2).c_str(),
                          fixed(r.metrics.efficiency, 2).c_str(), fixed(p.gpu_hours, 1).c_str(),
                          fixed(r.energy.facility_kwh, 1).c_str(), fixed(r.cost, 2).c_str(), published.c_str(),
                          error.c_str(), join(marks, " ").c_str());
            out << line;
        }
        for (std::size_t k = 0; k < footnotes.size(); ++k) out << "  [" << k + 1 << "] " << footnotes[k] << "\n";
    }
    return out.str();
}

std::string format_sweep_csv(const SweepResult& result) {
    std::ostringstream out;
    out << "index,workload,system,gpu,network,nic,sharp,oversubscription,batch_rule,gpus,status,error,global_batch,"
           "tp,cp,dp,micro_batch,gradient_accumulation,ttt_minutes,ttt_p10_minutes,ttt_p90_minutes,steps,step_ms,"
           "compute_ms,exposed_comm_ms,fixed_ms,eval_minutes,samples_to_converge,reference_gpus,speedup,efficiency,"
           "marginal_doubling_efficiency,gpu_hours,price_per_gpu_hour,cost,currency,gpu_kwh,node_kwh,network_kwh,"
           "energy_kwh,pareto,published_minutes,published_results,error_percent,warnings\n";
    for (const PointResult& r : result.points) {
        const SweepPoint& pt = r.point;
        out << pt.index << "," << csv_field(pt.workload) << "," << csv_field(pt.system) << ",";
        const Prediction& p = r.outcome.prediction;
        out << csv_field(r.outcome.ok ? p.gpu : "") << "," << csv_field(pt.network.name) << ","
            << (pt.network.nic == NicSpeed::Xdr800 ? "xdr" : "ndr") << "," << sharp_text(pt.network) << ","
            << number(pt.network.oversubscription) << "," << csv_field(pt.batch.label()) << "," << pt.gpus << ",";
        if (!r.outcome.ok) {
            out << "error," << csv_field(r.outcome.error) << std::string(33, ',') << "\n";
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
            << "," << number(p.gpu_hours) << "," << number(r.price_per_gpu_hour) << "," << number(r.cost) << ","
            << csv_field(result.options.cost.currency) << "," << number(r.energy.gpu_kwh) << ","
            << number(r.energy.node_kwh) << "," << number(r.energy.network_kwh) << "," << number(r.energy.facility_kwh)
            << "," << (r.pareto ? "true" : "false") << ","
            << (r.published ? number(r.published->median_minutes) : "") << ","
            << (r.published ? std::to_string(r.published->results) : "") << ","
            << (r.error_percent ? number(*r.error_percent) : "") << "," << csv_field(join(point_messages(r), "; "))
            << "\n";
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
    j["models"] = {{"speedup", "T(N_ref) / T(N)"},
                   {"efficiency", "speedup / (N / N_ref)"},
                   {"break_even", describe_break_even(o)},
                   {"energy", describe_energy_model(o.energy)},
                   {"cost", "GPU-hours x price per GPU-hour"},
                   {"published", "MLPerf Training v4.1 official score, median of distinct results at that GPU count"}};
    j["parameters"] = {{"reference_gpus", o.reference_gpus ? json(*o.reference_gpus) : json(nullptr)},
                       {"break_even_threshold", o.break_even_threshold},
                       {"node_watts", o.energy.node_watts},
                       {"switch_watts", o.energy.switch_watts},
                       {"pue", o.energy.pue},
                       {"currency", o.cost.currency}};
    json series = json::array();
    for (const SeriesSummary& s : result.series) {
        json e;
        e["workload"] = s.workload;
        e["label"] = s.label;
        e["reference_gpus"] = s.reference_gpus ? json(*s.reference_gpus) : json(nullptr);
        if (s.break_even) {
            e["break_even"] = {{"gpus", s.break_even->gpus},
                               {"limited_by_sweep", s.break_even->limited_by_sweep},
                               {"first_below_gpus", s.break_even->first_below ? json(*s.break_even->first_below) : json(nullptr)},
                               {"first_below_efficiency",
                                s.break_even->first_below_efficiency ? json(*s.break_even->first_below_efficiency) : json(nullptr)}};
        } else {
            e["break_even"] = nullptr;
        }
        json indices = json::array();
        for (std::size_t i : s.points) indices.push_back(i);
        e["points"] = indices;
        series.push_back(e);
    }
    j["series"] = series;
    json points = json::array();
    for (const PointResult& r : result.points) {
        const SweepPoint& pt = r.point;
        const Prediction& p = r.outcome.prediction;
        json e;
        e["index"] = pt.index;
        e["workload"] = pt.workload;
        e["system"] = pt.system;
        e["gpus"] = pt.gpus;
        e["network"] = {{"name", pt.network.name}, {"nic", pt.network.nic == NicSpeed::Xdr800 ? "xdr" : "ndr"},
                        {"sharp", sharp_text(pt.network)}, {"oversubscription", pt.network.oversubscription}};
        e["batch_rule"] = pt.batch.label();
        e["status"] = r.outcome.ok ? "ok" : "error";
        if (!r.outcome.ok) {
            e["error"] = r.outcome.error;
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
        e["steps"] = p.steps;
        e["step_ms"] = p.step_ms;
        e["compute_ms"] = p.compute_ms;
        e["exposed_comm_ms"] = p.exposed_comm_ms;
        e["fixed_ms"] = p.fixed_ms;
        e["eval_minutes"] = p.eval_minutes;
        e["samples_to_converge"] = p.samples_to_converge;
        e["reference_gpus"] = r.reference_gpus;
        e["speedup"] = r.metrics.speedup;
        e["efficiency"] = r.metrics.efficiency;
        e["marginal_doubling_efficiency"] =
            r.metrics.marginal_doubling_efficiency ? json(*r.metrics.marginal_doubling_efficiency) : json(nullptr);
        e["gpu_hours"] = p.gpu_hours;
        e["cost"] = {{"amount", r.cost}, {"currency", o.cost.currency}, {"price_per_gpu_hour", r.price_per_gpu_hour}};
        e["energy_kwh"] = {{"gpu", r.energy.gpu_kwh}, {"nodes", r.energy.node_kwh}, {"network", r.energy.network_kwh},
                           {"it", r.energy.it_kwh}, {"total", r.energy.facility_kwh}};
        e["pareto"] = r.pareto;
        if (r.published)
            e["published"] = {{"minutes", r.published->median_minutes}, {"results", r.published->results},
                              {"error_percent", *r.error_percent}};
        else
            e["published"] = nullptr;
        e["warnings"] = point_messages(r);
        points.push_back(e);
    }
    j["points"] = points;
    return j.dump(2) + "\n";
}

}  // namespace ttsim::planning
