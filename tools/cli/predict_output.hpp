// The outputs of `ttsim predict`: the table, one CSV row and the JSON document, all from the same prediction and
// its cost and energy (models/planning/prediction_cost.hpp: the numbers and wording of a plan or sweep row).
// results.csv and results.json of `predict --out DIR` are the --format csv and --format json texts.
#pragma once

#include <string>
#include <vector>

#include "models/planning/prediction_band.hpp"
#include "models/planning/prediction_cost.hpp"

namespace ttsim::cli {

struct PredictionReport {
    const Prediction* prediction = nullptr;
    const planning::CostParameters* prices = nullptr;
    const planning::EnergyParameters* energy = nullptr;
    planning::PredictionCost cost;               // cost_of_prediction(prediction, system, energy, prices)
    bool explain = false;                        // the table adds where each figure comes from (--explain)
    // The p10/p90 band the prediction's ttt_p10/p90_minutes hold (prediction_band.hpp); null: convergence only.
    const planning::PredictionBand* band = nullptr;
};

std::string format_prediction_table(const PredictionReport& report);
std::string format_prediction_csv(const PredictionReport& report);
std::string format_prediction_json(const PredictionReport& report);

}  // namespace ttsim::cli
