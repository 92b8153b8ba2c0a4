// Planning layer: scaling metrics, break-even, Pareto front, cost and energy with hand-computed expectations;
// planning queries on a synthetic monotone model; sweep expansion; scenario reading; cancellation (SIGINT).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <optional>

#include "models/planning/cost_energy.hpp"
#include "models/planning/plan_format.hpp"
#include "models/planning/plan_evaluator.hpp"
#include "models/planning/plan_query.hpp"
#include "models/planning/point_prediction.hpp"
#include "models/planning/scaling_metrics.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/planning/sweep_runner.hpp"
#include "models/planning/sweep_spec.hpp"
#include "sim/errors.hpp"
#include "tests/unit/synthetic_plans.hpp"

using namespace ttsim;
using namespace ttsim::planning;

namespace {
// T(8) = 100, T(16) = 60, T(32) = 40, T(64) = 35 minutes.
const std::vector<ScalingSample> kSeries{{8, 100.0}, {16, 60.0}, {32, 40.0}, {64, 35.0}};
}  // namespace

TEST_CASE("speedup and efficiency against the reference count", "[planning]") {
    REQUIRE(reference_gpus(kSeries, std::nullopt) == 8);
    REQUIRE(reference_gpus(kSeries, 16) == 16);
    REQUIRE(reference_gpus(kSeries, 12) == 8);   // not in the series: the smallest
    const auto m = scaling_metrics(kSeries, 8);
    REQUIRE(m[0].speedup == Approx(1.0));
    REQUIRE(m[0].efficiency == Approx(1.0));
    REQUIRE(m[1].speedup == Approx(100.0 / 60.0));
    REQUIRE(m[1].efficiency == Approx(100.0 / 60.0 / 2.0));   // 0.8333
    REQUIRE(m[2].speedup == Approx(2.5));
    REQUIRE(m[2].efficiency == Approx(0.625));
    REQUIRE(m[3].efficiency == Approx(100.0 / 35.0 / 8.0));
    REQUIRE_FALSE(m[0].marginal_doubling_efficiency);
    REQUIRE(*m[2].marginal_doubling_efficiency == Approx(60.0 / 80.0));   // T(16) / (2 T(32))
    REQUIRE(*m[3].marginal_doubling_efficiency == Approx(40.0 / 70.0));
    // Against 16 GPUs: speedup(64) = 60/35, efficiency = that / 4.
    const auto from16 = scaling_metrics(kSeries, 16);
    REQUIRE(from16[3].efficiency == Approx(60.0 / 35.0 / 4.0));
}

TEST_CASE("break-even: last doubling whose marginal efficiency stays above the threshold", "[planning]") {
    // Marginal efficiencies: 16 -> 0.833, 32 -> 0.75, 64 -> 0.571.
    const auto half = break_even(kSeries, 8, 0.5);
    REQUIRE(half);
    REQUIRE(half->gpus == 64);
    REQUIRE(half->limited_by_sweep);
    const auto strict = break_even(kSeries, 8, 0.6);
    REQUIRE(strict->gpus == 32);
    REQUIRE(strict->first_below == 64);
    REQUIRE(*strict->first_below_efficiency == Approx(40.0 / 70.0));
    REQUIRE_FALSE(strict->limited_by_sweep);
    REQUIRE(break_even(kSeries, 8, 0.9)->gpus == 8);   // the first doubling already fails
    REQUIRE_FALSE(break_even(kSeries, 128, 0.5));      // reference not in the series
    // A gap in the doubling chain ends it.
    const auto gap = break_even({{8, 100.0}, {16, 55.0}, {64, 20.0}}, 8, 0.5);
    REQUIRE(gap->gpus == 16);
    REQUIRE(gap->limited_by_sweep);
    REQUIRE(gap->doublings_judged == 1);
    REQUIRE(half->doublings_judged == 3);
    REQUIRE(strict->doublings_judged == 3);
    // No doubling of the reference in the series (8, 64, 512): nothing to judge, not "every doubling stayed above".
    REQUIRE_FALSE(break_even({{8, 100.0}, {64, 20.0}, {512, 5.0}}, 8, 0.5));
}

