// NCCL's cost-model constants and the formulas that use them: per-step latencies, protocol bandwidth
// factors and caps, and the link efficiencies NCCL achieves on each kind of link.
// Everything comes from params.md section 3 (NVIDIA/nccl v2.22.3 src/graph/tuning.cc, topo.h, search.cc:
// source key NCCL_2223; v2.30 HEAD changes for Blackwell: NCCL_HEAD) unless a comment says otherwise.
#pragma once

#include <array>
#include <cstdint>

#include "models/collectives/collective.hpp"
#include "topologies/topology.hpp"

namespace ttsim {

enum class GpuGeneration : std::uint8_t { Hopper, Blackwell };

// Which NCCL constants apply to a topology: Blackwell when the GPUs' NVLink runs at NVLink5 rates
// (>= 800 GB/s per direction), otherwise Hopper (every preset is H100/H200 or B200/GB200).
GpuGeneration gpu_generation_of(const Topology& topology);

// [LL, LL128, Simple]
using ProtocolTable = std::array<double, 3>;
// [nNodes == 1, nNodes == 2, nNodes > 2]
using NodeCountTable = std::array<double, 3>;

struct NcclParams {
    // Latencies in microseconds (NCCL_2223 tuning.cc baseLat / hwLat; Blackwell Tree Simple from NCCL_HEAD).
    ProtocolTable ring_base_us, tree_base_us;
    ProtocolTable ring_nvlink_us, tree_nvlink_us;
    ProtocolTable ring_net_us, tree_net_us;
    double nvls_nvlink_us = 0, nvls_net_us = 0;            // NVLS Simple
    double collnet_direct_nvlink_us = 0, collnet_direct_net_us = 0;  // CollNetDirect Simple
    // Bandwidth caps in GB/s.
    NodeCountTable ll_max_bw;               // whole-collective cap for LL
    double per_channel_ring_ll128 = 0;      // per channel
    NodeCountTable per_channel_tree;        // per channel, Simple
    NodeCountTable per_channel_tree_ll128;  // per channel
    // NCCL's achievable NVLink bandwidth per GPU and direction (GB/s): per-link figure x 18 links.
    double nvlink_effective_gbps = 0;
};

NcclParams nccl_params(GpuGeneration generation);

// Link efficiencies: the fraction of a link's line rate that NCCL's Simple protocol sustains. The flow
// network runs every link at line rate x efficiency, so the simulated bandwidth is the achievable one.
struct LinkEfficiency {
    double nvlink = 0.0;      // 0 = from the GPU generation (see link_capacity)
    double infiniband = 0.96;  // 48 of 50 GB/s per NDR NIC: NCCL_2223 search.cc sm90SpeedArrayInter max 48.0; NT_267 (48-49), NT_290 (46-48)
    double pcie = 0.83;        // 52 of 63 GB/s: H2D measured over PCIe Gen5 x16 (AZ_H200 nvbandwidth, params.md section 2)
    double ethernet = 0.90;    // estimate (RoCE framing and congestion control; no source in params.md)
};

// Capacity (bytes/s) the flow network gives one directed link.
double link_capacity(const LinkSpec& link, GpuGeneration generation, const LinkEfficiency& efficiency);

// ---- NVLS calibration ----
// NVLS moves each GPU's data up into the NVSwitch once and the result down once; the rate NCCL reaches doing
// that, relative to NCCL's effective NVLink rate (370.8 GB/s on Hopper), is this efficiency. Calibrated to
// ONE published figure: 8x H100, 8 GiB all-reduce, busbw 480 GB/s = algbw 274.3 GB/s (NT_212, NT_347).
// With the pipeline-window term below, t(8 GiB) = 25 us + (S + W) / B must equal 8 GiB x 1.75 / 480 GB/s,
// which gives B = 275.04 GB/s, i.e. 275.04 / 370.8 = 0.7418. Blackwell: scaled by NCCL_HEAD's own ratio of
// NVLS efficiencies, 0.74 / 0.85 (no published B200 NVLS curve in params.md).
double nvls_efficiency(GpuGeneration generation);
// NVLS all-reduce is a two-stage pipeline per channel (multimem.ld_reduce from the switch, then
// multimem.st of the result back through it). Until the pipeline is full, and while it drains, only one stage
// moves data: fill + drain cost one window of W = chunk (128 KiB, NCCL_NVLS_CHUNKSIZE default) x NCCL_STEPS
// (8 slots per channel) x 16 NVLS channels = 16 MiB at the pipeline rate. Below W the whole message is one
// window and the stages serialise (time 2 S / B). This is the only model of the size dependence; the 8x H200
// curve (AZ_H200) is NOT fitted, it is a held-out check (tests/unit/test_collective.cpp).
inline constexpr double kNvlsPipelineWindowBytes = 128.0 * 1024 * 8 * 16;

// ---- latency and protocol formulas (params.md 3.2) ----
struct LatencyShape {
    CollectiveOp op = CollectiveOp::AllReduce;
    int ranks = 0;    // n
    int nodes = 0;    // NCCL's nNodes: NVLink domains spanned
    int per_node = 0; // NCCL's ppn: group GPUs per NVLink domain (largest)
    double net_overhead_us = 1.0;  // per inter-node ring step: 1 us Intel hosts, 2 us AMD (NCCL_2223)
    // Latency (us) the switch tiers above the leaf add to one SHARP aggregation: sharp_tree_climb_us
    // (sharp_latency.hpp). 0 = a tree rooted at the leaf, NCCL's own constant alone; being the smallest value,
    // it keeps a latency computed without the topology a lower bound.
    double sharp_tree_climb_us = 0.0;
};

// NCCL's largest per-peer message sent with the LL protocol by grouped send/recv (all-to-all): 16 KiB,
// NCCL_P2P_LL_THRESHOLD's default (NCCL src/enqueue.cc, addP2pToPlan; params.md does not list it). Larger
// per-peer messages go Simple.
inline constexpr double kP2pLlThresholdBytes = 16384.0;

// NCCL latency term (microseconds) of an algorithm/protocol. `protocol` must be concrete; `nccl_channels` is
// the communicator's channel count (CollectiveOptions::nccl_channels), which sets where the multi-node ring
// Simple all-reduce latency takes NCCL's x1.4 plateau factor.
double nccl_latency_us(const NcclParams& params, CollectiveAlgorithm algorithm, NcclProtocol protocol,
                       const LatencyShape& shape, double bytes, int nccl_channels);

// NCCL's bus bandwidth for a protocol, given the bus bandwidth the Simple protocol reaches physically
// (`simple_busbw`, bytes/s, from the flow simulation). 0 when the algorithm does not run that protocol.
double protocol_busbw(const NcclParams& params, CollectiveAlgorithm algorithm, NcclProtocol protocol,
                      const LatencyShape& shape, double simple_busbw, int nccl_channels);

}  // namespace ttsim
