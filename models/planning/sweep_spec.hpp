// What a planning sweep varies, and its expansion into individual points (one time-to-train prediction each).
//
// A sweep is the cross product  workloads x systems (catalog systems and hypothetical variants) x network options
// x batch rules x GPU counts. Points are numbered in exactly that nesting order, GPU counts ascending, so every
// output (table, CSV, JSON, plots) lists them in the same order whatever the number of worker threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "models/hardware/system.hpp"
#include "models/training/predict.hpp"
#include "topologies/fabric_shape.hpp"
#include "topologies/presets.hpp"

namespace ttsim::planning {

// How the global batch of a point is chosen.
enum class BatchRule {
    published,      // predict()'s default: NVIDIA's v4.1 batch at the nearest published scale
    fixed_global,   // the same global batch at every GPU count (`value` samples)
    per_rank,       // a fixed batch per data-parallel rank: global = value x the DP of each layout priced
                    // (the published one's, or each searched layout's own)
    rcp_optimal,    // of the RCP table's batches, the one with least TTT: those the published layout's DP divides,
                    // or, searched, every one at its fastest layout
};

struct BatchChoice {
    BatchRule rule = BatchRule::published;
    int value = 0;                          // samples; unused by `published` and `rcp_optimal`
    std::string label() const;              // "published", "global=4096", "per_rank=32", "rcp_optimal"
};

// Scale-out network options: the fabric every point's collectives are simulated on (point_prediction.hpp).
struct NetworkOption {
    std::string name = "default";
    NicSpeed nic = NicSpeed::Ndr400;        // ndr: the system's own NIC; else each GPU's NIC line rate
    std::optional<bool> sharp;              // nullopt: predict()'s default (on for multi-node NVIDIA layouts)
    double oversubscription = 1.0;          // leaf downlink : uplink
    FabricShape shape;                      // planes, radix, tiers, ...; unset: the system's own
    bool is_default() const { return nic == NicSpeed::Ndr400 && !sharp && oversubscription == 1.0 && !shape.any(); }
    // Sets a NIC, an oversubscription or a shape: something only a job spanning NVLink domains uses.
    bool shapes_scale_out() const { return nic != NicSpeed::Ndr400 || oversubscription != 1.0 || shape.any(); }
};

// Hypothetical hardware: a catalog system whose GPU has some figures replaced.
struct HardwareVariant {
    std::string name;                       // e.g. "h100-2xnvlink"; used as the system label in outputs
    std::string base_system;                // a catalog system, e.g. "dgx-h100"
    std::optional<double> compute_scale;    // multiplies BF16 and FP8 peak FLOP/s
    std::optional<double> hbm_bandwidth;    // bytes/s
    std::optional<double> nvlink_bandwidth; // bytes/s per GPU per direction (all links)
    std::optional<double> nic_bandwidth;    // bytes/s per NIC per direction
    std::optional<double> tdp_watts;
};

// The GPU a variant describes: a copy of the base system's GPU with the overrides applied and validated.
GpuSpec make_variant_gpu(const HardwareVariant& variant);

struct SweepSpec {
    std::vector<std::string> workloads;     // canonical names
    std::vector<std::string> systems;       // catalog systems ("dgx-h100") or variant names
    std::vector<HardwareVariant> variants;  // referenced from `systems` by name
    std::vector<int> gpu_counts;            // ascending, unique
    bool add_published_gpu_counts = false;  // add each workload's v4.1 GPU counts (on the system's GPU) in range
    std::vector<BatchChoice> batches{BatchChoice{}};
    std::vector<NetworkOption> networks{NetworkOption{}};
    // Fabric routing of the topologies the collectives are simulated on (`routing:`).
    FabricRouting routing = FabricOptions{}.routing;
    // A YAML topology (`cluster: {topology_file: ...}`) in place of every system's SuperPOD fabric; the sweep's
    // GPU counts must then be the file's.
    std::optional<std::string> topology_file;
    // SHARP of every point (`sharp:`); nullopt: predict()'s
    // default. A network option's own `sharp:` is the what-if form, so the reader refuses both in one sweep.
    std::optional<bool> sharp;
    // GPU memory every point keeps free besides the model state (`memory_reserve: 6GB`,
    // PredictionRequest::memory_reserve_bytes); nullopt: the 2 GB prior.
    std::optional<double> memory_reserve_bytes;
    // Failures and checkpoints of every point's run (a scenario's `reliability:`; job_reliability.hpp).
    reliability::ReliabilityRequest reliability;
    // What every point rents (`allocation: rack|tray`); nullopt: each system's own unit (system.hpp). It sets the
    // GPU-hours billed and the energy charged, not the counts (a sweep answers the counts it is asked).
    std::optional<AllocationUnit> allocation;
    // The layout of every point (`layout:`, the strings and keys of `predict --layout`), as predict() takes it:
    // automatic (absent) searches with the operator model and keeps the published layout with the lumped one;
    // fastest and pins search (operator model), published keeps v4.1's (point_prediction.hpp
    // point_searches_layout), at the global batch the batch rule gives.
    LayoutRequest layout;
};

struct SweepPoint {
    int index = 0;                          // position in the sweep's deterministic order
    std::string workload;
    std::string system;                     // label: catalog system or variant name
    std::string base_system;                // the catalog system predict() is asked about
    std::shared_ptr<const GpuSpec> variant_gpu;   // null: the catalog GPU of base_system
    int gpus = 0;
    BatchChoice batch;
    NetworkOption network;
    FabricRouting routing = FabricOptions{}.routing;   // SweepSpec::routing
    std::optional<bool> sharp;              // SweepSpec::sharp (network.sharp, when set, is the point's choice)
    std::optional<double> memory_reserve_bytes;   // SweepSpec::memory_reserve_bytes
    reliability::ReliabilityRequest reliability;  // SweepSpec::reliability (a plan's `reliability`)
    // SHARP asked for this point: the network option's, else the sweep's; nullopt: predict()'s default. Where the
    // job fits one NVLink domain, "on" runs without it (point_prediction.cpp), as the default does there.
    std::optional<bool> requested_sharp() const { return network.sharp ? network.sharp : sharp; }
    std::optional<std::string> topology_file;   // SweepSpec::topology_file
    // What the point rents (a plan's `allocation`); nullopt: the system's own unit (system.hpp).
    std::optional<AllocationUnit> allocation;
    LayoutRequest layout;                   // SweepSpec::layout (a plan's `layout`)
    std::shared_ptr<const Workload> custom_workload;   // PlanQuery::custom_workload; null: the catalog's `workload`

