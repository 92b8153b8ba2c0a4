// Cost and energy of one converged training run (a time-to-train prediction).
//
// Energy model (stated in every report):
//   GPU     = N x ( busy x TDP + (TTT - busy) x idle power )
//             busy = steps x compute time per step + on-the-clock evaluation time. Compute (forward, backward,
//             optimizer, evaluation) runs at TDP: MLPerf power submissions show training GPUs at or near their
//             power cap. Exposed communication, fixed host costs and waiting are charged at idle power - a lower
//             bound: NCCL kernels keep a GPU above idle.
//   nodes   = nodes x node_watts x TTT          (CPUs, DRAM, NVSwitches, NICs, fans, PSU losses)
//   network = switches x switch_watts x TTT     (scale-out switches, attributed by the ports the job uses:
//             a non-blocking fat tree of t tiers spends 2t - 1 switch ports per NIC, so a job of N GPUs (one NIC
//             each) accounts for N (2t - 1) / 64 switches of 64 ports; t from superpod_shape())
//   facility = (GPU + nodes + network) x PUE
// Money = GPU-hours x price per GPU-hour (cloud-style pricing already includes power, hosting and networking).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/planning/reference_prices.hpp"

namespace ttsim::planning {

// Defaults come from models/data/prices.yaml (reference_prices.hpp), where each value sits with its source and
// the reasoning behind the estimate; scenarios and flags override them.
struct EnergyParameters {
    // Non-GPU draw of one 8-GPU node, W (an estimate from the DGX H100 datasheet's 10.2 kW maximum).
    double node_watts = reference_prices().node_watts;
    // One 64-port NDR InfiniBand switch (Quantum-2 QM9700) including the optical transceivers of its ports, W.
    double switch_watts = reference_prices().switch_watts;
    // Facility overhead. 1.0 reports IT energy only; typical modern AI data centres are 1.1-1.4.
    double pue = reference_prices().pue;
};

struct CostParameters {
    // Price per GPU-hour by system name; `default_price` for systems not listed. Defaults are estimates of
    // on-demand cloud list prices (2024-2025), see prices.yaml.
    std::map<std::string, double> price_per_gpu_hour = reference_prices().price_per_gpu_hour;
    double default_price = reference_prices().default_price;
    std::string currency = reference_prices().currency;
    // Which prices the user gave (scenario `cost:` or `--price`); the others are the estimates above, and
    // every report says so, because a silently assumed price makes every cost figure look measured.
    std::set<std::string> given_by_user;   // systems whose price was given
    bool default_given_by_user = false;    // one price for all systems was given
    double price_for(const std::string& system) const;
    bool price_is_estimate(const std::string& system) const;
    // "dgx-h100 2.50 USD (given), dgx-b200 5.00 USD (default estimate, ...)" for the listed systems.
    std::string describe_prices(const std::vector<std::string>& systems) const;
};

// What energy_of() needs about a run; plain numbers so the model is testable by hand.
struct RunProfile {
    int gpus = 0;
    int gpus_per_node = 8;
    double ttt_seconds = 0;              // wall time of the run
    double busy_seconds = 0;             // compute + on-the-clock evaluation
    double gpu_tdp_watts = 0, gpu_idle_watts = 0;
    double network_switches = 0;       // switch equivalents attributed to the job
};

struct EnergyBreakdown {
    double gpu_kwh = 0, node_kwh = 0, network_kwh = 0;
    double it_kwh = 0;                   // sum of the three
    double facility_kwh = 0;             // it_kwh x PUE: the figure reported as "energy"
};

EnergyBreakdown energy_of(const RunProfile& run, const EnergyParameters& parameters);

// Switch equivalents attributed to a job of `gpus` GPUs (0 inside one node): gpus x (2 tiers - 1) / 64, tiers of
// the DGX SuperPOD fat tree superpod_shape() builds for its nodes (one rail per GPU of a node).
double network_switches_for(int gpus, int gpus_per_node);

// A one-paragraph statement of the model and the parameter values in use, for reports.
std::string describe_energy_model(const EnergyParameters& parameters);

}  // namespace ttsim::planning
