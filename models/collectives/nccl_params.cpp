// NCCL cost-model formulas (nccl_params.hpp). Constants: models/data/nccl.yaml via nccl_data.hpp (params.md
// section 3.2, which transcribes NVIDIA/nccl v2.22.3 src/graph/tuning.cc (NCCL_2223) and master (NCCL_HEAD)).
#include "models/collectives/nccl_params.hpp"

#include <algorithm>
#include <cmath>

#include "models/collectives/nccl_data.hpp"
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
    if (nodes > 1)
        intra = std::max(intra, net_overhead_us * (protocol == NcclProtocol::Simple
                                                       ? p.formula.ring_simple_net_overhead_factor : 1.0));
    double lat = p.ring_base_us[i] + (steps - inter_steps) * intra + inter_steps * inter;
    // Multi-node Ring/Simple all-reduce latency x1.4 on SM >= 80 ("plateau effect of ring") once every rank
    // of every channel moves at least 64 bytes: nBytes / (nChannels x nRanks) >= 64 in NCCL_2223
    // ncclTopoGetAlgoTime (at 1,024 ranks and 16 channels, from 1 MiB).
    if (op == CollectiveOp::AllReduce && nodes > 1 && protocol == NcclProtocol::Simple &&
        bytes / (static_cast<double>(channels) * ranks) >= p.formula.ring_plateau_min_bytes)
        lat *= p.formula.ring_plateau_factor;
    return lat;
}

}  // namespace

GpuGeneration gpu_generation_of(const Topology& topology) {
    const double blackwell_from = nccl_reference().blackwell_from_nvlink_bytes_per_s;
    for (const GpuInfo& gpu : topology.gpus()) {
        if (gpu.nvlink_up == kNoLink) continue;
        return topology.link(gpu.nvlink_up).bandwidth_bytes_per_s >= blackwell_from ? GpuGeneration::Blackwell
                                                                                     : GpuGeneration::Hopper;
    }
    return GpuGeneration::Hopper;
}

NcclParams nccl_params(GpuGeneration generation) { return nccl_reference().generation(generation).params; }

double default_link_efficiency(LinkKind kind) {
    const NcclReference& ref = nccl_reference();
    switch (kind) {
        case LinkKind::InfiniBand: return ref.infiniband_efficiency;
        case LinkKind::Pcie: return ref.pcie_efficiency;
        case LinkKind::Ethernet: return ref.ethernet_efficiency;
        case LinkKind::NvLink: break;
    }
    return 0.0;   // NVLink: from the generation (link_capacity)
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
                const NcclGenerationData& g = nccl_reference().generation(generation);
                eff = g.params.nvlink_effective_gbps / g.nvlink_line_rate_gbps;
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
    return nccl_reference().generation(generation).nvls_efficiency;
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
            return 2.0 * (std::min(1, s.per_node - 1) * p.collnet_direct_nvlink_us + p.formula.collnet_direct_per_peer_us * (s.per_node - 1)) +
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
    const NcclFormulaFactors& f = p.formula;
    constexpr double G = 1e9;   // the tables are in GB/s
    switch (algorithm) {
        case CollectiveAlgorithm::Ring:
            // Ring LL: min(llMaxBw, busBw/2); LL128: busBw x 0.92 (x0.7 with one GPU per node), capped at
            // nCh x perChMaxRingLL128Bw   (NCCL_2223)
            if (protocol == NcclProtocol::Simple) return simple_busbw;
            if (protocol == NcclProtocol::LL) return std::min(p.ll_max_bw[k] * G, f.ring_ll_of_simple * simple_busbw);
            return std::min(simple_busbw * (s.per_node < 2 ? f.ring_ll128_of_simple_one_gpu_per_node
                                                           : f.ring_ll128_of_simple),
                            ch * p.per_channel_ring_ll128 * G);
        case CollectiveAlgorithm::Tree: {
            // Tree: min(busBw x 0.92, nCh x perChMaxTreeBw); then LL: min(busBw/3.8, llMaxBw);
            // LL128: min(busBw x (1 node ? 7/9 : 120/128), nCh x perChMaxTreeLL128Bw)   (NCCL_2223)
            const double tree = std::min(simple_busbw * f.tree_simple_of_busbw, ch * p.per_channel_tree[k] * G);
            if (protocol == NcclProtocol::Simple) return tree;
            if (protocol == NcclProtocol::LL) return std::min(tree / f.tree_ll_divisor, p.ll_max_bw[k] * G);
            return std::min(tree * (s.nodes == 1 ? f.tree_ll128_one_node : f.tree_ll128_multi_node),
                            ch * p.per_channel_tree_ll128[k] * G);
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
