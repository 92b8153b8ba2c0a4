#include "tools/cli/shard_file.hpp"

#include <filesystem>
#include <algorithm>
#include <limits>
#include <map>

#include "models/planning/row_codec.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "sim/file_reading.hpp"
#include "sim/resource_guard.hpp"
#include "tools/cli/atomic_file.hpp"

namespace ttsim::cli {

using nlohmann::json;

namespace {

// Enough shards for any job array; far more would leave most shards without a point.
constexpr int kMaxShards = 100000;
// What a shard file says it is (a CBOR file of another program, or of another shard layout, is refused).
// 2: layouts carry their submissions' facts (optimizer, gradient reduction); 3: rows carry MFU; 4: rows carry the
// pipeline (virtual stages, recomputation, bubble) and the run's failures and checkpoints.
constexpr const char* kShardFormat = "ttsim shard 4";

// A shard holds its scenario's text and one encoded row per point (about 1.8 KB each): 2 GiB is about a million
// rows, what a sweep's memory guard lets one run keep (4 GiB at 4 KB a point, sim/resource_guard.hpp).
constexpr InputFileKind kShardInputFile{"a ttsim shard file", 2ull << 30, "a shard file is at most 2GiB"};

// A directory argument names the one shard file in it.
std::string shard_path(const std::string& argument) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(argument, ec)) {
        if (!fs::exists(argument, ec)) throw InputError(argument + ": no such shard file or directory");
        return argument;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(argument, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("shard-", 0) == 0 && entry.path().extension() == ".cbor") found.push_back(entry.path().string());
    }
    if (found.size() != 1)
        throw InputError(argument + ": expected one shard-I-of-N.cbor in this directory, found " +
                         std::to_string(found.size()) + " (name the files instead)");
    return found.front();
}

// I of N within 1..N and N within 1..kMaxShards; `shown` says where the numbers came from.
void check_shard_spec(const ShardSpec& spec, const std::string& shown) {
    if (spec.count < 1 || spec.count > kMaxShards)
        throw InputError("N must be in 1.." + std::to_string(kMaxShards) + ", " + shown);
    if (spec.index < 1 || spec.index > spec.count)
        throw InputError("I must be in 1..N (shards are numbered from 1), " + shown);
}

ShardFile read_shard(const std::string& path) {
    const json j = planning::from_bytes(read_input_file(path, kShardInputFile), path);
    try {
        if (const std::string format = j.at("format").get<std::string>(); format != kShardFormat)
            throw InputError(path + ": not a shard file of this ttsim (" +
                             (format.rfind("ttsim shard ", 0) == 0 ? "'" + format + "', written by another version"
                                                                   : std::string("not a ttsim shard file")) +
                             "; this one reads '" + kShardFormat + "'): run the shards again with this ttsim");
        ShardFile s;
        j.at("scenario_file").get_to(s.scenario_file);
        j.at("scenario_text").get_to(s.scenario_text);
        j.at("shard").get_to(s.shard.index);
        j.at("shards").get_to(s.shard.count);
        j.at("points").get_to(s.points);
        // The numbers a shard says of itself are checked as a --shard flag and a sweep's size are: an edited or
        // damaged file must not size the merge's tables (2^62 points) or loop over a shard count of 0.
        const std::string shown = "got " + std::to_string(s.shard.index) + "/" + std::to_string(s.shard.count);
        try {
            check_shard_spec(s.shard, shown);
            check_resources(SimulationSize{.points = static_cast<std::int64_t>(
                                               std::min<std::size_t>(s.points, std::numeric_limits<std::int64_t>::max()))},
                            "points");
        } catch (const InputError& e) {
            throw InputError(path + ": a damaged or edited shard file: " + e.what());
        }
        for (const json& row : j.at("rows")) s.rows.emplace_back(row.at(0).get<std::size_t>(), row.at(1));
        return s;
    } catch (const json::exception& e) {
        throw InputError(path + ": not a whole ttsim shard file (" + e.what() + ")");
    }
}

}  // namespace

ShardSpec parse_shard(const std::string& text) {
    ShardSpec spec;
    const auto slash = text.find('/');
    std::size_t used_i = 0, used_n = 0;
    try {
        if (slash == std::string::npos) throw std::invalid_argument("no slash");
        spec.index = std::stoi(text.substr(0, slash), &used_i);
        spec.count = std::stoi(text.substr(slash + 1), &used_n);
    } catch (const std::exception&) {
        throw InputError("expected I/N, e.g. 2/8 (shard 2 of 8), got '" + text + "'");
    }
    if (used_i != slash || used_n != text.size() - slash - 1)
        throw InputError("expected I/N, e.g. 2/8 (shard 2 of 8), got '" + text + "'");
    check_shard_spec(spec, "got '" + text + "'");
    return spec;
}