// A series with its p10/p90 band at -+3 % of each time.
std::vector<ScalingSample> banded(const std::vector<std::pair<int, double>>& times) {
    std::vector<ScalingSample> series;
    for (const auto& [gpus, minutes] : times) {
        ScalingSample s{gpus, minutes};
        s.ttt_p10_minutes = 0.97 * minutes;
        s.ttt_p90_minutes = 1.03 * minutes;
        series.push_back(s);
    }
    return series;
}

TEST_CASE("knee: the count minimising time x GPU-hours, with the counts the band cannot tell from it", "[planning]") {
    // T^2 N: 8 -> 80000, 16 -> 43264, 32 -> 25088, 64 -> 16384, 128 -> 15488, 256 -> 20736 (min^2 GPUs).
    const auto a = scaling_answer(banded({{8, 100}, {16, 52}, {32, 28}, {64, 16}, {128, 11}, {256, 9}}), 0.5, std::nullopt);
    REQUIRE(a);
    CHECK(a->knee.gpus == 128);
    CHECK(a->knee.time_x_gpu_hours == Approx(15488.0 / 60));
    // The knee's product at p90: 15488 x 1.03^2 = 16431; 64 GPUs at p10: 16384 x 0.97^2 = 15416 <= it (in the
    // range); 256 at p10: 20736 x 0.9409 = 19511 > it (out).
    CHECK(a->knee.range_low == 64);
    CHECK(a->knee.range_high == 128);
    CHECK_FALSE(a->knee.at_largest);
    // Two curves a few per cent apart at one count move the knee within the range, not out of it: 64 GPUs at
    // 0.96 x 16 min (15.36^2 x 64 = 15099 < 15488) make 64 the knee, and the range is still 64..128 (128 at p10:
    // 14573 <= 15099 x 1.03^2 = 16019).
    const auto moved = scaling_answer(banded({{8, 100}, {16, 52}, {32, 28}, {64, 0.96 * 16}, {128, 11}, {256, 9}}), 0.5,
                                      std::nullopt);
    CHECK(moved->knee.gpus == 64);
    CHECK(moved->knee.range_low == 64);
    CHECK(moved->knee.range_high == 128);
    // Still falling at the largest count: said, since the minimum may lie beyond the sweep.
    CHECK(scaling_answer(banded({{8, 100}, {16, 45}}), 0.5, std::nullopt)->knee.at_largest);
}

TEST_CASE("largest doubling that pays scans every doubling, past the first that fails", "[planning]") {
    // Marginal efficiencies: 8->16 0.833, 16->32 0.75, 32->64 0.571, 64->128 1.17 (a superlinear step).
    const std::vector<ScalingSample> series{{8, 100.0}, {16, 60.0}, {32, 40.0}, {64, 35.0}, {128, 15.0}};
    const auto a = scaling_answer(series, 0.75, std::nullopt);
    REQUIRE(a->paying_doubling);
    CHECK(a->paying_doubling->gpus == 64);
    CHECK(a->paying_doubling->to_gpus == 128);
    CHECK(a->paying_doubling->efficiency == Approx(35.0 / 30.0));
    CHECK(a->doublings_judged == 4);
    CHECK(break_even(series, 8, 0.75)->gpus == 32);   // the seed's walk stops at the first dip
    CHECK_FALSE(scaling_answer(series, 1.2, std::nullopt)->paying_doubling);
}

TEST_CASE("cost-optimal count: the fewest GPU-hours at p90 within the deadline", "[planning]") {
    // p90 = 1.03 x T. Deadline 30 min: 32 GPUs (28.84 min, 15.4 GPU-h) and 64 (16.48, 17.6) meet it: 32.
    const auto series = banded({{8, 100}, {16, 52}, {32, 28}, {64, 16}});
    const auto a = scaling_answer(series, 0.5, 30.0);
    REQUIRE(a->cost_optimal);
    CHECK(a->cost_optimal->gpus == 32);
    CHECK(a->cost_optimal->ttt_p90_minutes == Approx(28.84));
    CHECK(a->cost_optimal->gpu_hours_p90 == Approx(32 * 28.84 / 60));
    // Billed in whole units: rented GPU-hours at p50 scale with the p90 time.
    auto rented = series;
    rented[2].rented_gpu_hours = 100;   // 32 GPUs billed far more than used: 64 becomes the cheaper
    CHECK(scaling_answer(rented, 0.5, 30.0)->cost_optimal->gpus == 64);
    const auto none = scaling_answer(series, 0.5, 10.0);
    CHECK_FALSE(none->cost_optimal);
    CHECK_FALSE(none->deadline_met);
}

