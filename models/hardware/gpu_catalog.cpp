#include "models/hardware/gpu_catalog.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "sim/errors.hpp"

namespace ttsim {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;
constexpr double kMebibyte = 1024.0 * 1024.0;

// Idle power is not in any source we have. Estimate: 12% of TDP. Reasoning: an idle SXM board keeps its HBM
// powered and refreshed, its NVLink SerDes trained and its fans/VRs running; monitoring on DGX-class systems
// commonly shows roughly 60-120 W for 700-1000 W parts at idle, i.e. about 10-15% of TDP. We take the middle
// of that band for every part; it only matters for energy estimates of idle (waiting) GPUs.
constexpr double kIdleFractionOfTdp = 0.12;

// Scale-out NIC line rates (params.yaml links.infiniband): NDR 400 Gb/s = 50 GB/s per direction; HDR 200 Gb/s
// = 25 GB/s per direction.
constexpr double kNdr400PerDirection = 50 * kGiga;
constexpr double kHdr200PerDirection = 25 * kGiga;

GpuSpec a100_sxm() {
    GpuSpec g;
    g.name = "A100-SXM";
    g.description = "NVIDIA A100 SXM4 80GB (HGX/DGX A100); reference only";
    g.vendor = "NVIDIA";
    g.bf16_dense_flops = 312 * kTera;             // src: NV_DS; CALCULON a100_80g.json
    g.fp8_dense_flops = std::nullopt;             // src: NV_DS (no FP8 tensor cores on Ampere)
    g.hbm_capacity_bytes = 80 * kGiga;            // src: NV_DS; CALCULON
    g.hbm_bandwidth = 2.039 * kTera;              // src: NV_DS (conf medium; STREAM measures 1.61-1.75 TB/s, AZ_A100)
    g.scaleup_links = 12;                         // src: NV_DS (NVLink3)
    g.scaleup_bandwidth_per_direction = 300 * kGiga;   // src: NV_DS; CALCULON
    g.scaleup_bandwidth_bidirectional = 600 * kGiga;   // src: NV_DS
    g.collective_effective_link_bandwidth = 20.0 * kGiga;  // src: NCCL_2223 topo.h SM80_NVLINK_BW
    g.scaleup_switched = true;                    // NVSwitch gen2
    g.gpus_per_scaleup_domain = 8;                // src: NV_DS (HGX A100 8-GPU)
    g.nics_per_gpu = 1;                           // src: NCCL_812 (DGX A100: 8x HDR 200G for 8 GPUs)
    g.nic_bandwidth_per_direction = kHdr200PerDirection;   // src: NCCL_812
    g.tdp_watts = 400;                            // src: NV_DS (conf medium)
    return g;
}

GpuSpec h100_sxm() {
    GpuSpec g;
    g.name = "H100-SXM";
    g.description = "NVIDIA H100 SXM5 80GB (HGX/DGX H100)";
    g.vendor = "NVIDIA";
    g.bf16_dense_flops = 989.4 * kTera;           // src: GLK_H100; NV_DS
    g.fp8_dense_flops = 1978.9 * kTera;           // src: GLK_H100; NV_DS
    g.hbm_capacity_bytes = 80 * kGiga;            // src: NV_DS
    g.hbm_reported_bytes = 81559 * kMebibyte;     // src: MLP41 systems/eos*.json accelerator_memory_capacity
    g.hbm_bandwidth = 3.35 * kTera;               // src: GLK_H100; NV_DS
    g.scaleup_links = 18;                         // src: NV_DS (18x NVLink4)
    g.scaleup_bandwidth_per_direction = 450 * kGiga;   // src: NT_212 ("450GB/s is the line rate")
    g.scaleup_bandwidth_bidirectional = 900 * kGiga;   // src: NV_DS; MLP41 systems
    g.collective_effective_link_bandwidth = 20.6 * kGiga;  // src: NCCL_2223 topo.h SM90_NVLINK_BW (x18 = 370.8)
    g.scaleup_switched = true;                    // 4x NVSwitch gen3, NVLS capable
    g.gpus_per_scaleup_domain = 8;                // src: NV_DS
    g.nics_per_gpu = 1;                           // src: MLP41 systems (8x CX-7 NDR 400G compute NICs per 8 GPUs)
    g.nic_bandwidth_per_direction = kNdr400PerDirection;   // src: MLP41 systems; SPOD_H100
    g.tdp_watts = 700;                            // src: GLK_H100; NV_DS
    return g;
}

GpuSpec h200_sxm() {
    GpuSpec g;
    g.name = "H200-SXM";
    g.description = "NVIDIA H200 SXM5 141GB (HGX/DGX H200)";
    g.vendor = "NVIDIA";
    g.bf16_dense_flops = 989.4 * kTera;           // src: NV_DS; GLK_H100 (same die as H100)
    g.fp8_dense_flops = 1978.9 * kTera;           // src: NV_DS (AZ_H200 FP8 GEMM measures 1300-1366 TF)
    g.hbm_capacity_bytes = 141 * kGiga;           // src: NV_DS
    g.hbm_reported_bytes = 143771 * kMebibyte;    // src: MLP41 systems/h200_*.json
    g.hbm_bandwidth = 4.8 * kTera;                // src: NV_DS (conf medium; AZ_H200 STREAM 4.0-4.48 TB/s)
    g.scaleup_links = 18;                         // src: NV_DS
    g.scaleup_bandwidth_per_direction = 450 * kGiga;   // src: NV_DS
    g.scaleup_bandwidth_bidirectional = 900 * kGiga;   // src: NV_DS; MLP41 systems/h200_ngc24.09_nemo.json
    g.collective_effective_link_bandwidth = 20.6 * kGiga;  // src: NCCL_2223 topo.h SM90_NVLINK_BW (Hopper, as H100)
    g.scaleup_switched = true;
    g.gpus_per_scaleup_domain = 8;                // src: NV_DS
    g.nics_per_gpu = 1;                           // src: params.md §1 notes (DGX H200: 8x CX-7 NDR 400G)
    g.nic_bandwidth_per_direction = kNdr400PerDirection;
    g.tdp_watts = 700;                            // src: NV_DS; inference_results_v4.1 H200 system json
    return g;
}

GpuSpec b200() {
    GpuSpec g;
    g.name = "B200";
    g.description = "NVIDIA B200 SXM 180GB (HGX/DGX B200, 1000 W)";
    g.vendor = "NVIDIA";
    g.bf16_dense_flops = 2250 * kTera;            // src: GLK_B200 (HGX B200 @1000 W); conf medium
    g.fp8_dense_flops = 4500 * kTera;             // src: GLK_B200; SPOD_B200 (72 PF FP8 sparse per 8 GPUs)
    g.hbm_capacity_bytes = 180 * kGiga;           // src: SPOD_B200 (1,440 GB per 8 GPUs)
    g.hbm_reported_bytes = 183359 * kMebibyte;    // src: MLP41/MLP50 systems
    g.hbm_bandwidth = 8.0 * kTera;                // src: GLK_B200; NV_DS (conf medium; some tables say 7.7)
    g.scaleup_links = 18;                         // src: SPOD_GB200; MLP50 systems (18x NVLink5)
    g.scaleup_bandwidth_per_direction = 900 * kGiga;   // src: NV_DS / GLK_B200
    g.scaleup_bandwidth_bidirectional = 1800 * kGiga;  // src: MLP50 systems/nyx_*.json
    g.collective_effective_link_bandwidth = 40.1 * kGiga;  // src: NCCL_HEAD topo.h SM100_NVLINK_BW (x18 = 721.8)
    g.scaleup_switched = true;                    // 2 NVSwitch chips
    g.gpus_per_scaleup_domain = 8;                // src: NV_DS (DGX/HGX B200)
    g.nics_per_gpu = 1;                           // src: params.md §1 notes (DGX B200: 8x CX-7 NDR 400G)
    g.nic_bandwidth_per_direction = kNdr400PerDirection;
    g.tdp_watts = 1000;                           // src: GLK_B200; NV_DS (conf medium)
    return g;
}

GpuSpec gb200() {
    GpuSpec g;
    g.name = "GB200";
    g.description = "NVIDIA GB200 (Blackwell GPU in a GB200 NVL72 rack, 1200 W operating point)";
    g.vendor = "NVIDIA";
    g.bf16_dense_flops = 2500 * kTera;            // src: GLK_B200; NV_DS (360 PF BF16 sparse / 72 / 2)
    g.fp8_dense_flops = 5000 * kTera;             // src: GLK_B200; NV_DS (720 PF FP8 sparse / 72 / 2); Verda says 4.5
    g.hbm_capacity_bytes = 186 * kGiga;           // src: NV_DS (13.4-13.5 TB / 72)
    g.hbm_reported_bytes = 189471 * kMebibyte;    // src: MLP50 systems/tyche_*.json
    g.hbm_bandwidth = 8.0 * kTera;                // src: NV_DS (576 TB/s / 72); GLK_B200
    g.scaleup_links = 18;                         // src: SPOD_GB200 (one link to each of 18 switch chips)
    g.scaleup_bandwidth_per_direction = 900 * kGiga;   // src: SPOD_GB200
    g.scaleup_bandwidth_bidirectional = 1800 * kGiga;  // src: SPOD_GB200; MLP50 tyche systems
    g.collective_effective_link_bandwidth = 40.1 * kGiga;  // src: NCCL_HEAD topo.h SM100_NVLINK_BW
    g.scaleup_switched = true;
    g.gpus_per_scaleup_domain = 72;               // src: SPOD_GB200 (18 compute trays x 4 GPUs)
    g.nics_per_gpu = 1;                           // src: MLP50 systems/tyche_ngpu512_ngc25.04_nemo.json
    g.nic_bandwidth_per_direction = kNdr400PerDirection;   // src: MLP50 tyche (CX-7 NDR 400 Gb/s)
    g.tdp_watts = 1200;                           // src: GLK_B200 (conf medium; an estimate per GPU)
    return g;
}

GpuSpec mi300x() {
    GpuSpec g;
    g.name = "MI300X";
    g.description = "AMD Instinct MI300X 192GB (8-GPU OAM platform)";
    g.vendor = "AMD";
    g.bf16_dense_flops = 1307.4 * kTera;          // src: ROCM_MI300
    g.fp8_dense_flops = 2614.9 * kTera;           // src: ROCM_MI300
    g.hbm_capacity_bytes = 192 * kGiga;           // src: ROCM_MI300; MLP50 AMD systems
    g.hbm_bandwidth = 5.3 * kTera;                // src: ROCM_MI300
    g.scaleup_links = 7;                          // src: ROCM_MI300 (7 Infinity Fabric links, fully connected)
    g.scaleup_bandwidth_per_direction = 448 * kGiga;   // src: derived 7 x 64 GB/s (RCCL_1210)
    g.scaleup_bandwidth_bidirectional = 896 * kGiga;   // src: derived 7 x 128 GB/s (AMD datasheet via RCCL_1210)
    g.collective_effective_link_bandwidth = 48 * kGiga;  // src: RCCL_1210 (RCCL topology uses 48 GB/s per link)
    g.scaleup_switched = false;                   // point to point: one link to each peer, no switch
    g.gpus_per_scaleup_domain = 8;                // src: ROCM_MI300
    // Estimate (not in params.yaml): MI300X training platforms pair each GPU with one 400G NIC, like DGX H100.
    g.nics_per_gpu = 1;
    g.nic_bandwidth_per_direction = kNdr400PerDirection;
    g.tdp_watts = 750;                            // src: MLPerf inference v4.1 AMD system json ("750W")
    return g;
}

std::vector<GpuSpec> build_catalog() {
    std::vector<GpuSpec> catalog{a100_sxm(), h100_sxm(), h200_sxm(), b200(), gb200(), mi300x()};
    for (GpuSpec& g : catalog) g.idle_watts = kIdleFractionOfTdp * g.tdp_watts;
    return catalog;
}

// Lower-case and drop separators, so "H100-SXM", "h100_sxm" and "h100 sxm" compare equal.
std::string normalize_name(std::string_view name) {
    std::string out;
    for (char c : name) {
        if (c == '-' || c == '_' || c == ' ' || c == '.') continue;
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

struct Alias {
    std::string_view alias;      // already normalized
    std::string_view canonical;  // catalog name
};

// Names people use, including the accelerator strings of MLPerf result files and params.yaml keys.
constexpr std::array kAliases{
    Alias{"a100", "A100-SXM"},   Alias{"a100sxm", "A100-SXM"},   Alias{"a100sxm4", "A100-SXM"},
    Alias{"a100sxm480gb", "A100-SXM"},
    Alias{"h100", "H100-SXM"},   Alias{"h100sxm", "H100-SXM"},   Alias{"h100sxm5", "H100-SXM"},
    Alias{"h100sxm580gb", "H100-SXM"},
    Alias{"h200", "H200-SXM"},   Alias{"h200sxm", "H200-SXM"},   Alias{"h200sxm5", "H200-SXM"},
    Alias{"h200sxm5141gb", "H200-SXM"},
    Alias{"b200", "B200"},       Alias{"b200sxm", "B200"},       Alias{"b200sxm180gb", "B200"},
    Alias{"hgxb200", "B200"},    Alias{"dgxb200", "B200"},
    Alias{"gb200", "GB200"},     Alias{"gb200nvl72", "GB200"},
    Alias{"mi300x", "MI300X"},   Alias{"mi300", "MI300X"},       Alias{"amdmi300x", "MI300X"},
};

void require_positive(double value, const std::string& gpu, const char* field) {
    if (!(value > 0) || !std::isfinite(value))
        throw InputError("GPU '" + gpu + "': " + field + " must be a positive finite number", {}, field);
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
    static const std::vector<GpuSpec> catalog = build_catalog();  // immutable after first use
    return catalog;
}

std::vector<std::string> gpu_names() {
    std::vector<std::string> names;
    for (const GpuSpec& g : gpu_catalog()) names.push_back(g.name);
    return names;
}

const GpuSpec& find_gpu(std::string_view name) {
    const std::string key = normalize_name(name);
    std::string_view canonical;
    for (const Alias& a : kAliases)
        if (a.alias == key) canonical = a.canonical;
    for (const GpuSpec& g : gpu_catalog())
        if (g.name == canonical || normalize_name(g.name) == key) return g;

    std::string valid;
    for (const std::string& n : gpu_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError("unknown GPU '" + std::string(name) + "'; valid GPUs: " + valid +
                     " (aliases such as h100, h100-sxm5, mi300 are accepted)");
}

GpuSpec make_variant(const GpuSpec& base, std::string variant_name) {
    GpuSpec variant = base;
    variant.name = std::move(variant_name);
    variant.description = "hypothetical variant of " + base.name;
    variant.hypothetical = true;
    return variant;
}

void validate_gpu_spec(const GpuSpec& spec) {
    const std::string& n = spec.name;
    if (n.empty()) throw InputError("GPU spec has an empty name", {}, "name");
    require_positive(spec.bf16_dense_flops, n, "bf16_dense_flops");
    if (spec.fp8_dense_flops) require_positive(*spec.fp8_dense_flops, n, "fp8_dense_flops");
    require_positive(spec.hbm_capacity_bytes, n, "hbm_capacity_bytes");
    if (spec.hbm_reported_bytes) require_positive(*spec.hbm_reported_bytes, n, "hbm_reported_bytes");
    require_positive(spec.hbm_bandwidth, n, "hbm_bandwidth");
    require_positive(spec.scaleup_bandwidth_per_direction, n, "scaleup_bandwidth_per_direction");
    require_positive(spec.scaleup_bandwidth_bidirectional, n, "scaleup_bandwidth_bidirectional");
    if (spec.collective_effective_link_bandwidth)
        require_positive(*spec.collective_effective_link_bandwidth, n, "collective_effective_link_bandwidth");
    require_positive(spec.nic_bandwidth_per_direction, n, "nic_bandwidth_per_direction");
    require_positive(spec.tdp_watts, n, "tdp_watts");
    if (spec.scaleup_links < 1) throw InputError("GPU '" + n + "': scaleup_links must be >= 1", {}, "scaleup_links");
    if (spec.gpus_per_scaleup_domain < 1)
        throw InputError("GPU '" + n + "': gpus_per_scaleup_domain must be >= 1", {}, "gpus_per_scaleup_domain");
    if (spec.nics_per_gpu < 0) throw InputError("GPU '" + n + "': nics_per_gpu must be >= 0", {}, "nics_per_gpu");
    if (spec.idle_watts < 0 || spec.idle_watts > spec.tdp_watts)
        throw InputError("GPU '" + n + "': idle_watts must be between 0 and tdp_watts", {}, "idle_watts");
}

}  // namespace ttsim
