// identified-host-cost (SharedFit, operator_fit.cpp): a workload's fixed per-step cost is searched only where its
// fit results run at two or more per-GPU batches, and is otherwise held at its 10 us floor.
#include <catch2/catch.hpp>

#include <set>

#include "models/calibration/calibration.hpp"
#include "models/calibration/operator_fit.hpp"
#include "models/compute/profile_files.hpp"
#include "calibration_helpers.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

// RetinaNet's H100 results on at most `max_gpus` GPUs (global batch 256 on 4 and 8 GPUs, v4.1_results.csv: 4 GPUs
// run 64 images per GPU only; 8 GPUs add 32).
std::vector<CalibrationPoint> retinanet_up_to(int max_gpus) { return test::h100_points({"retinanet"}, max_gpus); }

ComputeProfile retinanet_profile(const std::vector<CalibrationPoint>& points, const CalibrationReport& report) {
    return report.profiles.find(*points.front().scenario.workload, *points.front().scenario.gpu);
}

std::set<double> per_gpu_batches(const std::vector<CalibrationPoint>& points) {
    std::set<double> batches;
    for (const CalibrationPoint& p : points) batches.insert(p.scenario.samples_per_gpu);
    return batches;
}

const std::string kBase = "operator,kernel-overhead,workload-run-overhead,graph-host-overlap";

}  // namespace

TEST_CASE("identified-host-cost: one per-GPU batch holds the fixed step cost at its floor", "[calibration][operator]") {
    const std::vector<CalibrationPoint> four = retinanet_up_to(4);
    REQUIRE(four.size() >= 3);
    REQUIRE(per_gpu_batches(four).size() == 1);
    const CalibrationReport held = calibrate_operator_points(four, "test", SharedFit::parse(kBase + ",identified-host-cost"));
    CHECK(retinanet_profile(four, held).fixed_step_seconds == 1e-5);
    CHECK(held.data_description.find("retinanet fixed step seconds (held: one per-GPU batch) 1e-05") != std::string::npos);
    // Without the option the cost is a searched dimension of the same fit.
    const CalibrationReport searched = calibrate_operator_points(four, "test", SharedFit::parse(kBase));
    CHECK(searched.data_description.find("retinanet fixed step seconds (held") == std::string::npos);
    CHECK(searched.data_description.find("retinanet fixed step seconds") != std::string::npos);
}

TEST_CASE("identified-host-cost: two per-GPU batches leave the fit as it is", "[calibration][operator]") {
    const std::vector<CalibrationPoint> eight = retinanet_up_to(8);
    REQUIRE(per_gpu_batches(eight).size() == 2);
    const ComputeProfile with =
        retinanet_profile(eight, calibrate_operator_points(eight, "test", SharedFit::parse(kBase + ",identified-host-cost")));
    const ComputeProfile without = retinanet_profile(eight, calibrate_operator_points(eight, "test", SharedFit::parse(kBase)));
    CHECK(with.fixed_step_seconds == without.fixed_step_seconds);
    CHECK(with.operator_efficiency->conv == without.operator_efficiency->conv);
    CHECK(with.run_overhead_seconds == without.run_overhead_seconds);
}

TEST_CASE("identified-host-cost: an option of the operator model", "[calibration][operator]") {
    // A list may leave 'operator' to --model; --model lumped refuses the term (tests/cli/malformed/commands.txt).
    CHECK(SharedFit::parse("workload-run-overhead,identified-host-cost").operator_only_term() == "identified-host-cost");
    CHECK(SharedFit::parse("operator,identified-host-cost").identified_host_cost);
    CHECK(SharedFit::parse("operator,identified-host-cost").describe() == "operator,identified-host-cost");
}
