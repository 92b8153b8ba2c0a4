// Readable sweep tables: times to three significant figures with their unit, one footnote for messages that
// differ only in their numbers, break-even judged among Pareto points with its own wording (and plot marker)
// when the sweep ends first; a sweep whose points all failed is not an answer.
#include <catch2/catch.hpp>

#include <string>

#include "models/planning/footnotes.hpp"
#include "models/planning/results_format.hpp"
#include "models/planning/scaling_metrics.hpp"
#include "models/planning/sweep_runner.hpp"

using namespace ttsim;
using namespace ttsim::planning;

namespace {
PointResult ok_point(int index, int gpus, double ttt_minutes, std::vector<std::string> warnings = {}) {
    PointResult r;
    r.point.index = index;
    r.point.workload = "bert";
    r.point.system = r.point.base_system = "dgx-h100";
    r.point.gpus = gpus;
    r.outcome.ok = true;
    r.outcome.catalog_gpu = "H100-SXM";
    r.outcome.gpu_tdp_watts = 700;
    r.outcome.gpu_idle_watts = 80;
    r.outcome.prediction.ttt_minutes = ttt_minutes;
    r.outcome.prediction.gpu_hours = gpus * ttt_minutes / 60.0;
    r.outcome.prediction.global_batch = 768;
    r.outcome.prediction.warnings = std::move(warnings);
    return r;
}
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("footnotes: messages differing only in numbers share one note with their ranges", "[planning][report]") {
    Footnotes notes;
    CHECK(notes.add("global batch 14848 exceeds the largest RCP batch 16384; convergence extrapolated") == 1);
    CHECK(notes.add("published v4.1 batch 768 (this row: 1408)") == 2);
    CHECK(notes.add("global batch 29696 exceeds the largest RCP batch 16384; convergence extrapolated") == 1);
    CHECK(notes.add("global batch 20000 exceeds the largest RCP batch 16384; convergence extrapolated") == 1);
    CHECK(notes.add("published v4.1 batch 6912 (this row: 3600)") == 2);
    // Digits inside names are names: H100 and H200 do not merge.
    CHECK(notes.add("compared with H100-SXM") == 3);
    CHECK(notes.add("compared with H200-SXM") == 4);
    const std::vector<std::string> lines = notes.lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == "[1] global batch 14848..29696 exceeds the largest RCP batch 16384; convergence extrapolated");
    CHECK(lines[1] == "[2] published v4.1 batch 768..6912 (this row: 1408..3600)");
    CHECK(lines[2] == "[3] compared with H100-SXM");
}

TEST_CASE("sweep table: times in three significant figures, one footnote for a range of rows", "[planning][report]") {
    const std::string note_a = "global batch 9000 exceeds the largest RCP batch 8192; convergence extrapolated";
    const std::string note_b = "global batch 12000 exceeds the largest RCP batch 8192; convergence extrapolated";
    const SweepResult result = derive_sweep_metrics(
        {ok_point(0, 8, 0.4), ok_point(1, 16, 0.204, {note_a}), ok_point(2, 32, 0.102, {note_b})}, SweepOptions{},
        nullptr);
    const std::string table = format_sweep_table("t", result);
    INFO(table);
    CHECK(contains(table, " 24.0 s "));   // not "0.40" minutes
    CHECK(contains(table, " 12.2 s "));
    CHECK(contains(table, " 6.12 s "));
    CHECK(contains(table, "[1] global batch 9000..12000 exceeds the largest RCP batch 8192; convergence extrapolated"));
    CHECK_FALSE(contains(table, "[2]"));
}

TEST_CASE("break-even is judged among Pareto points, and beyond the sweep is not a break-even", "[planning][report]") {
    // 8 -> 16 -> 32 -> 64 doublings all >= 0.5 (0.96, 0.96, 0.675), but 48 GPUs is faster than 64 for fewer
    // GPU-hours: 64 is off the front, so the break-even is 32 (not "64, limited by the sweep"). The seed's
    // definition, kept as a named rule.
    SweepOptions options;
    options.break_even_rule = BreakEvenRule::doubling_walk;
    const SweepResult result = derive_sweep_metrics(
        {ok_point(0, 8, 100), ok_point(1, 16, 52), ok_point(2, 32, 27), ok_point(3, 48, 19), ok_point(4, 64, 20)},
        options, nullptr);
    REQUIRE(result.series[0].break_even);
    const BreakEven& b = *result.series[0].break_even;
    CHECK(b.gpus == 32);
    CHECK_FALSE(b.limited_by_sweep);
    REQUIRE(b.off_front);
    CHECK(*b.off_front == 64);
    CHECK(b.off_front_beaten_by == std::optional<int>(48));
    CHECK(describe_series_break_even(result.series[0], options) ==
          "break-even 32 GPUs: doubling to 64 GPUs leaves the Pareto front (48 GPUs are at least as fast, for fewer GPU-hours)");
    CHECK_FALSE(result.points[4].pareto);
    // Every doubling good and the sweep ends: a lower bound, said as such.
    const SweepResult open = derive_sweep_metrics({ok_point(0, 8, 100), ok_point(1, 16, 50)}, options, nullptr);
    REQUIRE(open.series[0].break_even);
    CHECK(open.series[0].break_even->limited_by_sweep);
    CHECK(contains(describe_series_break_even(open.series[0], options), "break-even beyond the sweep (at least 16 GPUs)"));
    // Direct: a count off the front because a smaller one is as fast ends the walk, even with a good ratio
    // (8 -> 16 at 0.5, and 12 GPUs are faster than 16).
    const auto direct = break_even({{8, 10.0, true}, {12, 9.0, true}, {16, 10.0, false}}, 8, 0.5);
    REQUIRE(direct);
    CHECK(direct->gpus == 8);
    CHECK(direct->off_front == std::optional<int>(16));
    CHECK(direct->off_front_beaten_by == std::optional<int>(12));
    // One off the front only because a larger count beats it (a superlinear 32) does not stop the walk there.
    const auto beyond = break_even({{8, 10.0, true}, {16, 5.2, false}, {32, 2.5, true}}, 8, 0.5);
    REQUIRE(beyond);
    CHECK(beyond->gpus == 32);
    CHECK_FALSE(beyond->off_front);
    CHECK(beyond->limited_by_sweep);
}
