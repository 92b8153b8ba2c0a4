// What the scaling-study / sweep reports say, on synthetic outcomes (no simulation): published comparisons made
// at the published results' own batch, superlinear notes, reference substitution, break-even wording, Pareto ties,
// the price statement.
#include <catch2/catch.hpp>

#include <string>

#include "models/planning/cost_energy.hpp"
#include "models/planning/published_results.hpp"
#include "models/planning/results_format.hpp"
#include "models/planning/sweep_runner.hpp"

using namespace ttsim;
using namespace ttsim::planning;

namespace {

// An ok point of a bert series on dgx-h100 with the given time-to-train and global batch.
PointResult synthetic_point(int index, int gpus, double ttt_minutes, int global_batch,
                            BatchRule rule = BatchRule::published) {
    PointResult r;
    r.point.index = index;
    r.point.workload = "bert";
    r.point.system = r.point.base_system = "dgx-h100";
    r.point.gpus = gpus;
    r.point.batch.rule = rule;
    r.outcome.ok = true;
    r.outcome.catalog_gpu = "H100-SXM";
    r.outcome.gpu_tdp_watts = 700;
    r.outcome.gpu_idle_watts = 80;
    Prediction& p = r.outcome.prediction;
    p.ttt_minutes = ttt_minutes;
    p.gpu_hours = gpus * ttt_minutes / 60.0;
    p.global_batch = global_batch;
    p.samples_to_converge = 1e6;
    return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool any_note_contains(const PointResult& r, const std::string& part) {
    for (const auto& n : r.notes)
        if (contains(n, part)) return true;
    return false;
}

}  // namespace

TEST_CASE("published error: a prediction at the published result's own batch, not the row's", "[planning][report]") {
    // The row predicts 1.09 min at batch 3600; the published result (Clemson, 48 GPUs) ran 6912 in 1.3327 min and
    // ttsim predicts 1.35 min at 6912. The error is +1.3 %, not the -18 % of 1.09 against 1.3327.
    PublishedIndex index;
    index.add("bert", "H100-SXM", 48, {1.3327, 6912, 100});
    PublishedPredictor predict = [](const std::string& family, const PublishedResult& r) -> std::optional<double> {
        REQUIRE(family == "H100-SXM");
        REQUIRE(r.csv_line == 100);
        return 1.35;
    };
    std::vector<PointResult> points{synthetic_point(0, 8, 5.4, 768), synthetic_point(1, 48, 1.09, 3600)};
    const SweepResult result = derive_sweep_metrics(points, SweepOptions{}, &index, predict);
    const PointResult& r = result.points[1];
    REQUIRE(r.published);
    REQUIRE(r.published->global_batches() == std::vector<int>{6912});
    REQUIRE(r.comparison);
    REQUIRE(r.comparison->predicted_minutes == Approx(1.35));
    REQUIRE(r.comparison->error_percent == Approx((1.35 - 1.3327) / 1.3327 * 100));
    REQUIRE(any_note_contains(r, "published v4.1 batch 6912 (this row: 3600)"));
    const std::string table = format_sweep_table("t", result);
    INFO(table);
    REQUIRE(contains(table, "+1.3%"));
    REQUIRE_FALSE(contains(table, "-18.2%"));
    REQUIRE(contains(table, "error = (ttsim@v4.1 - v4.1 TTT) / v4.1 TTT"));   // the footer says what it compares
    const std::string json = format_sweep_json("scaling-study", "t", result);
    REQUIRE(contains(json, "\"global_batches\": [\n"));
    REQUIRE(contains(json, "\"predicted_minutes\": 1.35"));
    // Several results at one count: the median of the predictions against the median of the scores.
    index.add("bert", "H100-SXM", 8, {5.0, 768, 1});
    index.add("bert", "H100-SXM", 8, {6.0, 768, 2});
    const PublishedTime eight = *index.find("bert", "H100-SXM", 8);
    const auto c = compare_with_published(eight, "H100-SXM", [](const std::string&, const PublishedResult& m) {
        return std::optional<double>(m.csv_line == 1 ? 5.5 : 6.5);
    });
    REQUIRE(c->predicted_minutes == Approx(6.0));
    REQUIRE(c->error_percent == Approx((6.0 - 5.5) / 5.5 * 100));
    REQUIRE_FALSE(compare_with_published(eight, "H100-SXM", {}));   // no predictor: no error claimed
}

TEST_CASE("superlinear efficiency is explained, never silent", "[planning][report]") {
    // 16 GPUs: batch 768 (48 per GPU), 10 min; 32 GPUs: batch 2304 (72 per GPU), 4.9 min -> efficiency 1.0204.
    std::vector<PointResult> points{synthetic_point(0, 16, 10.0, 768), synthetic_point(1, 32, 4.9, 2304),
                                    synthetic_point(2, 64, 3.0, 4608)};
    const SweepResult result = derive_sweep_metrics(points, SweepOptions{}, nullptr);
    const PointResult& r = result.points[1];
    REQUIRE(r.metrics.efficiency == Approx(10.0 / 4.9 / 2));
    REQUIRE(any_note_contains(r, "superlinear: time-to-train efficiency 1.0204 (above 1) from 16 to 32 GPUs: the "
                                 "per-GPU batch grew from 48 to 72 samples, so each GPU is used more efficiently"));
    REQUIRE(any_note_contains(r, "superlinear: marginal doubling efficiency 1.0204"));
    REQUIRE(result.points[0].notes.empty());   // the reference itself (efficiency exactly 1)
    REQUIRE(result.points[2].notes.empty());   // 0.83: below 1, nothing to explain
    REQUIRE(contains(format_sweep_table("t", result), "superlinear"));
}

TEST_CASE("a reference that did not run is substituted visibly", "[planning][report]") {
    std::vector<PointResult> points{synthetic_point(0, 8, 10.0, 768), synthetic_point(1, 16, 6.0, 768),
                                    synthetic_point(2, 32, 4.0, 768)};
    points[1].outcome.ok = false;
    points[1].outcome.error = "does not run";
    SweepOptions options;
    options.reference_gpus = 16;
    const SweepResult result = derive_sweep_metrics(points, options, nullptr);
    REQUIRE(result.series[0].reference_gpus == 8);
    REQUIRE(result.series[0].requested_reference_gpus == 16);
    REQUIRE(contains(format_sweep_table("t", result), "substituted: metrics.reference_gpus 16 has no successful point"));
    options.reference_gpus = 8;
    REQUIRE_FALSE(derive_sweep_metrics(points, options, nullptr).series[0].requested_reference_gpus);
}

TEST_CASE("break-even in words: the decision is visible, no doublings are not 'all above'", "[planning][report]") {
    REQUIRE(decision_value(0.4966, 0.5) == "0.497 < 0.500");   // "0.50" against "0.50" hid the decision
    REQUIRE(decision_value(0.75, 0.5) == "0.75 >= 0.50");
    REQUIRE(decision_value(0.5, 0.5) == "0.50 >= 0.50");
    SweepOptions options;
    options.break_even_rule = BreakEvenRule::doubling_walk;   // the seed's definition, kept as a named rule
    // 8, 64, 512: no doubling of 8 in the series.
    SweepResult gaps = derive_sweep_metrics(
        {synthetic_point(0, 8, 10.0, 768), synthetic_point(1, 64, 2.0, 768), synthetic_point(2, 512, 1.0, 768)},
        options, nullptr);
    REQUIRE_FALSE(gaps.series[0].break_even);
    const std::string text = describe_series_break_even(gaps.series[0], options);
    REQUIRE(contains(text, "not judged"));
    REQUIRE(contains(text, "no doubling to judge"));
    REQUIRE_FALSE(contains(format_sweep_table("t", gaps), "stayed above"));
    // 8 -> 16 -> 32 with 0.4966 at 32: the decision shows three decimals.
    SweepResult close = derive_sweep_metrics(
        {synthetic_point(0, 8, 10.0, 768), synthetic_point(1, 16, 6.0, 768), synthetic_point(2, 32, 6.0 / (2 * 0.4966), 768)},
        options, nullptr);
    REQUIRE(describe_series_break_even(close.series[0], options) ==
            "break-even 16 GPUs: doubling to 32 gives T(N/2)/(2 T(N)) = 0.497 < 0.500");
}

TEST_CASE("Pareto ties across series are all on the front", "[planning][report]") {
    // rcp_optimal picked the published batch at 16 GPUs: the two points are identical, both on the front.
    std::vector<PointResult> points{synthetic_point(0, 8, 10.0, 768), synthetic_point(1, 16, 6.0, 768),
                                    synthetic_point(2, 8, 10.0, 768, BatchRule::rcp_optimal),
                                    synthetic_point(3, 16, 6.0, 768, BatchRule::rcp_optimal)};
    const SweepResult result = derive_sweep_metrics(points, SweepOptions{}, nullptr);
    for (const PointResult& r : result.points) REQUIRE(r.pareto);
}

TEST_CASE("prices per GPU-hour: given or the default estimate, and where it comes from", "[planning][report]") {
    CostParameters cost;
    REQUIRE(cost.price_is_estimate("dgx-b200"));
    REQUIRE(cost.describe_prices({"dgx-b200"}) ==
            "dgx-b200 5.00 USD (default estimate); default estimates are on-demand cloud list prices "
            "(models/planning/cost_energy.hpp), set your own with cost.price_per_gpu_hour or --price");
    cost.price_per_gpu_hour["dgx-h100"] = 2.0;
    cost.given_by_user.insert("dgx-h100");
    REQUIRE(cost.describe_prices({"dgx-h100"}) == "dgx-h100 2.00 USD");
    cost.price_per_gpu_hour.clear();
    cost.default_price = 4;
    cost.default_given_by_user = true;
    REQUIRE_FALSE(cost.price_is_estimate("dgx-b200"));
    const SweepResult result = derive_sweep_metrics({synthetic_point(0, 8, 10.0, 768)}, SweepOptions{}, nullptr);
    REQUIRE(contains(format_sweep_table("t", result), "cost = rented GPU-hours x price per GPU-hour: dgx-h100 2.50 USD "
                                                      "(default estimate)"));
}

TEST_CASE("the cost front differs from the GPU-hours front only where prices differ", "[planning][report]") {
    // Two systems at 64 GPUs: b200 is faster and uses fewer GPU-hours, h100 is slower but its GPU-hours are
    // cheap. On GPU-hours h100 is dominated; on cost it is the cheapest point, so it is on the cost front.
    PointResult h100 = synthetic_point(0, 64, 10.0, 768);
    PointResult b200 = synthetic_point(1, 64, 8.0, 768);
    b200.point.system = b200.point.base_system = "dgx-b200";
    b200.outcome.catalog_gpu = "B200";
    SweepOptions options;
    options.cost.price_per_gpu_hour["dgx-h100"] = 1.0;
    options.cost.price_per_gpu_hour["dgx-b200"] = 5.0;
    SweepResult result = derive_sweep_metrics({h100, b200}, options, nullptr);
    REQUIRE_FALSE(result.points[0].pareto);
    REQUIRE(result.points[0].pareto_cost);
    REQUIRE(result.points[1].pareto);
    REQUIRE(result.points[1].pareto_cost);
    REQUIRE(contains(format_sweep_table("t", result), "pareto($)"));
    REQUIRE(contains(format_sweep_csv(result), ",pareto_cost,layout_choice,published_layout_minutes,mfu,model_tflops_per_gpu,goodput,"
                                                           "interruptions,checkpoint_interval_minutes,expected_wall_minutes,"
                                                           "wall_p90_minutes\n"));
    // Same price everywhere: the two fronts agree.
    options.cost.price_per_gpu_hour["dgx-b200"] = 1.0;
    result = derive_sweep_metrics({h100, b200}, options, nullptr);
    for (const PointResult& r : result.points) REQUIRE(r.pareto == r.pareto_cost);
}
