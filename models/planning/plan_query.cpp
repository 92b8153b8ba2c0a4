#include "models/planning/plan_query.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <set>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "models/planning/variant_config.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim::planning {

Objective parse_objective(const std::string& text) {
    if (text == "gpus") return Objective::gpus;
    if (text == "time") return Objective::time;
    if (text == "cost") return Objective::cost;
    if (text == "gpu-hours" || text == "gpu_hours") return Objective::gpu_hours;
    if (text == "energy") return Objective::energy;
    throw InputError("unknown objective '" + text + "'; valid: gpus, time, cost, gpu-hours, energy", Field::objective);
}

const char* to_string(Objective objective) {
    switch (objective) {
        case Objective::gpus: return "gpus";
        case Objective::time: return "time";
        case Objective::cost: return "cost";
        case Objective::gpu_hours: return "gpu-hours";
        case Objective::energy: return "energy";
    }
    return "?";
}

Confidence parse_confidence(const std::string& text) {
    if (text == "p50") return Confidence::p50;
    if (text == "p90") return Confidence::p90;
    throw InputError("unknown confidence '" + text + "'; valid: p50, p90", Field::confidence);
}

const char* to_string(Confidence confidence) { return confidence == Confidence::p50 ? "p50" : "p90"; }

double parse_margin(const std::string& text) {
    std::string number = text;
    const bool has_unit = !number.empty() && number.back() == '%';
    if (has_unit) number.pop_back();
    double percent = 0;
    try {
        percent = units::parse_number(number);
    } catch (const InputError&) {
        throw InputError("expected a percentage such as 10%, got '" + text + "'", Field::margin);
    }
    // A bare number is ambiguous (0.1 as a fraction is 10 %, as a percentage 0.1 %): the unit is required, as for
    // every other quantity; only 0 means the same either way.
    if (!has_unit && percent != 0)
        throw InputError("write the margin with its unit, e.g. " + units::format_number(percent) + "% or " +
                             units::format_number(percent * 100) + "%; a bare '" + text + "' could mean either",
                         Field::margin);
    // 100% would leave no time at all; a margin is a safety factor, not the whole limit.
    if (!(percent >= 0 && percent < 100))
        throw InputError("must be in [0%, 100%), got '" + text + "'", Field::margin);
    return percent / 100.0;
}

PercentileValues at_confidence(const PlanEvaluation& e, Confidence confidence) {
    const double ttt = confidence == Confidence::p50 ? e.ttt_minutes : e.ttt_p90_minutes;
    const double scale = e.ttt_minutes > 0 ? ttt / e.ttt_minutes : 1.0;
    return {ttt, e.gpu_hours * scale, e.cost * scale};
}

bool is_feasible(const PlanEvaluation& e, const PlanConstraints& c) {
    if (!e.ok) return false;
    const PercentileValues v = at_confidence(e, c.confidence);
    const double keep = 1.0 - c.margin;
    if (c.deadline_minutes && v.ttt_minutes > *c.deadline_minutes * keep) return false;
    if (c.budget_gpu_hours && v.gpu_hours > *c.budget_gpu_hours * keep) return false;
    if (c.budget_money && v.cost > *c.budget_money * keep) return false;
    return true;
}

double objective_value(const EvaluatedCandidate& c, Objective objective, Confidence confidence) {
    const PercentileValues v = at_confidence(c.evaluation, confidence);
    switch (objective) {
        case Objective::gpus: return c.candidate.gpus;
        case Objective::time: return v.ttt_minutes;
        case Objective::cost: return v.cost;
        case Objective::gpu_hours: return v.gpu_hours;
        case Objective::energy: return c.evaluation.energy_kwh;
    }
    return 0;
}

std::vector<int> plan_gpu_grid(int min_gpus, int max_gpus) {
    std::set<int> counts{min_gpus};
    for (long long n = 8; n <= max_gpus; n *= 2) {
        if (n >= min_gpus) counts.insert(static_cast<int>(n));
        if (n * 3 / 2 >= min_gpus && n * 3 / 2 <= max_gpus) counts.insert(static_cast<int>(n * 3 / 2));
    }
    return {counts.begin(), counts.end()};
}

