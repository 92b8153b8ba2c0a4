// NVLS (NVLink SHARP): the NVSwitch reduces and multicasts. Each GPU moves its data over its own NVLink
// port only, once up and once down, and no GPU-to-GPU hop exists:
//   all-reduce      up S (ld_reduce reads every GPU's buffer)      down S (the result, multicast)
//   reduce-scatter  up S                                            down S / n (its reduced shard)
//   all-gather      up S / n (its shard, multicast by the switch)  down S
// A flow is then one link long (the port), carrying the bytes divided by the NVLS efficiency
// (nccl_params.hpp: calibrated to 8x H100 at 8 GiB, NT_212 / NT_347). All-reduce adds the two-stage
// pipeline fill/drain window (kNvlsPipelineWindowBytes). One NVLink domain only (tuner.hpp).
#include <algorithm>

#include "models/collectives/nccl_params.hpp"
#include "models/collectives/plan.hpp"

namespace ttsim {

CollectivePlan build_nvls_plan(const GroupLayout& layout, CollectiveOp op, double bytes, double efficiency) {
    const double n = layout.size();
    double up = bytes, down = bytes;
    if (op == CollectiveOp::ReduceScatter) down = bytes / n;
    if (op == CollectiveOp::AllGather) up = bytes / n;
    PlanPhase phase;
    phase.name = "nvls up+down";
    for (const int r : layout.ranks()) {
        const GpuInfo& gpu = layout.topology().gpu(r);
        const LinkId up_link = gpu.nvlink_up, down_link = gpu.nvlink_down;
        phase.flows.add(std::span<const LinkId>(&up_link, 1), up / efficiency);
        phase.flows.add(std::span<const LinkId>(&down_link, 1), down / efficiency);
    }
    CollectivePlan plan;
    plan.phases.push_back(std::move(phase));
    plan.pipeline_fill_fraction = nvls_pipeline_fill_fraction(op, bytes);
    return plan;
}

double nvls_pipeline_fill_fraction(CollectiveOp op, double bytes) {
    if (op != CollectiveOp::AllReduce || !(bytes > 0.0)) return 0.0;
    return std::min(bytes, kNvlsPipelineWindowBytes) / bytes;
}

}  // namespace ttsim
