#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "models/calibration/calibration.hpp"
#include "results_csv_helpers.hpp"

using namespace ttsim;

namespace {
const std::vector<CalibrationPoint>& points() {
    static const std::vector<CalibrationPoint> all = load_calibration_points({});
    return all;
}
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

TEST_CASE("calibration uses each distinct H100/H200/B200 result once", "[calibration]") {
    CHECK(points().size() == 95);
}

// Regression guards at today's figures (`build/ttsim validate`), each with a stated margin; tighten them as the
// model improves. In-sample with the shipped full-data profiles (models/profiles/profiles.yaml): 3.35 % on
// 2026-12-01; guard 3.5 % (the target, 0.15 points of margin).
TEST_CASE("in-sample: MAPE over all H100/H200/B200 results stays at or below 3.5%", "[calibration]") {
    const ProfileSet profiles = ProfileSet::load_dir(ProfileSet::default_dir());
    std::vector<PointError> errors;
    for (const auto& p : points()) errors.push_back(evaluate_point(p, profiles));
    const double mape = mean_absolute_percentage_error(errors);
    INFO("in-sample MAPE " << mape << "%");
    CHECK(mape <= 3.5);
}

// The target is every (workload, GPU, count) group within 5 % of its median; today 12 of 35 groups miss it
// (`build/ttsim validate`, section (a)). Guard: no more than those 12 miss.
TEST_CASE("in-sample: no more (workload, GPU, count) groups than today miss 5% of their median", "[calibration]") {
    const ProfileSet profiles = ProfileSet::load_dir(ProfileSet::default_dir());
    std::map<std::tuple<std::string, std::string, int>, std::vector<const CalibrationPoint*>> groups;
    for (const auto& p : points()) groups[{p.scenario.workload->name, p.scenario.gpu->name, p.scenario.gpus}].push_back(&p);
    int misses = 0;
    for (const auto& [key, members] : groups) {
        std::vector<double> published;
        for (auto* m : members) published.push_back(m->published_minutes);
        const double predicted = evaluate_point(*members.front(), profiles).predicted_minutes;
        const double error = predicted / median(published) - 1.0;
        if (std::abs(error) > 0.05) {
            ++misses;
            UNSCOPED_INFO(std::get<0>(key) << " " << std::get<1>(key) << " x" << std::get<2>(key) << ": " << 100 * error << "%");
        }
    }
    CHECK(groups.size() == 35);
    CHECK(misses <= 12);
}

// Hold-out. Calibration on <= 64 GPUs happens inside this test (fresh, in memory); the >= 128-GPU results are
// never passed to the fit. The target is 10 %; today's figure is 20.27 % (`build/ttsim validate`,
// section (b)). Guard: 20.5 % (0.23 points of margin for the optimiser's last digits across platforms).
TEST_CASE("hold-out: fit on <= 64 GPUs predicts >= 128 GPUs no worse than today (20.5% MAPE)", "[calibration]") {
    const HoldoutReport report = holdout_validation(points(), 64, 128);
    for (const auto& fitted : report.fit.fitted) CHECK(fitted.gpus <= 64);
    CHECK(report.predicted.size() == 8);
    INFO(format_point_table(report.predicted) << "hold-out MAPE " << report.mape_percent << "%");
    CHECK(report.mape_percent <= 20.5);
}

TEST_CASE("profiles round-trip through YAML", "[calibration]") {
    const ProfileSet profiles = ProfileSet::load_dir(ProfileSet::default_dir());
    const auto file = std::filesystem::temp_directory_path() / "ttsim_test_profiles.yaml";
    profiles.save_file(file);
    const ProfileSet again = ProfileSet::load_file(file);
    REQUIRE(again.all().size() == profiles.all().size());
    for (const auto& [key, p] : profiles.all())
        CHECK(again.all().at(key).max_flops_fraction == Approx(p.max_flops_fraction).epsilon(1e-8));
    std::filesystem::remove(file);
}

TEST_CASE("a user's result that no layout can run is refused at its CSV line", "[calibration][hostile]") {
    // calibrate --data: 24 GPUs at a global batch of 1,000 split over no data-parallel size of the nearest
    // published layout. It used to end in an internal assert (exit 3); a row whose GPU count the workload cannot
    // split blamed the shipped workload file's key, which the user never wrote.
    CalibrationOptions options;
    options.results_csv = test::write_results_row(
        "test_calibration_layout.tmp.csv",
        {{"submitter", "Xsub"}, {"n_accelerators", "24"}, {"n_nodes", "3"}, {"global_batch_size", "1000"}});
    CHECK_THROWS_WITH(load_calibration_points(options),
                      Catch::Contains("test_calibration_layout.tmp.csv:2: Xsub/") &&
                          Catch::Contains("at 24 GPUs: global batch 1000 does not split"));
    std::filesystem::remove(*options.results_csv);
}

TEST_CASE("calibrate with nothing to fit says why: the data or the GPU filter", "[calibration][hostile]") {
    // A header-only results CSV reached the operator fit's assert (exit 3).
    CalibrationOptions options;
    options.results_csv = "test_calibration_empty.tmp.csv";
    {
        const std::string row_file = test::write_results_row("test_calibration_row.tmp.csv", {});
        std::ifstream in(row_file);
        std::string header;
        std::getline(in, header);
        std::ofstream(*options.results_csv) << header << "\n";
        std::filesystem::remove(row_file);
    }
    options.shared = SharedFit::operator_defaults();
    CHECK_THROWS_WITH(calibrate(options), Catch::Contains("test_calibration_empty.tmp.csv: no scored result"));
    std::filesystem::remove(*options.results_csv);

    CalibrationOptions filtered;
    filtered.max_gpus = 1;
    try {
        (void)calibrate(filtered);
        FAIL("a fit of nothing was not refused");
    } catch (const InputError& e) {
        CHECK(e.field() == Field::max_gpus);
        CHECK_THAT(e.message(), Catch::Contains("no result with at most 1 GPU to fit (95 results have more)"));
    }
}
