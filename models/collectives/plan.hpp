// A collective as the flow network sees it: a sequence of phases; each phase is one set of flows that start
// together and share links max-min, simulated ONCE, then repeated `repeat` times (all the steps of a ring
// are identical, so one step stands for all of them). This is what keeps a 16k-GPU all-reduce at O(flows of
// one step) instead of O(ranks x steps) events (peers.md, "Cost grows as N^2").
//
// The builders (one file per algorithm) turn (group layout, op, bytes) into a plan. They only describe
// traffic; latency terms come from the NCCL model (nccl_params.hpp), the run from phase_runner.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/collectives/group_layout.hpp"
#include "topologies/routing.hpp"

namespace ttsim {

// Flows in compressed-row form: flow i crosses links[offsets[i] .. offsets[i+1]) and carries bytes[i].
struct FlowSet {
    std::vector<std::uint32_t> offsets{0};
    std::vector<LinkId> links;
    std::vector<double> bytes;

    void add(std::span<const LinkId> path, double flow_bytes) {
        if (!(flow_bytes > 0.0) || path.empty()) return;  // nothing to move, or a GPU to itself
        links.insert(links.end(), path.begin(), path.end());
        offsets.push_back(static_cast<std::uint32_t>(links.size()));
        bytes.push_back(flow_bytes);
    }
    std::size_t size() const { return bytes.size(); }
    std::span<const LinkId> path(std::size_t i) const {
        return {links.data() + offsets[i], links.data() + offsets[i + 1]};
    }
};

struct PlanPhase {
    std::string name;
    std::int64_t repeat = 1;  // identical steps run one after the other
    FlowSet flows;
};

struct CollectivePlan {
    std::vector<PlanPhase> phases;
    // Extra bandwidth time as a fraction of the simulated one: pipeline fill and drain (NVLS, see
    // kNvlsPipelineWindowBytes). 0 for algorithms whose steps are simulated explicitly.
    double pipeline_fill_fraction = 0.0;
};

// Builders. `bytes` is S (collective.hpp). Each assumes the algorithm applies (tuner.hpp checks that).
CollectivePlan build_ring_plan(const GroupLayout& layout, CollectiveOp op, double bytes, Router& router);
CollectivePlan build_tree_plan(const GroupLayout& layout, double bytes, Router& router);
CollectivePlan build_hierarchical_plan(const GroupLayout& layout, double bytes, Router& router);
CollectivePlan build_nvls_plan(const GroupLayout& layout, CollectiveOp op, double bytes, double nvls_efficiency);
// The NVLS plan's pipeline_fill_fraction for S = `bytes`: the one part of a plan that is not linear in S.
double nvls_pipeline_fill_fraction(CollectiveOp op, double bytes);
CollectivePlan build_sharp_plan(const GroupLayout& layout, double bytes, Router& router, double sharp_efficiency);
CollectivePlan build_direct_plan(const GroupLayout& layout, double bytes, Router& router);

// NCCL's CollNetDirect bandwidth factor on SM90 (NCCL_2223 tuning.cc: busBw x 0.85): SHARP's aggregation
// protocol moves payload at 85% of the link's NCCL rate. Applied as wire bytes = payload / 0.85.
inline constexpr double kSharpEfficiency = 0.85;

inline int positive_mod(int a, int m) {
    const int r = a % m;
    return r < 0 ? r + m : r;
}

}  // namespace ttsim
