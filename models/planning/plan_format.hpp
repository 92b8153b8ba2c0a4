// Reports of a planning query (table and JSON "ttsim.results/2" with kind "plan"): the answer, the best feasible
// configuration of each system searched, and what was searched.
#pragma once

#include <string>
#include <vector>

#include "models/planning/cost_energy.hpp"
#include "models/planning/plan_query.hpp"

namespace ttsim::planning {

struct PlanReportContext {
    std::string workload;
    const PlanQuery* query = nullptr;
    const CostParameters* cost = nullptr;
    const EnergyParameters* energy = nullptr;
    bool layout_search = true;                // the compute model can search layouts (operator): the report says so
    bool explain = false;                     // the table adds the percentiles' meaning, prices and formulas
};

std::string format_plan_table(const PlanReportContext& context, const PlanAnswer& answer);
std::string format_plan_json(const std::string& name, const PlanReportContext& context, const PlanAnswer& answer);
std::string format_plan_csv(const PlanReportContext& context, const PlanAnswer& answer);

// The objective in words: "fewest GPUs", "fastest", "cheapest", ...
std::string objective_text(Objective objective);
// Three significant figures, trailing zeros kept so that a column's precision is visible: 6.12, 12.3, 123,
// 0.105 (4 digits only from 1000 up: 1234).
std::string three_significant(double value);
// A duration for people and tables, one rule everywhere: seconds under a minute ("6.12 s"), minutes under two
// hours ("12.3 min", "105 min"), hours under two days ("3.50 h"), else days ("58.5 d"); three significant figures.
std::string format_duration(double minutes);
// "time-to-train <= 5.00 s at p90 and cost <= 5000 USD at p90", with the margin's effective limits when set.
std::string describe_constraints(const PlanConstraints& constraints, const CostParameters& cost);

// When nothing is feasible: per constraint, the evaluated candidate that comes closest (deadline: the fastest;
// GPU-hour budget: the fewest GPU-hours; money budget: the cheapest), so the user sees how far off they are.
struct ClosestCandidate {
    std::string criterion;               // "fastest", "fewest GPU-hours", "cheapest"
    EvaluatedCandidate candidate;
    double ratio = 0;                    // its value at the confidence / the limit less the margin (> 1: over it)
    std::string limit;                   // which limit `ratio` is against: "the deadline", "the GPU-hour budget", ...
    // Every limit it misses (ratio > 1), its own included: e.g. the fastest candidate meets the deadline and misses
    // the budget.
    std::vector<std::pair<std::string, double>> missed;
};
std::vector<ClosestCandidate> closest_candidates(const PlanQuery& query, const PlanAnswer& answer);

// What the systems search: "8..8192 GPUs in whole nodes of 8 GPUs" when all search the same, else per group,
// "dgx-h100, dgx-b200 8..8192 GPUs in whole nodes of 8 GPUs; gb200-nvl72 72..8136 GPUs in whole racks of 72 GPUs".
std::string describe_search_counts(const PlanQuery& query);

// The candidate is at the largest GPU count searched, so the search range may be what limits it.
bool at_search_limit(const PlanQuery& query, const EvaluatedCandidate& candidate);

}  // namespace ttsim::planning