std::vector<std::size_t> shard_indices(std::size_t points, const ShardSpec& spec) {
    std::vector<std::size_t> indices;
    for (std::size_t i = static_cast<std::size_t>(spec.index - 1); i < points; i += static_cast<std::size_t>(spec.count))
        indices.push_back(i);
    return indices;
}

std::string shard_file_name(const ShardSpec& spec) {
    return "shard-" + std::to_string(spec.index) + "-of-" + std::to_string(spec.count) + ".cbor";
}

ShardFile new_shard(const std::string& scenario_file, const ShardSpec& spec, std::size_t points) {
    ShardFile s;
    s.scenario_file = std::filesystem::absolute(scenario_file).lexically_normal().string();
    s.scenario_text = read_input_file(scenario_file, kYamlInputFile);
    s.shard = spec;
    s.points = points;
    return s;
}

std::string write_shard(const std::string& dir, const ShardFile& shard) {
    json rows = json::array();
    for (const auto& [index, row] : shard.rows) rows.push_back(json::array({index, row}));
    const json j = {{"format", kShardFormat},         {"scenario_file", shard.scenario_file},
                    {"scenario_text", shard.scenario_text}, {"shard", shard.shard.index},
                    {"shards", shard.shard.count},   {"points", shard.points},
                    {"rows", std::move(rows)}};
    const std::string path = dir + "/" + shard_file_name(shard.shard);
    write_file_atomically(path, planning::to_bytes(j));
    return path;
}

MergedShards merge_shards(const std::vector<std::string>& arguments) {
    if (arguments.empty()) throw InputError("name the shard files or directories to merge");
    std::vector<std::string> paths;
    for (const std::string& a : arguments) paths.push_back(shard_path(a));
    const ShardFile first = read_shard(paths.front());
    std::map<int, std::string> seen;   // shard index -> file
    MergedShards merged{first.scenario_file, first.scenario_text, {}};
    std::vector<std::optional<json>> rows(first.points);
    for (const std::string& path : paths) {
        ShardFile s = path == paths.front() ? first : read_shard(path);
        if (s.scenario_text != first.scenario_text)
            throw InputError(path + ": a shard of another scenario (" + s.scenario_file + ") than " + paths.front() +
                             " (" + first.scenario_file + "): their scenario texts differ");
        if (s.shard.count != first.shard.count || s.points != first.points)
            throw InputError(path + ": shard " + std::to_string(s.shard.index) + "/" + std::to_string(s.shard.count) +
                             " of " + std::to_string(s.points) + " points does not belong with " + paths.front() +
                             " (shard " + std::to_string(first.shard.index) + "/" + std::to_string(first.shard.count) +
                             " of " + std::to_string(first.points) + " points)");
        if (const auto [it, inserted] = seen.emplace(s.shard.index, path); !inserted)
            throw InputError(path + ": shard " + std::to_string(s.shard.index) + "/" + std::to_string(s.shard.count) +
                             " is given twice (also " + it->second + ")");
        const std::vector<std::size_t> expected = shard_indices(s.points, s.shard);
        bool whole = s.rows.size() == expected.size();
        for (std::size_t k = 0; whole && k < expected.size(); ++k) whole = s.rows[k].first == expected[k];
        if (!whole)
            throw InputError(path + ": does not hold exactly the points of shard " + std::to_string(s.shard.index) +
                             "/" + std::to_string(s.shard.count));
        for (auto& [index, row] : s.rows) rows[index] = std::move(row);
    }
    std::string missing;
    int missing_count = 0;
    constexpr int kListed = 10;   // a merge of 1 of 100,000 shards lists ten, then how many more
    for (int i = 1; i <= first.shard.count; ++i)
        if (!seen.count(i) && ++missing_count <= kListed) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    if (missing_count > kListed) missing += " and " + std::to_string(missing_count - kListed) + " more";
    if (!missing.empty())
        throw InputError("incomplete set of shards of " + first.scenario_file + ": shard(s) " + missing + " of " +
                         std::to_string(first.shard.count) + " missing");
    for (auto& row : rows) merged.rows.push_back(std::move(*row));
    return merged;
}

}  // namespace ttsim::cli
