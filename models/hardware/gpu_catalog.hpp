// Catalog of accelerators ttsim can model: peak compute, memory, scale-up (NVLink / Infinity Fabric) and scale-out
// (NIC) figures, power. Values are read from models/data/gpus.yaml (each with its source, taken from
// models/data/hardware/params.yaml) once per process, thread-safely, into an immutable catalog. Units are SI base
// units throughout: FLOP/s, bytes, bytes/s, watts.
//
// Lookup is by name, case-insensitive, ignoring '-', '_' and spaces, with the aliases of gpus.yaml ("h100", "H100-SXM",
// "h100-sxm5", "H100_SXM5_80GB" all find H100-SXM). What-if studies start from a catalog entry and override
// fields on a copy: make_variant(find_gpu("h100"), "H100-2xHBM") then edit, then validate_gpu_spec().
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ttsim {

struct GpuSpec {
    std::string name;                 // canonical catalog name, e.g. "H100-SXM"
    std::string description;          // e.g. "NVIDIA H100 SXM5 80GB (HGX/DGX H100)"
    std::string vendor;               // "NVIDIA" or "AMD"
    bool hypothetical = false;        // true for what-if variants made with make_variant()

    // Peak dense tensor-core throughput (2:4 sparsity excluded), FLOP/s.
    double bf16_dense_flops = 0;
    std::optional<double> fp8_dense_flops;   // nullopt: no FP8 tensor cores (A100)

    // High-bandwidth memory.
    double hbm_capacity_bytes = 0;                 // nominal (vendor GB = 1e9 bytes)
    std::optional<double> hbm_reported_bytes;      // as the driver reports it in MLPerf system files (MiB * 2^20)
    double hbm_bandwidth = 0;                      // bytes/s, vendor peak
    // The memory a layout may fill: what the driver reports where a system file gives it (H100: 81,559 MiB,
    // above the nominal 80 GB), else the nominal capacity. Layouts and the memory reserve are checked against it.
    double usable_memory_bytes() const { return hbm_reported_bytes.value_or(hbm_capacity_bytes); }

    // Scale-up fabric (NVLink + NVSwitch, or AMD Infinity Fabric point to point).
    int scaleup_links = 0;                         // links per GPU
    double scaleup_bandwidth_per_direction = 0;    // bytes/s per GPU, all links, one direction (line rate)
    double scaleup_bandwidth_bidirectional = 0;    // bytes/s per GPU, both directions (the marketing figure)
    // What the collective library itself assumes one link delivers, bytes/s per direction (NCCL's
    // SM80/SM90/SM100_NVLINK_BW, RCCL's 48 GB/s per XGMI link); nullopt where no such constant is known.
    std::optional<double> collective_effective_link_bandwidth;
    bool scaleup_switched = true;                  // false: links are point to point (MI300X), no switch
    int gpus_per_scaleup_domain = 0;               // GPUs reachable over the scale-up fabric (8, or 72 on NVL72)

    // Scale-out network: compute NICs per GPU and each NIC's line rate, bytes/s per direction.
    int nics_per_gpu = 0;
    double nic_bandwidth_per_direction = 0;

    // Streaming multiprocessors (AMD: compute units): how many GEMM/conv tiles run at once, for wave
    // quantisation in the operator model (models/workloads/layers/kernel_time.hpp). nullopt: no sourced count.
    std::optional<int> sms;
    std::string die;                        // the compute die (gpus.yaml `die`), e.g. GH100; empty: not stated

    // Power.
    double tdp_watts = 0;
    double idle_watts = 0;                         // an estimate: gpus.yaml idle_power x TDP
};

// All catalog entries, in the order of models/data/gpus.yaml (A100-SXM, H100-SXM, H200-SXM, B200, GB200, MI300X).
// Loaded on first use; a malformed data file is an InputError (file:line:column and key).
const std::vector<GpuSpec>& gpu_catalog();

// A parsed gpus.yaml: the entries, validated (validate_gpu_spec), and each alias (normalized: lower case, without
// '-', '_', ' ', '.') with the canonical name it stands for. Names and aliases are unique.
struct GpuCatalogData {
    std::vector<GpuSpec> gpus;
    std::string reference_gpu;   // canonical name (gpus.yaml reference_gpu)
    std::vector<std::pair<std::string, std::string>> aliases;   // (normalized alias, canonical name)
};
GpuCatalogData load_gpu_catalog(const std::filesystem::path& path);

// The reference GPU (gpus.yaml `reference_gpu`): the one whose published results span every scale, on which
// calibration fits every parameter and whose layouts are the default's fallback.
const GpuSpec& reference_gpu();

// Canonical names of all catalog entries, in catalog order.
std::vector<std::string> gpu_names();

// Looks a GPU up by name or alias. Unknown names throw InputError listing the valid names.
const GpuSpec& find_gpu(std::string_view name);

// A copy of `base` renamed to `variant_name` and marked hypothetical, for overriding fields in what-if studies.
GpuSpec make_variant(const GpuSpec& base, std::string variant_name);

// Checks a (possibly user-edited) spec for impossible values: non-positive rates or sizes, a scale-up domain
// smaller than 1, an idle power above TDP. Throws InputError naming the field.
void validate_gpu_spec(const GpuSpec& spec);

}  // namespace ttsim