TEST_CASE("Pareto front of time-to-train vs GPU-hours", "[planning]") {
    // (9, 7) is dominated by (8, 6); (11, 5) by (10, 5).
    const std::vector<ParetoCandidate> c{{10, 5}, {8, 6}, {12, 4}, {9, 7}, {11, 5}};
    const auto front = pareto_front(c);
    REQUIRE(front == std::vector<std::size_t>{1, 0, 2});
    REQUIRE(pareto_front({}).empty());
    REQUIRE(pareto_front({{1, 1}}) == std::vector<std::size_t>{0});
    // Exact twins dominate nothing: both are on the front (docs/results-schema.md), also behind a better point
    // in one dimension; a point equal in one dimension and worse in the other is still dominated.
    REQUIRE(pareto_front({{10, 5}, {8, 6}, {10, 5}}) == std::vector<std::size_t>{1, 0, 2});
    REQUIRE(pareto_front({{10, 5}, {10, 5}}) == std::vector<std::size_t>{0, 1});
    REQUIRE(pareto_front({{10, 5}, {10, 6}, {11, 5}}) == std::vector<std::size_t>{0});
}

TEST_CASE("energy of a run: GPU busy at TDP, the rest at idle, nodes, network, PUE", "[planning]") {
    RunProfile run;
    run.gpus = 16;
    run.rented_gpus = 16;
    run.units = 2;
    run.unit_watts = 2500;
    run.ttt_seconds = 3600;
    run.busy_seconds = 2700;
    run.gpu_tdp_watts = 700;
    run.gpu_idle_watts = 100;
    run.network_switches = 0.75;
    EnergyParameters p;
    p.node_watts = 2500;
    p.switch_watts = 1300;
    p.pue = 1.2;
    const EnergyBreakdown e = energy_of(run, p);
    // 16 x (2700 s x 700 W + 900 s x 100 W) = 31.68 MJ = 8.8 kWh
    REQUIRE(e.gpu_kwh == Approx(8.8));
    // 2 nodes x 2500 W x 1 h = 5 kWh; 0.75 switches x 1300 W x 1 h = 0.975 kWh
    REQUIRE(e.node_kwh == Approx(5.0));
    REQUIRE(e.network_kwh == Approx(0.975));
    REQUIRE(e.it_kwh == Approx(14.775));
    REQUIRE(e.facility_kwh == Approx(14.775 * 1.2));
    run.busy_seconds = 4000;   // more busy time than run time is a bug
    REQUIRE_THROWS_AS(energy_of(run, p), InternalError);
}

TEST_CASE("network switch attribution and prices", "[planning]") {
    REQUIRE(network_switches_for(8, 8, FabricOptions{}) == 0.0);          // one node: no scale-out fabric
    REQUIRE(network_switches_for(16, 8, FabricOptions{}) == Approx(16.0 * 3 / 64));   // two tiers: 3 switch ports per NIC
    // 144-port switches, 2 planes: each plane's 3 ports per NIC, of 144 a switch, twice.
    REQUIRE(network_switches_for(16, 8, FabricOptions{.switch_ports = 144, .planes = 2}) == Approx(2 * 16.0 * 3 / 144));
    CostParameters cost;
    REQUIRE(cost.price_for("dgx-h100") == 2.5);
    REQUIRE(cost.price_for("unknown-system") == cost.default_price);
    // GPU-hours x price: 3.7 GPU-hours at 2.5 = 9.25
    REQUIRE(3.7 * cost.price_for("dgx-h100") == Approx(9.25));
}

