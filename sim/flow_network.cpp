// Flow-level network: event handling and bookkeeping around the max-min solver (model in flow_network.hpp).
#include "sim/flow_network.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "sim/errors.hpp"

namespace ttsim {

namespace {

constexpr double kPicosecondsPerSecond = 1e12;

// Picoseconds needed to drain `bytes` at `rate` bytes/s, rounded up so a flow never beats its bandwidth.
// The quotient is computed as bytes * 1e12 / rate (exact for whole-number inputs within 2^53) and may
// still sit a few ulps above an exact integer; those ulps are rounding noise, not time, so they are shaved
// off before rounding up. Saturates at SimTime::max().
std::int64_t drain_duration_ps(double bytes, double rate_bytes_per_s) {
    if (bytes <= 0.0) return 0;
    const double exact_ps = bytes * kPicosecondsPerSecond / rate_bytes_per_s;
    const double denoised_ps = exact_ps * (1.0 - 4.0 * DBL_EPSILON);
    if (!(denoised_ps < 9.2e18)) return std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(std::ceil(denoised_ps));
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
    if (b > std::numeric_limits<std::int64_t>::max() - a) return std::numeric_limits<std::int64_t>::max();
    return a + b;
}

}  // namespace

FlowNetwork::FlowNetwork(std::vector<NetworkLink> links) : links_(std::move(links)), stats_(links_.size()) {
    for (const NetworkLink& link : links_) {
        if (!(std::isfinite(link.bandwidth_bytes_per_s) && link.bandwidth_bytes_per_s > 0.0)) {
            throw InputError("link bandwidth must be a positive finite number of bytes/s, got " +
                             std::to_string(link.bandwidth_bytes_per_s),
                             {}, link.name);
        }
        if (link.latency < SimTime::zero()) throw InputError("link latency must be >= 0", {}, link.name);
        problem_.add_link(link.bandwidth_bytes_per_s);
        compacted_problem_.add_link(link.bandwidth_bytes_per_s);
    }
}

void FlowNetwork::bind(Simulation& sim) {
    if (sim_ == nullptr) {
        sim_ = &sim;
        last_advance_ = sim.now();
    }
    TTSIM_ASSERT(sim_ == &sim, "a FlowNetwork serves one Simulation");
}

SimTime FlowNetwork::path_latency(std::span<const std::uint32_t> path) const {
    SimTime total = SimTime::zero();
    for (const std::uint32_t link : path) {
        TTSIM_ASSERT(link < links_.size(), "flow path names unknown link " + std::to_string(link));
        total += links_[link].latency;
    }
    return total;
}

FlowId FlowNetwork::start_flow(Simulation& sim, std::span<const std::uint32_t> path, double bytes,
                               std::function<void()> on_complete) {
    bind(sim);
    TTSIM_ASSERT(std::isfinite(bytes) && bytes >= 0.0, "flow size must be finite and >= 0 bytes");
    const FlowId id = next_flow_id_++;
    const SimTime latency = path_latency(path);
    if (bytes == 0.0) {
        // Nothing to share: only the path latency separates start and completion.
        if (on_complete) sim.schedule_at(sim.now() + latency, std::move(on_complete));
        return id;
    }
    TTSIM_ASSERT(!path.empty(), "a flow carrying bytes needs a non-empty path");
    problem_.add_flow(path);
    ActiveFlow flow;
    flow.id = id;
    flow.total_bytes = bytes;
    flow.remaining_bytes = bytes;
    flow.path_latency = latency;
    flow.on_complete = std::move(on_complete);
    flows_.push_back(std::move(flow));
    request_reshare();
    return id;
}

void FlowNetwork::request_reshare() {
    if (reshare_pending_) return;
    reshare_pending_ = true;
    // Queued behind every event already scheduled for this picosecond, so their starts and ends join in.
    sim_->schedule_at(sim_->now(), [this] { reshare(); });
}

void FlowNetwork::advance_to(SimTime now) {
    TTSIM_ASSERT(now >= last_advance_, "flow network time went backwards");
    const double elapsed_ps = static_cast<double>((now - last_advance_).ps());
    last_advance_ = now;
    if (elapsed_ps == 0.0) return;
    // bytes = rate * ps / 1e12: multiplying first keeps whole-number products exact.
    for (ActiveFlow& flow : flows_) {
        if (flow.rate_bytes_per_s <= 0.0) continue;
        flow.remaining_bytes =
            std::max(0.0, flow.remaining_bytes - flow.rate_bytes_per_s * elapsed_ps / kPicosecondsPerSecond);
    }
    for (LinkStats& stats : stats_) {
        if (stats.allocated_rate_bytes_per_s > 0.0) {
            stats.rate_integral_bytes += stats.allocated_rate_bytes_per_s * elapsed_ps / kPicosecondsPerSecond;
        }
    }
}

void FlowNetwork::sync_stats() {
    if (sim_ != nullptr) advance_to(sim_->now());
}

void FlowNetwork::reshare() {
    reshare_pending_ = false;
    const SimTime now = sim_->now();
    advance_to(now);

    // Drop the flows retired since the last reshare, keeping id order (flows_ and the CSR stay aligned).
    if (drained_pending_removal_ > 0) {
        compacted_problem_.clear_flows();
        std::size_t kept = 0;
        for (std::size_t i = 0; i < flows_.size(); ++i) {
            if (flows_[i].drained) continue;
            compacted_problem_.add_flow(problem_.flow_path(static_cast<std::uint32_t>(i)));
            if (kept != i) flows_[kept] = std::move(flows_[i]);
            ++kept;
        }
        flows_.resize(kept);
        std::swap(problem_, compacted_problem_);
        drained_pending_removal_ = 0;
    }

    ++generation_;  // any drain event scheduled from older rates is now stale
    for (LinkStats& stats : stats_) stats.allocated_rate_bytes_per_s = 0.0;
    if (flows_.empty()) return;

    solver_.solve(problem_, rates_);
    ++solve_count_;

    std::int64_t next_drain_end_ps = std::numeric_limits<std::int64_t>::max();
    for (std::size_t i = 0; i < flows_.size(); ++i) {
        ActiveFlow& flow = flows_[i];
        flow.rate_bytes_per_s = rates_[i];
        TTSIM_ASSERT(flow.rate_bytes_per_s > 0.0, "a flow got no bandwidth on positive-bandwidth links");
        flow.drain_end_ps = saturating_add(now.ps(), drain_duration_ps(flow.remaining_bytes, flow.rate_bytes_per_s));
        next_drain_end_ps = std::min(next_drain_end_ps, flow.drain_end_ps);
        for (const std::uint32_t link : problem_.flow_path(static_cast<std::uint32_t>(i))) {
            stats_[link].allocated_rate_bytes_per_s += flow.rate_bytes_per_s;
        }
    }
    const std::uint64_t generation = generation_;
    sim_->schedule_at(SimTime::picoseconds(next_drain_end_ps), [this, generation] { on_drain_event(generation); });
}

void FlowNetwork::on_drain_event(std::uint64_t generation) {
    if (generation != generation_) return;  // rates changed since this event was scheduled
    const SimTime now = sim_->now();
    advance_to(now);
    // Retire, in id order, every flow whose drain ends now (rounding made equal flows end at the same ps).
    retired_.clear();
    for (std::size_t i = 0; i < flows_.size(); ++i) {
        ActiveFlow& flow = flows_[i];
        if (flow.drained || flow.rate_bytes_per_s <= 0.0 || flow.drain_end_ps > now.ps()) continue;
        for (const std::uint32_t link : problem_.flow_path(static_cast<std::uint32_t>(i))) {
            stats_[link].bytes_carried += flow.total_bytes;
            stats_[link].allocated_rate_bytes_per_s =
                std::max(0.0, stats_[link].allocated_rate_bytes_per_s - flow.rate_bytes_per_s);
        }
        flow.drained = true;
        flow.remaining_bytes = 0.0;
        flow.rate_bytes_per_s = 0.0;
        ++drained_pending_removal_;
        ++drained_flow_count_;
        retired_.push_back(static_cast<std::uint32_t>(i));
    }
    TTSIM_ASSERT(!retired_.empty(), "drain event found no flow to retire");
    schedule_completions();
    // Requested after the completions were queued, so flows their callbacks start at this same picosecond
    // (zero path latency) join this one re-solve.
    request_reshare();
}

void FlowNetwork::schedule_completions() {
    // Cut-through: the last byte leaves the source now and arrives one path latency later. Callbacks due
    // at the same instant run in id order inside one event, exactly as consecutive one-callback events
    // would (nothing can be queued between consecutively scheduled events), at a fraction of the queue cost.
    const auto latency_of = [this](std::uint32_t index) { return flows_[index].path_latency; };
    const SimTime first_latency = latency_of(retired_.front());
    const bool uniform = std::all_of(retired_.begin(), retired_.end(),
                                     [&](std::uint32_t index) { return latency_of(index) == first_latency; });
    if (!uniform) {
        std::stable_sort(retired_.begin(), retired_.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return latency_of(a) < latency_of(b); });
    }
    const SimTime now = sim_->now();
    std::size_t group_begin = 0;
    while (group_begin < retired_.size()) {
        const SimTime latency = latency_of(retired_[group_begin]);
        std::size_t group_end = group_begin;
        while (group_end < retired_.size() && latency_of(retired_[group_end]) == latency) ++group_end;
        std::vector<std::function<void()>> callbacks;
        callbacks.reserve(group_end - group_begin);
        for (std::size_t k = group_begin; k < group_end; ++k) {
            std::function<void()>& callback = flows_[retired_[k]].on_complete;
            if (callback) callbacks.push_back(std::move(callback));
        }
        if (callbacks.size() == 1) {
            sim_->schedule_at(now + latency, std::move(callbacks.front()));
        } else if (!callbacks.empty()) {
            sim_->schedule_at(now + latency, [batch = std::move(callbacks)] {
                for (const std::function<void()>& callback : batch) callback();
            });
        }
        group_begin = group_end;
    }
}