PlanUnit plan_unit(const System& system) { return {system.allocation, system.allocation_unit_gpus}; }

std::vector<int> whole_unit_grid(int min_gpus, int max_gpus, int unit_gpus) {
    TTSIM_ASSERT(unit_gpus > 0, "an allocation unit has GPUs");
    const long long first = (static_cast<long long>(std::max(1, min_gpus)) + unit_gpus - 1) / unit_gpus;
    std::set<int> counts;
    if (first * unit_gpus <= max_gpus) counts.insert(static_cast<int>(first * unit_gpus));
    for (long long units = 1; units * unit_gpus <= max_gpus; units *= 2)
        for (long long k : {units, units * 3 / 2})
            if (k >= first && k > 0 && k * unit_gpus <= max_gpus && (k == units || units >= 2))
                counts.insert(static_cast<int>(k * unit_gpus));
    // The range's last whole unit, so that the search reaches the range's end (8136 GPUs = 113 racks of 72).
    if (!counts.empty()) counts.insert(max_gpus / unit_gpus * unit_gpus);
    return {counts.begin(), counts.end()};
}

std::vector<int> plan_counts_for(const PlanQuery& query, const std::string& system) {
    if (query.topology_file || query.gpu_counts.empty()) return query.gpu_counts;
    const int unit = query.unit_of(system).gpus;
    std::vector<int> counts = whole_unit_grid(query.gpu_counts.front(), query.gpu_counts.back(), unit);
    if (counts.empty()) return counts;   // below one unit: check_plan_range refuses the range
    if (const auto published = query.published_counts.find(system); published != query.published_counts.end()) {
        std::set<int> all(counts.begin(), counts.end());
        for (int n : published->second)
            if (n >= query.gpu_counts.front() && n <= query.gpu_counts.back() && n % unit == 0) all.insert(n);
        counts.assign(all.begin(), all.end());
    }
    return counts;
}

void check_plan_range(const PlanQuery& query) {
    // The largest count searched must fit some system's fabric: three tiers of its radix (presets.hpp).
    if (!query.topology_file && !query.gpu_counts.empty()) {
        int largest = 0, reached = 0;   // the most GPUs a system holds; the largest count any system searches
        std::string holder;
        for (const std::string& label : query.systems) {
            if (const std::vector<int> counts = plan_counts_for(query, label); !counts.empty())
                reached = std::max(reached, counts.back());
            const System system = resolve_system(base_system_of(label, query.variants));
            const FabricOptions fabric = query.network.shape.applied_to(system.fabric);
            if (const int most = max_cluster_gpus(system.node_shape(), fabric); most > largest) {
                largest = most;
                holder = system.name + ": " + fabric_tiers_phrase(fabric) + " of " + std::to_string(fabric.switch_ports) +
                         "-port switches";
            }
        }
        // With tiers or a radix asked for, they are what cannot hold the range.
        const FabricShape& shape = query.network.shape;
        if (reached > largest)
            throw InputError("no system searched holds more than " + std::to_string(largest) + " GPUs (" + holder + ")",
                             shape.tiers ? Field::tiers : shape.switch_ports ? Field::switch_ports : Field::max_gpus);
    }
    for (const std::string& system : query.systems)
        if (plan_counts_for(query, system).empty())
            throw InputError("is below one allocation unit of " + system + " (" +
                                 std::to_string(query.unit_of(system).gpus) +
                                 " GPUs): plans search whole units",
                             Field::max_gpus);
}

std::vector<std::optional<PlanEvaluation>> evaluate_candidates(const std::vector<PlanCandidate>& candidates,
                                                               const PlanEvaluator& evaluate, int threads,
                                                               const std::function<bool()>& cancelled) {
    // Fixed slots: the order is independent of scheduling.
    std::vector<std::optional<PlanEvaluation>> evaluations(candidates.size());
    auto work = [&] {
        tbb::task_group_context context;
        tbb::parallel_for(
            std::size_t{0}, candidates.size(),
            [&](std::size_t i) {
                if (cancelled && cancelled()) {
                    context.cancel_group_execution();   // candidates not yet started are dropped
                    return;
                }
                evaluations[i] = evaluate(candidates[i]);
            },
            context);
    };
    if (threads > 0) {
        tbb::task_arena arena(threads);
        arena.execute(work);
    } else {
        work();
    }
    return evaluations;
}