namespace {
// Synthetic monotone model: system "a" takes T = 1000/N + 1 minutes at 1 per GPU-hour; system "b" is twice as fast
// (T = 500/N + 0.5) at 3 per GPU-hour; no spread (p10 = p50 = p90). Counts above 4096 fail.
PlanEvaluation synthetic(const PlanCandidate& c) {
    return c.system == "b" ? test::linear_plan_model(c, 500, 0.5, 3.0) : test::linear_plan_model(c, 1000, 1.0, 1.0);
}
PlanQuery synthetic_query(std::vector<std::string> systems) {
    PlanQuery q;
    q.systems = std::move(systems);
    q.gpu_counts = plan_gpu_grid(8, 1024);
    q.unit_of = [](const std::string&) { return PlanUnit{AllocationUnit::node, 8}; };
    q.threads = 1;
    return q;
}
}  // namespace

TEST_CASE("plan: fewest GPUs within a deadline bisects to whole nodes", "[planning]") {
    PlanQuery q = synthetic_query({"a"});
    q.constraints.deadline_minutes = 10;   // 1000/N + 1 <= 10  <=>  N >= 111.1  ->  112 (14 nodes)
    q.objective = Objective::gpus;
    const PlanAnswer a = answer_plan_query(q, synthetic);
    REQUIRE(a.best);
    REQUIRE(a.best->candidate.gpus == 112);
    REQUIRE(a.best->evaluation.ttt_minutes <= 10);
    CostParameters cost;
    REQUIRE(describe_constraints(q.constraints, cost) == "time-to-train <= 10.0 min at p90");
    // Not at the top of the grid (8..1024): the answer is not limited by the search range.
    REQUIRE_FALSE(at_search_limit(q, *a.best));
}

TEST_CASE("plan report: durations, budgets with their currency", "[planning]") {
    // Three significant figures, zeros kept; s under a minute, min under two hours, h under two days, else d.
    REQUIRE(format_duration(5.0 / 60.0) == "5.00 s");    // not "0.0833333 min"
    REQUIRE(format_duration(0.102) == "6.12 s");
    REQUIRE(format_duration(1.5) == "1.50 min");
    REQUIRE(format_duration(10) == "10.0 min");
    REQUIRE(format_duration(12.34) == "12.3 min");
    REQUIRE(format_duration(105) == "105 min");
    REQUIRE(format_duration(180) == "3.00 h");
    REQUIRE(format_duration(47.9 * 60) == "47.9 h");
    REQUIRE(format_duration(14 * 24 * 60.0) == "14.0 d");   // a pre-training run reads in days
    REQUIRE(format_duration(9.996) == "10.0 min");        // rounding into the next decade keeps 3 figures
    REQUIRE(format_duration(0.1) != format_duration(0.11));   // BERT-scale times stay apart (6.00 s, 6.60 s)
    REQUIRE(three_significant(1234.4) == "1234");
    PlanConstraints c;
    c.deadline_minutes = 5.0 / 60.0;
    c.budget_gpu_hours = 12345.5;
    c.budget_money = 5000;
    CostParameters cost;
    REQUIRE(describe_constraints(c, cost) ==
            "time-to-train <= 5.00 s at p90 and GPU-hours <= 12345.5 at p90 and cost <= 5000 USD at p90");
    c.confidence = Confidence::p50;
    c.margin = 0.1;
    REQUIRE(describe_constraints(c, cost) ==
            "time-to-train <= 5.00 s at p50 less the 10% margin (<= 4.50 s) and GPU-hours <= 12345.5 at p50 less the "
            "10% margin (<= 11111) and cost <= 5000 USD at p50 less the 10% margin (<= 4500 USD)");
}

