// A physical lower bound on any collective's duration, independent of the algorithm: no implementation can
// beat it, so every simulated duration must be >= it (peers.md: "Physical bounds must hold").
//
//   bound = max over cuts of (bytes that must cross the cut) / (line-rate bandwidth of the cut)
//           + a lower bound on the latency of one path between two members.
//
// Cuts: each member GPU (its ports: NVLink, plus its NIC when the group spans several islands; traffic
// inside one NVLink domain never uses the network, by the routing rules) and, when the group spans several
// islands, each island (the NICs of its members: inter-island traffic enters and leaves only through them).
// Bytes, allowing reduction and multicast inside switches (NVLS, SHARP), with S as in collective.hpp:
//   all-reduce      every output element depends on every other member's input: S out and S in per GPU
//                   and per island;
//   reduce-scatter  out (n - 1) S / n (its contributions to the others' shards), in S / n; island:
//                   out (n - q) S / n, in q S / n;
//   all-gather      the mirror of reduce-scatter;
//   broadcast       the root sends S, every other member receives S; islands likewise;
//   all-to-all      out = in = (n - 1) S / n per GPU; q (n - q) S / n per island.
// Latency: the first link out of some member plus the last link into some member (every path has both).
#pragma once

#include "models/collectives/collective.hpp"
#include "models/collectives/group_layout.hpp"
#include "sim/time.hpp"

namespace ttsim {

SimTime collective_lower_bound(const GroupLayout& layout, CollectiveOp op, double bytes);

}  // namespace ttsim
