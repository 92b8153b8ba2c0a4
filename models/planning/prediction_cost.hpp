// Cost and energy of one `ttsim predict` prediction, by the model and prices a plan or sweep row uses
// (cost_energy.hpp: GPU-hours x price per GPU-hour; energy_of over the run's profile, plan_evaluator.hpp's
// run_profile_of), so that `predict --gpus N` and a plan's row at N GPUs give the same figures.
#pragma once

#include <optional>
#include <string>

#include "models/hardware/system.hpp"
#include "models/planning/cost_energy.hpp"
#include "models/training/predict.hpp"

namespace ttsim::planning {

struct PredictionCost {
    std::string system;              // the resolved system the price is looked up for
    double price_per_gpu_hour = 0;
    bool price_is_estimate = true;   // the prices.yaml estimate, not a price the user gave
    double rented_gpu_hours = 0;     // whole allocation units (a DGX node, an NVL72 rack), what the cost bills
    double cost = 0;                 // in CostParameters::currency
    EnergyBreakdown energy;          // energy.facility_kwh is the figure reported as "energy"
};

// `system` is the system the prediction ran on (a preset or GPU name, as PredictionRequest::system); `allocation`
// what it is rented by where the user chose (a GB200 NVL72's trays), else the system's own unit; `shape` the fabric
// shape it ran on (planes multiply the switches charged), where it spans NVLink domains.
PredictionCost cost_of_prediction(const Prediction& prediction, const std::string& system,
                                  const EnergyParameters& energy, const CostParameters& cost,
                                  std::optional<AllocationUnit> allocation = std::nullopt,
                                  const FabricShape& shape = {});

}  // namespace ttsim::planning