std::vector<PlanCandidate> plan_grid(const PlanQuery& query) {
    std::vector<PlanCandidate> grid;
    for (const std::string& system : query.systems)
        for (int n : plan_counts_for(query, system)) grid.push_back({system, n});
    return grid;
}

PlanAnswer answer_plan_query(const PlanQuery& query, const PlanEvaluator& evaluate) {
    const PlanConstraints& c = query.constraints;
    if (!c.deadline_minutes && !c.budget_gpu_hours && !c.budget_money)
        throw InputError("a planning query needs a deadline or a budget", Field::deadline);
    PlanAnswer answer;

    // The grid, evaluated in parallel into fixed slots (order independent of scheduling).
    std::vector<EvaluatedCandidate> grid;
    for (const PlanCandidate& candidate : plan_grid(query)) grid.push_back({candidate, {}, false});
    answer.grid_size = grid.size();
    std::vector<PlanCandidate> candidates;
    for (const auto& e : grid) candidates.push_back(e.candidate);
    std::atomic<bool> stop{false};
    auto cancelled = [&] {
        if (!stop.load(std::memory_order_relaxed) && query.cancelled && query.cancelled()) stop = true;
        return stop.load(std::memory_order_relaxed);
    };
    std::vector<std::optional<PlanEvaluation>> evaluations = evaluate_candidates(candidates, evaluate, query.threads, cancelled);
    for (std::size_t i = 0; i < grid.size(); ++i) {
        if (!evaluations[i]) continue;
        grid[i].evaluation = std::move(*evaluations[i]);
        grid[i].feasible = is_feasible(grid[i].evaluation, c);
        answer.evaluated.push_back(grid[i]);
    }
    answer.grid_evaluated = answer.evaluated.size();
    answer.interrupted = answer.grid_evaluated < grid.size();

    // Refinement: bisect every feasibility boundary between neighbouring ok grid points of one system.
    if (query.refine && !answer.interrupted) {
        for (const std::string& system : query.systems) {
            const int step = std::max(1, query.unit_of(system).gpus);   // whole allocation units
            std::vector<const EvaluatedCandidate*> row;
            for (const auto& e : grid)
                if (e.candidate.system == system && e.evaluation.ok) row.push_back(&e);
            for (std::size_t k = 1; k < row.size(); ++k) {
                if (row[k - 1]->feasible == row[k]->feasible) continue;
                // Work in whole units strictly between the two counts.
                const bool feasible_high = row[k]->feasible;
                long long lo = row[k - 1]->candidate.gpus, hi = row[k]->candidate.gpus;
                while (true) {
                    long long mid = (lo + hi) / 2;
                    mid = mid / step * step;
                    if (mid <= lo) mid = lo + step;
                    if (mid >= hi) break;
                    if (cancelled()) {
                        answer.interrupted = true;
                        break;
                    }
                    EvaluatedCandidate e{{system, static_cast<int>(mid)}, evaluate({system, static_cast<int>(mid)}), false};
                    e.feasible = is_feasible(e.evaluation, c);
                    answer.evaluated.push_back(e);
                    if (!e.evaluation.ok) break;   // an unrunnable count: stop refining this gap
                    if (e.feasible == feasible_high) hi = mid; else lo = mid;
                }
            }
        }
    }

    for (const auto& e : answer.evaluated) {
        if (!e.feasible) continue;
        if (!answer.best) { answer.best = e; continue; }
        const double a = objective_value(e, query.objective, c.confidence),
                     b = objective_value(*answer.best, query.objective, c.confidence);
        const bool better =
            a < b || (a == b && (e.candidate.gpus < answer.best->candidate.gpus ||
                                 (e.candidate.gpus == answer.best->candidate.gpus &&
                                  e.evaluation.ttt_minutes < answer.best->evaluation.ttt_minutes)));
        if (better) answer.best = e;
    }
    return answer;
}

}  // namespace ttsim::planning
