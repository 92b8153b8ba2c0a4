#include "models/planning/plan_format.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "models/planning/results_format.hpp"
#include "models/planning/variant_config.hpp"
#include "models/training/layout_search.hpp"
#include "sim/units.hpp"

namespace ttsim::planning {

namespace {

// Each searched system as (label, base system), so a variant's price reads as it was charged (its own or its base's).
std::vector<std::pair<std::string, std::string>> labelled_systems(const PlanQuery& q) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& label : q.systems) out.emplace_back(label, base_system_of(label, q.variants));
    return out;
}
}  // namespace

std::string objective_text(Objective objective) {
    switch (objective) {
        case Objective::gpus: return "fewest GPUs";
        case Objective::time: return "fastest";
        case Objective::cost: return "cheapest";
        case Objective::gpu_hours: return "fewest GPU-hours";
        case Objective::energy: return "least energy";
    }
    return "?";
}

std::string three_significant(double value) {
    if (!(std::abs(value) > 0) || !std::isfinite(value)) return fmt::format("{:.2f}", value);
    int decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(std::abs(value)))));
    // Rounding can carry into the next decade (9.996 -> "10.00"): one decimal fewer then.
    if (decimals > 0 && std::abs(std::stod(fmt::format("{:.{}f}", value, decimals))) >= std::pow(10.0, 3 - decimals)) --decimals;
    return fmt::format("{:.{}f}", value, decimals);
}

std::string format_duration(double minutes) {
    if (minutes < 1.0) return three_significant(minutes * 60.0) + " s";
    if (minutes < 120.0) return three_significant(minutes) + " min";
    if (minutes < 2 * 24 * 60.0) return three_significant(minutes / 60.0) + " h";
    return three_significant(minutes / (24 * 60.0)) + " d";   // a pre-training run: weeks read as days
}

namespace {

// "18 nodes (144 GPUs) of dgx-h100: 3.05 min, 7.31 GPU-hours, 18.3 USD at p90": time, GPU-hours and cost at the
// percentile the constraints are judged at; one percentile per line (the answer's other percentiles: answer_lines).
std::string rented_text(const EvaluatedCandidate& c) {
    const PlanEvaluation& e = c.evaluation;
    return (e.allocation.empty() ? std::to_string(c.candidate.gpus) + " GPUs" : e.allocation) + " of " + c.candidate.system;
}
std::string at_percentile(const PercentileValues& v, const CostParameters& cost) {
    return format_duration(v.ttt_minutes) + ", " + three_significant(v.gpu_hours) + " GPU-hours, " +
           three_significant(v.cost) + " " + cost.currency;
}
std::string describe(const EvaluatedCandidate& c, const CostParameters& cost, Confidence confidence) {
    return rented_text(c) + ": " + at_percentile(at_confidence(c.evaluation, confidence), cost) + " at " +
           to_string(confidence);
}
// The answer: what to rent and its layout, then one line per percentile, the judged one first; energy with p50, the only
// percentile it is computed at.
std::string answer_lines(const EvaluatedCandidate& c, const CostParameters& cost, Confidence confidence) {
    const PlanEvaluation& e = c.evaluation;
    std::string out = wrap_text("  answer: ", 4, rented_text(c));
    if (!e.layout.empty()) out += wrap_text("    layout: ", 6, e.layout);   // how to run it: the layout priced
    const PercentileValues p50{e.ttt_minutes, e.gpu_hours, e.cost};
    if (confidence != Confidence::p50)
        out += wrap_text("    ", 6, "at " + std::string(to_string(confidence)) + " (judged): " +
                                        at_percentile(at_confidence(e, confidence), cost));
    out += wrap_text("    ", 6, std::string("at p50") + (confidence == Confidence::p50 ? " (judged)" : "") + ": " +
                                    at_percentile(p50, cost) + ", " + three_significant(e.energy_kwh) + " kWh");
    if (confidence == Confidence::p50)
        out += wrap_text("    ", 6, "at p90: " + at_percentile(at_confidence(e, Confidence::p90), cost));
    out += wrap_text("    ", 6, "at p10: " + format_duration(e.ttt_p10_minutes));
    return out;
}

// Best feasible candidate per system, in the query's system order.
std::vector<EvaluatedCandidate> best_per_system(const PlanQuery& query, const PlanAnswer& answer) {
    std::vector<EvaluatedCandidate> best;
    for (const std::string& system : query.systems) {
        std::optional<EvaluatedCandidate> b;
        for (const auto& e : answer.evaluated) {
            if (e.candidate.system != system || !e.feasible) continue;
            const Confidence confidence = query.constraints.confidence;
            if (!b || objective_value(e, query.objective, confidence) < objective_value(*b, query.objective, confidence) ||
                (objective_value(e, query.objective, confidence) == objective_value(*b, query.objective, confidence) &&
                 e.candidate.gpus < b->candidate.gpus))
                b = e;
        }
        if (b) best.push_back(*b);
    }
    return best;
}

// Every evaluated candidate, by system (query order) then GPU count.
std::vector<EvaluatedCandidate> sorted_evaluated(const PlanQuery& query, const PlanAnswer& answer) {
    auto rank = [&](const std::string& system) {
        return std::find(query.systems.begin(), query.systems.end(), system) - query.systems.begin();
    };
    std::vector<EvaluatedCandidate> all = answer.evaluated;
    std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
        const auto ra = rank(a.candidate.system), rb = rank(b.candidate.system);
        return ra != rb ? ra < rb : a.candidate.gpus < b.candidate.gpus;
    });
    return all;
}

}  // namespace

