// Progressive filling for max-min fair rates; the math is explained in maxmin.hpp.
#include "sim/maxmin.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/errors.hpp"

namespace ttsim {

std::uint32_t MaxMinProblem::add_link(double capacity_bytes_per_s) {
    TTSIM_ASSERT(std::isfinite(capacity_bytes_per_s) && capacity_bytes_per_s >= 0.0,
                 "link capacity must be finite and >= 0, got " + std::to_string(capacity_bytes_per_s));
    TTSIM_ASSERT(link_capacity_.size() < std::numeric_limits<std::uint32_t>::max(), "too many links");
    link_capacity_.push_back(capacity_bytes_per_s);
    return static_cast<std::uint32_t>(link_capacity_.size() - 1);
}

std::uint32_t MaxMinProblem::add_flow(std::span<const std::uint32_t> links, double rate_cap_bytes_per_s) {
    TTSIM_ASSERT(rate_cap_bytes_per_s >= 0.0, "flow rate cap must be >= 0 (and not NaN)");
    TTSIM_ASSERT(!links.empty() || std::isfinite(rate_cap_bytes_per_s),
                 "a flow crossing no link needs a finite rate cap, else its fair rate is infinite");
    TTSIM_ASSERT(path_links_.size() + links.size() < std::numeric_limits<std::uint32_t>::max(),
                 "too many flow-link incidences");
    for (const std::uint32_t link : links) {
        TTSIM_ASSERT(link < link_capacity_.size(), "flow path names unknown link " + std::to_string(link));
    }
    path_links_.insert(path_links_.end(), links.begin(), links.end());
    path_offsets_.push_back(static_cast<std::uint32_t>(path_links_.size()));
    flow_cap_.push_back(rate_cap_bytes_per_s);
    return static_cast<std::uint32_t>(flow_cap_.size() - 1);
}

void MaxMinProblem::clear_flows() {
    path_offsets_.assign(1, 0);
    path_links_.clear();
    flow_cap_.clear();
}

void MaxMinProblem::clear() {
    clear_flows();
    link_capacity_.clear();
}

void MaxMinProblem::reserve(std::size_t flows, std::size_t incidences) {
    path_offsets_.reserve(flows + 1);
    flow_cap_.reserve(flows);
    path_links_.reserve(incidences);
}

namespace {

// Min-heap order on (level, link id): the smallest level first, ties by link id for a deterministic order.
struct LaterEntry {
    template <class Entry>
    bool operator()(const Entry& a, const Entry& b) const {
        if (a.level != b.level) return a.level > b.level;
        return a.link > b.link;
    }
};

}  // namespace

void MaxMinSolver::push_link(std::uint32_t link) {
    // Floating-point subtraction can leave a hair below zero; a link never offers negative capacity.
    const double remaining = std::max(remaining_capacity_[link], 0.0);
    heap_.push_back(HeapEntry{remaining / unfixed_count_[link], link, link_version_[link]});
    std::push_heap(heap_.begin(), heap_.end(), LaterEntry{});
}

void MaxMinSolver::fix_flow(const MaxMinProblem& problem, std::uint32_t flow, double rate,
                            std::vector<double>& rates) {
    rates[flow] = rate;
    flow_fixed_[flow] = 1;
    for (std::uint32_t i = problem.path_offsets_[flow]; i < problem.path_offsets_[flow + 1]; ++i) {
        const std::uint32_t link = problem.path_links_[i];
        remaining_capacity_[link] -= rate;
        --unfixed_count_[link];
        if (!link_dirty_[link]) {
            link_dirty_[link] = 1;
            dirty_links_.push_back(link);
        }
    }
}

void MaxMinSolver::solve(const MaxMinProblem& problem, std::vector<double>& rates) {
    const std::size_t link_count = problem.link_count();
    const std::size_t flow_count = problem.flow_count();
    const std::vector<std::uint32_t>& path_offsets = problem.path_offsets_;
    const std::vector<std::uint32_t>& path_links = problem.path_links_;
    TTSIM_ASSERT(path_offsets.size() == flow_count + 1 && path_offsets.back() == path_links.size(),
                 "malformed max-min problem");

    rates.assign(flow_count, 0.0);
    rounds_ = 0;
    flow_fixed_.assign(flow_count, 0);

    // Transpose the incidence by counting sort, so each link lists its flows in increasing id order.
    unfixed_count_.assign(link_count, 0);
    for (const std::uint32_t link : path_links) ++unfixed_count_[link];
    link_offsets_.resize(link_count + 1);
    link_offsets_[0] = 0;
    for (std::size_t l = 0; l < link_count; ++l) link_offsets_[l + 1] = link_offsets_[l] + unfixed_count_[l];
    fill_cursor_.assign(link_offsets_.begin(), link_offsets_.end() - 1);
    link_flows_.resize(path_links.size());
    for (std::uint32_t f = 0; f < flow_count; ++f) {
        for (std::uint32_t i = path_offsets[f]; i < path_offsets[f + 1]; ++i) {
            link_flows_[fill_cursor_[path_links[i]]++] = f;
        }
    }

    remaining_capacity_.assign(problem.link_capacity_.begin(), problem.link_capacity_.end());
    link_version_.assign(link_count, 0);
    link_dirty_.assign(link_count, 0);
    dirty_links_.clear();
    heap_.clear();
    for (std::uint32_t l = 0; l < link_count; ++l) {
        if (unfixed_count_[l] > 0) {
            heap_.push_back(HeapEntry{remaining_capacity_[l] / unfixed_count_[l], l, 0});
        }
    }
    std::make_heap(heap_.begin(), heap_.end(), LaterEntry{});

    // Capped flows wait in order of (cap, id); a cap binds when the common level reaches it.
    capped_flows_by_cap_.clear();
    for (std::uint32_t f = 0; f < flow_count; ++f) {
        const double cap = problem.flow_cap_[f];
        if (std::isfinite(cap)) {
            capped_flows_by_cap_.push_back(f);
        } else {
            TTSIM_ASSERT(path_offsets[f + 1] > path_offsets[f],
                         "uncapped flow " + std::to_string(f) + " crosses no link: its rate would be infinite");
        }
    }
    std::sort(capped_flows_by_cap_.begin(), capped_flows_by_cap_.end(), [&](std::uint32_t a, std::uint32_t b) {
        const double cap_a = problem.flow_cap_[a];
        const double cap_b = problem.flow_cap_[b];
        return cap_a != cap_b ? cap_a < cap_b : a < b;
    });
    std::size_t next_capped = 0;

    std::size_t fixed_count = 0;
    while (fixed_count < flow_count) {
        // Drop stale heap entries (links re-keyed or emptied since they were pushed).
        while (!heap_.empty() && heap_.front().version != link_version_[heap_.front().link]) {
            std::pop_heap(heap_.begin(), heap_.end(), LaterEntry{});
            heap_.pop_back();
        }
        while (next_capped < capped_flows_by_cap_.size() && flow_fixed_[capped_flows_by_cap_[next_capped]]) {
            ++next_capped;
        }
        const double link_level =
            heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.front().level;
        const double cap_level = next_capped < capped_flows_by_cap_.size()
                                     ? problem.flow_cap_[capped_flows_by_cap_[next_capped]]
                                     : std::numeric_limits<double>::infinity();
        const double level = std::min(link_level, cap_level);
        TTSIM_ASSERT(std::isfinite(level), "max-min filling found unfixed flows but no binding constraint");
        const double threshold = level * (1.0 + kLevelGroupingTolerance);
        ++rounds_;

        // Every link binding at this level (within the grouping tolerance): its unfixed flows get `level`.
        binding_links_.clear();
        while (!heap_.empty() && heap_.front().level <= threshold) {
            const HeapEntry entry = heap_.front();
            std::pop_heap(heap_.begin(), heap_.end(), LaterEntry{});
            heap_.pop_back();
            if (entry.version == link_version_[entry.link]) binding_links_.push_back(entry.link);
        }
        for (const std::uint32_t link : binding_links_) {
            for (std::uint32_t i = link_offsets_[link]; i < link_offsets_[link + 1]; ++i) {
                const std::uint32_t flow = link_flows_[i];
                if (flow_fixed_[flow]) continue;
                fix_flow(problem, flow, level, rates);
                ++fixed_count;
            }
        }
        // Every cap binding at this level: the flow gets exactly its cap (<= threshold). Its links all have
        // levels above the threshold, so they have room for it.
        while (next_capped < capped_flows_by_cap_.size()) {
            const std::uint32_t flow = capped_flows_by_cap_[next_capped];
            const double cap = problem.flow_cap_[flow];
            if (!flow_fixed_[flow]) {
                if (cap > threshold) break;
                fix_flow(problem, flow, cap, rates);
                ++fixed_count;
            }
            ++next_capped;
        }

        // Re-key the links whose load changed; emptied links leave the filling.
        for (const std::uint32_t link : dirty_links_) {
            link_dirty_[link] = 0;
            ++link_version_[link];
            if (unfixed_count_[link] > 0) push_link(link);
        }
        dirty_links_.clear();
    }
}

}  // namespace ttsim
