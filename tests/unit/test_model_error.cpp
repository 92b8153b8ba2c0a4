// The model error per kind of extrapolation (models/calibration/model_error.hpp), the kind a prediction is given,
// and the p10/p90 band it carries (models/planning/prediction_band.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/calibration/model_error.hpp"
#include "models/compute/profile_files.hpp"
#include "models/data_dir.hpp"
#include "models/planning/prediction_band.hpp"
#include "sim/errors.hpp"
#include "tests/unit/prediction_helpers.hpp"

using namespace ttsim;

namespace {
std::string read(const std::filesystem::path& file) {
    std::ifstream in(file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

ModelErrors made_up() {
    ModelErrors e;
    e.command = kModelErrorCommand;
    e.date = "2026-01-01";
    e.rounds = "4.1";
    double sigma = 0.05;
    for (const ExtrapolationKind kind : kExtrapolationKinds) {
        e.kinds.push_back({kind, 10, sigma, 100 * sigma * 0.8});
        sigma += 0.05;   // inside 0.05, scale 0.10, gpu_family 0.15, stack 0.20, round 0.25
    }
    return e;
}

ComputeProfile operator_profile(const char* workload, const char* gpu) {
    return load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level)
        .find(find_workload(workload), find_gpu(gpu));
}
}  // namespace

TEST_CASE("model error file: the shipped one is what the command writes, every kind measured", "[calibration]") {
    const auto file = data_file("validation/model_error.yaml");
    const ModelErrors shipped = load_model_errors(file);
    CHECK(shipped.command == kModelErrorCommand);
    REQUIRE(shipped.kinds.size() == std::size(kExtrapolationKinds));
    for (const KindError& k : shipped.kinds) {
        INFO(key_of(k.kind));
        CHECK(k.results > 0);
        CHECK(k.rms_log_error > 0);
    }
    // Written again from what was read, the text is the file's: a change of the format (a kind added or renamed,
    // a field, the header) makes the shipped file stale, and this fails until the command is rerun.
    CHECK(format_model_error_yaml(shipped) == read(file));
}

TEST_CASE("model error file: strict reading", "[calibration]") {
    const auto file = std::filesystem::temp_directory_path() / "ttsim-test-model-error.yaml";
    std::string text = format_model_error_yaml(made_up());
    std::ofstream(file) << text;
    CHECK(load_model_errors(file).of(ExtrapolationKind::stack).rms_log_error == Approx(0.20));
    // A kind left out is refused, naming it.
    const auto at = text.find("  round:");
    std::ofstream(file) << text.substr(0, at);
    CHECK_THROWS_WITH(load_model_errors(file), Catch::Contains("round"));
    std::filesystem::remove(file);
}

TEST_CASE("a prediction's kinds: what it asks beyond its profile's data", "[calibration]") {
    const ComputeProfile h100 = operator_profile("bert", "H100-SXM");
    REQUIRE(h100.calibrated_range);
    const int max_gpus = h100.calibrated_range->max_gpus;
    using K = ExtrapolationKind;
    CHECK(applicable_kinds(h100, {64, true, false}) == std::vector<K>{K::inside});
    CHECK(applicable_kinds(h100, {64, false, false}) == std::vector<K>{K::inside, K::stack});
    CHECK(applicable_kinds(h100, {max_gpus + 8, true, true}) == std::vector<K>{K::inside, K::scale, K::round});
    // A family the profiles do not calibrate (the shipped ones calibrate every family of the catalog; a fit on
    // H100 results alone writes such a set) is priced from a transferred profile.
    ProfileSet h100_only;
    h100_only.add(h100);
    const ComputeProfile gb200 = h100_only.find(find_workload("bert"), find_gpu("GB200"));
    REQUIRE(gb200.transferred_from);
    CHECK(applicable_kinds(gb200, {512, true, false}) == std::vector<K>{K::inside, K::gpu_family});
    // The kind carried is the applicable one with the largest error.
    const ModelErrors errors = made_up();
    CHECK(model_error_for(errors, h100, {64, true, false}).kind == K::inside);
    CHECK(model_error_for(errors, h100, {64, false, false}).kind == K::stack);
    CHECK(model_error_for(errors, gb200, {512, true, false}).kind == K::gpu_family);
}

TEST_CASE("a band never carries less than its own workload and GPU's misfit", "[planning]") {
    const ModelErrors errors = made_up();   // inside: RMS log error 0.05
    ComputeProfile p = operator_profile("bert", "H100-SXM");
    p.parameter_sd = 0;
    Prediction prediction;
    prediction.ttt_p10_minutes = 9;
    prediction.ttt_minutes = 10;
    prediction.ttt_p90_minutes = 12;
    const ExtrapolationQuery inside{64, true, false};
    p.fit_residual = 0.02;   // the cell fits better than the kind's error: the kind's is carried
    p.fit_results = 5;
    const planning::PredictionBand kind = planning::prediction_band(prediction, p, &errors, inside);
    CHECK(kind.cell_results == 0);
    CHECK(kind.model_sigma == Approx(0.05));
    p.fit_residual = 0.30;   // the cell's own results miss by more: that is carried
    const planning::PredictionBand own = planning::prediction_band(prediction, p, &errors, inside);
    CHECK(own.cell_results == 5);
    CHECK(own.model_sigma == Approx(0.30));
    CHECK(own.p90 > kind.p90);
    CHECK(own.p10 < kind.p10);
    CHECK(planning::describe_band(own).find("carried instead: this workload and GPU's 5 fitted results") !=
          std::string::npos);
    // No model term (profiles the error file does not describe): no residual either.
    const planning::PredictionBand none = planning::prediction_band(prediction, p, nullptr, inside, "why");
    CHECK(none.model_sigma == 0);
    CHECK(none.cell_results == 0);
}

TEST_CASE("band arithmetic: independent log-normal terms in quadrature, the convergence skew kept", "[calibration]") {
    // Convergence p10 9, p50 10, p90 12: sigma low = ln(10/9)/1.28155 = 0.082212, high = ln(1.2)/1.28155 = 0.142265.
    const LogNormalBand alone = combine_band(9, 10, 12, 0, 0);
    CHECK(alone.p10 == Approx(9));
    CHECK(alone.p90 == Approx(12));
    CHECK(alone.convergence_low_sigma == Approx(0.082212).epsilon(1e-4));
    CHECK(alone.convergence_high_sigma == Approx(0.142265).epsilon(1e-4));
    // Parameters 5 % (ln 1.05 = 0.048790) and a model error of 0.1:
    //   low  = sqrt(0.082212^2 + 0.048790^2 + 0.1^2) = 0.138346, p10 = 10 exp(-1.28155 x 0.138346) = 8.3753
    //   high = sqrt(0.142265^2 + 0.048790^2 + 0.1^2) = 0.180612, p90 = 10 exp( 1.28155 x 0.180612) = 12.6044
    const LogNormalBand all = combine_band(9, 10, 12, 0.05, 0.1);
    CHECK(all.p10 == Approx(8.3753).epsilon(1e-4));
    CHECK(all.p90 == Approx(12.6044).epsilon(1e-4));
    // Out of order: returned as they are.
    CHECK(combine_band(11, 10, 12, 0.05, 0.1).p10 == 11);
}

TEST_CASE("a GB200 prediction at 512 GPUs carries a wider band than an H100 one inside the calibrated range",
          "[planning]") {
    const ModelErrors& errors = shipped_model_errors();
    const ProfileSet profiles = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    auto band_of = [&](const char* system, int gpus, bool stack_named) {
        const ExplainedPrediction p = predict_explained(test::prediction_request("bert", system, gpus), profiles);
        return planning::prediction_band(p.prediction, p.profile, &errors, {gpus, stack_named, false});
    };
    const planning::PredictionBand h100 = band_of("dgx-h100", 64, true);
    const planning::PredictionBand gb200 = band_of("gb200-nvl72", 512, false);
    REQUIRE(h100.model);
    REQUIRE(gb200.model);
    CHECK(h100.model->kind == ExtrapolationKind::inside);
    CHECK(gb200.model->kind != ExtrapolationKind::inside);
    CHECK(gb200.model_sigma > h100.model_sigma);
    // Relative width of the band (the convergence spread differs with the batch, the model term dominates).
    const ExplainedPrediction h = predict_explained(test::prediction_request("bert", "dgx-h100", 64), profiles);
    const ExplainedPrediction g = predict_explained(test::prediction_request("bert", "gb200-nvl72", 512), profiles);
    CHECK(std::log(gb200.p90 / gb200.p10) > std::log(h100.p90 / h100.p10));
    CHECK(h100.p10 < h.prediction.ttt_minutes);
    CHECK(gb200.p90 > g.prediction.ttt_minutes);
    CHECK(planning::describe_band(gb200).find(describe(gb200.model->kind)) != std::string::npos);
}
