// A system: the machines a job runs on, in one place. Everything a prediction needs to know about the hardware
// beyond the workload comes from here: the GPU (a catalog entry or a what-if copy), GPUs per node and per NVLink
// domain, the NICs and their rate, the fabric (the DGX SuperPOD fat tree with its oversubscription and routing,
// or a YAML topology), the unit a user rents, and the defaults that depend on the hardware (SHARP).
//
//   System s = resolve_system("dgx-h100");            // preset: DGX H100 nodes on the SuperPOD fabric
//   s = with_fabric(s, {.nic = NicSpeed::Xdr800});    // what-if: XDR NICs
//   Topology t = build_topology(s, 1024);             // what the collectives are simulated on
//
// Every training prediction simulates its collectives on build_topology(): preset systems on their own node
// shape; GPUs without a preset (A100, MI300X) on a generic node built from the GPU's own figures (its NVLink
// domain size and rate, one NIC per GPU at its rate) on the same SuperPOD fabric; what-if GPUs on their base
// system's node shape at their own NVLink and NIC rates. There is no second, analytic communication model.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "topologies/fabric_shape.hpp"
#include "topologies/presets.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

// What a user rents and pays for as one piece (plans search whole units, cost and energy are charged per unit):
// a DGX node (8 GPUs, the only unit of a node system); a GB200 NVL72 rack (72 GPUs, its default unit) or one of
// its 18 compute trays (4 GPUs; SPOD_GB200), where a provider rents trays.
enum class AllocationUnit { node, rack, tray };
const char* to_string(AllocationUnit unit);   // "node", "rack", "tray"
// "rack" or "tray" (what a user may choose; a node system has only its node); InputError keyed "allocation".
AllocationUnit parse_allocation(const std::string& text);

struct System {
    std::string name;                          // label: "dgx-h100", a what-if variant's name, a GPU's name, or
                                               // (calibration) the MLPerf system a result ran on
    std::shared_ptr<const GpuSpec> gpu;        // the GPU modelled: a catalog entry, or a what-if copy of one
    const GpuSpec* catalog_gpu = nullptr;      // the catalog GPU it is or derives from (calibration, v4.1 layouts)
    int gpus_per_node = 8;                     // per DGX, per GB200 compute tray
    int gpus_per_nvlink_domain = 8;            // 8 on a DGX, 72 on a GB200 NVL72 rack
    // What a user rents and pays for as one piece, and its GPUs: a DGX node (8), a GB200 NVL72 rack (72) or
    // compute tray (4). `rack_scale`: the system is sold as NVLink-domain racks, so rack and tray both apply.
    AllocationUnit allocation = AllocationUnit::node;
    int allocation_unit_gpus = 8;
    bool rack_scale = false;
    // The preset whose node shape this is (topologies/presets.hpp: "dgx-h100", ...); "" for a generic node of
    // the GPU's own figures.
    std::string preset;
    // NIC line rate, oversubscription and routing of the SuperPOD fabric. fabric.nvlink_bandwidth stays unset:
    // build_topology() always passes the GPU's own NVLink rate.
    FabricOptions fabric;
    std::optional<std::string> topology_file;  // a YAML topology in place of node shape + SuperPOD fabric
    int topology_file_gpus = 0;                // its GPU count, read once by with_fabric()
    double topology_file_nvlink_bytes_per_s = 0;   // its slowest GPU's NVLink per direction (0: none), likewise
    bool topology_file_infiniband = false;         // every GPU's NIC on InfiniBand switches (SHARP can run)
    // GPU memory each GPU keeps free besides weights, gradients, optimizer state and activations (CUDA context,
    // library workspaces, NCCL buffers, allocator fragmentation), bytes; unset: the memory model's prior
    // (layers::MemoryAssumptions, 2 GB). PredictionRequest::memory_reserve_bytes sets it.
    std::optional<double> memory_reserve_bytes;

