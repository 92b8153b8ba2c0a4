// Which algorithms apply to a collective, and which protocol NCCL would run, in the spirit of NCCL's tuner
// (NCCL_2223 src/graph/tuning.cc + enqueue.cc): every applicable (algorithm, protocol) pair gets a predicted
// time and the fastest wins. The bandwidth part of the prediction comes from our flow simulation rather than
// from NCCL's speed tables; the latency part and the protocol factors are NCCL's (nccl_params.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/collectives/group_layout.hpp"
#include "models/collectives/nccl_params.hpp"

namespace ttsim {

// Start of the reason SHARP is refused for want of an InfiniBand fabric or of SHARP being on.
inline constexpr std::string_view kSharpNeeds =
    "SHARP in-network reduction needs an InfiniBand switch fabric with SHARP enabled";

// Applicability rules (NCCL-like):
//  ring          all-reduce, reduce-scatter, all-gather, broadcast
//  tree          all-reduce (NCCL's trees only implement it)
//  hierarchical  all-reduce, same number of members in every island
//  nvls          all-reduce, reduce-scatter, all-gather, all members in one NVLink switch domain
//  sharp         all-reduce over >= 2 islands with the same number of members each, every member's NIC on an
//                InfiniBand switch (GroupLayout::infiniband_fabric: not Ethernet, not without switches), and
//                only when SHARP is enabled (option). This is the one place the rule lives: the CLI flags,
//                scenarios and training predictions all reach it through inapplicable_reason/candidate_algorithms.
//  direct        all-to-all (the only algorithm for it)
// Returns "" when `algorithm` applies, otherwise the reason (for the InputError of an explicit request), in
// words a user can act on (no internal names; callers add the flag or key that turns SHARP on).
std::string inapplicable_reason(CollectiveAlgorithm algorithm, CollectiveOp op, const GroupLayout& layout,
                                bool sharp_enabled);

// Candidates for `auto`, in tie-break order (the earlier wins a tie).
std::vector<CollectiveAlgorithm> candidate_algorithms(CollectiveOp op, const GroupLayout& layout, bool sharp_enabled);

struct ProtocolChoice {
    NcclProtocol protocol = NcclProtocol::Simple;
    double latency_us = 0.0;
    double bandwidth_seconds = 0.0;  // after the protocol's bandwidth factor
    double total_seconds() const { return latency_us * 1e-6 + bandwidth_seconds; }
};

// Picks the protocol (or evaluates the requested one) for an algorithm whose Simple-protocol bandwidth time
// is `simple_seconds` for `bytes`. InputError when a requested protocol does not run on the algorithm.
ProtocolChoice choose_protocol(const NcclParams& params, CollectiveAlgorithm algorithm, NcclProtocol requested,
                               const LatencyShape& shape, double bytes, double simple_seconds, int nccl_channels);

}  // namespace ttsim
