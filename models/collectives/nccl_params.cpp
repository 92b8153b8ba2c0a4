// NCCL cost-model constants and formulas (nccl_params.hpp). Values: params.md section 3.2, which transcribes
// NVIDIA/nccl v2.22.3 src/graph/tuning.cc (NCCL_2223) and master (NCCL_HEAD) for Blackwell.
#include "models/collectives/nccl_params.hpp"

#include <algorithm>
#include <cmath>

#include "sim/errors.hpp"

namespace ttsim {
namespace {

std::size_t protocol_index(NcclProtocol protocol) {
    switch (protocol) {
        case NcclProtocol::LL: return 0;
        case NcclProtocol::LL128: return 1;
        case NcclProtocol::Simple: return 2;
        case NcclProtocol::Auto: break;
    }
    TTSIM_ASSERT(false, "protocol must be concrete here");
    return 2;
}

std::size_t node_count_index(int nodes) { return nodes <= 1 ? 0 : (nodes == 2 ? 1 : 2); }

// NCCL's log2i: floor(log2(x)) for x >= 1.
int log2_floor(int x) {
    int out = 0;
    while (x > 1) {
        x >>= 1;
        ++out;
    }
    return out;
}

// NVLink line rates per GPU and direction the generations are defined against (params.md section 1).
constexpr double kNvLink4LineGBps = 450.0;
constexpr double kNvLink5LineGBps = 900.0;

double ring_latency_us(const NcclParams& p, NcclProtocol protocol, CollectiveOp op, int ranks, int nodes,
                       double net_overhead_us, double bytes, int channels) {
    if (ranks < 2) return 0.0;
    const std::size_t i = protocol_index(protocol);
    // NCCL_2223 tuning.cc: all-reduce runs 2(n-1) ring steps, reduce-scatter and all-gather n-1. Broadcast is
    // a pipelined chain of n-1 hops in our model (ring.cpp).
    const int steps = op == CollectiveOp::AllReduce ? 2 * (ranks - 1) : ranks - 1;
    const int inter_steps = op == CollectiveOp::AllReduce ? 2 * (nodes - 1) : nodes - 1;
    double intra = p.ring_nvlink_us[i];
    const double inter = p.ring_net_us[i];
    // Multi-node rings pay the host's network overhead on every step (x3 for Simple): NCCL_2223.
    if (nodes > 1) intra = std::max(intra, net_overhead_us * (protocol == NcclProtocol::Simple ? 3.0 : 1.0));
    double lat = p.ring_base_us[i] + (steps - inter_steps) * intra + inter_steps * inter;
    // Multi-node Ring/Simple all-reduce latency x1.4 on SM >= 80 ("plateau effect of ring") once every rank
    // of every channel moves at least 64 bytes: nBytes / (nChannels x nRanks) >= 64 in NCCL_2223
    // ncclTopoGetAlgoTime (at 1,024 ranks and 16 channels, from 1 MiB).
    if (op == CollectiveOp::AllReduce && nodes > 1 && protocol == NcclProtocol::Simple &&
        bytes / (static_cast<double>(channels) * ranks) >= 64.0)
        lat *= 1.4;
    return lat;
}

}  // namespace

GpuGeneration gpu_generation_of(const Topology& topology) {
    for (const GpuInfo& gpu : topology.gpus()) {
        if (gpu.nvlink_up == kNoLink) continue;
        return topology.link(gpu.nvlink_up).bandwidth_bytes_per_s >= 800e9 ? GpuGeneration::Blackwell
                                                                             : GpuGeneration::Hopper;
    }
    return GpuGeneration::Hopper;
}

NcclParams nccl_params(GpuGeneration generation) {
    NcclParams p;
    // NCCL_2223 tuning.cc baseLat and hwLat, [LL, LL128, Simple], microseconds.
    p.ring_base_us = {6.6, 14.0, 8.4};
    p.tree_base_us = {6.8, 14.0, 0.0};
    p.ring_nvlink_us = {0.6, 1.9, 3.4};
    p.tree_nvlink_us = {0.6, 1.25, 28.0};
    p.ring_net_us = {2.7, 4.0, 14.0};
    p.tree_net_us = {5.0, 8.5, 28.0};
    p.nvls_nvlink_us = 25.0;
    p.nvls_net_us = 18.0;
    p.collnet_direct_nvlink_us = 3.7;
    p.collnet_direct_net_us = 31.0;
    if (generation == GpuGeneration::Hopper) {
        p.ll_max_bw = {141.0, 45.0, 35.0};           // NCCL_2223 llMaxBws, Hopper row
        p.per_channel_ring_ll128 = 36.7;              // perChMaxRingLL128Bws
        p.per_channel_tree = {38.7, 41.4, 36.0};      // perChMaxTreeBws
        p.per_channel_tree_ll128 = {36.7, 36.7, 29.0};  // perChMaxTreeLL128Bws
        p.nvlink_effective_gbps = 20.6 * 18;          // SM90_NVLINK_BW x 18 links = 370.8 (matches NT_212)
    } else {
        // NCCL_HEAD (v2.30) Blackwell values; MLPerf v5.0 B200/GB200 runs used NCCL 2.26.
        p.tree_base_us[2] = 8.4;
        p.tree_nvlink_us[2] = 4.0;
        p.tree_net_us[2] = 14.0;
        p.ll_max_bw = {282.0, 90.0, 70.0};
        p.per_channel_ring_ll128 = 40.0;
        p.per_channel_tree = {70.0, 42.8, 24.0};
        p.per_channel_tree_ll128 = {55.6, 31.67, 20.0};
        p.nvlink_effective_gbps = 40.1 * 18;  // SM100_NVLINK_BW x 18 links = 721.8
    }
    return p;
}

double link_capacity(const LinkSpec& link, GpuGeneration generation, const LinkEfficiency& efficiency) {
    double eff = 1.0;
    switch (link.kind) {
        case LinkKind::NvLink:
            if (efficiency.nvlink > 0.0) {
                eff = efficiency.nvlink;
            } else {
                // NCCL's per-link figure over the generation's line rate: 370.8 / 450 = 0.824 (Hopper),
                // 721.8 / 900 = 0.802 (Blackwell).
                const NcclParams p = nccl_params(generation);
                eff = p.nvlink_effective_gbps /
                      (generation == GpuGeneration::Blackwell ? kNvLink5LineGBps : kNvLink4LineGBps);
            }
            break;
        case LinkKind::InfiniBand: eff = efficiency.infiniband; break;
        case LinkKind::Pcie: eff = efficiency.pcie; break;
        case LinkKind::Ethernet: eff = efficiency.ethernet; break;
    }
    return link.bandwidth_bytes_per_s * eff;
}

double nvls_efficiency(GpuGeneration generation) {
    // Derivation in nccl_params.hpp: B = (8 GiB + W) / (8 GiB x 1.75 / 480e9 - 25 us) = 275.04 GB/s (NT_347).
    constexpr double kHopper = 0.7418;
    return generation == GpuGeneration::Hopper ? kHopper : kHopper * 0.74 / 0.85;
}

double nccl_latency_us(const NcclParams& p, CollectiveAlgorithm algorithm, NcclProtocol protocol,
                       const LatencyShape& s, double bytes, int nccl_channels) {
    if (s.ranks < 2) return 0.0;
    const std::size_t i = protocol_index(protocol);
    switch (algorithm) {
        case CollectiveAlgorithm::Ring:
            return ring_latency_us(p, protocol, s.op, s.ranks, s.nodes, s.net_overhead_us, bytes, nccl_channels);
        case CollectiveAlgorithm::Tree:
            // Tree = base + 2((ppn-1) intraLat + log2(nNodes) interLat)   (NCCL_2223)
            return p.tree_base_us[i] +
                   2.0 * ((s.per_node - 1) * p.tree_nvlink_us[i] + log2_floor(s.nodes) * p.tree_net_us[i]);
        case CollectiveAlgorithm::Hierarchical: {
            // Three NCCL calls in sequence: ring reduce-scatter inside the node, ring all-reduce across nodes
            // among same-rail GPUs (one per node), ring all-gather inside the node.
            const double intra = ring_latency_us(p, protocol, CollectiveOp::ReduceScatter, s.per_node, 1,
                                                 s.net_overhead_us, bytes, nccl_channels);
            const double inter = ring_latency_us(p, protocol, CollectiveOp::AllReduce, s.nodes, s.nodes,
                                                 s.net_overhead_us, bytes / std::max(1, s.per_node), nccl_channels);
            return 2.0 * intra + inter;
        }
        case CollectiveAlgorithm::Nvls:
            // NVLS = intraLat (+ interLat multi-node)   (NCCL_2223; base 0)
            return p.nvls_nvlink_us + (s.nodes > 1 ? p.nvls_net_us : 0.0);
        case CollectiveAlgorithm::Sharp:
            // CollNetDirect = base + 2(min(1, ppn-1) intraLat + 0.4 (ppn-1)) + interLat   (NCCL_2223; base 0)
            // NCCL's constant does not depend on the fabric; the tiers above the leaf add their own traversals
            // (sharp_latency.hpp).
            return 2.0 * (std::min(1, s.per_node - 1) * p.collnet_direct_nvlink_us + 0.4 * (s.per_node - 1)) +
                   p.collnet_direct_net_us + s.sharp_tree_climb_us;
        case CollectiveAlgorithm::Direct: {
            // All-to-all is grouped send/recv: every rank posts one send and one receive per peer, n - 1 pairs,
            // and NCCL's tuning model has no all-to-all entry. Each pair is costed as one ring step over the link
            // kind it crosses (hwLat above, NCCL_2223): NVLINK for the ppn - 1 peers in the rank's NVLink domain,
            // NET for the n - ppn others, after one baseLat start-up, pairs counted one after another:
            // LL 0.6 us per NVLink peer and 2.7 us per network peer, Simple 3.4 and 14.0. NCCL spreads peers
            // over its p2p channels, which could overlap some pairs; params.md has no figure for that overlap,
            // so none is assumed. ppn is the largest island's, so ranks of smaller islands (more network peers)
            // may take longer than this.
            const int nvlink_peers = std::min(s.ranks, std::max(1, s.per_node)) - 1;
            const int net_peers = s.ranks - 1 - nvlink_peers;
            return p.ring_base_us[i] + nvlink_peers * p.ring_nvlink_us[i] + net_peers * p.ring_net_us[i];
        }
        case CollectiveAlgorithm::Auto: break;
    }
    TTSIM_ASSERT(false, "latency of an unresolved algorithm");
    return 0.0;
}

double protocol_busbw(const NcclParams& p, CollectiveAlgorithm algorithm, NcclProtocol protocol,
                      const LatencyShape& s, double simple_busbw, int nccl_channels) {
    const std::size_t k = node_count_index(s.nodes);
    const double ch = static_cast<double>(nccl_channels);
    constexpr double G = 1e9;
    switch (algorithm) {
        case CollectiveAlgorithm::Ring:
            // Ring LL: min(llMaxBw, busBw/2); LL128: busBw x 0.92 (x0.7 with one GPU per node), capped at
            // nCh x perChMaxRingLL128Bw   (NCCL_2223)
            if (protocol == NcclProtocol::Simple) return simple_busbw;
            if (protocol == NcclProtocol::LL) return std::min(p.ll_max_bw[k] * G, 0.5 * simple_busbw);
            return std::min(simple_busbw * (s.per_node < 2 ? 0.7 : 0.92), ch * p.per_channel_ring_ll128 * G);
        case CollectiveAlgorithm::Tree: {
            // Tree: min(busBw x 0.92, nCh x perChMaxTreeBw); then LL: min(busBw/3.8, llMaxBw);
            // LL128: min(busBw x (1 node ? 7/9 : 120/128), nCh x perChMaxTreeLL128Bw)   (NCCL_2223)
            const double tree = std::min(simple_busbw * 0.92, ch * p.per_channel_tree[k] * G);
            if (protocol == NcclProtocol::Simple) return tree;
            if (protocol == NcclProtocol::LL) return std::min(tree / 3.8, p.ll_max_bw[k] * G);
            return std::min(tree * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * p.per_channel_tree_ll128[k] * G);
        }
        case CollectiveAlgorithm::Direct:
            // Send/recv runs LL or Simple (NCCL enqueue.cc addP2pToPlan; never LL128). LL's 16-byte lines carry
            // 8 bytes of data and 8 of flags: half the Simple rate, as for rings above.
            if (protocol == NcclProtocol::Simple) return simple_busbw;
            return protocol == NcclProtocol::LL ? 0.5 * simple_busbw : 0.0;
        case CollectiveAlgorithm::Hierarchical:
        case CollectiveAlgorithm::Nvls:
        case CollectiveAlgorithm::Sharp:
            return protocol == NcclProtocol::Simple ? simple_busbw : 0.0;
        case CollectiveAlgorithm::Auto: break;
    }
    return 0.0;
}

}  // namespace ttsim