    // The node shape the topology is built from (GPUs per node and domain, the GPU's NVLink rate).
    PresetInfo node_shape() const;
    // GPUs of one NVLink domain are inside one scale-up fabric: no NIC, switch or SHARP between them.
    bool spans_domains(int gpus) const { return gpus > gpus_per_nvlink_domain; }
    // Every tensor-parallel group of a `gpus`-GPU job stays inside one NVLink domain (ranks are placed TP
    // innermost, as Megatron-LM does): TP at most the domain and dividing it, or the whole job inside one domain.
    // TP 6 on 8-GPU nodes would put ranks 6-11 across two nodes, over the network, which the step's collectives
    // (priced on the first group) do not see.
    bool tensor_parallel_fits_domain(int tp, int gpus) const {
        return tp <= gpus_per_nvlink_domain && (gpus_per_nvlink_domain % tp == 0 || !spans_domains(gpus));
    }
    // Why `tp` does not (tensor_parallel_fits_domain false): "tensor parallelism 6 does not divide the NVLink
    // domain of 8 GPUs (dgx-h100): ...".
    std::string tensor_parallel_domain_problem(int tp) const;
    // The same for the TP x CP block a context-parallel group lives in (CP next to TP in rank order): every block
    // lies inside one domain (TP x CP divides it) or spans whole domains alike (a multiple of it), so the groups
    // the step prices on the first block are every block's. CP 16 on a 72-GPU rack would put ranks 64-79 across
    // two racks while ranks 0-15 share one.
    bool model_parallel_fits_domain(int tp, int cp, int gpus) const {
        const long long block = static_cast<long long>(tp) * cp;
        return tensor_parallel_fits_domain(tp, gpus) &&
               (gpus_per_nvlink_domain % block == 0 || block % gpus_per_nvlink_domain == 0 || !spans_domains(gpus));
    }
    // Why not (model_parallel_fits_domain false), the TP problem first.
    std::string model_parallel_domain_problem(int tp, int cp, int gpus) const;
    // Whole allocation units a job of `gpus` GPUs rents (a partial unit is rented whole): ceil(gpus / unit).
    int allocation_units(int gpus) const;
    // "2 racks (144 GPUs)", "1 node (8 GPUs)": what a job of `gpus` GPUs rents.
    std::string describe_allocation(int gpus) const;
    // "NDR 400G NICs, 2:1 oversubscribed, static ECMP routing" or "topology FILE": for headers and notes.
    std::string fabric_description() const;
};

// A preset system by name ("dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", case-insensitive), or a GPU by
// catalog name or alias: its preset when one holds it (H100 -> dgx-h100), else a generic node of it. InputError
// (key "system") listing the valid names otherwise.
System resolve_system(std::string_view name);
// Preset system names, then the catalog GPU names.
std::vector<std::string> system_names();

// The fabric a request asks for, on top of a system's defaults (each unset field keeps the system's).
struct FabricChoice {
    std::optional<NicSpeed> nic = std::nullopt;
    std::optional<double> oversubscription = std::nullopt;
    std::optional<FabricRouting> routing = std::nullopt;
    std::optional<std::string> topology_file = std::nullopt;
    FabricShape shape = {};   // planes, radix, spine oversubscription (topologies/fabric_shape.hpp)
};
// `system` with the choice applied. InputError keyed by the choice's field ("nic", "oversubscription",
// "routing", "topology") where it cannot apply: fabric options together with a topology file, which describes
// its own fabric.
System with_fabric(System system, const FabricChoice& choice);
// `options` with the choice's fabric shape applied (every field it sets; its topology file is with_fabric's).
FabricOptions with_choice(FabricOptions options, const FabricChoice& choice);

// `system` with a what-if GPU (a modified copy of its catalog GPU, same node shape and fabric), labelled
// `label`. The NIC follows the GPU's nic_bandwidth_per_direction (one NIC per GPU).
System with_gpu(System system, std::shared_ptr<const GpuSpec> gpu, std::string label);

// `system` rented by `unit`: a rack-scale system by the rack or the tray; nullopt keeps the system's own unit.
// InputError keyed "allocation" naming the system's own unit where it has no such unit (a DGX: the node only).
System with_allocation(System system, std::optional<AllocationUnit> unit);
// The same where the system has that unit (a rack-scale system), else the system as it is: a plan or sweep over
// DGX and GB200 systems rents the GB200 by the `allocation` chosen and each DGX by its node.
System with_allocation_where_applicable(System system, std::optional<AllocationUnit> unit);
// Refuses `unit` (InputError keyed allocation, the first system's reason) unless one of `systems` (catalog names)
// is rented that way; nullopt is always fine.
void check_allocation_applies_somewhere(const std::vector<std::string>& systems, std::optional<AllocationUnit> unit);

// "36 GPUs is not a whole number of gb200-nvl72 racks (72 GPUs each): it rents 1 rack (72 GPUs), billed whole",
// or "" when `gpus` fills whole units. Predictions still answer (a user may ask about 36 GPUs); reports warn.
std::string partial_allocation_warning(const System& system, int gpus);

// Checks that `gpus` GPUs fit the system (one partial node or whole nodes; the topology file's own GPU count),
// and that the fabric options apply (oversubscription only on a job that spans NVLink domains). InputError keyed
// "gpus" or by the option.
void check_job_size(const System& system, int gpus);

// The topology the job's collectives are simulated on. The same checks as check_job_size.
Topology build_topology(const System& system, int gpus);

// Why SHARP cannot reduce the gradients of a job of `gpus` GPUs, or "" when it can: SHARP reduces between NVLink
// domains in the InfiniBand switches, so a job inside one domain has nothing for it to do.
std::string sharp_unavailable_reason(const System& system, int gpus);
// SHARP on by default: where NVIDIA's multi-node v4.1 runs used it (NVIDIA GPUs, a job across NVLink domains on
// the InfiniBand SuperPOD fabric). A YAML topology has no default SHARP (its switches say nothing of it): off.
bool sharp_by_default(const System& system, int gpus);

}  // namespace ttsim
