// The operator model's parameter table and the Laplace identifiability report (models/calibration/
// parameter_table.hpp), on losses whose curvature is known by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "models/calibration/fit_loss.hpp"
#include "models/calibration/parameter_table.hpp"

using namespace ttsim;

TEST_CASE("parameter table: every row is physical, and docs/calibration.md carries it as declared", "[calibration]") {
    for (const ParamSpec& s : operator_parameter_specs()) {
        INFO(s.kind);
        CHECK(s.lower > 0);
        CHECK(s.lower < s.centre);
        CHECK(s.centre < s.upper);
        CHECK(s.log_sd > 0);
        CHECK_FALSE(s.source.empty());
        if (s.unit == "fraction") CHECK(s.upper <= 1.0);   // no efficiency or share above 100 %
    }
    std::ifstream doc(std::string(TTSIM_SOURCE_DIR) + "/docs/calibration.md");
    std::stringstream text;
    text << doc.rdbuf();
    CHECK(text.str().find(format_parameter_table()) != std::string::npos);
}

// Data loss w (x0 - x0*)^2 with w = 1, in log units, for the GEMM efficiency (prior width 0.26): the posterior precision
// is 2 w / (2 kRobustScale^2) + 1 / 0.26^2 = 400 + 14.793 = 414.793, so its sd is 1 / sqrt(414.793) = 0.049101,
// 0.189 of the prior's: determined. The convolution efficiency does not enter the loss: its posterior is its
// prior (sd 0.26): at its prior. The memory efficiency sits at its lower bound 0.30: at bound, no sd.
TEST_CASE("Laplace report: a parameter the loss sees is determined, one it does not stays at its prior", "[calibration]") {
    const ParamSpec& gemm = operator_parameter_spec("gemm efficiency", ParamScope::global);
    const ParamSpec& conv = operator_parameter_spec("conv efficiency", ParamScope::global);
    const ParamSpec& memory = operator_parameter_spec("memory efficiency", ParamScope::global);
    REQUIRE(kRobustScale == 0.05);
    const std::vector<double> x{std::log(0.7), std::log(0.5), std::log(0.3)};
    // The data term sees the GEMM efficiency only; the objective carries every prior (prior_penalty).
    auto loss = [&](const std::vector<double>& v) {
        return (v[0] - x[0]) * (v[0] - x[0]) + prior_penalty(gemm, v[0]) + prior_penalty(conv, v[1]) +
               prior_penalty(memory, v[2]);
    };
    std::vector<double> covariance;
    const auto estimates =
        laplace_estimates(loss, x, {"gemm efficiency", "conv efficiency", "memory efficiency"}, {&gemm, &conv, &memory},
                          &covariance);
    REQUIRE(estimates.size() == 3);
    CHECK(estimates[0].posterior_log_sd == Approx(1 / std::sqrt(400 + 1 / (0.26 * 0.26))).epsilon(1e-6));
    CHECK(estimates[0].status == ParameterEstimate::Status::determined);
    CHECK(estimates[1].posterior_log_sd == Approx(0.26).epsilon(1e-9));
    CHECK(estimates[1].status == ParameterEstimate::Status::prior);
    CHECK(estimates[2].status == ParameterEstimate::Status::at_bound);
    CHECK(covariance[2 * 3 + 2] == 0.0);
    CHECK(covariance[0 * 3 + 1] == Approx(0.0).margin(1e-12));
    CHECK_THAT(format_identifiability(estimates), Catch::Contains("1 determined by the data") &&
                                                     Catch::Contains("1 at their prior") && Catch::Contains("1 at a bound"));
}

// Loss (x0 + x1)^2: the data fixes the sum of two log efficiencies, not either (as a user's few rows fix a step's
// time, not how it splits between a GEMM efficiency and their stack's speed).
TEST_CASE("Laplace report: two parameters the data sees only together are not determined one by one", "[calibration]") {
    const ParamSpec& gemm = operator_parameter_spec("gemm efficiency", ParamScope::global);
    const ParamSpec& conv = operator_parameter_spec("conv efficiency", ParamScope::global);
    const std::vector<double> x{std::log(0.7), std::log(0.6)};
    // The objective as the fit writes it: the data term plus both priors (prior_penalty).
    auto loss = [&](const std::vector<double>& v) {
        const double d = (v[0] - x[0]) + (v[1] - x[1]);
        return d * d + prior_penalty(gemm, v[0]) + prior_penalty(conv, v[1]);
    };
    const auto estimates = laplace_estimates(loss, x, {"gemm efficiency", "conv efficiency"}, {&gemm, &conv});
    // The data term's curvature 2 per pair over 2 kRobustScale^2 = 400, each prior's 1 / 0.26^2: precision
    // [[414.79, 400], [400, 414.79]], variance 414.79 / (414.79^2 -
    // 400^2) = 0.03443, sd 0.1856, 0.714 of the prior's: partly (neither below half its prior's sd).
    const double p = 400 + 1 / (0.26 * 0.26);
    CHECK(estimates[0].posterior_log_sd == Approx(std::sqrt(p / (p * p - 400 * 400))).epsilon(1e-5));
    CHECK(estimates[0].status == ParameterEstimate::Status::partly);
    CHECK(estimates[1].status == ParameterEstimate::Status::partly);
}

TEST_CASE("stack location: free where the stacks surround their family, costly where they share a shift, bounded "
          "for an outlier", "[calibration]") {
    const double sd = operator_parameter_spec("speed", ParamScope::software_stack).log_sd;
    // Stacks placed symmetrically around the family: no penalty.
    CHECK(stack_location_penalty({-sd, 0.0, sd}) == Approx(0).margin(1e-15));
    CHECK(stack_location_penalty({}) == 0);
    // A lone stack off its family by a tenth of a sigma costs four prior sigmas (tolerance 0.05 sigma).
    const double one_sigma = kRobustScale * kRobustScale;
    CHECK(stack_location_penalty({0.1 * sd}) > 3.5 * one_sigma);
    // An outlier among ten pulls the location by a bounded amount: its psi saturates at 1, whatever its distance.
    std::vector<double> nine(9, 0.0);
    nine.push_back(std::log(1 / 2.5));
    std::vector<double> far = nine;
    far.back() = std::log(1 / 10.0);
    // The limit for one stack of ten infinitely far: mean psi 1/10.
    const double limit = std::pow(0.1 / kStackLocationTolerance, 2) * one_sigma;
    CHECK(stack_location_penalty(far) < limit);
    CHECK(stack_location_penalty(nine) > 0.98 * limit);
    CHECK(stack_location_penalty(nine) < 0.5 * stack_location_penalty({std::log(1 / 2.5)}));
}
