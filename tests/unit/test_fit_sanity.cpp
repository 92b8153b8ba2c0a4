// The sanity a fit must pass before its profiles are written (models/calibration/fit_sanity.hpp): hand-made fits
// that break each rule, the likely outliers a violation names, and the shipped fit passing.
#include <catch2/catch.hpp>

#include <algorithm>

#include "models/calibration/fit_sanity.hpp"
#include "models/compute/profile_files.hpp"
#include "tests/unit/prediction_helpers.hpp"

using namespace ttsim;

namespace {

bool has_rule(const std::vector<SanityViolation>& found, const std::string& rule, const std::string& text = "") {
    return std::any_of(found.begin(), found.end(), [&](const SanityViolation& v) {
        return v.rule == rule && v.detail.find(text) != std::string::npos;
    });
}

ComputeProfile shipped(const char* workload, const char* gpu) {
    return load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level)
        .find(find_workload(workload), find_gpu(gpu));
}

// A series by hand: at 8 GPUs a batch of 64 (8 per GPU), 1,000 steps of 100 ms compute + 10 ms exposed
// communication = 110 s = 1.8333 min; at 16, 32 and 64 GPUs the same 8 samples per GPU. The 64-GPU run needs
// 1,000 x 8 / 150 more samples (150 steps: steps ratio 6.667) and its step all-reduces 40 ms. No evaluations.
//   ideal bound = 1000 / 150 = 6.667x
//   communication bound = (1000 x 100 ms) / (150 x (100 + 40) ms) = 100 s / 21 s = 4.762x
Prediction point(int gpus, long long steps, double compute_ms, double comm_ms, double ttt_minutes) {
    Prediction p;
    p.gpus = gpus;
    p.global_batch = 8 * gpus;
    p.steps = steps;
    p.compute_ms = compute_ms;
    p.comm_total_ms = comm_ms;
    p.ttt_minutes = ttt_minutes;
    return p;
}

ScalingSeries series(double ttt64_minutes, double compute16_ms = 100) {
    ScalingSeries s;
    s.predictions = {point(8, 1000, 100, 10, 1000 * 0.110 / 60), point(16, 600, compute16_ms, 20, 600 * 0.120 / 60),
                     point(32, 300, 100, 30, 300 * 0.130 / 60), point(64, 150, 100, 40, ttt64_minutes)};
    // E[max of N standard normals] at N = 8, 16, 32, 64.
    s.straggler_sigmas = {1.4236, 1.7660, 2.0697, 2.3367};
    return s;
}

ComputeProfile plain_profile() {
    ComputeProfile p;
    p.workload = "bert";
    p.gpu = "H100-SXM";
    return p;
}

}  // namespace

TEST_CASE("fit sanity: a series between its bounds passes", "[calibration]") {
    // 150 steps of 120 ms = 0.3 min: speedup 1.8333 / 0.3 = 6.11x, between 4.762x and 6.667x.
    CHECK(scaling_violations(plain_profile(), series(150 * 0.120 / 60)).empty());
}

TEST_CASE("fit sanity: no speedup from 8 to 64 GPUs breaks the communication bound", "[calibration]") {
    // 1.80 min at 64 GPUs: 1.02x, below 4.762x (a per-run cost holding the run's time).
    const auto found = scaling_violations(plain_profile(), series(1.80));
    REQUIRE(found.size() == 1);
    CHECK(found[0].rule == "speedup");
    CHECK(found[0].detail.find("below the communication bound") != std::string::npos);
    CHECK(found[0].detail.find("4.76x") != std::string::npos);
    // Just above the bound passes: 1.8333 / 4.762 = 0.385 min.
    CHECK(scaling_violations(plain_profile(), series(0.384)).empty());
}

TEST_CASE("fit sanity: more than ideal speedup breaks the ideal bound", "[calibration]") {
    // 0.2 min at 64 GPUs: 9.17x, above 6.667x (a 64-GPU step shorter than the 8-GPU one at the same batch per GPU).
    const auto found = scaling_violations(plain_profile(), series(0.2));
    REQUIRE(found.size() == 1);
    CHECK(found[0].detail.find("above the ideal") != std::string::npos);
    CHECK(found[0].detail.find("6.67x") != std::string::npos);
}

TEST_CASE("fit sanity: a distributed optimizer's smaller shard raises the ideal bound by what it saves", "[calibration]") {
    // The 8-GPU step of 110 ms holds a 10 ms optimizer update on its 1/8 shard; at 64 GPUs the shard is 1/64: 1.25
    // ms. Ideal: 6.667 x 110 / (110 - 8.75) = 7.243x.
    auto with_optimizer = [](double ttt64_minutes) {
        ScalingSeries s = series(ttt64_minutes);
        s.predictions[0].step_ms = 110;
        s.predictions[0].optimizer_ms = 10;
        s.predictions[3].optimizer_ms = 1.25;
        return s;
    };
    // 150 steps of 102.5 ms: 7.15x, above the steps ratio, within what the shard saves.
    CHECK(scaling_violations(plain_profile(), with_optimizer(150 * 0.1025 / 60)).empty());
    ScalingSeries unsharded = with_optimizer(150 * 0.1025 / 60);
    unsharded.predictions[0].optimizer_ms = unsharded.predictions[3].optimizer_ms = 0;
    CHECK(has_rule(scaling_violations(plain_profile(), unsharded), "speedup", "ideal 6.67x"));
    // 150 steps of 95 ms: 7.72x, beyond even that.
    const auto found = scaling_violations(plain_profile(), with_optimizer(150 * 0.095 / 60));
    REQUIRE(found.size() == 1);
    CHECK(found[0].detail.find("above the ideal") != std::string::npos);
    CHECK(found[0].detail.find("ideal 7.24x") != std::string::npos);
    CHECK(found[0].detail.find("optimizer update 10 -> 1.25 ms a step") != std::string::npos);
}

