#include "models/calibration/model_error.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "models/data_dir.hpp"
#include "models/mlperf/rounds.hpp"
#include "models/calibration/calibration.hpp"
#include "models/calibration/method_check.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"

namespace ttsim {

const char* key_of(ExtrapolationKind kind) {
    switch (kind) {
        case ExtrapolationKind::inside: return "inside";
        case ExtrapolationKind::scale: return "scale";
        case ExtrapolationKind::gpu_family: return "gpu_family";
        case ExtrapolationKind::stack: return "stack";
        case ExtrapolationKind::round: return "round";
    }
    return "inside";
}

const char* describe(ExtrapolationKind kind) {
    switch (kind) {
        case ExtrapolationKind::inside: return "inside the calibrated range";
        case ExtrapolationKind::scale: return "scale beyond the calibrated GPU counts";
        case ExtrapolationKind::gpu_family: return "a GPU family with no results of its own at scale";
        case ExtrapolationKind::stack: return "a software stack the fit never saw";
        case ExtrapolationKind::round: return "a round the profiles were not fitted on";
    }
    return "";
}

const KindError& ModelErrors::of(ExtrapolationKind kind) const {
    for (const KindError& k : kinds)
        if (k.kind == kind) return k;
    throw InternalError(std::string("model errors without kind ") + key_of(kind));
}

std::string format_model_error_yaml(const ModelErrors& errors) {
    std::ostringstream out;
    out << "# The model's error per kind of extrapolation (models/calibration/model_error.hpp says how each is measured):\n"
        << "# the root mean square of log(predicted / published) and the MAPE over the cross-validated predictions.\n"
        << "# Predictions carry the largest of their kinds in their p10/p90 band. Regenerate with:\n#   " << errors.command
        << "\n"
        << "command: \"" << errors.command << "\"\n"
        << "date: \"" << errors.date << "\"\n"
        << "rounds: \"" << errors.rounds << "\"\n"
        << "kinds:\n";
    for (const KindError& k : errors.kinds)
        // Four decimals of a log error, two of a percentage: more would claim a precision the data do not have.
        out << fmt::format("  {}: {{results: {}, rms_log_error: {:.4f}, mape_percent: {:.2f}}}\n", key_of(k.kind),
                           k.results, k.rms_log_error, k.mape_percent);
    return out.str();
}

ModelErrors load_model_errors(const std::filesystem::path& path) {
    const ConfigNode root = ConfigNode::load_file(path.string());
    root.check_keys({"command", "date", "rounds", "kinds"});
    ModelErrors errors;
    errors.command = root.required("command").as_string();
    errors.date = root.required("date").as_string();
    errors.rounds = root.required("rounds").as_string();
    const ConfigNode kinds = root.required("kinds");
    std::vector<std::string> keys;
    for (const ExtrapolationKind kind : kExtrapolationKinds) keys.push_back(key_of(kind));
    kinds.check_keys(keys);
    for (const ExtrapolationKind kind : kExtrapolationKinds) {
        // Every kind must be there: a prediction of any kind finds its figure.
        const ConfigNode entry = kinds.required(key_of(kind));
        entry.check_keys({"results", "rms_log_error", "mape_percent"});
        KindError k;
        k.kind = kind;
        k.results = static_cast<int>(entry.required("results").as_int(1, 1 << 20));
        k.rms_log_error = entry.required("rms_log_error").as_double(0, 10);
        k.mape_percent = entry.required("mape_percent").as_double(0, 1e6);
        errors.kinds.push_back(k);
    }
    return errors;
}

const ModelErrors& shipped_model_errors() {
    static const ModelErrors errors = load_model_errors(data_file("validation/model_error.yaml"));
    return errors;
}

std::vector<ExtrapolationKind> applicable_kinds(const ComputeProfile& profile, const ExtrapolationQuery& query) {
    std::vector<ExtrapolationKind> kinds = {ExtrapolationKind::inside};
    if (!profile.calibrated_range || query.gpus > profile.calibrated_range->max_gpus)
        kinds.push_back(ExtrapolationKind::scale);
    if (profile.transferred_from) kinds.push_back(ExtrapolationKind::gpu_family);
    if (!query.stack_named) kinds.push_back(ExtrapolationKind::stack);
    if (query.other_round) kinds.push_back(ExtrapolationKind::round);
    return kinds;
}

const KindError& model_error_for(const ModelErrors& errors, const ComputeProfile& profile,
                                 const ExtrapolationQuery& query) {
    const KindError* worst = nullptr;
    for (const ExtrapolationKind kind : applicable_kinds(profile, query)) {
        const KindError& k = errors.of(kind);
        if (!worst || k.rms_log_error >= worst->rms_log_error) worst = &k;
    }
    return *worst;
}

LogNormalBand combine_band(double p10, double p50, double p90, double parameter_sd, double model_sigma) {
    LogNormalBand band{p10, p90};
    if (!(p50 > 0 && p10 > 0 && p10 <= p50 && p50 <= p90)) return band;
    band.convergence_low_sigma = std::log(p50 / p10) / kZ90;
    band.convergence_high_sigma = std::log(p90 / p50) / kZ90;
    band.parameter_sigma = std::log1p(parameter_sd);
    band.model_sigma = model_sigma;
    const double shared = std::pow(band.parameter_sigma, 2) + std::pow(model_sigma, 2);
    band.p10 = p50 * std::exp(-kZ90 * std::sqrt(std::pow(band.convergence_low_sigma, 2) + shared));
    band.p90 = p50 * std::exp(kZ90 * std::sqrt(std::pow(band.convergence_high_sigma, 2) + shared));
    return band;
}

namespace {

// Accumulates one kind's predictions.
struct Tally {
    double sum_square_log = 0, sum_abs = 0;
    int results = 0;
    void add(const PointError& e) {
        sum_square_log += std::pow(std::log1p(e.error), 2);
        sum_abs += std::abs(e.error);
        ++results;
    }
    KindError result(ExtrapolationKind kind) const {
        if (results == 0) throw InternalError(std::string("no prediction measured the kind ") + key_of(kind));
        return {kind, results, std::sqrt(sum_square_log / results), 100.0 * sum_abs / results};
    }
};

std::vector<CalibrationPoint> points_of(const std::string& round) {
    CalibrationOptions options;
    options.rounds = {round};
    return load_calibration_points(options);
}

// Predicts `held` (points of any round) with a fit of `fit`: every held point whose workload and GPU the fit
// calibrated itself, or only those inside the fit's GPU counts of that cell (`inside_only`).
// `bands`, where given, receives each prediction as the method check's band coverage needs it.
void predict_held(const std::vector<CalibrationPoint>& fit, const std::vector<const CalibrationPoint*>& held,
                  const SharedFit& shared, bool inside_only, bool need_own_profile, Tally& tally, std::ostream* progress,
                  const std::string& what, RoundHoldout* bands = nullptr) {
    if (fit.empty() || held.empty()) return;
    std::map<std::pair<std::string, std::string>, std::pair<int, int>> counts;   // cell -> GPU counts fitted
    for (const CalibrationPoint& p : fit) {
        auto [it, fresh] = counts.try_emplace({p.scenario.workload->name, p.scenario.gpu->name}, p.scenario.gpus,
                                              p.scenario.gpus);
        it->second.first = std::min(it->second.first, p.scenario.gpus);
        it->second.second = std::max(it->second.second, p.scenario.gpus);
    }
    const CalibrationReport report = calibrate_points(fit, what, shared);
    int predicted = 0;
    for (const CalibrationPoint* p : held) {
        if (p->published_minutes <= 0) continue;
        const auto cell = counts.find({p->scenario.workload->name, p->scenario.gpu->name});
        if (need_own_profile && cell == counts.end()) continue;
        if (inside_only && (cell == counts.end() || p->scenario.gpus < cell->second.first ||
                            p->scenario.gpus > cell->second.second))
            continue;
        const PointError e = evaluate_point(*p, report.profiles);
        tally.add(e);
        ++predicted;
        if (bands) {
            const ComputeProfile profile = point_profile(*p, report.profiles);
            const Prediction q = evaluate(p->scenario, profile);
            bands->predicted.push_back(e);
            bands->bands.push_back({p->published_minutes, q.ttt_p10_minutes, q.ttt_minutes, q.ttt_p90_minutes,
                                    profile.parameter_sd});
        }
    }
    if (progress) *progress << what << ": fitted " << fit.size() << " results, predicted " << predicted << "\n";
}

}  // namespace

ModelErrors measure_model_errors(std::ostream* progress) {
    const MlperfRounds& rounds = mlperf_rounds();
    const SharedFit shared = SharedFit::operator_defaults();
    std::map<std::string, std::vector<CalibrationPoint>> by_round;
    std::vector<std::string> names;
    for (const MlperfRound& r : rounds.rounds) {
        by_round[r.name] = points_of(r.name);
        names.push_back(r.name);
    }
    std::map<ExtrapolationKind, Tally> tallies;
    const std::vector<CalibrationPoint>& own = by_round.at(rounds.default_round);

    // inside: two folds of the default round (every other result).
    for (int fold = 0; fold < 2; ++fold) {
        std::vector<CalibrationPoint> fit;
        std::vector<const CalibrationPoint*> held;
        for (std::size_t i = 0; i < own.size(); ++i)
            if (static_cast<int>(i % 2) == fold) held.push_back(&own[i]);
            else fit.push_back(own[i]);
        predict_held(fit, held, shared, true, true, tallies[ExtrapolationKind::inside], progress,
                     fmt::format("inside: v{} fold {} of 2", rounds.default_round, fold + 1));
    }
    MethodCheck scale_check;   // the scale predictions, for the band coverage printed with the progress
    for (const std::string& round : names) {
        const std::vector<CalibrationPoint>& points = by_round.at(round);
        // scale: fit <= 64 GPUs, predict >= 72.
        std::vector<CalibrationPoint> small;
        std::vector<const CalibrationPoint*> large;
        for (const CalibrationPoint& p : points)
            if (p.scenario.gpus <= 64) small.push_back(p);
            else if (p.scenario.gpus >= 72) large.push_back(&p);
        RoundHoldout holdout;
        holdout.round = round;
        holdout.fitted = static_cast<int>(small.size());
        predict_held(small, large, shared, false, false, tallies[ExtrapolationKind::scale], progress,
                     "scale: v" + round + " fit <= 64 GPUs, predict >= 72", &holdout);
        scale_check.rounds.push_back(std::move(holdout));
        // gpu_family: every family besides the reference with results above one node (8 GPUs): those results
        // held out of one fit, each family predicted from its own single-node results (or transferred).
        std::set<std::string> families;
        std::vector<CalibrationPoint> fit;
        std::vector<const CalibrationPoint*> held;
        for (const CalibrationPoint& p : points)
            if (p.scenario.gpus > 8 && p.scenario.gpu->name != reference_gpu().name) {
                held.push_back(&p);
                families.insert(p.scenario.gpu->name);
            } else {
                fit.push_back(p);
            }
        std::string names;
        for (const std::string& f : families) names += " " + f;
        predict_held(fit, held, shared, false, false, tallies[ExtrapolationKind::gpu_family], progress,
                     "gpu_family: v" + round + names + " above 8 GPUs held out");
    }
    // stack: the default round's second and third largest submitters (by results), left out of one fit together.
    // The largest stays in: it holds most of the results at scale (NVIDIA in v4.1: 16 of 95, 4 of the 9 above 64
    // GPUs), without which the fit would measure a scale extrapolation, not an unseen stack.
    std::map<std::string, int> per_submitter;
    for (const CalibrationPoint& p : own) ++per_submitter[p.result.submitter];
    std::vector<std::pair<int, std::string>> largest;
    for (const auto& [submitter, n] : per_submitter) largest.emplace_back(-n, submitter);
    std::sort(largest.begin(), largest.end());
    {
        std::set<std::string> left_out;
        for (std::size_t i = 1; i < largest.size() && i < 3; ++i) left_out.insert(largest[i].second);
        std::vector<CalibrationPoint> fit;
        std::vector<const CalibrationPoint*> held;
        for (const CalibrationPoint& p : own)
            if (left_out.count(p.result.submitter)) held.push_back(&p);
            else fit.push_back(p);
        std::string names;
        for (const std::string& s : left_out) names += " " + s;
        predict_held(fit, held, shared, false, true, tallies[ExtrapolationKind::stack], progress,
                     "stack: v" + rounds.default_round + names + " left out");
    }
    // round: each round's fit predicting the next round's results on the families it calibrated.
    for (std::size_t i = 0; i + 1 < names.size(); ++i) {
        std::vector<const CalibrationPoint*> held;
        for (const CalibrationPoint& p : by_round.at(names[i + 1])) held.push_back(&p);
        predict_held(by_round.at(names[i]), held, shared, false, true, tallies[ExtrapolationKind::round], progress,
                     "round: v" + names[i] + " fit, predicting v" + names[i + 1]);
    }

    if (progress) {
        const std::vector<BandCoverage> coverage = band_coverage(scale_check);
        for (const BandCoverage& c : coverage)
            *progress << fmt::format("band coverage, v{} held out at >= 72 GPUs: {}/{} ({:.1f}%), model sigma {:.3f}\n",
                                     c.round, c.inside, c.results, c.percent(), c.model_sigma);
        const BandCoverage all = total_coverage(coverage);
        *progress << fmt::format("band coverage, every round: {}/{} ({:.1f}%)\n", all.inside, all.results, all.percent());
    }
    ModelErrors errors;
    errors.command = kModelErrorCommand;
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    errors.date = date;
    errors.rounds = rounds.names();
    for (const ExtrapolationKind kind : kExtrapolationKinds) errors.kinds.push_back(tallies[kind].result(kind));
    return errors;
}

}  // namespace ttsim
