// convergence-lag (SharedFit, calibration.cpp): predictions take the RCP mean times how
// much later the fit results converged than the RCPs; the fit itself, and any given convergence, are untouched.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <set>

#include "models/calibration/calibration.hpp"
#include "calibration_helpers.hpp"
#include "models/training/predict.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

// The H100 results of these workloads on at most 8 GPUs (lumped fits: milliseconds).
std::vector<CalibrationPoint> h100_up_to_8(const std::set<std::string>& workloads) { return test::h100_points(workloads, 8); }

// The geometric mean of published / RCP samples over the points of `workload`.
double expected_lag(const std::vector<CalibrationPoint>& chosen, const std::string& workload) {
    double sum = 0;
    int n = 0;
    for (const CalibrationPoint& p : chosen) {
        if (p.scenario.workload->name != workload) continue;
        REQUIRE(p.published_convergence);
        sum += std::log(p.fit_scenario.samples_mean / p.scenario.samples_mean);
        ++n;
    }
    REQUIRE(n > 0);
    return std::exp(sum / n);
}

const std::string kLumped = "run-logs,robust";

}  // namespace

TEST_CASE("convergence-lag: each workload's predictions train its fit results' mean lag behind the RCPs",
          "[calibration][convergence]") {
    // Stable Diffusion's 4- and 8-GPU H100 results converged at 2.05-2.24 M samples against the RCP's 2.05 M
    // (v4.1_results.csv samples_to_converge_mean, rcp_mean): a lag of 1.0385 (`-s` prints it), above 1 by more than
    // the 1 % checked. BERT's differ from theirs both ways.
    const std::vector<CalibrationPoint> chosen = h100_up_to_8({"stable_diffusion", "bert"});
    const CalibrationReport plain = calibrate_points(chosen, "test", SharedFit::parse(kLumped));
    const CalibrationReport lagged = calibrate_points(chosen, "test", SharedFit::parse(kLumped + ",convergence-lag"));
    const double sd_lag = expected_lag(chosen, "stable_diffusion");
    const double bert_lag = expected_lag(chosen, "bert");
    CHECK(sd_lag > 1.01);
    CHECK(sd_lag != Approx(bert_lag));
    for (const auto& [key, profile] : lagged.profiles.all()) {
        const ComputeProfile& without = plain.profiles.all().at(key);
        CHECK(profile.convergence_factor == Approx(key.first == "bert" ? bert_lag : sd_lag).epsilon(1e-12));
        CHECK(without.convergence_factor == 1.0);
        // The fit never sees the lag: every fitted parameter is the same.
        CHECK(profile.max_flops_fraction == without.max_flops_fraction);
        CHECK(profile.fixed_step_seconds == without.fixed_step_seconds);
        CHECK(profile.run_overhead_seconds == without.run_overhead_seconds);
    }
    CHECK_THAT(lagged.data_description, Catch::Contains("convergence lag"));
    // A prediction from the RCPs trains lag x the RCP mean; one with a given convergence (the fit's) is not scaled.
    REQUIRE(lagged.fitted.size() == chosen.size());
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        const CalibrationPoint& p = chosen[i];
        const ComputeProfile profile = lagged.profiles.find(*p.scenario.workload, *p.scenario.gpu);
        const Prediction from_rcps = evaluate(p.scenario, profile);
        CHECK(p.scenario.samples_from_rcps);
        CHECK(from_rcps.samples_to_converge == Approx(p.scenario.samples_mean * profile.convergence_factor));
        CHECK(lagged.fitted[i].predicted_minutes == Approx(from_rcps.ttt_minutes));
        CHECK_FALSE(p.fit_scenario.samples_from_rcps);
        CHECK(evaluate(p.fit_scenario, profile).samples_to_converge == p.fit_scenario.samples_mean);
    }
}

TEST_CASE("a profile's convergence factor round-trips through YAML and is checked", "[calibration][convergence]") {
    const std::vector<CalibrationPoint> chosen = h100_up_to_8({"stable_diffusion"});
    const CalibrationReport lagged = calibrate_points(chosen, "test", SharedFit::parse(kLumped + ",convergence-lag"));
    const auto file = std::filesystem::temp_directory_path() / "ttsim_test_convergence_lag.yaml";
    lagged.profiles.save_file(file);
    const ProfileSet again = ProfileSet::load_file(file);
    for (const auto& [key, profile] : lagged.profiles.all())
        CHECK(again.all().at(key).convergence_factor == Approx(profile.convergence_factor).epsilon(1e-9));
    std::filesystem::remove(file);
}
