#include "models/mlperf/rounds.hpp"

#include "models/data_dir.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "sim/file_reading.hpp"

namespace ttsim {

const MlperfRound& MlperfRounds::find(const std::string& name) const {
    const std::string bare = !name.empty() && (name[0] == 'v' || name[0] == 'V') ? name.substr(1) : name;
    for (const MlperfRound& r : rounds)
        if (r.name == bare) return r;
    throw InputError("unknown MLPerf round '" + name + "' (known: " + names() + ")");
}

std::string MlperfRounds::names() const {
    std::string out;
    for (const MlperfRound& r : rounds) out += (out.empty() ? "" : ", ") + r.name;
    return out;
}

MlperfRounds load_mlperf_rounds(const std::filesystem::path& file) {
    const ConfigNode root = ConfigNode::load_file(file.string());
    root.check_keys({"format", "default_round", "in_network_reduction_submitters", "rounds"});
    const ConfigNode format = root.required("format");
    if (format.as_string() != "ttsim-mlperf-rounds-1") format.fail("expected 'ttsim-mlperf-rounds-1'");
    MlperfRounds out;
    const std::filesystem::path dir = file.parent_path();
    for (const ConfigNode& entry : root.required("rounds").items()) {
        entry.check_keys({"round", "results", "runs", "timing", "layouts", "source"});
        MlperfRound r;
        const ConfigNode name = entry.required("round");
        r.name = name.as_string();
        for (const MlperfRound& seen : out.rounds)
            if (seen.name == r.name) name.fail("round " + r.name + " is listed twice");
        for (auto [key, path] : {std::pair{"results", &r.results}, std::pair{"runs", &r.runs},
                                 std::pair{"timing", &r.timing}}) {
            const ConfigNode node = entry.required(key);
            *path = dir / node.as_string();
            if (!regular_file_exists(*path)) node.fail("no such file: " + path->string());
        }
        if (const auto layouts = entry.optional("layouts")) {
            r.layouts = dir / layouts->as_string();
            if (!regular_file_exists(*r.layouts)) layouts->fail("no such file: " + r.layouts->string());
        }
        const ConfigNode source = entry.required("source");
        r.source = source.as_string();
        if (r.source.find_first_not_of(" \t") == std::string::npos) source.fail("source must not be blank");
        out.rounds.push_back(std::move(r));
    }
    const ConfigNode def = root.required("default_round");
    out.default_round = def.as_string();
    bool known = false;
    for (const MlperfRound& r : out.rounds) known = known || r.name == out.default_round;
    if (!known) def.fail("names no round listed under rounds");
    if (const auto sharp = root.optional("in_network_reduction_submitters")) {
        if (!sharp->is_sequence()) sharp->fail("expected a list of submitters");
        for (const ConfigNode& submitter : sharp->items())
            if (!out.in_network_reduction_submitters.insert(submitter.as_string()).second)
                submitter.fail("submitter " + submitter.as_string() + " is listed twice");
    }
    return out;
}

const MlperfRounds& mlperf_rounds() {
    static const MlperfRounds rounds = load_mlperf_rounds(data_file("mlperf/rounds.yaml"));
    return rounds;
}

}  // namespace ttsim