TEST_CASE("plan report: nothing feasible names the closest candidates, the search range limit is flagged", "[planning]") {
    PlanQuery q = synthetic_query({"a", "b"});
    q.constraints.deadline_minutes = 0.5;   // b's floor is 0.5 + 500/N > 0.5: infeasible everywhere
    q.constraints.budget_gpu_hours = 1;     // a: (1000 + N)/60 >= 16.8; b: (500 + 0.5 N)/60 >= 8.4
    q.objective = Objective::time;
    const PlanAnswer a = answer_plan_query(q, synthetic);
    REQUIRE_FALSE(a.best);
    const auto closest = closest_candidates(q, a);
    REQUIRE(closest.size() == 2);
    REQUIRE(closest[0].criterion == "fastest");
    REQUIRE(closest[0].candidate.candidate.system == "b");
    REQUIRE(closest[0].candidate.candidate.gpus == 1024);   // the fastest is the largest count searched...
    REQUIRE(at_search_limit(q, closest[0].candidate));      // ...so the search range limits it
    REQUIRE(closest[0].ratio == Approx((500.0 / 1024 + 0.5) / 0.5));
    REQUIRE(closest[1].criterion == "fewest GPU-hours");
    REQUIRE(closest[1].candidate.candidate.system == "b");
    REQUIRE(closest[1].candidate.candidate.gpus == 8);
    // Each names its limit and every limit it misses: the fastest also misses the GPU-hour budget
    // ((500 + 512) / 60 = 16.9 GPU-hours against 1), the fewest GPU-hours also misses the deadline.
    CHECK(closest[0].limit == "the deadline");
    REQUIRE(closest[0].missed.size() == 2);
    CHECK(closest[0].missed[1].first == "the GPU-hour budget");
    CHECK(closest[0].missed[1].second == Approx((500.0 + 0.5 * 1024) / 60));
    CHECK(closest[1].limit == "the GPU-hour budget");
    const CostParameters cost;
    const EnergyParameters energy;
    const PlanReportContext ctx{"w", &q, &cost, &energy};
    const std::string table = format_plan_table(ctx, a);
    INFO(table);
    REQUIRE(table.find("fastest: 1024 GPUs of b") != std::string::npos);
    REQUIRE(table.find("x the deadline (misses") != std::string::npos);
    REQUIRE(table.find("limited by the search range") != std::string::npos);
}

TEST_CASE("plan: fastest within a GPU-hour budget", "[planning]") {
    PlanQuery q = synthetic_query({"a"});
    q.constraints.budget_gpu_hours = 20;   // (1000 + N) / 60 <= 20  <=>  N <= 200
    q.objective = Objective::time;
    const PlanAnswer a = answer_plan_query(q, synthetic);
    REQUIRE(a.best);
    REQUIRE(a.best->candidate.gpus == 200);
    REQUIRE(a.best->evaluation.ttt_minutes == Approx(6.0));
}

TEST_CASE("plan: cheapest within a deadline across systems, money budget, nothing feasible", "[planning]") {
    PlanQuery q = synthetic_query({"a", "b"});
    q.constraints.deadline_minutes = 10;
    q.objective = Objective::cost;
    // a: N >= 112, cost (1000 + 112)/60 = 18.53; b: N >= 56, cost 3 (500 + 28)/60 = 26.4.
    PlanAnswer a = answer_plan_query(q, synthetic);
    REQUIRE(a.best->candidate.system == "a");
    REQUIRE(a.best->candidate.gpus == 112);
    REQUIRE(a.best->evaluation.cost == Approx(1112.0 / 60.0));
    q.objective = Objective::gpus;   // fewest GPUs: b at 56
    a = answer_plan_query(q, synthetic);
    REQUIRE(a.best->candidate.system == "b");
    REQUIRE(a.best->candidate.gpus == 56);

    PlanQuery money = synthetic_query({"a", "b"});
    money.constraints.budget_money = 30;   // a: N <= 800 (T 2.25); b: 3 (500 + 0.5 N)/60 <= 30 -> N <= 200 (T 3)
    money.objective = Objective::time;
    a = answer_plan_query(money, synthetic);
    REQUIRE(a.best->candidate.system == "a");
    REQUIRE(a.best->candidate.gpus == 800);

    PlanQuery impossible = synthetic_query({"a"});
    impossible.constraints.deadline_minutes = 0.5;   // T > 1 always
    REQUIRE_FALSE(answer_plan_query(impossible, synthetic).best);
    PlanQuery none = synthetic_query({"a"});
    REQUIRE_THROWS_AS(answer_plan_query(none, synthetic), InputError);
}

