// The operator model's fixed per-step cost (operator_fit.cpp build_layout): searched only where a workload's fit
// results run at two or more per-GPU batches, and otherwise held at its 10 us floor (the data cannot tell it from
// the step's kernels).
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

const SharedFit kFit = SharedFit::parse("robust,run-logs");

}  // namespace

TEST_CASE("operator model: one per-GPU batch holds the fixed step cost at its floor", "[calibration][operator]") {
    const std::vector<CalibrationPoint> four = retinanet_up_to(4);
    REQUIRE(four.size() >= 3);
    REQUIRE(per_gpu_batches(four).size() == 1);
    const CalibrationReport held = calibrate_operator_points(four, "test", kFit);
    CHECK(retinanet_profile(four, held).fixed_step_seconds == 1e-5);
    CHECK(held.data_description.find("retinanet fixed step seconds (held: one per-GPU batch) 1e-05") != std::string::npos);
}

TEST_CASE("operator model: two per-GPU batches search the fixed step cost", "[calibration][operator]") {
    const std::vector<CalibrationPoint> eight = retinanet_up_to(8);
    REQUIRE(per_gpu_batches(eight).size() == 2);
    const CalibrationReport searched = calibrate_operator_points(eight, "test", kFit);
    CHECK(searched.data_description.find("retinanet fixed step seconds (held") == std::string::npos);
    CHECK(searched.data_description.find("retinanet fixed step seconds") != std::string::npos);
}
