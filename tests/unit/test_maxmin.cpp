// Max-min fair solver: hand-worked cases, then a randomized check of the bottleneck characterisation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/errors.hpp"
#include "sim/maxmin.hpp"

using ttsim::MaxMinProblem;
using ttsim::MaxMinSolver;

namespace {

std::vector<double> solve(const MaxMinProblem& problem, MaxMinSolver* solver_in = nullptr) {
    MaxMinSolver local;
    MaxMinSolver& solver = solver_in ? *solver_in : local;
    std::vector<double> rates;
    solver.solve(problem, rates);
    return rates;
}

Approx near(double expected) { return Approx(expected).epsilon(1e-12); }

}  // namespace

TEST_CASE("maxmin: one link, two flows split it evenly", "[maxmin]") {
    // Link 0: 10 B/s, flows a and b. Level 10 / 2 = 5 for both, one round.
    MaxMinProblem p;
    p.add_link(10.0);
    p.add_flow(std::vector<std::uint32_t>{0});
    p.add_flow(std::vector<std::uint32_t>{0});
    MaxMinSolver solver;
    const auto rates = solve(p, &solver);
    CHECK(rates[0] == near(5.0));
    CHECK(rates[1] == near(5.0));
    CHECK(solver.last_round_count() == 1);
}

TEST_CASE("maxmin: 3-link chain with a long flow and short flows", "[maxmin]") {
    // Links 0, 1, 2: 12 B/s each. Long flow L crosses 0-1-2. Short flows: s0 on 0; s1a, s1b on 1; s2 on 2.
    // Levels: link 0: 12/2 = 6, link 1: 12/3 = 4, link 2: 12/2 = 6.
    // Round 1: link 1 binds at 4 -> L = s1a = s1b = 4. Links 0 and 2 keep 12 - 4 = 8 for one flow each.
    // Round 2: both bind at 8 -> s0 = s2 = 8. Every link is then exactly full (4+8, 4+4+4, 4+8).
    MaxMinProblem p;
    for (int i = 0; i < 3; ++i) p.add_link(12.0);
    const auto long_flow = p.add_flow(std::vector<std::uint32_t>{0, 1, 2});
    const auto s0 = p.add_flow(std::vector<std::uint32_t>{0});
    const auto s1a = p.add_flow(std::vector<std::uint32_t>{1});
    const auto s1b = p.add_flow(std::vector<std::uint32_t>{1});
    const auto s2 = p.add_flow(std::vector<std::uint32_t>{2});
    MaxMinSolver solver;
    const auto rates = solve(p, &solver);
    CHECK(rates[long_flow] == near(4.0));
    CHECK(rates[s1a] == near(4.0));
    CHECK(rates[s1b] == near(4.0));
    CHECK(rates[s0] == near(8.0));
    CHECK(rates[s2] == near(8.0));
    CHECK(solver.last_round_count() == 2);
}

TEST_CASE("maxmin: parking lot with unequal loads", "[maxmin]") {
    // Links A (0) and B (1): 10 B/s each. Long flow crosses A and B; a on A; b1, b2 on B.
    // Levels: A 10/2 = 5, B 10/3 = 3.333.. -> B binds: long = b1 = b2 = 10/3.
    // A keeps 10 - 10/3 = 20/3 for a alone: a = 6.666..
    MaxMinProblem p;
    p.add_link(10.0);
    p.add_link(10.0);
    const auto long_flow = p.add_flow(std::vector<std::uint32_t>{0, 1});
    const auto a = p.add_flow(std::vector<std::uint32_t>{0});
    const auto b1 = p.add_flow(std::vector<std::uint32_t>{1});
    const auto b2 = p.add_flow(std::vector<std::uint32_t>{1});
    const auto rates = solve(p);
    CHECK(rates[long_flow] == near(10.0 / 3.0));
    CHECK(rates[b1] == near(10.0 / 3.0));
    CHECK(rates[b2] == near(10.0 / 3.0));
    CHECK(rates[a] == near(20.0 / 3.0));
}

TEST_CASE("maxmin: a flow capped below its fair share releases capacity", "[maxmin]") {
    // Link 0: 12 B/s, flows f0 (cap 2), f1, f2. Equal share would be 4, but the cap binds first at 2:
    // f0 = 2. The link keeps 10 for two flows: f1 = f2 = 5.
    // A cap above the fair share (f3's 100 on a second link shared with f4, 8 B/s) changes nothing: 4 + 4.
    MaxMinProblem p;
    p.add_link(12.0);
    p.add_link(8.0);
    const auto f0 = p.add_flow(std::vector<std::uint32_t>{0}, 2.0);
    const auto f1 = p.add_flow(std::vector<std::uint32_t>{0});
    const auto f2 = p.add_flow(std::vector<std::uint32_t>{0});
    const auto f3 = p.add_flow(std::vector<std::uint32_t>{1}, 100.0);
    const auto f4 = p.add_flow(std::vector<std::uint32_t>{1});
    const auto rates = solve(p);
    CHECK(rates[f0] == 2.0);  // exactly its cap
    CHECK(rates[f1] == near(5.0));
    CHECK(rates[f2] == near(5.0));
    CHECK(rates[f3] == near(4.0));
    CHECK(rates[f4] == near(4.0));
}

