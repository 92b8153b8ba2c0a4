#include "models/training/comm_model.hpp"

#include <algorithm>
#include <cmath>

#include "sim/errors.hpp"

namespace ttsim {

namespace {
// NCCL v2.22.3 Simple-protocol latencies, microseconds (params.md §3.2 tables).
constexpr double kRingBaseUs = 8.4;
constexpr double kNvlinkStepUs = 3.4;
constexpr double kNetStepUs = 14.0;
constexpr double kTreeLevelUs = 28.0;
constexpr double kCollNetUs = 31.0;
constexpr double kCollNetBandwidthFactor = 0.85;  // CollNetDirect busBw x 0.85 on SM90 (params.md §3.2)
constexpr double kNicEfficiency = 0.96;           // NCCL's 48 GB/s of a 50 GB/s NDR port (sm90SpeedArrayInter)
}  // namespace

const char* to_string(CollectiveKind kind) {
    switch (kind) {
        case CollectiveKind::all_reduce: return "all_reduce";
        case CollectiveKind::reduce_scatter: return "reduce_scatter";
        case CollectiveKind::all_gather: return "all_gather";
    }
    return "?";
}

AnalyticCommModel::AnalyticCommModel(const GpuSpec& gpu) {
    if (gpu.collective_effective_link_bandwidth && gpu.scaleup_links > 0)
        nvlink_bandwidth_ = *gpu.collective_effective_link_bandwidth * gpu.scaleup_links;
    else
        nvlink_bandwidth_ = 0.8 * gpu.scaleup_bandwidth_per_direction;  // ~20% protocol overhead (NT_212)
    nic_bandwidth_ = kNicEfficiency * gpu.nic_bandwidth_per_direction * std::max(1, gpu.nics_per_gpu);
    TTSIM_ASSERT(nvlink_bandwidth_ > 0 && nic_bandwidth_ > 0, "GPU without scale-up or scale-out bandwidth");
}

double AnalyticCommModel::seconds(CollectiveKind kind, double bytes, const CommGroupShape& group) const {
    TTSIM_ASSERT(group.ranks >= 1 && group.ranks_per_domain >= 1, "empty communication group");
    const int n = group.ranks;
    if (n == 1 || bytes <= 0) return 0.0;
    const int ppn = std::min(group.ranks_per_domain, n);
    const int domains = (n + ppn - 1) / ppn;
    const double us = 1e-6;
    // Ring steps: all-reduce 2(n-1), reduce-scatter / all-gather n-1; of those, inter-domain steps 2(m-1) / m-1.
    const double steps_factor = kind == CollectiveKind::all_reduce ? 2.0 : 1.0;
    const double traffic_factor = steps_factor * (n - 1) / static_cast<double>(n);  // nccl-tests bus factor
    const double bus_bandwidth = domains == 1 ? nvlink_bandwidth_ : std::min(nvlink_bandwidth_, nic_bandwidth_);
    // A multi-domain ring crosses the network on every GPU's own rail NIC, so per-GPU busBW is the smaller of the
    // NVLink share and the NIC (params.md §3.3: DGX H100 multi-node ring ~370-385 GB/s per node of 8 NICs).
    const double inter_steps = steps_factor * (domains - 1);
    const double intra_steps = steps_factor * (n - 1) - inter_steps;
    const double ring = (kRingBaseUs + intra_steps * kNvlinkStepUs + inter_steps * kNetStepUs) * us +
                        traffic_factor * bytes / bus_bandwidth;
    if (kind != CollectiveKind::all_reduce || domains == 1) return ring;

    // Tree all-reduce: latency grows with log2(domains); algbw ratio 0.5 of busBW x 0.92 (NCCL refinement).
    const double tree = (kRingBaseUs + 2.0 * ((ppn - 1) * kNvlinkStepUs + std::log2(domains) * kTreeLevelUs)) * us +
                        2.0 * bytes / (0.92 * bus_bandwidth);
    double best = std::min(ring, tree);
    if (group.sharp) {
        // CollNet (SHARP): reduce-scatter inside the domain over NVLink, each NIC all-reduces its 1/ppn share in the
        // switches (S/ppn up and down once), all-gather inside the domain; NCCL pipelines the stages, so the slowest
        // stage sets the bandwidth.
        const double intra = 2.0 * (ppn - 1) / static_cast<double>(ppn) * bytes / nvlink_bandwidth_;
        const double inter = bytes / ppn / nic_bandwidth_;
        const double collnet = (kCollNetUs + 2.0 * (kNvlinkStepUs + 0.4 * (ppn - 1))) * us +
                               std::max(intra, inter) / kCollNetBandwidthFactor;
        best = std::min(best, collnet);
    }
    return best;
}

}  // namespace ttsim
