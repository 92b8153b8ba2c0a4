#include "models/reliability/run_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

#include <tbb/parallel_for.h>

#include "sim/errors.hpp"

namespace ttsim::reliability {
namespace {

// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): one 64-bit
// state, exact integer arithmetic, the same stream everywhere.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in (0, 1]: 53 random bits, never 0 (log of it below is finite).
    double uniform() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }
    // Exponential of rate `rate` by inversion.
    double exponential(double rate) { return -std::log(uniform()) / rate; }

private:
    std::uint64_t state_;
};

struct Trial {
    double wall = 0;
    double waited = 0;   // of the wall time, waiting for a spare or a repair
    long long interruptions = 0, checkpoints = 0;
};

Trial play(const RunModel& m, std::uint64_t trial_seed) {
    SplitMix64 rng(trial_seed);
    const double never = std::numeric_limits<double>::infinity();
    auto next_failure = [&] { return m.failure_rate_per_s > 0 ? rng.exponential(m.failure_rate_per_s) : never; };
    std::deque<double> spare_free_at;   // limited pool: when each spare is (again) free, earliest first
    if (m.hot_spares) spare_free_at.assign(static_cast<std::size_t>(*m.hot_spares), 0.0);
    const double cycle = m.interval_seconds + m.checkpoint_seconds;

    Trial t;
    double saved = 0;   // work secured by completed checkpoints
    // A failure at wall time `at`: a host out needs a spare (or its repair) before the restart can begin.
    auto host_ready_at = [&](double at) {
        if (!m.hot_spares || rng.uniform() > m.host_out_share) return at;
        if (spare_free_at.empty()) return at + m.repair_seconds;   // no pool: wait for this host's repair
        const double free = spare_free_at.front();
        spare_free_at.pop_front();
        spare_free_at.push_back(at + m.repair_seconds);
        return std::max(at, free);
    };
    for (;;) {
        const double remaining = m.work_seconds - saved;
        // Full cycles (segment + checkpoint) before the last segment, which ends the job without a checkpoint.
        const double full_cycles = std::max(0.0, std::ceil(remaining / m.interval_seconds) - 1.0);
        const double to_finish = remaining + full_cycles * m.checkpoint_seconds;
        const double failure = next_failure();
        if (failure >= to_finish) {
            t.wall += to_finish;
            t.checkpoints += static_cast<long long>(full_cycles);
            return t;
        }
        const double done_cycles = std::min(full_cycles, std::floor(failure / cycle));
        saved += done_cycles * m.interval_seconds;
        // A checkpoint struck while writing was begun but not completed.
        t.checkpoints += static_cast<long long>(done_cycles) +
                         (failure - done_cycles * cycle > m.interval_seconds && done_cycles < full_cycles ? 1 : 0);
        t.wall += failure;
        ++t.interruptions;
        // Restart; a failure during it starts it over (and may take another host out).
        double restart_begins = host_ready_at(t.wall);
        t.waited += restart_begins - t.wall;
        for (;;) {
            const double strike = next_failure();
            if (strike >= m.restart_seconds) {
                t.wall = restart_begins + m.restart_seconds;
                break;
            }
            ++t.interruptions;
            const double struck = restart_begins + strike;
            restart_begins = host_ready_at(struck);
            t.waited += restart_begins - struck;
        }
    }
}

}  // namespace

double expected_wall_seconds(const RunModel& m) {
    const double remaining = m.work_seconds;
    const double full = std::max(0.0, std::ceil(remaining / m.interval_seconds) - 1.0);
    const double last = remaining - full * m.interval_seconds;
    const double lambda = m.failure_rate_per_s;
    if (!(lambda > 0)) return remaining + full * m.checkpoint_seconds;
    return std::exp(lambda * m.restart_seconds) / lambda *
           (full * std::expm1(lambda * (m.interval_seconds + m.checkpoint_seconds)) + std::expm1(lambda * last));
}

RunDistribution simulate_runs(const RunModel& m) {
    TTSIM_ASSERT(m.work_seconds >= 0 && m.failure_rate_per_s >= 0 && m.interval_seconds > 0 &&
                     m.checkpoint_seconds >= 0 && m.restart_seconds >= 0 && m.trials >= 1,
                 "a run model with non-negative times and rates, a positive interval and at least one trial");
    // Bound the draws: ~10^7 over all trials (a trial draws about lambda x wall failures).
    const double per_trial = 1.0 + m.failure_rate_per_s * m.work_seconds *
                                       std::exp(std::min(50.0, m.failure_rate_per_s * m.restart_seconds));
    const int trials = static_cast<int>(std::clamp(1e7 / per_trial, 16.0, static_cast<double>(m.trials)));
    std::vector<Trial> results(static_cast<std::size_t>(trials));
    tbb::parallel_for(0, trials, [&](int i) {
        results[static_cast<std::size_t>(i)] = play(m, m.seed * 0x100000001B3ull + static_cast<std::uint64_t>(i));
    });
    RunDistribution d;
    d.trials = trials;
    std::vector<double> walls;
    walls.reserve(results.size());
    for (const Trial& t : results) {   // trial order: the same sums at any thread count
        walls.push_back(t.wall);
        d.mean_wall_seconds += t.wall;
        d.mean_interruptions += static_cast<double>(t.interruptions);
        d.mean_checkpoints += static_cast<double>(t.checkpoints);
    }
    d.mean_wall_seconds /= trials;
    d.mean_interruptions /= trials;
    d.monte_carlo_mean_wall_seconds = d.mean_wall_seconds;
    // Failures strike only while the job works or restarts, never while it waits for a host, so the time outside
    // waits and the failures are the closed form's whatever the pool: lambda failures per second of it. The waits
    // add to it: with no spares at all, each host-out failure waits one repair (exact); with a limited pool, the
    // Monte Carlo's mean wait.
    const double running = expected_wall_seconds(m);
    d.mean_interruptions = m.failure_rate_per_s * running;
    double waits = 0;
    if (m.hot_spares && *m.hot_spares == 0) {
        waits = d.mean_interruptions * m.host_out_share * m.repair_seconds;
    } else if (m.hot_spares) {
        for (const Trial& t : results) waits += t.waited;   // trial order, as above
        waits /= trials;
    }
    d.mean_wall_seconds = running + waits;
    d.mean_checkpoints /= trials;
    std::sort(walls.begin(), walls.end());
    auto quantile = [&](double q) {   // linear interpolation between order statistics
        const double pos = q * (walls.size() - 1);
        const std::size_t lo = static_cast<std::size_t>(pos);
        const std::size_t hi = std::min(lo + 1, walls.size() - 1);
        return walls[lo] + (walls[hi] - walls[lo]) * (pos - lo);
    };
    d.p10_wall_seconds = quantile(0.1);
    d.p50_wall_seconds = quantile(0.5);
    d.p90_wall_seconds = quantile(0.9);
    d.goodput = d.mean_wall_seconds > 0 ? m.work_seconds / d.mean_wall_seconds : 1.0;
    return d;
}

}  // namespace ttsim::reliability