std::string describe_constraints(const PlanConstraints& c, const CostParameters& cost) {
    std::string text;
    auto add = [&](const std::string& part) { text += (text.empty() ? "" : " and ") + part; };
    const std::string at = std::string(" at ") + to_string(c.confidence);
    const double keep = 1.0 - c.margin;
    // Limits as given (budgets up to 10 digits: 12345.5, not 1.235e+04); with a margin, the limit it leaves.
    auto margin_of = [&](const std::string& effective) {
        return c.margin > 0 ? " less the " + units::format_number(100.0 * c.margin, 4) + "% margin (" + effective + ")" : "";
    };
    if (c.deadline_minutes)
        add("time-to-train <= " + format_duration(*c.deadline_minutes) + at +
            margin_of("<= " + format_duration(*c.deadline_minutes * keep)));
    if (c.budget_gpu_hours)
        add("GPU-hours <= " + units::format_number(*c.budget_gpu_hours, 10) + at +
            margin_of("<= " + units::format_number(*c.budget_gpu_hours * keep, 6)));
    if (c.budget_money)
        add("cost <= " + units::format_number(*c.budget_money, 10) + " " + cost.currency + at +
            margin_of("<= " + units::format_number(*c.budget_money * keep, 6) + " " + cost.currency));
    return text;
}

std::vector<ClosestCandidate> closest_candidates(const PlanQuery& query, const PlanAnswer& answer) {
    const PlanConstraints& c = query.constraints;
    auto at = [&](const EvaluatedCandidate& e) { return at_confidence(e.evaluation, c.confidence); };
    struct Limit {
        const char* criterion;
        const char* name;
        std::optional<double> value;
        std::function<double(const EvaluatedCandidate&)> of;
    };
    const Limit limits[] = {
        {"fastest", "the deadline", c.deadline_minutes, [&](const EvaluatedCandidate& e) { return at(e).ttt_minutes; }},
        {"fewest GPU-hours", "the GPU-hour budget", c.budget_gpu_hours,
         [&](const EvaluatedCandidate& e) { return at(e).gpu_hours; }},
        {"cheapest", "the cost budget", c.budget_money, [&](const EvaluatedCandidate& e) { return at(e).cost; }}};
    auto ratio = [&](const Limit& l, const EvaluatedCandidate& e) { return l.of(e) / (*l.value * (1.0 - c.margin)); };
    std::vector<ClosestCandidate> closest;
    for (const Limit& limit : limits) {
        if (!limit.value) continue;
        const EvaluatedCandidate* best = nullptr;
        for (const auto& e : answer.evaluated)
            if (e.evaluation.ok && (!best || limit.of(e) < limit.of(*best) ||
                                    (limit.of(e) == limit.of(*best) && e.candidate.gpus < best->candidate.gpus)))
                best = &e;
        if (!best) continue;
        ClosestCandidate candidate{limit.criterion, *best, ratio(limit, *best), limit.name, {}};
        for (const Limit& other : limits)
            if (other.value && ratio(other, *best) > 1.0) candidate.missed.emplace_back(other.name, ratio(other, *best));
        closest.push_back(std::move(candidate));
    }
    return closest;
}