TEST_CASE("plan: a cancelled search answers from what it evaluated", "[planning][interrupt]") {
    PlanQuery q = synthetic_query({"a"});
    q.constraints.deadline_minutes = 10;
    q.objective = Objective::gpus;
    const PlanAnswer full = answer_plan_query(q, synthetic);
    REQUIRE_FALSE(full.interrupted);
    REQUIRE(full.grid_evaluated == full.grid_size);
    REQUIRE(full.evaluated.size() > full.grid_size);   // the boundary was bisected

    // Cancelled after 12 grid evaluations: those 12 are kept, in grid order, and nothing else runs.
    std::atomic<int> polls{0};
    q.cancelled = [&] { return ++polls > 12; };
    const PlanAnswer cut = answer_plan_query(q, synthetic);
    REQUIRE(cut.interrupted);
    REQUIRE(cut.grid_size == full.grid_size);
    REQUIRE(cut.grid_evaluated == 12);
    REQUIRE(cut.evaluated.size() == 12);   // no refinement after the interrupt
    std::optional<int> fewest_feasible;
    for (std::size_t i = 0; i < cut.evaluated.size(); ++i) {
        if (i > 0) REQUIRE(cut.evaluated[i].candidate.gpus > cut.evaluated[i - 1].candidate.gpus);
        if (cut.evaluated[i].feasible && !fewest_feasible) fewest_feasible = cut.evaluated[i].candidate.gpus;
    }
    REQUIRE(cut.best.has_value() == fewest_feasible.has_value());
    if (cut.best) REQUIRE(cut.best->candidate.gpus == *fewest_feasible);

    // Cancelled before anything ran: nothing evaluated, no answer.
    q.cancelled = [] { return true; };
    const PlanAnswer none = answer_plan_query(q, synthetic);
    REQUIRE(none.interrupted);
    REQUIRE(none.evaluated.empty());
    REQUIRE_FALSE(none.best);
}

TEST_CASE("plan grid and objectives", "[planning]") {
    REQUIRE(plan_gpu_grid(8, 100) == std::vector<int>{8, 12, 16, 24, 32, 48, 64, 96});
    REQUIRE(parse_objective("gpu-hours") == Objective::gpu_hours);
    REQUIRE_THROWS_AS(parse_objective("speed"), InputError);
}

TEST_CASE("plan grid: the workload's published counts are searched too, inside the range and whole units", "[planning]") {
    PlanQuery query;
    query.systems = {"dgx-h100"};
    query.gpu_counts = plan_gpu_grid(8, 4096);
    add_published_counts(query, "retinanet");
    const std::vector<int> counts = plan_counts_for(query, "dgx-h100");
    // NVIDIA's v4.1 RetinaNet ran 2,528 GPUs (316 nodes), between the grid's 2,048 and 3,072.
    CHECK(std::find(counts.begin(), counts.end(), 2528) != counts.end());
    CHECK(std::is_sorted(counts.begin(), counts.end()));
    CHECK(std::adjacent_find(counts.begin(), counts.end()) == counts.end());
    for (int n : counts) CHECK((n % 8 == 0 && n >= 8 && n <= 4096));
    query.gpu_counts = plan_gpu_grid(8, 2048);   // outside the range: not searched
    const std::vector<int> smaller = plan_counts_for(query, "dgx-h100");
    CHECK(std::find(smaller.begin(), smaller.end(), 2528) == smaller.end());
}

namespace {
std::vector<int> fake_published(const std::string& workload, const std::string&) {
    return workload == "bert" ? std::vector<int>{4, 24, 3472} : std::vector<int>{};
}
}  // namespace

