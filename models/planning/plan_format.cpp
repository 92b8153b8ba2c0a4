#include "models/planning/plan_format.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/planning/results_format.hpp"
#include "sim/units.hpp"

namespace ttsim::planning {

namespace {

std::string fixed(double value, int decimals) {
    char text[40];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

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

}  // namespace

std::string format_duration(double minutes) {
    if (minutes < 1.0) return units::format_number(minutes * 60.0, 4) + " s";
    if (minutes < 120.0) return units::format_number(minutes, 4) + " min";
    return units::format_number(minutes / 60.0, 4) + " h";
}

namespace {

std::string describe(const EvaluatedCandidate& c, const CostParameters& cost) {
    const PlanEvaluation& e = c.evaluation;
    return std::to_string(c.candidate.gpus) + " GPUs of " + c.candidate.system + ": " + format_duration(e.ttt_minutes) +
           ", " + fixed(e.gpu_hours, 1) + " GPU-hours, " + fixed(e.cost, 2) + " " + cost.currency + ", " +
           fixed(e.energy_kwh, 1) + " kWh";
}

// Best feasible candidate per system, in the query's system order.
std::vector<EvaluatedCandidate> best_per_system(const PlanQuery& query, const PlanAnswer& answer) {
    std::vector<EvaluatedCandidate> best;
    for (const std::string& system : query.systems) {
        std::optional<EvaluatedCandidate> b;
        for (const auto& e : answer.evaluated) {
            if (e.candidate.system != system || !e.feasible) continue;
            if (!b || objective_value(e, query.objective) < objective_value(*b, query.objective) ||
                (objective_value(e, query.objective) == objective_value(*b, query.objective) &&
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
    if (c.deadline_minutes) add("time-to-train <= " + format_duration(*c.deadline_minutes));
    // Budgets as given (up to 10 digits: 12345.5, not 1.235e+04).
    if (c.budget_gpu_hours) add("GPU-hours <= " + units::format_number(*c.budget_gpu_hours, 10));
    if (c.budget_money) add("cost <= " + units::format_number(*c.budget_money, 10) + " " + cost.currency);
    return text;
}

std::vector<ClosestCandidate> closest_candidates(const PlanQuery& query, const PlanAnswer& answer) {
    std::vector<ClosestCandidate> closest;
    auto add = [&](const std::string& criterion, std::optional<double> limit, auto value) {
        if (!limit) return;
        const EvaluatedCandidate* best = nullptr;
        for (const auto& e : answer.evaluated)
            if (e.evaluation.ok && (!best || value(e) < value(*best) ||
                                    (value(e) == value(*best) && e.candidate.gpus < best->candidate.gpus)))
                best = &e;
        if (best) closest.push_back({criterion, *best, value(*best) / *limit});
    };
    const PlanConstraints& c = query.constraints;
    add("fastest", c.deadline_minutes, [](const EvaluatedCandidate& e) { return e.evaluation.ttt_minutes; });
    add("fewest GPU-hours", c.budget_gpu_hours, [](const EvaluatedCandidate& e) { return e.evaluation.gpu_hours; });
    add("cheapest", c.budget_money, [](const EvaluatedCandidate& e) { return e.evaluation.cost; });
    return closest;
}

bool at_search_limit(const PlanQuery& query, const EvaluatedCandidate& candidate) {
    return !query.gpu_counts.empty() && candidate.candidate.gpus >= query.gpu_counts.back();
}

std::string format_plan_table(const PlanReportContext& ctx, const PlanAnswer& answer) {
    std::ostringstream out;
    const PlanQuery& q = *ctx.query;
    out << ctx.workload << ": " << objective_text(q.objective) << " configuration with "
        << describe_constraints(q.constraints, *ctx.cost) << "\n";
    std::string systems;
    for (const auto& s : q.systems) systems += (systems.empty() ? "" : ", ") + s;
    if (const std::string fabric = fabric_choice_note(q.routing, q.sharp); !fabric.empty()) systems += " (" + fabric + ")";
    out << "  searched " << systems << " at " << q.gpu_counts.front() << ".." << q.gpu_counts.back()
        << " GPUs (grid of powers of two and 1.5x, boundaries bisected to whole nodes): " << answer.evaluated.size()
        << " configurations, published v4.1 layouts and batches\n";
    if (answer.interrupted)
        out << "  interrupted: " << answer.grid_evaluated << " of " << answer.grid_size
            << " grid configurations evaluated" << (answer.grid_evaluated == answer.grid_size ? ", boundaries not all bisected" : "")
            << "; the answer covers only what was evaluated\n";
    const std::string limit_note = " is the largest count searched: limited by the search range (raise --max-gpus "
                                   "or gpus.to to search further)";
    if (!answer.best) {
        out << "  answer: none of the searched configurations meets the constraint; closest:\n";
        for (const ClosestCandidate& c : closest_candidates(q, answer)) {
            out << "    " << c.criterion << ": " << describe(c.candidate, *ctx.cost) << " = " << fixed(c.ratio, 2)
                << " x the limit";
            if (at_search_limit(q, c.candidate)) out << "; " << c.candidate.candidate.gpus << " GPUs" << limit_note;
            out << "\n";
        }
    } else {
        out << "  answer: " << describe(*answer.best, *ctx.cost) << "\n";
        if (at_search_limit(q, *answer.best))
            out << "    note: " << answer.best->candidate.gpus << " GPUs" << limit_note << "\n";
        for (const auto& w : answer.best->evaluation.warnings) out << "    warning: " << w << "\n";
    }
    const auto per_system = best_per_system(q, answer);
    if (per_system.size() > 1) {
        out << "  best per system:\n";
        for (const auto& b : per_system) out << "    " << describe(b, *ctx.cost) << "\n";
    }
    out << "  price per GPU-hour: " << ctx.cost->describe_prices(q.systems) << "\n";
    out << "  " << describe_energy_model(*ctx.energy) << "\n";
    return out.str();
}

std::string format_plan_csv(const PlanReportContext& ctx, const PlanAnswer& answer) {
    std::ostringstream out;
    out << "system,gpus,status,feasible,answer,ttt_minutes,gpu_hours,cost,currency,energy_kwh,error\n";
    for (const auto& e : sorted_evaluated(*ctx.query, answer)) {
        const bool is_answer = answer.best && answer.best->candidate.system == e.candidate.system &&
                               answer.best->candidate.gpus == e.candidate.gpus;
        char line[256];
        std::snprintf(line, sizeof line, "%s,%d,%s,%s,%s,%.8g,%.8g,%.8g,%s,%.8g,", e.candidate.system.c_str(),
                      e.candidate.gpus, e.evaluation.ok ? "ok" : "error", e.feasible ? "true" : "false",
                      is_answer ? "true" : "false", e.evaluation.ttt_minutes, e.evaluation.gpu_hours,
                      e.evaluation.cost, ctx.cost->currency.c_str(), e.evaluation.energy_kwh);
        std::string error = e.evaluation.error;
        std::replace(error.begin(), error.end(), '"', '\'');
        out << line << (error.empty() ? "" : "\"" + error + "\"") << "\n";
    }
    return out.str();
}

std::string format_plan_json(const std::string& name, const PlanReportContext& ctx, const PlanAnswer& answer) {
    using json = nlohmann::ordered_json;
    const PlanQuery& q = *ctx.query;
    auto candidate_json = [&](const EvaluatedCandidate& e) {
        json j = {{"system", e.candidate.system}, {"gpus", e.candidate.gpus}, {"status", e.evaluation.ok ? "ok" : "error"},
                  {"feasible", e.feasible}};
        if (e.evaluation.ok) {
            j["ttt_minutes"] = e.evaluation.ttt_minutes;
            j["gpu_hours"] = e.evaluation.gpu_hours;
            j["cost"] = e.evaluation.cost;
            j["energy_kwh"] = e.evaluation.energy_kwh;
            j["warnings"] = e.evaluation.warnings;
        } else {
            j["error"] = e.evaluation.error;
        }
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
        {"currency", ctx.cost->currency}};
    j["systems"] = q.systems;
    if (q.routing != FabricRouting::Adaptive) j["routing"] = to_string(q.routing);   // only when not the default
    if (q.sharp) j["sharp"] = *q.sharp ? "on" : "off";                                 // only when asked for
    j["energy_model"] = describe_energy_model(*ctx.energy);
    j["prices"] = ctx.cost->describe_prices(q.systems);
    j["search_range"] = {{"from", q.gpu_counts.empty() ? 0 : q.gpu_counts.front()},
                         {"to", q.gpu_counts.empty() ? 0 : q.gpu_counts.back()}};
    if (answer.best) {
        j["answer"] = candidate_json(*answer.best);
        j["answer"]["limited_by_search_range"] = at_search_limit(q, *answer.best);
    } else {
        j["answer"] = nullptr;
        json closest = json::array();
        for (const ClosestCandidate& c : closest_candidates(q, answer)) {
            json e = candidate_json(c.candidate);
            e["criterion"] = c.criterion;
            e["ratio_to_limit"] = c.ratio;
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