    // Points of one series differ only in GPU count (speedup, efficiency and break-even are per series).
    std::string series_key() const;
    std::string series_label() const;       // human-readable, e.g. "dgx-h100 ndr-sharp published"
};

// The workload a sweep point or plan candidate trains: the user model where there is one (`custom`), else the
// catalog's workload `name` (find_workload).
const Workload& trained_workload(const std::shared_ptr<const Workload>& custom, const std::string& name);

// GPU counts with published v4.1 results for (workload, GPU family); supplied by the caller (see
// published_results.hpp) so that expansion stays a pure function.
using PublishedCountsFn = std::vector<int> (*)(const std::string& workload, const std::string& gpu_family);

// Expands the cross product. Published counts are added inside [min, max] of spec.gpu_counts when asked.
// InputError for an unknown workload, system or variant name.
std::vector<SweepPoint> expand_sweep(const SweepSpec& spec, PublishedCountsFn published_counts = nullptr);

// Why SHARP asked for a whole sweep or plan can run nowhere in it: every system in `base_systems` (catalog
// names) fits `largest_gpus` GPUs in one NVLink domain (the reason for the first); "" when some point can run it.
std::string sharp_unavailable_everywhere(const std::vector<std::string>& base_systems, int largest_gpus);

// How reports state a sweep's or plan's non-default fabric choices: "static ECMP routing, SHARP off"; "" when
// both are the defaults (adaptive, predict()'s SHARP).
std::string fabric_choice_note(FabricRouting routing, std::optional<bool> sharp);

// 8, 16, ..., up to `to` (inclusive): powers of two times `from`.
std::vector<int> doubling_counts(int from, int to);

}  // namespace ttsim::planning