TEST_CASE("sweep expansion: deterministic nesting order, published counts in range", "[planning]") {
    SweepSpec spec;
    spec.workloads = {"bert", "sd"};
    spec.systems = {"dgx-h100"};
    spec.gpu_counts = {8, 16, 32};
    spec.add_published_gpu_counts = true;
    NetworkOption xdr;
    xdr.name = "xdr";
    xdr.nic = NicSpeed::Xdr800;
    spec.networks = {NetworkOption{}, xdr};
    const auto points = expand_sweep(spec, fake_published);
    // bert: counts 8, 16, 24, 32 (4 and 3472 out of range) x 2 networks; sd: 3 x 2.
    REQUIRE(points.size() == 14);
    REQUIRE(points[0].workload == "bert");
    REQUIRE(points[2].gpus == 24);
    REQUIRE(points[4].network.name == "xdr");
    REQUIRE(points[8].workload == "stable_diffusion");
    for (std::size_t i = 0; i < points.size(); ++i) REQUIRE(points[i].index == static_cast<int>(i));
    REQUIRE(doubling_counts(8, 100) == std::vector<int>{8, 16, 32, 64});
}

TEST_CASE("hardware variants override the base GPU", "[planning]") {
    HardwareVariant v;
    v.name = "h100-2xnvlink";
    v.base_system = "dgx-h100";
    v.nvlink_bandwidth = 900e9;
    v.compute_scale = 2.0;
    const GpuSpec g = make_variant_gpu(v);
    const GpuSpec& base = find_gpu("h100");
    REQUIRE(g.hypothetical);
    REQUIRE(g.scaleup_bandwidth_per_direction == 900e9);
    REQUIRE(g.bf16_dense_flops == Approx(2 * base.bf16_dense_flops));
    REQUIRE(*g.collective_effective_link_bandwidth ==
            Approx(*base.collective_effective_link_bandwidth * 900e9 / base.scaleup_bandwidth_per_direction));
}

TEST_CASE("planning scenarios are read strictly", "[planning]") {
    const auto good = ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystems: [dgx-h100]\ngpus: {from: 8, to: 64}\n"
        "batch: [published, {global: 4096}, {per_rank: 8}, rcp_optimal]\n"
        "network: [{nic: xdr, sharp: false}, {oversubscription: 2}]\n"
        "cost: {price_per_gpu_hour: 3, currency: EUR}\nenergy: {node_power: 2000W, pue: 1.2}\n",
        "good.yaml");
    const SweepScenario s = read_sweep_scenario(good);
    REQUIRE(s.spec.gpu_counts == std::vector<int>{8, 16, 32, 64});
    REQUIRE(s.spec.batches.size() == 4);
    REQUIRE(s.spec.batches[1].rule == BatchRule::fixed_global);
    REQUIRE(s.spec.networks[0].name == "xdr-nosharp");
    REQUIRE(s.spec.networks[1].name == "ndr-over2");
    REQUIRE(s.options.cost.price_for("dgx-h100") == 3.0);
    REQUIRE(s.options.energy.node_watts == 2000.0);
    REQUIRE_FALSE(s.spec.add_published_gpu_counts);

    const auto typo = ConfigNode::load_string("scenario: sweep\nworkloads: [bert]\nsystems: [dgx-h100]\ngpuz: 8\n", "typo.yaml");
    try {
        read_sweep_scenario(typo);
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        REQUIRE(std::string(e.what()).find("typo.yaml:4") != std::string::npos);
    }
    const auto bad_system = ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystems: [dgx-h999]\ngpus: [8]\n", "bad.yaml");
    REQUIRE_THROWS_AS(read_sweep_scenario(bad_system), InputError);
    const auto plan = ConfigNode::load_string(
        "scenario: plan\nworkload: sd\ndeadline: 10min\nminimise: cost\nbudget: 500USD\n", "plan.yaml");
    const PlanScenario p = read_plan_scenario(plan);
    REQUIRE(*p.query.constraints.deadline_minutes == Approx(10.0));
    REQUIRE(*p.query.constraints.budget_money == 500.0);
    REQUIRE(p.query.objective == Objective::cost);
    REQUIRE(p.query.systems.size() == 3);
    const auto wrong_currency =
        ConfigNode::load_string("scenario: plan\nworkload: sd\nbudget: 500EUR\n", "plan.yaml");
    REQUIRE_THROWS_AS(read_plan_scenario(wrong_currency), InputError);
}

