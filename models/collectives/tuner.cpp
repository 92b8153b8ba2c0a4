// Algorithm applicability and protocol choice (tuner.hpp).
#include "models/collectives/tuner.hpp"

#include <array>

#include "sim/errors.hpp"

namespace ttsim {

std::string inapplicable_reason(CollectiveAlgorithm algorithm, CollectiveOp op, const GroupLayout& layout,
                                bool sharp_enabled) {
    const bool reduce_like = op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter ||
                             op == CollectiveOp::AllGather;
    switch (algorithm) {
        case CollectiveAlgorithm::Auto: return {};
        case CollectiveAlgorithm::Ring:
            if (op == CollectiveOp::AllToAll) return "all-to-all runs only as 'direct' (point-to-point)";
            return {};
        case CollectiveAlgorithm::Tree:
            if (op != CollectiveOp::AllReduce) return "NCCL's tree implements only all-reduce";
            return {};
        case CollectiveAlgorithm::Hierarchical:
            if (op != CollectiveOp::AllReduce) return "hierarchical is an all-reduce algorithm";
            if (!layout.uniform()) return "hierarchical needs the same number of group GPUs in every node";
            return {};
        case CollectiveAlgorithm::Nvls:
            if (!reduce_like) return "NVLS runs all-reduce, reduce-scatter and all-gather only";
            if (!layout.single_nvlink_domain()) return "NVLS needs every group GPU in one NVLink switch domain";
            return {};
        case CollectiveAlgorithm::Sharp:
            if (op != CollectiveOp::AllReduce) return "SHARP (CollNet) is used for all-reduce only";
            if (layout.island_count() < 2) return "SHARP needs a group spanning at least two nodes";
            if (!layout.infiniband_fabric())
                return std::string(kSharpNeeds) + " (the group's NICs do not attach to InfiniBand switches)";
            if (!sharp_enabled) return std::string(kSharpNeeds) + " (SHARP is off)";
            if (!layout.uniform()) return "SHARP needs the same number of group GPUs in every node";
            return {};
        case CollectiveAlgorithm::Direct:
            if (op != CollectiveOp::AllToAll) return "'direct' is the all-to-all algorithm";
            return {};
    }
    return "unknown algorithm";
}

std::vector<CollectiveAlgorithm> candidate_algorithms(CollectiveOp op, const GroupLayout& layout, bool sharp_enabled) {
    constexpr std::array<CollectiveAlgorithm, 6> kOrder{
        CollectiveAlgorithm::Ring, CollectiveAlgorithm::Nvls, CollectiveAlgorithm::Sharp,
        CollectiveAlgorithm::Tree, CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::Direct};
    std::vector<CollectiveAlgorithm> out;
    for (const CollectiveAlgorithm a : kOrder)
        if (inapplicable_reason(a, op, layout, sharp_enabled).empty()) out.push_back(a);
    return out;
}

ProtocolChoice choose_protocol(const NcclParams& params, CollectiveAlgorithm algorithm, NcclProtocol requested,
                               const LatencyShape& shape, double bytes, double simple_seconds, int nccl_channels) {
    const double factor = bus_bandwidth_factor(shape.op, shape.ranks);
    // The Simple bus bandwidth the simulation reached; protocols scale it (nccl_params.hpp protocol_busbw).
    const double simple_busbw = simple_seconds > 0.0 ? bytes * factor / simple_seconds : 0.0;
    auto evaluate = [&](NcclProtocol p, ProtocolChoice& out) {
        const double busbw = protocol_busbw(params, algorithm, p, shape, simple_busbw, nccl_channels);
        if (simple_seconds > 0.0 && !(busbw > 0.0)) return false;
        out.protocol = p;
        out.latency_us = nccl_latency_us(params, algorithm, p, shape, bytes, nccl_channels);
        out.bandwidth_seconds = simple_seconds > 0.0 ? simple_seconds * (simple_busbw / busbw) : 0.0;
        return true;
    };
    ProtocolChoice best;
    // Send/recv protocol is NCCL's size rule, not a time comparison: LL up to kP2pLlThresholdBytes per peer
    // (each rank sends S / n to each peer, direct.cpp), Simple above.
    if (requested == NcclProtocol::Auto && algorithm == CollectiveAlgorithm::Direct && shape.ranks > 0)
        requested = bytes / shape.ranks <= kP2pLlThresholdBytes ? NcclProtocol::LL : NcclProtocol::Simple;
    if (requested != NcclProtocol::Auto) {
        if (!evaluate(requested, best))
            throw InputError("protocol " + std::string(to_string(requested)) + " does not run on algorithm '" +
                             std::string(to_string(algorithm)) + "' (it runs " +
                             (algorithm == CollectiveAlgorithm::Direct ? "LL and Simple" : "Simple") + " only)");
        return best;
    }
    bool have = false;
    // Simple first: it wins ties (NCCL's default for large messages).
    for (const NcclProtocol p : {NcclProtocol::Simple, NcclProtocol::LL128, NcclProtocol::LL}) {
        ProtocolChoice c;
        if (!evaluate(p, c)) continue;
        if (!have || c.total_seconds() < best.total_seconds()) best = c;
        have = true;
    }
    TTSIM_ASSERT(have, "no protocol runs the algorithm");
    return best;
}

}  // namespace ttsim