bool at_search_limit(const PlanQuery& query, const EvaluatedCandidate& candidate) {
    const std::vector<int> counts = plan_counts_for(query, candidate.candidate.system);
    return !counts.empty() && candidate.candidate.gpus >= counts.back();
}

std::string describe_search_counts(const PlanQuery& query) {
    // Systems that search the same counts in the same unit are listed together.
    std::vector<std::pair<std::string, std::string>> groups;   // (systems, what they search)
    for (const std::string& system : query.systems) {
        const std::vector<int> counts = plan_counts_for(query, system);
        if (counts.empty()) continue;
        const PlanUnit unit = query.unit_of(system);
        const std::string range = fmt::format("{}..{} GPUs", counts.front(), counts.back());
        const std::string what = query.topology_file
                                     ? range + " (the topology file's)"
                                     : fmt::format("{} in whole {}s of {} GPUs", range, to_string(unit.unit), unit.gpus);
        if (!groups.empty() && groups.back().second == what)
            groups.back().first += ", " + system;
        else
            groups.push_back({system, what});
    }
    if (groups.size() == 1) return groups.front().second;
    std::string text;
    for (const auto& [systems, what] : groups) text += (text.empty() ? "" : "; ") + systems + " " + what;
    return text;
}

std::string format_plan_table(const PlanReportContext& ctx, const PlanAnswer& answer) {
    std::ostringstream out;
    const PlanQuery& q = *ctx.query;
    out << wrap_text("", 2, ctx.workload + ": " + objective_text(q.objective) + " configuration with " +
                                describe_constraints(q.constraints, *ctx.cost));
    // The fabric every candidate ran on, where it is not the systems' default.
    std::string fabric = fabric_choice_note(q.routing, q.sharp);
    auto add = [&](const std::string& part) { fabric += (fabric.empty() ? "" : ", ") + part; };
    if (q.topology_file) add("topology " + *q.topology_file);
    if (q.network.nic != NicSpeed::Ndr400) add(q.network.nic.description() + " NICs");
    if (q.network.oversubscription != 1.0) add(units::format_number(q.network.oversubscription) + ":1 oversubscribed");
    if (q.network.shape.any()) add(q.network.shape.describe());
    if (q.batch.rule != BatchRule::published) add("batch " + q.batch.label());
    std::string systems;
    for (const auto& s : q.systems) systems += (systems.empty() ? "" : ", ") + s;
    if (!fabric.empty()) systems += " (" + fabric + ")";
    // As predict(): the operator model searches unless told `--layout published` (point_searches_layout).
    const bool searched = q.layout.searches() || (q.layout.mode == LayoutMode::automatic && ctx.layout_search);
    bool any_published = false;
    for (const auto& [system, counts] : q.published_counts) any_published = any_published || !counts.empty();
    std::ostringstream searched_line;
    searched_line << "searched " << systems << ": " << describe_search_counts(q) << " (grid of powers of two and 1.5x units"
        << (any_published ? ", the workload's published counts" : "")
        << ", boundaries bisected to whole units): " << answer.evaluated.size()
        << (answer.evaluated.size() == 1 ? " configuration, " : " configurations, ")
        << (!searched ? "published v4.1 layouts"
            : q.layout.mode == LayoutMode::pinned ? "at each the fastest layout with the pinned " + format_layout_pins(q.layout.pins) + " that fits"
                                                   : std::string("at each the fastest layout that fits"))
        << (q.batch.rule == BatchRule::published ? (searched ? ", v4.1 batches" : " and batches") : "")
        << (searched || !ctx.layout_search ? "" : " (--layout fastest: the fastest layout at each)") ;
    out << wrap_text("  ", 4, searched_line.str());
    if (answer.interrupted)
        out << "  interrupted: " << answer.grid_evaluated << " of " << answer.grid_size
            << " grid configurations evaluated" << (answer.grid_evaluated == answer.grid_size ? ", boundaries not all bisected" : "")
            << "; the answer covers only what was evaluated\n";
    const std::string limit_note =
        q.topology_file ? " is the topology file's own count, the only one a plan on a topology searches (describe a "
                          "larger cluster in the file, or plan on a system without --topology)"
                        : " is the largest count searched: limited by the search range (raise --max-gpus or gpus.to "
                          "to search further)";
    const std::vector<ClosestCandidate> closest = answer.best ? std::vector<ClosestCandidate>{} : closest_candidates(q, answer);
    if (!answer.best && closest.empty()) {
        // Nothing could be predicted: say why (each distinct reason once, the first few).
        out << "  answer: none of the " << answer.evaluated.size() << " searched configurations could be predicted:\n";
        std::vector<std::string> reasons;
        for (const EvaluatedCandidate& e : answer.evaluated)
            if (!e.evaluation.ok && std::find(reasons.begin(), reasons.end(), e.evaluation.error) == reasons.end())
                reasons.push_back(e.evaluation.error);
        for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) out << "    " << reasons[i] << "\n";
        if (reasons.size() > 3) out << "    (and " << reasons.size() - 3 << " more: --format csv lists every configuration's)\n";
    } else if (!answer.best) {
        out << "  answer: none of the searched configurations meets the constraint; closest:\n";
        for (const ClosestCandidate& c : closest) {
            std::string line = c.criterion + ": " + describe(c.candidate, *ctx.cost, q.constraints.confidence) + " = " +
                               fmt::format("{:.2f}", c.ratio) + " x " + c.limit;
            std::string misses;
            for (const auto& [name, r] : c.missed)
                if (name != c.limit) misses += fmt::format("{}{:.2f} x {}", misses.empty() ? "" : ", ", r, name);
            if (!misses.empty()) line += " (misses " + misses + ")";
            if (at_search_limit(q, c.candidate)) line += "; " + std::to_string(c.candidate.candidate.gpus) + " GPUs" + limit_note;
            out << wrap_text("    ", 6, line);
        }
    } else {
        out << answer_lines(*answer.best, *ctx.cost, q.constraints.confidence);
        const PlanEvaluation& e = answer.best->evaluation;
        // The band the percentiles above are: its kind of extrapolation and that kind's measured error.
        if (!e.band.empty()) out << wrap_text("    ", 6, e.band);
        if (at_search_limit(q, *answer.best))
            out << wrap_text("    note: ", 6, std::to_string(answer.best->candidate.gpus) + " GPUs" + limit_note);
        for (const auto& w : answer.best->evaluation.warnings) out << wrap_text("    warning: ", 6, w);
    }
    const auto per_system = best_per_system(q, answer);
    if (per_system.size() > 1) {
        out << "  best per system:\n";
        for (const auto& b : per_system) out << wrap_text("    ", 6, describe(b, *ctx.cost, q.constraints.confidence));
    }
    // The prices always (a cost is only as good as its price, and a default is an estimate); the definitions and
    // formulas with --explain.
    out << wrap_text("  ", 4, "price per GPU-hour: " + ctx.cost->describe_prices(labelled_systems(q)));
    if (ctx.explain) {
        out << wrap_text("  ", 4,
                         std::string("p10/p50/p90: percentiles of time-to-train over the run-to-run spread of "
                                     "convergence (the RCPs' runs, averaged as an MLPerf score), widened by the fit's "
                                     "parameter uncertainty and the model error of the answer's kind of extrapolation "
                                     "(docs/uncertainty.md), p50 and p90 in wall time with "
                                     "failures, checkpoints and restarts (docs/reliability.md); constraints judged at ") +
                             to_string(q.constraints.confidence) + " (--confidence, --margin)");
        out << wrap_text("  ", 4, kBillingRule);
        out << wrap_text("  ", 4, describe_energy_model(*ctx.energy));
    } else {
        out << "  (--explain: the percentiles, the billing rule and the energy formula; the JSON carries the same)\n";
    }
    return out.str();
}