TEST_CASE("training scenarios take the fabric routing of their systems", "[planning]") {
    const auto sweep = ConfigNode::load_string(
        "scenario: scaling-study\nworkloads: [bert]\nsystem: dgx-h100\ngpus: {from: 8, to: 16}\nrouting: static\n",
        "study.yaml");
    const SweepScenario s = read_sweep_scenario(sweep);
    REQUIRE(s.spec.routing == FabricRouting::StaticEcmp);
    const std::vector<SweepPoint> points = expand_sweep(s.spec);
    REQUIRE_FALSE(points.empty());
    for (const SweepPoint& p : points) CHECK(p.routing == FabricRouting::StaticEcmp);
    // The point's prediction is made on that fabric.
    CHECK(prepare_point(points.back(), ProfileSet::load_dir(ProfileSet::default_dir()), std::nullopt)
              .scenario.system.fabric.routing == FabricRouting::StaticEcmp);
    // Default: adaptive.
    const auto plain = ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [8]\n", "plain.yaml");
    CHECK(read_sweep_scenario(plain).spec.routing == FabricRouting::Adaptive);

    const auto plan = ConfigNode::load_string(
        "scenario: plan\nworkload: bert\nsystems: [dgx-h100]\nrouting: static\ndeadline: 10min\n", "plan.yaml");
    CHECK(read_plan_scenario(plan).query.routing == FabricRouting::StaticEcmp);

    // Strict: an unknown name fails at its key and line; static routing on a what-if (analytic) sweep is refused.
    const auto unknown = ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [8]\nrouting: ecmp\n", "unknown.yaml");
    try {
        read_sweep_scenario(unknown);
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("unknown.yaml:5") != std::string::npos);
        CHECK(e.key() == "routing");
    }
    // Network what-ifs run on the simulated fabric too, so they take its routing.
    const auto what_if = ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [8, 16]\nnetwork: {nic: xdr}\nrouting: static\n",
        "whatif.yaml");
    CHECK(read_sweep_scenario(what_if).spec.routing == FabricRouting::StaticEcmp);
}

TEST_CASE("money amounts", "[planning]") {
    REQUIRE(parse_money("5000USD").amount == 5000.0);
    REQUIRE(parse_money("5000USD").currency == "USD");
    REQUIRE(parse_money("12.5 EUR").currency == "EUR");
    REQUIRE(parse_money("300").currency.empty());
    REQUIRE_THROWS_AS(parse_money("USD"), InputError);
    REQUIRE_THROWS_AS(parse_money("5e3$"), InputError);
}

TEST_CASE("sweep: a cancelled run keeps only finished points, in sweep order", "[planning][interrupt]") {
    SweepSpec spec;
    spec.workloads = {"bert"};
    spec.systems = {"dgx-h100"};
    spec.gpu_counts = {8, 16, 32, 64, 128, 256};
    const auto points = expand_sweep(spec, fake_published);
    const ProfileSet profiles = ProfileSet::load_dir(ProfileSet::default_dir());
    for (const int threads : {1, 2}) {
        SweepOptions options;
        options.threads = threads;
        std::atomic<int> polls{0};
        options.cancelled = [&] { return ++polls > 3; };   // three points start, then the interrupt
        const SweepResult cut = run_sweep(points, profiles, options);
        INFO("threads " << threads);
        REQUIRE(cut.interrupted);
        REQUIRE(cut.points_requested == points.size());
        REQUIRE(cut.points.size() == 3);
        for (std::size_t i = 1; i < cut.points.size(); ++i)
            REQUIRE(cut.points[i].point.index > cut.points[i - 1].point.index);
        // The series and its metrics are derived from the kept points only.
        REQUIRE(cut.series.size() == 1);
        REQUIRE(cut.series[0].points.size() == 3);
    }
    SweepOptions never;
    never.threads = 2;
    never.cancelled = [] { return false; };
    const SweepResult full = run_sweep(points, profiles, never);
    REQUIRE_FALSE(full.interrupted);
    REQUIRE(full.points.size() == points.size());
    REQUIRE(full.points_requested == points.size());
}
