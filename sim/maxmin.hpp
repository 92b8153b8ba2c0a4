// Max-min fair bandwidth sharing: the rate model behind every flow-level network simulation in ttsim.
//
// The problem. Links l have capacities c_l (bytes/s). Flows f each cross a list of links (their path) and
// may carry a rate cap m_f (bytes/s; +infinity when uncapped). We want rates r_f >= 0 with
//     sum over flows f crossing l of r_f  <=  c_l      for every link l      (feasibility)
//     r_f <= m_f                                      for every flow f
// and, among feasible allocations, the max-min fair one: no flow's rate can be raised without lowering
// the rate of another flow whose rate is already smaller or equal. It exists and is unique, and it is
// what TCP-like congestion control and credit-based fabrics converge to, to first order.
//
// Characterisation (the "bottleneck" property). An allocation is max-min fair iff every flow f either
// sits at its cap, or crosses a bottleneck link: a link that is saturated (its flows use all of c_l) and
// on which f has the largest rate. Proof sketch: to raise f we must free capacity on each of its
// saturated links; on its bottleneck every other flow is <= r_f, so one of them would have to drop.
//
// Progressive filling computes it. Raise all unfixed flows together at one common level t. The first
// constraint to bind is either a link, at t_l = (remaining capacity of l) / (number of unfixed flows on l),
// or a cap. At the smallest such level, fix every flow on every binding link at t (the link is now
// saturated, and those flows all have the same, largest, rate on it: the bottleneck property holds for
// them) and every flow whose cap binds at its cap. Subtract the fixed rates from the remaining capacity of
// every link the fixed flows cross, and repeat with the remaining flows, whose level only grows. Each
// round fixes at least one flow, so it terminates; each fixed flow satisfies the bottleneck property,
// so the result is max-min fair.
//
// Cost. One round per distinct level. Links waiting to bind sit in a binary heap keyed by their level,
// re-keyed only when a flow crossing them gets fixed, so a solve costs O(nnz log L) for nnz
// (flow, link) incidences and L links, whatever the number of rounds. In symmetric collectives nearly all
// flows share one level, so a solve is one round over arrays laid out contiguously (CSR).
//
// Levels that differ only by floating-point noise (relative 1e-12) are grouped into one round, so that
// flows meant to be equal end up bit-for-bit equal. The grouping is deterministic: the threshold is
// computed from the exact smallest level, and ties are broken by link id.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace ttsim {

// One sharing problem in compressed sparse row form: flow f's path is
// path_links[path_offsets[f] .. path_offsets[f + 1]). clear_flows() keeps the links and all allocated
// memory, so a caller in a hot loop rebuilds the flow set without allocating.
class MaxMinProblem {
public:
    static constexpr double kUncapped = std::numeric_limits<double>::infinity();

    // Adds a link of `capacity_bytes_per_s` (finite, >= 0) and returns its id (0, 1, 2, ...).
    std::uint32_t add_link(double capacity_bytes_per_s);
    // Adds a flow crossing `links` (ids of added links; a link listed twice is loaded twice) with an
    // optional rate cap in bytes/s. Returns its id (0, 1, 2, ...). A flow with an empty path must be capped.
    std::uint32_t add_flow(std::span<const std::uint32_t> links, double rate_cap_bytes_per_s = kUncapped);

    void clear_flows();  // drops every flow, keeps the links
    void clear();        // drops links and flows
    void reserve(std::size_t flows, std::size_t incidences);

    std::size_t link_count() const { return link_capacity_.size(); }
    std::size_t flow_count() const { return path_offsets_.size() - 1; }
    std::size_t incidence_count() const { return path_links_.size(); }
    double link_capacity(std::uint32_t link) const { return link_capacity_[link]; }
    double flow_cap(std::uint32_t flow) const { return flow_cap_[flow]; }
    std::span<const std::uint32_t> flow_path(std::uint32_t flow) const {
        return {path_links_.data() + path_offsets_[flow], path_links_.data() + path_offsets_[flow + 1]};
    }

private:
    friend class MaxMinSolver;
    std::vector<double> link_capacity_;          // bytes/s, per link
    std::vector<std::uint32_t> path_offsets_{0};  // flow_count() + 1 entries
    std::vector<std::uint32_t> path_links_;      // concatenated paths
    std::vector<double> flow_cap_;               // bytes/s, per flow; kUncapped when none
};

// Progressive-filling solver. Holds its scratch buffers between calls: keep one per hot loop.
class MaxMinSolver {
public:
    // Writes the max-min fair rate of every flow (bytes/s) into `rates`, resized to problem.flow_count().
    // Throws InternalError for an uncapped flow with an empty path (its fair rate would be infinite) or a
    // malformed problem.
    void solve(const MaxMinProblem& problem, std::vector<double>& rates);

    // Number of distinct levels (filling rounds) of the last solve: 1 for a fully symmetric problem.
    std::size_t last_round_count() const { return rounds_; }

    // Relative width within which two binding levels count as equal and are fixed in the same round.
    static constexpr double kLevelGroupingTolerance = 1e-12;

private:
    struct HeapEntry {
        double level;          // bytes/s: remaining capacity / unfixed flows, when pushed
        std::uint32_t link;
        std::uint32_t version;  // link_version_ when pushed; stale entries are skipped
    };
    void fix_flow(const MaxMinProblem& problem, std::uint32_t flow, double rate, std::vector<double>& rates);
    void push_link(std::uint32_t link);

    // Transposed incidence (link -> flows crossing it), rebuilt per solve.
    std::vector<std::uint32_t> link_offsets_;
    std::vector<std::uint32_t> link_flows_;
    std::vector<std::uint32_t> fill_cursor_;
    // Per-link state of the filling.
    std::vector<double> remaining_capacity_;   // bytes/s not yet given to fixed flows
    std::vector<std::uint32_t> unfixed_count_;  // unfixed flow incidences on the link
    std::vector<std::uint32_t> link_version_;
    std::vector<std::uint8_t> link_dirty_;
    std::vector<std::uint32_t> dirty_links_;
    std::vector<HeapEntry> heap_;
    std::vector<std::uint32_t> binding_links_;
    // Per-flow state.
    std::vector<std::uint8_t> flow_fixed_;
    std::vector<std::uint32_t> capped_flows_by_cap_;
    std::size_t rounds_ = 0;
};

}  // namespace ttsim
