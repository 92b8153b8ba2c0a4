#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "models/training/pipeline_schedule.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

// Even stages: the model's forward F and backward B split over p x v virtual stages; p2p free unless given.
StageDurations even(int stages, double forward, double backward, double p2p = 0) {
    StageDurations d;
    d.forward.assign(stages, forward / stages);
    d.backward.assign(stages, backward / stages);
    d.p2p.assign(std::max(0, stages - 1), p2p);
    return d;
}

}  // namespace

TEST_CASE("pipeline: every task runs once, each device in its order, in every schedule", "[pipeline]") {
    for (const auto& s : {gpipe(4, 6), one_f_one_b(4, 6), one_f_one_b(8, 3), interleaved(4, 3, 8), interleaved(2, 2, 2)}) {
        std::set<int> seen;
        for (const auto& order : s.order)
            for (int t : order) CHECK(seen.insert(t).second);
        CHECK(seen.size() == s.tasks.size());
        CHECK(s.tasks.size() == static_cast<std::size_t>(s.devices * s.chunks * s.micro_batches * 2));
        const PipeResult r = simulate_pipeline(s, even(s.virtual_stages(), 1.0, 2.0));
        CHECK(r.makespan_seconds > 0);
    }
}

TEST_CASE("pipeline: 1F1B's simulated bubble is (p-1)/m with free p2p and even stages", "[pipeline][physics]") {
    for (int p : {2, 4, 8, 16})
        for (int m : {p, 2 * p, 8 * p, 3 * p + 1}) {
            const PipeResult r = simulate_pipeline(one_f_one_b(p, m), even(p, 1.0 * p, 2.0 * p));
            INFO("p " << p << " m " << m);
            CHECK(r.bubble_fraction == Approx(double(p - 1) / m).epsilon(0.02));
            // Each device computes m (F + B) of its stage: the model's F + B per micro batch.
            CHECK(r.busy_seconds == Approx(3.0 * m).epsilon(1e-9));
        }
}

TEST_CASE("pipeline: GPipe's bubble is (p-1)/m too, interleaving divides it by v", "[pipeline][physics]") {
    CHECK(simulate_pipeline(gpipe(4, 16), even(4, 4.0, 8.0)).bubble_fraction == Approx(3.0 / 16).epsilon(0.02));
    for (int p : {2, 4, 8})
        for (int v : {2, 3, 6})
            for (int m : {p, 2 * p, 4 * p, 8 * p}) {
                const PipeResult r = simulate_pipeline(interleaved(p, v, m), even(p * v, 1.0 * p, 2.0 * p));
                INFO("p " << p << " v " << v << " m " << m);
                CHECK(r.bubble_fraction == Approx(double(p - 1) / (v * m)).epsilon(0.02));
            }
}

TEST_CASE("pipeline: one stage is plain gradient accumulation", "[pipeline]") {
    const PipeResult r = simulate_pipeline(one_f_one_b(1, 5), even(1, 1.0, 2.0));
    CHECK(r.makespan_seconds == Approx(15.0).epsilon(1e-12));
    CHECK(r.bubble_fraction == Approx(0.0).margin(1e-12));
}

TEST_CASE("pipeline: p2p lengthens the step by at least its transfers on the critical path", "[pipeline][physics]") {
    const int p = 4, m = 8;
    const double message = 0.05;
    const PipeResult free = simulate_pipeline(one_f_one_b(p, m), even(p, 4.0, 8.0));
    const PipeResult paid = simulate_pipeline(one_f_one_b(p, m), even(p, 4.0, 8.0, message));
    // The first micro batch's activations cross p-1 boundaries and its gradients p-1 back, serially.
    CHECK(paid.makespan_seconds >= free.makespan_seconds + 2 * (p - 1) * message - 1e-9);
    // Every boundary carries m activations and m gradients, each at its transfer time.
    CHECK(paid.p2p_busy_seconds == Approx(2.0 * (p - 1) * m * message).epsilon(1e-9));
}

TEST_CASE("pipeline: stage imbalance sets the pace at the slowest stage", "[pipeline][physics]") {
    StageDurations d = even(4, 4.0, 8.0);
    d.forward[3] *= 1.5;
    d.backward[3] *= 1.5;   // the last stage also computes the loss head
    const PipeResult r = simulate_pipeline(one_f_one_b(4, 32), d);
    CHECK(r.makespan_seconds >= 32 * (d.forward[3] + d.backward[3]));
}

TEST_CASE("pipeline: gradient reduction after each chunk's last backward", "[pipeline]") {
    StageDurations d = even(8, 8.0, 16.0);
    d.dp_reduce.assign(8, 0.5);
    const PipeResult r = simulate_pipeline(interleaved(4, 2, 8), d, true);
    CHECK(r.step_seconds > r.makespan_seconds);
    // Device 0 holds stages 0 and 4; its chunk 1 finishes backward first, so its reduction overlaps chunk 0's.
    CHECK(r.exposed_dp_seconds <= 0.5 + 1e-9);
    CHECK(std::count_if(r.timeline.begin(), r.timeline.end(), [](const PipeSpan& s) { return s.stream == "dp comm"; }) == 8);
}

TEST_CASE("pipeline: schedule rules name the broken one", "[pipeline]") {
    CHECK_THROWS_AS(interleaved(4, 2, 6), InputError);   // 6 micro batches, PP 4
    CHECK(schedule_problem(PipeScheduleKind::interleaved, 4, 2, 6).find("multiple of PP") != std::string::npos);
    CHECK(!schedule_problem(PipeScheduleKind::one_f_one_b, 1, 3, 4).empty());
    CHECK(schedule_problem(PipeScheduleKind::one_f_one_b, 8, 1, 3).empty());   // fewer micro batches than PP: legal
}
