// Cost and energy of one converged training run (a time-to-train prediction).
//
// Allocation (models/hardware/system.hpp): a job rents whole allocation units of its system (a DGX node, a
// GB200 NVL72 rack or, as an option, tray); a partial unit is rented, paid and powered whole.
//
// Energy model (stated in every report):
//   GPU     = N x ( busy x TDP + (TTT - busy) x idle power ) + (rented GPUs - N) x TTT x idle power
//             busy = steps x compute time per step + on-the-clock evaluation time. Compute (forward, backward,
//             optimizer, evaluation) runs at TDP: MLPerf power submissions show training GPUs at or near their
//             power cap. Exposed communication, fixed host costs and waiting are charged at idle power - a lower
//             bound: NCCL kernels keep a GPU above idle. GPUs rented but unused idle.
//   units   = rented units x non-GPU watts per unit x TTT: a node's CPUs, DRAM, NVSwitches, NICs, fans, PSU
//             losses (power.node); a rack's published total less its GPUs' catalog TDP (power.rack), a tray the
//             rack's share per tray. GPUs are only in the GPU term, so nothing is counted twice.
//   network = switches x switch_watts x TTT     (scale-out switches, attributed by the ports the job uses:
//             a non-blocking fat tree of t tiers spends 2t - 1 switch ports per NIC, so a job of N GPUs (one NIC
//             each) accounts for N (2t - 1) / 64 switches of 64 ports; t from superpod_shape())
//   facility = (GPU + units + network) x PUE
// Money = rented GPU-hours x price per GPU-hour (cloud-style pricing already includes power, hosting and
// networking); rented GPU-hours = whole units x GPUs per unit x TTT.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/hardware/system.hpp"
#include "models/planning/reference_prices.hpp"
#include "topologies/presets.hpp"

namespace ttsim::planning {

// Defaults come from models/data/prices.yaml (reference_prices.hpp), where each value sits with its source and
// the reasoning behind the estimate; scenarios and flags override them.
struct EnergyParameters {
    // Non-GPU draw of one 8-GPU node, W (an estimate from the DGX H100 datasheet's 10.2 kW maximum).
    double node_watts = reference_prices().node_watts;
    // Whole-rack power of each rack-scale system (GPUs included), W, by canonical system name.
    std::map<std::string, double> rack_watts = reference_prices().rack_watts;
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
    // A system as a scenario labels it (a hypothetical variant's name) on its base system: the label's own price
    // where the user gave one (cost.price_per_gpu_hour keyed to a gpu_variants name), else the base system's.
    double price_of(const std::string& label, const std::string& base) const;
    bool has_own_price(const std::string& label, const std::string& base) const;   // a variant priced by name
    bool price_of_is_estimate(const std::string& label, const std::string& base) const;
    // "dgx-h100 2.50 USD (given), dgx-b200 5.00 USD (default estimate, ...)" for the listed systems, each
    // (label, base system): a variant reads its own price or its base's.
    std::string describe_prices(const std::vector<std::pair<std::string, std::string>>& systems) const;
    std::string describe_prices(const std::vector<std::string>& catalog_systems) const;
};

// What energy_of() needs about a run; plain numbers so the model is testable by hand.
struct RunProfile {
    int gpus = 0;                        // GPUs the job runs on
    int rented_gpus = 0;                 // GPUs of the whole units it rents (>= gpus; the others idle)
    int units = 0;                       // allocation units rented
    double unit_watts = 0;               // non-GPU draw of one unit, W (non_gpu_watts_per_unit)
    double ttt_seconds = 0;              // wall time of the run
    double busy_seconds = 0;             // compute + on-the-clock evaluation
    double gpu_tdp_watts = 0, gpu_idle_watts = 0;
    double network_switches = 0;       // switch equivalents attributed to the job
};

struct EnergyBreakdown {
    double gpu_kwh = 0, node_kwh = 0, network_kwh = 0;   // node_kwh: the rented units' non-GPU draw
    double it_kwh = 0;                   // sum of the three
    double facility_kwh = 0;             // it_kwh x PUE: the figure reported as "energy"
};

EnergyBreakdown energy_of(const RunProfile& run, const EnergyParameters& parameters);

// Non-GPU draw of one allocation unit of `system`, W: power.node for a node; for a rack, its whole-rack power
// less its GPUs' catalog TDP; for a tray, that rack remainder x tray GPUs / rack GPUs.
double non_gpu_watts_per_unit(const System& system, const EnergyParameters& parameters);

// GPU-hours a job of `gpus` GPUs for `ttt_minutes` is billed: whole allocation units (system.hpp) x their GPUs.
double rented_gpu_hours(const System& system, int gpus, double ttt_minutes);

// The billing rule, for reports.
inline constexpr const char* kBillingRule =
    "GPU-hours are billed in whole allocation units (a DGX node, a GB200 NVL72 rack or tray): a unit rented is paid "
    "whole even where the job uses part of it";

// Switch equivalents attributed to a job of `gpus` GPUs (0 inside one node): planes x gpus x (2 tiers - 1) / radix,
// tiers of the fat tree superpod_shape() builds for its nodes at the fabric's radix (one rail per GPU of a node).
double network_switches_for(int gpus, int gpus_per_node, const FabricOptions& fabric);

// A one-paragraph statement of the model and the parameter values in use, for reports.
std::string describe_energy_model(const EnergyParameters& parameters);

}  // namespace ttsim::planning