std::string format_plan_csv(const PlanReportContext& ctx, const PlanAnswer& answer) {
    std::ostringstream out;
    // Numbers are at p50 (the percentiles' columns at the end); a failed configuration has none, so its numeric
    // fields are empty rather than 0 (which would sort first by time or cost).
    out << "system,gpus,status,feasible,answer,ttt_minutes,gpu_hours,cost,currency,energy_kwh,error,ttt_p10_minutes,"
           "ttt_p90_minutes,allocation,rented_gpus,layout,global_batch,gpu_hours_p90,cost_p90,warnings\n";
    for (const auto& e : sorted_evaluated(*ctx.query, answer)) {
        const bool is_answer = answer.best && answer.best->candidate.system == e.candidate.system &&
                               answer.best->candidate.gpus == e.candidate.gpus;
        const PlanEvaluation& v = e.evaluation;
        auto num = [&](double x) { return v.ok ? units::format_number(x, 8) : std::string(); };
        std::string error = v.error;
        std::replace(error.begin(), error.end(), '"', '\'');
        out << e.candidate.system << "," << e.candidate.gpus << "," << (v.ok ? "ok" : "error") << ","
            << (e.feasible ? "true" : "false") << "," << (is_answer ? "true" : "false") << "," << num(v.ttt_minutes)
            << "," << num(v.gpu_hours) << "," << num(v.cost) << "," << ctx.cost->currency << "," << num(v.energy_kwh)
            << "," << (error.empty() ? "" : "\"" + error + "\"") << "," << num(v.ttt_p10_minutes) << ","
            << num(v.ttt_p90_minutes) << "," << v.allocation << "," << (v.ok ? std::to_string(v.rented_gpus) : "")
            << "," << (v.ok ? csv_field(v.layout) : "") << "," << (v.ok ? std::to_string(v.global_batch) : "");
        // Appended, so every earlier column keeps its place: the p90 figures the text quotes, and the warnings.
        const PercentileValues p90 = at_confidence(v, Confidence::p90);
        std::string warnings;
        for (const std::string& w : v.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
        out << "," << num(p90.gpu_hours) << "," << num(p90.cost) << "," << (v.ok ? csv_field(warnings) : "") << "\n";
    }
    return out.str();
}

std::string format_plan_json(const std::string& name, const PlanReportContext& ctx, const PlanAnswer& answer) {
    using json = nlohmann::ordered_json;
    const PlanQuery& q = *ctx.query;
    auto candidate_json = [&](const EvaluatedCandidate& e) {
        json j = {{"system", e.candidate.system}, {"gpus", e.candidate.gpus}, {"status", e.evaluation.ok ? "ok" : "error"},
                  {"feasible", e.feasible}};
        // A failed configuration keeps every numeric key, as null (never 0), so consumers need no key checks.
        const bool ok = e.evaluation.ok;
        auto num = [&](double x) { return ok ? json(x) : json(nullptr); };
        const PercentileValues at = at_confidence(e.evaluation, q.constraints.confidence);
        j["ttt_minutes"] = num(e.evaluation.ttt_minutes);
        j["ttt_p10_minutes"] = num(e.evaluation.ttt_p10_minutes);
        j["ttt_p90_minutes"] = num(e.evaluation.ttt_p90_minutes);
        j["gpu_hours"] = num(e.evaluation.gpu_hours);
        j["cost"] = num(e.evaluation.cost);
        j["energy_kwh"] = num(e.evaluation.energy_kwh);
        j["allocation"] = ok ? json(e.evaluation.allocation) : json(nullptr);
        j["rented_gpus"] = ok ? json(e.evaluation.rented_gpus) : json(nullptr);
        j["layout"] = ok ? json(e.evaluation.layout) : json(nullptr);
        j["global_batch"] = ok ? json(e.evaluation.global_batch) : json(nullptr);
        j["at_confidence"] = {{"ttt_minutes", num(at.ttt_minutes)}, {"gpu_hours", num(at.gpu_hours)}, {"cost", num(at.cost)}};
        const PercentileValues p90 = at_confidence(e.evaluation, Confidence::p90);
        j["p90"] = {{"ttt_minutes", num(p90.ttt_minutes)}, {"gpu_hours", num(p90.gpu_hours)}, {"cost", num(p90.cost)}};
        if (ok)
            j["warnings"] = e.evaluation.warnings;
        else
            j["error"] = e.evaluation.error;
        return j;
    };
    json j;
    j["schema"] = kResultsSchema;
    j["kind"] = "plan";
    j["name"] = name;
    if (answer.interrupted)   // SIGINT: `answer` and `evaluated` cover part of the search
        j["interrupted"] = {{"grid_evaluated", answer.grid_evaluated}, {"grid_size", answer.grid_size}};
    j["workload"] = ctx.workload;
    j["objective"] = to_string(q.objective);
    j["constraints"] = {
        {"deadline_minutes", q.constraints.deadline_minutes ? json(*q.constraints.deadline_minutes) : json(nullptr)},
        {"budget_gpu_hours", q.constraints.budget_gpu_hours ? json(*q.constraints.budget_gpu_hours) : json(nullptr)},
        {"budget", q.constraints.budget_money ? json(*q.constraints.budget_money) : json(nullptr)},
        {"currency", ctx.cost->currency},
        {"confidence", to_string(q.constraints.confidence)},
        {"margin", q.constraints.margin}};
    j["systems"] = q.systems;
    if (q.routing != FabricRouting::Adaptive) j["routing"] = to_string(q.routing);   // only when not the default
    if (q.sharp) j["sharp"] = *q.sharp ? "on" : "off";                                 // only when asked for
    if (q.network.shape.any()) j["fabric_shape"] = fabric_shape_json(q.network.shape);   // only when asked for
    j["model_error"] = {{"command", kModelErrorCommand},
                        {"not_quoted", q.model_errors ? json(nullptr) : json(q.model_error_not_quoted)}};
    j["energy_model"] = describe_energy_model(*ctx.energy);
    j["prices"] = ctx.cost->describe_prices(labelled_systems(q));
    j["billing"] = kBillingRule;
    j["configurations_evaluated"] = answer.evaluated.size();   // the count the table states
    j["search_range"] = {{"from", q.gpu_counts.empty() ? 0 : q.gpu_counts.front()},
                         {"to", q.gpu_counts.empty() ? 0 : q.gpu_counts.back()}};
    {
        json units = json::object();
        for (const std::string& system : q.systems) {
            const std::vector<int> counts = plan_counts_for(q, system);
            units[system] = {{"unit", to_string(q.unit_of(system).unit)},
                             {"gpus_per_unit", q.unit_of(system).gpus},
                             {"from", counts.empty() ? 0 : counts.front()},
                             {"to", counts.empty() ? 0 : counts.back()}};
        }
        j["allocation"] = units;
    }
    if (answer.best) {
        j["answer"] = candidate_json(*answer.best);
        const PlanEvaluation& e = answer.best->evaluation;
        // Its p10/p90 are the band: what it holds and the kind of extrapolation whose error it carries.
        j["answer"]["band"] = e.band;
        j["answer"]["band_kind"] = e.band_kind.empty() ? json(nullptr) : json(e.band_kind);
        j["answer"]["limited_by_search_range"] = at_search_limit(q, *answer.best);
    } else {
        j["answer"] = nullptr;
        json closest = json::array();
        for (const ClosestCandidate& c : closest_candidates(q, answer)) {
            json e = candidate_json(c.candidate);
            e["criterion"] = c.criterion;
            e["ratio_to_limit"] = c.ratio;
            e["limit"] = c.limit;
            json missed = json::object();
            for (const auto& [name, r] : c.missed) missed[name] = r;
            e["missed"] = missed;
            e["limited_by_search_range"] = at_search_limit(q, c.candidate);
            closest.push_back(e);
        }
        j["closest"] = closest;
    }
    json all = json::array();
    for (const auto& e : sorted_evaluated(*ctx.query, answer)) all.push_back(candidate_json(e));
    j["evaluated"] = all;
    return j.dump(2) + "\n";
}

}  // namespace ttsim::planning
