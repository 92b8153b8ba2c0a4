// Analytic NCCL-style collective durations (alpha-beta, NCCL v2.22.3 constants, params.md §3.2). NOT what
// predictions use for systems with a preset topology: prepare_with_layout() simulates collectives with the
// CollectiveSimulator on build_preset() (predict.cpp collective_times). This model remains only as the fallback for
// GPUs without a preset topology (A100, MI300X, hypothetical GPU variants of the planning layer's what-if sweeps;
// the prediction warns "no preset topology for ...") and for models/trace's link-utilisation estimate.
#pragma once

#include <cstdint>
#include <string>

#include "models/hardware/gpu_catalog.hpp"

namespace ttsim {

enum class CollectiveKind { all_reduce, reduce_scatter, all_gather };
const char* to_string(CollectiveKind kind);

// The ranks taking part: `ranks` in total, `ranks_per_domain` of them per NVLink domain (node or NVL72 rack).
struct CommGroupShape {
    int ranks = 1;
    int ranks_per_domain = 1;   // ranks == ranks_per_domain: the whole group is inside one NVLink domain
    bool sharp = false;         // InfiniBand SHARP (NCCL CollNet) available for the inter-domain all-reduce
};

class CommCostModel {
public:
    virtual ~CommCostModel() = default;
    // Seconds for one collective of `bytes` (total buffer size, nccl-tests convention) over `group`.
    virtual double seconds(CollectiveKind kind, double bytes, const CommGroupShape& group) const = 0;
};

// NCCL-style model for one GPU type (params.md §2-3):
//  - intra-domain ring over NVLink at NCCL's effective bandwidth (links x NCCL per-link GB/s; 370.8 GB/s H100);
//  - inter-domain: each GPU has its own NIC (rail-optimised DGX), busBW = min(NVLink, NIC x 0.96) per GPU
//    (NCCL's 48 of 50 GB/s NDR); all-reduce picks the fastest of ring, tree and (with SHARP) CollNet;
//  - latencies: NCCL v2.22.3 Simple-protocol constants (base 8.4 us ring, 3.4 us NVLink step, 14 us NET step;
//    tree NET 28 us per level; CollNet 31 us).
class AnalyticCommModel final : public CommCostModel {
public:
    explicit AnalyticCommModel(const GpuSpec& gpu);
    double seconds(CollectiveKind kind, double bytes, const CommGroupShape& group) const override;

    double nvlink_bus_bandwidth() const { return nvlink_bandwidth_; }   // bytes/s per GPU
    double nic_bus_bandwidth() const { return nic_bandwidth_; }         // bytes/s per GPU

private:
    double nvlink_bandwidth_ = 0;
    double nic_bandwidth_ = 0;
};

}  // namespace ttsim
