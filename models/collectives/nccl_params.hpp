// NCCL's cost-model constants and the formulas that use them: per-step latencies, protocol bandwidth
// factors and caps, and the link efficiencies NCCL achieves on each kind of link.
// The constants are data: models/data/nccl.yaml, each value with its source (params.md section 3: NVIDIA/nccl
// v2.22.3 src/graph/tuning.cc, topo.h, search.cc = NCCL_2223; v2.30 HEAD changes for Blackwell = NCCL_HEAD), read
// once per process (nccl_data.hpp). This header keeps the formulas and the API the collectives use.
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

// Factors of NCCL's time formulas (NCCL_2223 tuning.cc; nccl.yaml `formula:`), shared by both generations.
struct NcclFormulaFactors {
    double ring_ll_of_simple = 0;                      // Ring LL busBw = min(llMaxBw, busBw x this)
    double ring_ll128_of_simple = 0;                   // Ring LL128 busBw x this ...
    double ring_ll128_of_simple_one_gpu_per_node = 0;  // ... or x this with one GPU per node
    double tree_simple_of_busbw = 0;                   // Tree Simple busBw x this
    double tree_ll_divisor = 0;                        // Tree LL busBw / this
    double tree_ll128_one_node = 0, tree_ll128_multi_node = 0;   // Tree LL128 busBw x this
    double ring_simple_net_overhead_factor = 0;        // multi-node ring step pays net overhead x this (Simple)
    double ring_plateau_factor = 0;                    // multi-node Ring/Simple all-reduce latency x this ...
    double ring_plateau_min_bytes = 0;                 // ... once bytes / (channels x ranks) >= this
    double collnet_direct_per_peer_us = 0;             // CollNetDirect latency per extra GPU of the node, us
};

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
    NcclFormulaFactors formula;
};

// The generation's constants from models/data/nccl.yaml (loaded on first use; InputError if malformed).
NcclParams nccl_params(GpuGeneration generation);

// The default NCCL-achievable fraction of a link kind's line rate (nccl.yaml link_efficiency; sources there).
// NvLink has none: its efficiency comes from the generation (link_capacity).
double default_link_efficiency(LinkKind kind);

// Link efficiencies: the fraction of a link's line rate that NCCL's Simple protocol sustains. The flow
// network runs every link at line rate x efficiency, so the simulated bandwidth is the achievable one.
struct LinkEfficiency {
    double nvlink = 0.0;      // 0 = from the GPU generation (see link_capacity)
    double infiniband = default_link_efficiency(LinkKind::InfiniBand);  // 48 of 50 GB/s per NDR NIC (nccl.yaml)
    double pcie = default_link_efficiency(LinkKind::Pcie);              // 52 of 63 GB/s, PCIe Gen5 x16 H2D (nccl.yaml)
    double ethernet = default_link_efficiency(LinkKind::Ethernet);      // Spectrum-X's 95 % (nccl.yaml)
};

// Capacity (bytes/s) the flow network gives one directed link.
double link_capacity(const LinkSpec& link, GpuGeneration generation, const LinkEfficiency& efficiency);

// ---- NVLS calibration ----
// NVLS moves each GPU's data up into the NVSwitch once and the result down once; the rate NCCL reaches doing
// that, relative to NCCL's effective NVLink rate (370.8 GB/s on Hopper), is this efficiency (nccl.yaml
// nvls_efficiency). Calibrated to ONE published figure: 8x H100, 8 GiB all-reduce, busbw 480 GB/s = algbw 274.3 GB/s (NT_212, NT_347).
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