TEST_CASE("fit sanity: compute per sample growing with the GPU count beyond the straggler allowance", "[calibration]") {
    // At 16 GPUs the allowance is 5 % x (1.7660 - 1.4236) = 1.71 %: 101.7 ms passes, 101.8 ms does not.
    CHECK_FALSE(has_rule(scaling_violations(plain_profile(), series(0.3, 101.7)), "compute at scale"));
    const auto found = scaling_violations(plain_profile(), series(0.3, 101.8));
    REQUIRE(has_rule(found, "compute at scale", "at 16 GPUs"));
}

TEST_CASE("fit sanity: fitted quantities outside their physical range", "[calibration]") {
    ComputeProfile p = shipped("bert", "H100-SXM");
    CHECK(range_violations(p).empty());
    p.operator_efficiency->gemm = 0.9;
    p.operator_speed = 1.2;   // 0.9 x 1.2 = 1.08: priced at the roof (operator model test), not a range violation
    CHECK(range_violations(p).empty());
    p.operator_efficiency->gemm = 1.08;
    CHECK(has_rule(range_violations(p), "range", "gemm efficiency"));
    p = shipped("bert", "H100-SXM");
    p.operator_efficiency->launch_seconds = 0;
    CHECK(has_rule(range_violations(p), "range", "launch_seconds"));
    p = shipped("bert", "H100-SXM");
    p.run_overhead_seconds = -1;
    p.tp_comm_exposed_fraction = 1.5;
    const auto found = range_violations(p);
    CHECK(found.size() == 2);
    CHECK(has_rule(found, "range", "run_overhead_seconds"));
    CHECK(has_rule(found, "range", "tp_comm_exposed_fraction"));
    ComputeProfile lumped = plain_profile();
    lumped.max_flops_fraction = 0;
    CHECK(has_rule(range_violations(lumped), "range", "max_flops_fraction"));
}

TEST_CASE("fit sanity: a per-run cost that stops the speedup is caught on the model itself", "[calibration]") {
    ComputeProfile p = shipped("retinanet", "H100-SXM");
    const ScalingSeries good = scaling_series(p);
    REQUIRE(good.predictions.size() == 4);
    CHECK(scaling_violations(p, good).empty());
    p.run_overhead_seconds = 3e4;   // eight hours a run
    CHECK(has_rule(scaling_violations(p, scaling_series(p)), "speedup", "below the communication bound"));
    p.run_overhead_seconds = 1;
    p.step_jitter_cv = 0.3;         // a 30 % step-time spread per node stretches compute at 64 GPUs
    CHECK(has_rule(scaling_violations(p, scaling_series(p)), "compute at scale", "at 64 GPUs"));
}

TEST_CASE("fit sanity: a violation names the cell's results with the largest errors", "[calibration]") {
    ComputeProfile p = shipped("bert", "H100-SXM");
    p.operator_efficiency->memory = 1.5;
    ProfileSet set;
    set.add(p);
    auto result = [](const char* workload, const char* gpu, const char* submitter, double error) {
        PointError e;
        e.workload = workload;
        e.gpu = gpu;
        e.submitter = submitter;
        e.system = "sys";
        e.gpus = 8;
        e.error = error;
        return e;
    };
    const std::vector<PointError> fitted = {result("bert", "H100-SXM", "A", 0.02), result("bert", "H100-SXM", "B", -0.5),
                                            result("bert", "H100-SXM", "C", 0.3), result("bert", "H100-SXM", "D", 0.1),
                                            result("bert", "H200-SXM", "E", 2.0), result("retinanet", "H100-SXM", "F", 1.0)};
    const FitSanity sanity = check_fit_sanity(set, fitted);
    REQUIRE_FALSE(sanity.ok());
    const SanityViolation& v = sanity.violations.front();
    CHECK(v.detail.find("memory efficiency = 1.5") != std::string::npos);
    // |log(1 + e)|: B 0.693, C 0.262, D 0.095, A 0.020; E and F are other cells.
    REQUIRE(v.likely_outliers.size() == 3);
    CHECK(v.likely_outliers[0].submitter == "B");
    CHECK(v.likely_outliers[1].submitter == "C");
    CHECK(v.likely_outliers[2].submitter == "D");
    const std::string text = format_fit_sanity(sanity);
    CHECK(text.find("likely outlier: B/sys bert on 8 GPUs, -50.0% off") != std::string::npos);
}

TEST_CASE("fit sanity: the shipped fits pass every rule", "[calibration]") {
    for (const ComputeModel model : {ComputeModel::operator_level, ComputeModel::lumped}) {
        const FitSanity sanity = check_fit_sanity(load_profiles(ProfileSet::default_dir(), model), {});
        INFO(to_string(model) << ":\n" << format_fit_sanity(sanity));
        CHECK(sanity.ok());
        CHECK(sanity.unchecked.empty());
    }
}
