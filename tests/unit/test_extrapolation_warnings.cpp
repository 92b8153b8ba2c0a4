// Calibrated ranges (ComputeProfile::calibrated_range): what a profile was fitted on, written by calibration,
// read back from YAML strictly, and turned into prediction warnings outside it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "models/calibration/calibration.hpp"
#include "models/calibration/operator_fit.hpp"
#include "sim/errors.hpp"
#include "tests/unit/prediction_helpers.hpp"

using namespace ttsim;

namespace {
using test::prediction_request;

bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
    return std::any_of(warnings.begin(), warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

ComputeProfile bert_with_range(double min_x, double max_x, int max_gpus) {
    ComputeProfile p = test::shipped_profile_set().find(find_workload("bert"), find_gpu("H100-SXM"));
    p.calibrated_range = CalibratedRange{min_x, max_x, 4, max_gpus};
    return p;
}
}  // namespace

TEST_CASE("range warnings: none inside, one per side outside", "[training]") {
    const ComputeProfile p = bert_with_range(4, 224, 3472);
    CHECK(extrapolation_warnings(p, 4, 3472).empty());      // both ends are inside
    CHECK(extrapolation_warnings(p, 224, 8).empty());
    const auto below = extrapolation_warnings(p, 3, 64);
    REQUIRE(below.size() == 1);
    CHECK(below[0].find("below the smallest") != std::string::npos);
    CHECK(below[0].find("(4)") != std::string::npos);
    const auto above = extrapolation_warnings(p, 300, 64);
    REQUIRE(above.size() == 1);
    CHECK(above[0].find("above the largest") != std::string::npos);
    const auto scale = extrapolation_warnings(p, 8, 4096);
    REQUIRE(scale.size() == 1);
    CHECK(scale[0].find("4096 GPUs is beyond") != std::string::npos);
    CHECK(scale[0].find("3472") != std::string::npos);
    ComputeProfile unranged = p;
    unranged.calibrated_range.reset();
    CHECK(extrapolation_warnings(unranged, 0.5, 100000).empty());
}

TEST_CASE("a prediction outside the calibrated range says so, inside it does not", "[training]") {
    const PreparedScenario s = prepare(prediction_request("bert", "dgx-h100", 1024));
    const double x = s.samples_per_gpu;
    CHECK_FALSE(mentions(evaluate(s, bert_with_range(x, x, 1024)).warnings, "fitted on"));
    CHECK(mentions(evaluate(s, bert_with_range(x * 2, x * 4, 1024)).warnings, "below the smallest"));
    CHECK(mentions(evaluate(s, bert_with_range(x, x, 512)).warnings, "1024 GPUs is beyond"));
}

TEST_CASE("calibration records each profile's fitted range and YAML keeps it", "[calibration]") {
    CalibrationOptions options;
    options.max_gpus = 16;
    const std::vector<CalibrationPoint> all = load_calibration_points(options);
    std::vector<CalibrationPoint> used;
    for (const auto& p : all)
        if (p.scenario.gpus <= 16 && p.scenario.workload->name == "retinanet") used.push_back(p);
    REQUIRE(used.size() >= 2);
    const CalibrationReport report = calibrate_points(used, "test", SharedFit::parse("none"));
    const ComputeProfile fitted = report.profiles.find(find_workload("retinanet"), find_gpu("H100-SXM"));
    REQUIRE(fitted.calibrated_range);
    double lo = 1e9, hi = 0;
    int max_gpus = 0;
    for (const auto& p : used)
        if (p.scenario.gpu->name == "H100-SXM") {
            lo = std::min(lo, p.scenario.samples_per_gpu);
            hi = std::max(hi, p.scenario.samples_per_gpu);
            max_gpus = std::max(max_gpus, p.scenario.gpus);
        }
    CHECK(fitted.calibrated_range->min_samples_per_gpu == lo);
    CHECK(fitted.calibrated_range->max_samples_per_gpu == hi);
    CHECK(fitted.calibrated_range->max_gpus == max_gpus);

    const auto dir = std::filesystem::temp_directory_path() / "ttsim-test-fitted-range";
    std::filesystem::create_directories(dir);
    const auto file = dir / "profiles.yaml";
    report.profiles.save_file(file);
    const ComputeProfile back = ProfileSet::load_file(file).find(find_workload("retinanet"), find_gpu("H100-SXM"));
    REQUIRE(back.calibrated_range);
    CHECK(back.calibrated_range->min_samples_per_gpu == Approx(lo));
    CHECK(back.calibrated_range->max_gpus == max_gpus);

    // Half a range is refused, naming the file and the key's line.
    std::ifstream in(file);
    std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    const auto at = yaml.find("    fitted_gpus:");
    REQUIRE(at != std::string::npos);
    yaml.erase(at, yaml.find('\n', at) - at + 1);
    std::ofstream(file) << yaml;
    try {
        ProfileSet::load_file(file);
        FAIL("a range without fitted_gpus was accepted");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("fitted_gpus") != std::string::npos);
        CHECK(std::string(e.what()).find("profiles.yaml") != std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

// The operator model: a workload's terms (fixed step and run costs) and the kernel efficiencies are shared by every
// GPU, so each GPU's profile of a workload records the range of the workload's results on all of them; its
// warnings say what the operator model extrapolates. A small fit: BERT on H100 at <= 8 GPUs and on H200 at 8.
TEST_CASE("operator profiles record the workload's range over every GPU and warn in their own words", "[calibration]") {
    CalibrationOptions options;
    options.max_gpus = 8;
    std::vector<CalibrationPoint> bert;
    for (const auto& p : load_calibration_points(options))
        if (p.scenario.gpus <= 8 && p.scenario.workload->name == "bert" &&
            (p.scenario.gpu->name == "H100-SXM" || p.scenario.gpu->name == "H200-SXM"))
            bert.push_back(p);
    double lo = 1e9, hi = 0;
    for (const auto& p : bert) {
        lo = std::min(lo, p.scenario.samples_per_gpu);
        hi = std::max(hi, p.scenario.samples_per_gpu);
    }
    REQUIRE(lo < hi);
    const CalibrationReport report = calibrate_operator_points(bert, "test", SharedFit::parse("none"));
    for (const char* gpu : {"H100-SXM", "H200-SXM"}) {
        const ComputeProfile p = report.profiles.find(find_workload("bert"), find_gpu(gpu));
        REQUIRE(p.calibrated_range);
        CHECK(p.calibrated_range->min_samples_per_gpu == lo);   // H200's own results run one batch only
        CHECK(p.calibrated_range->max_samples_per_gpu == hi);
        CHECK(p.calibrated_range->max_gpus == 8);
    }
    // The range survives the YAML round trip.
    const auto file = std::filesystem::temp_directory_path() / "ttsim-test-operator-range.yaml";
    report.profiles.save_file(file);
    const ComputeProfile back = ProfileSet::load_file(file).find(find_workload("bert"), find_gpu("H200-SXM"));
    std::filesystem::remove(file);
    REQUIRE(back.calibrated_range);
    CHECK(back.calibrated_range->min_samples_per_gpu == Approx(lo));
    CHECK(back.calibrated_range->max_gpus == 8);
    const ComputeProfile h200 = report.profiles.find(find_workload("bert"), find_gpu("H200-SXM"));
    const auto scale = extrapolation_warnings(h200, lo, 64);
    REQUIRE(scale.size() == 1);
    CHECK(scale[0].find("operator profiles") != std::string::npos);
    CHECK(scale[0].find("bert (on any GPU)") != std::string::npos);   // the range is over every GPU's results
    CHECK(scale[0].find("collectives are simulated") != std::string::npos);
    const auto small = extrapolation_warnings(h200, lo / 2, 8);
    REQUIRE(small.size() == 1);
    CHECK(small[0].find("hold-out misses most") != std::string::npos);
}
