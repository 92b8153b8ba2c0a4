// NCCL's constants as data: models/data/nccl.yaml (each value with its source) read once per process into an
// immutable NcclReference. nccl_params.hpp's API (nccl_params(), link_capacity(), nvls_efficiency(), the
// LinkEfficiency defaults) is served from it; this header is for code that needs the file itself (tests, tools).
#pragma once

#include <filesystem>

#include "models/collectives/nccl_params.hpp"

namespace ttsim {

struct NcclGenerationData {
    NcclParams params;
    double nvlink_line_rate_gbps = 0;   // NVLink line rate per GPU and direction, GB/s (450 NVLink4, 900 NVLink5)
    double nvls_efficiency = 0;         // fraction of nvlink_effective_gbps NVLS reaches (nccl_params.hpp)
};

struct NcclReference {
    NcclGenerationData hopper, blackwell;
    double blackwell_from_nvlink_bytes_per_s = 0;   // NVLink rate per GPU and direction from which Blackwell applies
    double infiniband_efficiency = 0, pcie_efficiency = 0, ethernet_efficiency = 0;   // LinkEfficiency defaults

    const NcclGenerationData& generation(GpuGeneration g) const { return g == GpuGeneration::Hopper ? hopper : blackwell; }
};

// Parses an nccl.yaml. Unknown or missing keys, missing sources and wrong units are InputErrors at file:line:column.
NcclReference load_nccl_reference(const std::filesystem::path& path);

// The shipped models/data/nccl.yaml, loaded on first use (thread-safe) and immutable afterwards.
const NcclReference& nccl_reference();

}  // namespace ttsim