TEST_CASE("maxmin: two bottleneck levels", "[maxmin]") {
    // Link X (0): 6 B/s, flows f0, f1. Link Y (1): 20 B/s, flows f1, f2, f3.
    // Levels: X 6/2 = 3, Y 20/3 = 6.67 -> X binds: f0 = f1 = 3.
    // Y keeps 20 - 3 = 17 for f2, f3: 8.5 each. Two rounds.
    MaxMinProblem p;
    p.add_link(6.0);
    p.add_link(20.0);
    p.add_flow(std::vector<std::uint32_t>{0});
    p.add_flow(std::vector<std::uint32_t>{0, 1});
    p.add_flow(std::vector<std::uint32_t>{1});
    p.add_flow(std::vector<std::uint32_t>{1});
    MaxMinSolver solver;
    const auto rates = solve(p, &solver);
    CHECK(rates[0] == near(3.0));
    CHECK(rates[1] == near(3.0));
    CHECK(rates[2] == near(8.5));
    CHECK(rates[3] == near(8.5));
    CHECK(solver.last_round_count() == 2);
}

TEST_CASE("maxmin: disjoint flows do not affect each other", "[maxmin]") {
    // Link 0: 5 B/s with f0 alone -> 5. Link 1: 7 B/s with f1, f2 -> 3.5 each. Link 2: unused.
    MaxMinProblem p;
    p.add_link(5.0);
    p.add_link(7.0);
    p.add_link(1.0);
    p.add_flow(std::vector<std::uint32_t>{0});
    p.add_flow(std::vector<std::uint32_t>{1});
    p.add_flow(std::vector<std::uint32_t>{1});
    const auto rates = solve(p);
    CHECK(rates[0] == near(5.0));
    CHECK(rates[1] == near(3.5));
    CHECK(rates[2] == near(3.5));
}

TEST_CASE("maxmin: many identical flows share one level in one round", "[maxmin]") {
    // 1024 flows; flow i crosses its own uplink i (8 B/s) and one shared spine link (4096 B/s).
    // Levels: uplinks 8/1 = 8, spine 4096/1024 = 4 -> spine binds, everyone gets 4 in a single round,
    // and the uplinks (left with 4 each) have no unfixed flow left.
    const std::uint32_t flows = 1024;
    MaxMinProblem p;
    for (std::uint32_t i = 0; i < flows; ++i) p.add_link(8.0);
    const std::uint32_t spine = p.add_link(4096.0);
    for (std::uint32_t i = 0; i < flows; ++i) p.add_flow(std::vector<std::uint32_t>{i, spine});
    MaxMinSolver solver;
    const auto rates = solve(p, &solver);
    for (const double r : rates) REQUIRE(r == 4.0);  // bit-for-bit equal
    CHECK(solver.last_round_count() == 1);
}

TEST_CASE("maxmin: flows with empty paths get their cap, uncapped ones are a bug", "[maxmin]") {
    // An intra-device copy modelled as a path-less flow capped at 3 B/s next to a link flow (9 B/s link).
    MaxMinProblem p;
    p.add_link(9.0);
    p.add_flow(std::vector<std::uint32_t>{}, 3.0);
    p.add_flow(std::vector<std::uint32_t>{0});
    const auto rates = solve(p);
    CHECK(rates[0] == 3.0);
    CHECK(rates[1] == near(9.0));
    CHECK_THROWS_AS(p.add_flow(std::vector<std::uint32_t>{}), ttsim::InternalError);
    CHECK_THROWS_AS(p.add_flow(std::vector<std::uint32_t>{7}), ttsim::InternalError);  // unknown link
}

TEST_CASE("maxmin: a link listed twice in a path is loaded twice", "[maxmin]") {
    // Link 0: 10 B/s. f0 crosses it twice (e.g. a hairpin), f1 once: 3 incidences -> level 10/3 each,
    // and the link carries 2 * 10/3 + 10/3 = 10.
    MaxMinProblem p;
    p.add_link(10.0);
    p.add_flow(std::vector<std::uint32_t>{0, 0});
    p.add_flow(std::vector<std::uint32_t>{0});
    const auto rates = solve(p);
    CHECK(rates[0] == near(10.0 / 3.0));
    CHECK(rates[1] == near(10.0 / 3.0));
}

TEST_CASE("maxmin: a reused solver gives the same answers as a fresh one", "[maxmin]") {
    MaxMinSolver solver;
    MaxMinProblem big;
    for (int i = 0; i < 5; ++i) big.add_link(1.0 + i);
    for (std::uint32_t i = 0; i < 5; ++i) big.add_flow(std::vector<std::uint32_t>{i, (i + 1) % 5});
    MaxMinProblem small;
    small.add_link(10.0);
    small.add_flow(std::vector<std::uint32_t>{0});
    const auto first_big = solve(big, &solver);
    CHECK(solve(small, &solver) == std::vector<double>{10.0});
    CHECK(solve(big, &solver) == first_big);
    CHECK(solve(big) == first_big);
}

