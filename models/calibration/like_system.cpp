#include "models/calibration/like_system.hpp"

#include <algorithm>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/calibration/software_stack.hpp"
#include "models/mlperf/rounds.hpp"
#include "models/mlperf/results.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {

LikeChoice resolve_like(const ProfileSet& profiles, const std::string& like, const std::string& gpu) {
    const auto& all = profiles.all();
    if (std::none_of(all.begin(), all.end(), [](const auto& entry) { return entry.second.operator_efficiency.has_value(); }))
        throw InputError("a software stack's speed offset divides the operator model's kernel times; the lumped "
                         "model has none: use the operator model (the default) for --like");
    if (profiles.stack_speeds.empty())
        throw InputError(
            "this profile set has no per-system speed offsets (the operator model's fit writes one per software stack "
            "it saw, and the shipped set has them); fit them with 'ttsim calibrate --model operator --out DIR', on "
            "your own runs with a label column (docs/user-runs.md), and predict with --profiles DIR --model operator");
    const std::size_t slash = like.find('/');
    if (slash == 0 || slash == std::string::npos || slash + 1 == like.size())
        throw InputError("expected SUBMITTER/SYSTEM, got '" + like + "'");
    const std::string submitter = like.substr(0, slash), system = like.substr(slash + 1);
    LikeChoice choice;
    // Every round's results name the systems whose families the stacks are keyed by.
    std::vector<MlperfResult> results;
    for (const MlperfRound& round : mlperf_rounds().rounds) {
        std::vector<MlperfResult> own = load_mlperf_results(round.results);
        results.insert(results.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
    }
    // The keys a name stands for (software_stack.hpp): a key itself, a published result's stack, or a
    // user-runs label (its family is the GPU it ran on, so the prediction's).
    auto held = [&](const std::vector<std::string>& keys) {
        std::vector<std::string> out;
        for (const std::string& key : keys)
            if (profiles.stack_speeds.count(key)) out.push_back(key);
        return out;
    };
    std::set<std::string> names;
    for (const auto& [stack, speed] : profiles.stack_speeds)
        if (!is_round_offset(stack)) names.insert(stack);
    for (const MlperfResult& r : results)
        if (!held(speed_keys(r.submitter, r.accelerator_family)).empty()) names.insert(r.submitter + "/" + r.system);
    std::vector<std::string> keys = is_round_offset(like) ? std::vector<std::string>{} : held({like});
    for (const MlperfResult& r : results)
        if (keys.empty() && r.submitter == submitter && r.system == system)
            keys = held(speed_keys(r.submitter, r.accelerator_family));
    // A user-runs label: the profile file keeps its stack (the submitter on the GPU family it ran on), not the label,
    // so any SYSTEM of a label's submitter names it. A stack the published results also have is named only as above
    // (its stack, or a published submitter/system): a misspelt published system must not pass as a label.
    const std::string label_stack = software_stack(submitter, gpu);
    const bool published_stack = std::any_of(results.begin(), results.end(), [&](const MlperfResult& r) {
        return software_stack(r.submitter, r.accelerator_family) == label_stack;
    });
    if (keys.empty() && !published_stack) keys = held({label_stack});
    if (keys.empty())
        throw InputError(fmt::format("'{}' matches no software stack of this profile set; valid: {}", like,
                                     fmt::join(names, ", ")));
    choice.speed = speed_of(keys, profiles.stack_speeds);
    choice.stack = fmt::format("{}", fmt::join(keys, " x "));
    const std::string family = keys.front().substr(keys.front().find('/') + 1);
    if (family != gpu)
        choice.warnings.push_back(fmt::format("--like {}: the stack {} was fitted on {}, applied here to {}", like,
                                              choice.stack, family, gpu));
    return choice;
}

ProfileSet with_stack_speed(const ProfileSet& profiles, const std::string& gpu, const LikeChoice& choice) {
    ProfileSet out = profiles;
    for (const auto& [key, profile] : profiles.all())
        if (key.second == gpu) {
            ComputeProfile p = profile;
            p.operator_stack_speed *= choice.speed;
            out.add(std::move(p));
        }
    return out;
}

ProfileSet with_like(const ProfileSet& profiles, const std::string& like, const std::vector<std::string>& gpus,
                     LikeNotes& notes) {
    ProfileSet out = profiles;
    for (const std::string& gpu : gpus) {
        const LikeChoice choice = resolve_like(out, like, gpu);
        out = with_stack_speed(out, gpu, choice);
        std::vector<std::string>& mine = notes[gpu];
        mine.insert(mine.end(), choice.warnings.begin(), choice.warnings.end());
        mine.push_back(fmt::format("like {}: {} kernel times divided by the speed offset {} of stack {} (profiles)", like,
                                    gpu, units::format_number(choice.speed, 4), choice.stack));
    }
    return out;
}

ProfileSet with_round(const ProfileSet& profiles, const std::string& round, const std::string& default_round,
                      std::vector<std::string>& notes) {
    if (round == default_round) return profiles;
    const std::string prefix = "round:" + round + "/";
    const bool any = std::any_of(profiles.stack_speeds.begin(), profiles.stack_speeds.end(),
                                 [&](const auto& entry) { return entry.first.rfind(prefix, 0) == 0; });
    if (!any)
        throw InputError("these profiles hold no software offsets for round " + round +
                         " (they come from a fit of one round, or the lumped model); fit several rounds together with "
                         "'ttsim calibrate --rounds LIST --out DIR' and predict with --profiles DIR");
    ProfileSet out = profiles;
    std::vector<std::string> pooled;
    for (const auto& [key, profile] : profiles.all()) {
        const auto found = profiles.stack_speeds.find(round_offset_key(round, profile.workload, profile.gpu));
        if (found == profiles.stack_speeds.end()) {
            pooled.push_back(profile.workload + " on " + profile.gpu);
            continue;
        }
        ComputeProfile p = profile;
        p.operator_stack_speed *= found->second;
        out.add(std::move(p));
    }
    notes.push_back(fmt::format("round {}: kernel times divided by that round's software offset per workload and GPU "
                                "(profiles){}",
                                round,
                                pooled.empty() ? std::string()
                                               : fmt::format("; no offset for {} (results of only one of the two "
                                                             "rounds, or of neither): the family's fitted speed",
                                                             fmt::join(pooled, ", "))));
    return out;
}

std::vector<std::string> all_notes(const LikeNotes& notes) {
    std::vector<std::string> out;
    for (const auto& [gpu, list] : notes) out.insert(out.end(), list.begin(), list.end());
    return out;
}

}  // namespace ttsim
