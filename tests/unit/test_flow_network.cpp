// Flow-level network: completion times worked out by hand (in picoseconds), batching, determinism, stats.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "sim/errors.hpp"
#include "sim/event_queue.hpp"
#include "sim/flow_network.hpp"

using ttsim::FlowNetwork;
using ttsim::NetworkLink;
using ttsim::SimTime;
using ttsim::Simulation;

namespace {

NetworkLink make_link(double bandwidth_bytes_per_s, SimTime latency, std::string name = "link") {
    return NetworkLink{bandwidth_bytes_per_s, latency, std::move(name)};
}

}  // namespace

TEST_CASE("network: a single flow takes latency + bytes / bandwidth, exactly", "[network]") {
    // 100 GB/s, 1 us latency, 1 MiB: drain = 1048576 B / 1e11 B/s = 10.48576 us = 10'485'760 ps.
    // Completion = 1'000'000 + 10'485'760 = 11'485'760 ps.
    Simulation sim;
    FlowNetwork net({make_link(1e11, SimTime::microseconds(1))});
    SimTime done = SimTime::max();
    net.start_flow(sim, {0}, 1048576.0, [&] { done = sim.now(); });
    sim.run();
    CHECK(done.ps() == 11'485'760);
    CHECK(net.solve_count() == 1);
    CHECK(net.drained_flow_count() == 1);
    CHECK(net.active_flow_count() == 0);
    CHECK(net.link_stats(0).bytes_carried == 1048576.0);
    // Busy for exactly the drain time, then idle during the final latency.
    CHECK(net.link_utilisation(0, SimTime::picoseconds(10'485'760)) == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("network: two flows share a link, the survivor speeds up when the other ends", "[network]") {
    // One link, 1 GB/s, 500 ns latency. A = 1000 B and B = 3000 B start at 0 and get 0.5 GB/s each.
    // A drains 1000 B at 5e8 B/s in 2 us -> completes at 2 us + 0.5 us = 2'500'000 ps.
    // By then B has 2000 B left and the whole 1e9 B/s: 2 us more -> drain end 4 us, completes 4'500'000 ps.
    Simulation sim;
    FlowNetwork net({make_link(1e9, SimTime::nanoseconds(500))});
    SimTime done_a = SimTime::max();
    SimTime done_b = SimTime::max();
    const auto a = net.start_flow(sim, {0}, 1000.0, [&] { done_a = sim.now(); });
    const auto b = net.start_flow(sim, {0}, 3000.0, [&] { done_b = sim.now(); });
    sim.schedule_at(SimTime::microseconds(1), [&] {
        CHECK(net.flow_rate(a) == Approx(5e8));
        CHECK(net.flow_rate(b) == Approx(5e8));
    });
    sim.schedule_at(SimTime::microseconds(3), [&] {
        CHECK_FALSE(net.flow_rate(a).has_value());
        CHECK(net.flow_rate(b) == Approx(1e9));
    });
    sim.run();
    CHECK(done_a.ps() == 2'500'000);
    CHECK(done_b.ps() == 4'500'000);
    CHECK(net.solve_count() == 2);  // at 0 (both start), at 2 us (A ends)
}

TEST_CASE("network: a late starter slows down a running flow", "[network]") {
    // One link, 1 GB/s, no latency. A = 3000 B starts at 0 alone: after 1 us it has 2000 B left.
    // B = 500 B starts at 1 us; both at 0.5 GB/s: B drains in 1 us -> done at 2 us; A drains 500 B meanwhile,
    // leaving 1500 B at the full 1 GB/s: 1.5 us more -> done at 3.5 us.
    Simulation sim;
    FlowNetwork net({make_link(1e9, SimTime::zero())});
    SimTime done_a = SimTime::max();
    SimTime done_b = SimTime::max();
    net.start_flow(sim, {0}, 3000.0, [&] { done_a = sim.now(); });
    sim.schedule_at(SimTime::microseconds(1),
                    [&] { net.start_flow(sim, {0}, 500.0, [&] { done_b = sim.now(); }); });
    sim.run();
    CHECK(done_b.ps() == 2'000'000);
    CHECK(done_a.ps() == 3'500'000);
    CHECK(net.solve_count() == 3);
    CHECK(net.link_stats(0).bytes_carried == 3500.0);
    CHECK(net.link_utilisation(0, SimTime::picoseconds(3'500'000)) == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("network: cut-through pays the path latency once", "[network]") {
    // Path of 3 hops: 2 GB/s + 100 ns, 1 GB/s + 200 ns, 2 GB/s + 300 ns. 1 MB drains at the bottleneck
    // 1 GB/s in 1 ms = 1e9 ps. Completion = 1e9 + (100 + 200 + 300) ns = 1'000'600'000 ps.
    // (Store-and-forward would take 0.5 + 1 + 0.5 ms plus latency: about twice as long.)
    Simulation sim;
    FlowNetwork net({make_link(2e9, SimTime::nanoseconds(100), "h0"), make_link(1e9, SimTime::nanoseconds(200), "h1"),
                     make_link(2e9, SimTime::nanoseconds(300), "h2")});
    SimTime done = SimTime::max();
    net.start_flow(sim, {0, 1, 2}, 1e6, [&] { done = sim.now(); });
    sim.run();
    CHECK(done.ps() == 1'000'600'000);
    // The fast hops are half busy while the flow drains, the bottleneck fully.
    CHECK(net.link_utilisation(0, SimTime::picoseconds(1'000'000'000)) == Approx(0.5).epsilon(1e-12));
    CHECK(net.link_utilisation(1, SimTime::picoseconds(1'000'000'000)) == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("network: opposite directions of a full-duplex link do not interfere", "[network]") {
    // Links 0 (A->B) and 1 (B->A), 1 GB/s each, 50 ns. 1 MB each way: each gets the full 1 GB/s.
    // Completion = 1e9 ps + 50'000 ps.
    Simulation sim;
    FlowNetwork net({make_link(1e9, SimTime::nanoseconds(50), "A->B"), make_link(1e9, SimTime::nanoseconds(50), "B->A")});
    SimTime forward = SimTime::max();
    SimTime backward = SimTime::max();
    const auto f = net.start_flow(sim, {0}, 1e6, [&] { forward = sim.now(); });
    const auto b = net.start_flow(sim, {1}, 1e6, [&] { backward = sim.now(); });
    sim.schedule_at(SimTime::nanoseconds(10), [&] {
        CHECK(net.flow_rate(f) == 1e9);
        CHECK(net.flow_rate(b) == 1e9);
    });
    sim.run();
    CHECK(forward.ps() == 1'000'050'000);
    CHECK(backward.ps() == 1'000'050'000);
}

TEST_CASE("network: flows starting and ending at the same picosecond cause one solve", "[network]") {
    // 256 flows on 256 separate 1 GB/s links, 4096 B each, started at 0 from 256 separate events: one solve,
    // and all drain at 4096 ns together (no second solve: nothing is left to share).
    // Then at 10 us, 64 events each start a 1000 B flow on one shared 64 GB/s link: one more solve,
    // 1 GB/s each, all end at 10 us + 1 us.
    Simulation sim;
    std::vector<NetworkLink> links;
    for (int i = 0; i < 257; ++i) links.push_back(make_link(i < 256 ? 1e9 : 64e9, SimTime::zero()));
    FlowNetwork net(std::move(links));
    std::vector<SimTime> first_wave;
    std::vector<SimTime> second_wave;
    for (std::uint32_t i = 0; i < 256; ++i) {
        sim.schedule_at(SimTime::zero(), [&, i] {
            net.start_flow(sim, std::vector<std::uint32_t>{i}, 4096.0, [&] { first_wave.push_back(sim.now()); });
        });
    }
    for (int i = 0; i < 64; ++i) {
        sim.schedule_at(SimTime::microseconds(10), [&] {
            net.start_flow(sim, {256}, 1000.0, [&] { second_wave.push_back(sim.now()); });
        });
    }
    sim.run();
    REQUIRE(first_wave.size() == 256);
    REQUIRE(second_wave.size() == 64);
    for (const SimTime t : first_wave) CHECK(t.ps() == 4'096'000);
    for (const SimTime t : second_wave) CHECK(t.ps() == 11'000'000);
    CHECK(net.solve_count() == 2);
    CHECK(net.solver().last_round_count() == 1);
}

TEST_CASE("network: zero-byte flows complete after the path latency, without a solve", "[network]") {
    Simulation sim;
    FlowNetwork net({make_link(1e9, SimTime::nanoseconds(70)), make_link(1e9, SimTime::nanoseconds(30))});
    SimTime done = SimTime::max();
    net.start_flow(sim, {0, 1}, 0.0, [&] { done = sim.now(); });
    sim.run();
    CHECK(done.ps() == 100'000);
    CHECK(net.solve_count() == 0);
}

TEST_CASE("network: bad input is rejected", "[network]") {
    CHECK_THROWS_AS(FlowNetwork({make_link(0.0, SimTime::zero())}), ttsim::InputError);
    CHECK_THROWS_AS(FlowNetwork({make_link(1e9, SimTime::picoseconds(-1))}), ttsim::InputError);
    Simulation sim;
    FlowNetwork net({make_link(1e9, SimTime::zero())});
    CHECK_THROWS_AS(net.start_flow(sim, {3}, 10.0, [] {}), ttsim::InternalError);
    CHECK_THROWS_AS(net.start_flow(sim, std::vector<std::uint32_t>{}, 10.0, [] {}), ttsim::InternalError);
    CHECK_THROWS_AS(net.start_flow(sim, {0}, -1.0, [] {}), ttsim::InternalError);
    Simulation other;
    net.start_flow(sim, {0}, 10.0, [] {});
    CHECK_THROWS_AS(net.start_flow(other, {0}, 10.0, [] {}), ttsim::InternalError);
}

namespace {

struct RandomRunResult {
    std::vector<std::int64_t> completion_ps;  // by flow start order
    std::uint64_t fingerprint = 0;
    std::uint64_t solves = 0;
};

// A random mix: flows over random paths of a small network, started at random times, half of them
// starting a follow-up flow when they complete. Checks link capacities at every completion.
RandomRunResult run_random_scenario(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<NetworkLink> links;
    const int link_count = 12;
    for (int l = 0; l < link_count; ++l) {
        links.push_back(make_link(1e9 * std::uniform_int_distribution<int>(1, 4)(rng),
                                  SimTime::nanoseconds(std::uniform_int_distribution<int>(0, 300)(rng)),
                                  "l" + std::to_string(l)));
    }
    Simulation sim;
    FlowNetwork net(std::move(links));
    RandomRunResult result;
    result.completion_ps.assign(400, -1);
    int next_slot = 0;

    auto random_path = [&] {
        std::vector<std::uint32_t> path;
        const int length = std::uniform_int_distribution<int>(1, 4)(rng);
        for (int i = 0; i < length; ++i) {
            path.push_back(static_cast<std::uint32_t>(std::uniform_int_distribution<int>(0, link_count - 1)(rng)));
        }
        return path;
    };
    std::function<void(bool)> launch = [&](bool may_chain) {
        const int slot = next_slot++;
        const double bytes = static_cast<double>(std::uniform_int_distribution<int>(0, 200'000)(rng));
        const bool chain = may_chain && std::uniform_int_distribution<int>(0, 1)(rng) == 1;
        net.start_flow(sim, random_path(), bytes, [&, slot, chain] {
            result.completion_ps[slot] = sim.now().ps();
            net.check_link_capacities();
            if (chain) launch(false);
        });
    };
    for (int i = 0; i < 200; ++i) {
        // Coarse start times (multiples of 1 us) so that many flows start at the same picosecond.
        sim.schedule_at(SimTime::microseconds(std::uniform_int_distribution<int>(0, 50)(rng)), [&] { launch(true); });
    }
    sim.run();
    net.sync_stats();
    result.completion_ps.resize(next_slot);
    for (const std::int64_t t : result.completion_ps) REQUIRE(t >= 0);
    for (std::uint32_t l = 0; l < net.link_count(); ++l) {
        REQUIRE(net.link_utilisation(l, sim.now()) <= 1.0 + 1e-9);
        // Each byte carried was once allocated rate; rounding drain ends up only adds allocated time.
        REQUIRE(net.link_stats(l).rate_integral_bytes >= net.link_stats(l).bytes_carried * (1.0 - 1e-9));
    }
    REQUIRE(net.active_flow_count() == 0);
    result.fingerprint = sim.fingerprint();
    result.solves = net.solve_count();
    return result;
}

}  // namespace

TEST_CASE("network: same inputs give the same completion times", "[network]") {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        const RandomRunResult first = run_random_scenario(seed);
        const RandomRunResult second = run_random_scenario(seed);
        CHECK(first.completion_ps == second.completion_ps);
        CHECK(first.fingerprint == second.fingerprint);
        CHECK(first.solves == second.solves);
        CHECK(first.solves < first.completion_ps.size() * 2);  // batching: fewer solves than start + end events
    }
}

TEST_CASE("network: completions at one drain end run by time, then by flow id", "[network]") {
    // Three 1000 B flows on three separate 1 GB/s links all drain at 1 us. Path latencies: 200 ns (flow 0),
    // 100 ns (flow 1), 200 ns (flow 2) -> callbacks at 1.1 us (flow 1), then 1.2 us (flow 0, then flow 2).
    // Flow 1's callback starts a zero-latency 1000 B flow on link 3 at 1.1 us: drains at 2.1 us.
    Simulation sim;
    FlowNetwork net({make_link(1e9, SimTime::nanoseconds(200)), make_link(1e9, SimTime::nanoseconds(100)),
                     make_link(1e9, SimTime::nanoseconds(200)), make_link(1e9, SimTime::zero())});
    std::vector<std::pair<int, std::int64_t>> order;
    net.start_flow(sim, {0}, 1000.0, [&] { order.emplace_back(0, sim.now().ps()); });
    net.start_flow(sim, {1}, 1000.0, [&] {
        order.emplace_back(1, sim.now().ps());
        net.start_flow(sim, {3}, 1000.0, [&] { order.emplace_back(3, sim.now().ps()); });
    });
    net.start_flow(sim, {2}, 1000.0, [&] { order.emplace_back(2, sim.now().ps()); });
    sim.run();
    const std::vector<std::pair<int, std::int64_t>> expected{
        {1, 1'100'000}, {0, 1'200'000}, {2, 1'200'000}, {3, 2'100'000}};
    CHECK(order == expected);
    CHECK(net.solve_count() == 2);  // at 0 and at 1.1 us; the drain at 1 us leaves nothing to share
}