namespace {

// Checks feasibility and the bottleneck characterisation of max-min fairness independently of the solver:
// every flow is at its cap, or crosses a saturated link on which no flow has a higher rate.
void check_max_min_fair(const MaxMinProblem& p, const std::vector<double>& rates) {
    const double tolerance = 1e-9;
    std::vector<double> load(p.link_count(), 0.0);
    std::vector<double> highest_rate(p.link_count(), 0.0);
    for (std::uint32_t f = 0; f < p.flow_count(); ++f) {
        REQUIRE(rates[f] >= 0.0);
        REQUIRE(rates[f] <= p.flow_cap(f) * (1.0 + tolerance));
        for (const std::uint32_t l : p.flow_path(f)) {
            load[l] += rates[f];
            highest_rate[l] = std::max(highest_rate[l], rates[f]);
        }
    }
    for (std::uint32_t l = 0; l < p.link_count(); ++l) {
        INFO("link " << l << " load " << load[l] << " capacity " << p.link_capacity(l));
        REQUIRE(load[l] <= p.link_capacity(l) * (1.0 + tolerance));
    }
    for (std::uint32_t f = 0; f < p.flow_count(); ++f) {
        const bool at_cap = rates[f] >= p.flow_cap(f) * (1.0 - tolerance);
        bool bottlenecked = false;
        for (const std::uint32_t l : p.flow_path(f)) {
            const bool saturated = load[l] >= p.link_capacity(l) * (1.0 - tolerance);
            const bool has_highest_rate = rates[f] >= highest_rate[l] * (1.0 - tolerance);
            bottlenecked = bottlenecked || (saturated && has_highest_rate);
        }
        INFO("flow " << f << " rate " << rates[f] << " cap " << p.flow_cap(f));
        REQUIRE((at_cap || bottlenecked));
    }
}

}  // namespace

TEST_CASE("maxmin: random problems are feasible and every flow is bottlenecked", "[maxmin]") {
    std::mt19937_64 rng(20240611);
    MaxMinSolver solver;  // reused on purpose: stale scratch state must not leak between solves
    for (int trial = 0; trial < 300; ++trial) {
        MaxMinProblem p;
        const int links = std::uniform_int_distribution<int>(1, 40)(rng);
        const int flows = std::uniform_int_distribution<int>(1, 150)(rng);
        // Few distinct capacities make equal levels (and grouping) frequent, as in real topologies.
        const bool coarse = trial % 2 == 0;
        for (int l = 0; l < links; ++l) {
            p.add_link(coarse ? 10.0 * std::uniform_int_distribution<int>(1, 3)(rng)
                              : std::uniform_real_distribution<double>(0.5, 100.0)(rng));
        }
        for (int f = 0; f < flows; ++f) {
            const int length = std::uniform_int_distribution<int>(0, std::min(links, 5))(rng);
            std::vector<std::uint32_t> path;
            while (static_cast<int>(path.size()) < length) {
                const auto l = static_cast<std::uint32_t>(std::uniform_int_distribution<int>(0, links - 1)(rng));
                if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
            }
            const bool capped = path.empty() || std::uniform_int_distribution<int>(0, 9)(rng) < 3;
            const double cap = capped ? std::uniform_real_distribution<double>(0.1, 30.0)(rng)
                                      : MaxMinProblem::kUncapped;
            p.add_flow(path, cap);
        }
        std::vector<double> rates;
        solver.solve(p, rates);
        INFO("trial " << trial);
        check_max_min_fair(p, rates);
        std::vector<double> again;
        MaxMinSolver fresh;
        fresh.solve(p, again);
        REQUIRE(again == rates);  // deterministic, independent of solver history
    }
}

TEST_CASE("maxmin: 131072 symmetric flows solve in one round", "[maxmin]") {
    // Ring-like traffic: 16384 hosts, 8 channels each. Flow (h, c) crosses host h's uplink, channel c's
    // link out of h's switch port, and host (h+1)'s downlink: every link carries 8 or 1 flows, all
    // uplinks/downlinks bind at the same level.
    const std::uint32_t hosts = 16384;
    const std::uint32_t channels = 8;
    MaxMinProblem p;
    for (std::uint32_t h = 0; h < hosts; ++h) p.add_link(8e9);  // uplinks: 8 flows -> 1e9 each
    for (std::uint32_t h = 0; h < hosts; ++h) p.add_link(8e9);  // downlinks: 8 flows -> 1e9 each
    for (std::uint32_t i = 0; i < hosts / 2; ++i) p.add_link(16e9);  // trunk: 16 flows -> 1e9 each
    for (std::uint32_t h = 0; h < hosts; ++h) {
        for (std::uint32_t c = 0; c < channels; ++c) {
            p.add_flow(std::vector<std::uint32_t>{h, 2 * hosts + h / 2, hosts + (h + 1) % hosts});
        }
    }
    MaxMinSolver solver;
    std::vector<double> rates;
    solver.solve(p, rates);
    CHECK(solver.last_round_count() == 1);
    for (const double r : rates) REQUIRE(r == 1e9);
}
