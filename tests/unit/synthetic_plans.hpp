// A synthetic configuration model for plan tests (no simulation): T = work / N + fixed minutes at the median,
// p10/p90 = the given factors x T, `price` per GPU-hour, energy 1 kWh per GPU-hour; counts above 4096 "fail"
// like an unrunnable configuration. Monotone in N, so the answers can be worked out by hand.
#pragma once

#include "models/planning/plan_query.hpp"

namespace ttsim::test {

inline planning::PlanEvaluation linear_plan_model(const planning::PlanCandidate& c, double work, double fixed,
                                                  double price, double p10_factor = 1.0, double p90_factor = 1.0) {
    planning::PlanEvaluation e;
    if (c.gpus > 4096) {
        e.error = "too big";
        return e;
    }
    e.ok = true;
    e.ttt_minutes = work / c.gpus + fixed;
    e.ttt_p10_minutes = p10_factor * e.ttt_minutes;
    e.ttt_p90_minutes = p90_factor * e.ttt_minutes;
    e.gpu_hours = c.gpus * e.ttt_minutes / 60.0;
    e.cost = e.gpu_hours * price;
    e.energy_kwh = e.gpu_hours;
    e.rented_gpus = c.gpus;   // no allocation text: reports say "N GPUs"
    return e;
}

}  // namespace ttsim::test