double FlowNetwork::link_utilisation(std::uint32_t link_id, SimTime window) const {
    if (window <= SimTime::zero()) return 0.0;
    return stats_.at(link_id).rate_integral_bytes / (links_.at(link_id).bandwidth_bytes_per_s * window.seconds());
}

double FlowNetwork::max_link_utilisation(SimTime window) const {
    double highest = 0.0;
    for (std::uint32_t l = 0; l < links_.size(); ++l) highest = std::max(highest, link_utilisation(l, window));
    return highest;
}

void FlowNetwork::check_link_capacities(double relative_tolerance) const {
    std::vector<double> load(links_.size(), 0.0);
    for (std::size_t i = 0; i < flows_.size(); ++i) {
        if (flows_[i].drained) continue;
        for (const std::uint32_t link : problem_.flow_path(static_cast<std::uint32_t>(i))) {
            load[link] += flows_[i].rate_bytes_per_s;
        }
    }
    for (std::size_t l = 0; l < links_.size(); ++l) {
        const double bandwidth = links_[l].bandwidth_bytes_per_s;
        TTSIM_ASSERT(load[l] <= bandwidth * (1.0 + relative_tolerance),
                     "link '" + links_[l].name + "' carries " + std::to_string(load[l]) +
                         " bytes/s, above its bandwidth " + std::to_string(bandwidth) + " bytes/s");
    }
}

std::optional<double> FlowNetwork::flow_rate(FlowId id) const {
    const auto it = std::lower_bound(flows_.begin(), flows_.end(), id,
                                     [](const ActiveFlow& flow, FlowId wanted) { return flow.id < wanted; });
    if (it == flows_.end() || it->id != id || it->drained) return std::nullopt;
    return it->rate_bytes_per_s;
}

}  // namespace ttsim
