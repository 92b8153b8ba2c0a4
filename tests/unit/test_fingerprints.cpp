// Determinism fingerprints: every shipped scenario (scenarios/*.yaml) is run through the real `ttsim run`
// and the event-trajectory fingerprints it reports (every "fingerprint" value of its results.json, in document
// order: CollectiveResult::fingerprint per message size, and whatever the training/sweep kinds report) are
// folded into one hash and compared with tests/golden/fingerprints.txt. Any change in simulated behaviour
// therefore fails this test and names the scenario. Formatting changes do not (only fingerprints are hashed).
//
// Regenerate deliberately, after checking the behaviour change is intended:  tools/update-golden.sh
// (which runs this test with TTSIM_UPDATE_GOLDEN=1: it then rewrites the golden file instead of comparing).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// FNV-1a over the fingerprints (as decimal text, so the hash is independent of the JSON number type).
void collect(const nlohmann::json& node, std::vector<std::string>& out) {
    if (node.is_object()) {
        for (auto it = node.begin(); it != node.end(); ++it) {
            if (it.key() == "fingerprint" && (it->is_number_unsigned() || it->is_number_integer() || it->is_string()))
                out.push_back(it->is_string() ? it->get<std::string>() : std::to_string(it->get<std::uint64_t>()));
            else
                collect(*it, out);
        }
    } else if (node.is_array()) {
        for (const auto& item : node) collect(item, out);
    }
}

std::string hash_hex(const std::vector<std::string>& values) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto& v : values) {
        for (unsigned char c : v) h = (h ^ c) * 0x100000001b3ULL;
        h = (h ^ 0xffu) * 0x100000001b3ULL;  // separator
    }
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(h));
    return buffer;
}

struct Outcome {
    bool ran = false;
    std::string error;          // when !ran
    std::vector<std::string> fingerprints;
};

Outcome run_scenario(const fs::path& root, const std::string& scenario, const fs::path& work) {
    Outcome outcome;
    fs::remove_all(work);
    fs::create_directories(work);
    const fs::path out_dir = work / "out";
    const std::string command = "cd '" + root.string() + "' && '" + std::string(TTSIM_BINARY) + "' run '" + scenario +
                                "' --out '" + out_dir.string() + "' >'" + (work / "stdout").string() + "' 2>'" +
                                (work / "stderr").string() + "'";
    const int status = std::system(command.c_str());
    if (status != 0) {
        outcome.error = "exit status " + std::to_string(status) + ": " + read_text(work / "stderr");
        return outcome;
    }
    const fs::path json_path = out_dir / "results.json";
    if (!fs::exists(json_path)) {
        outcome.error = "no results.json written";
        return outcome;
    }
    try {
        collect(nlohmann::json::parse(read_text(json_path)), outcome.fingerprints);
    } catch (const std::exception& e) {
        outcome.error = std::string("results.json is not JSON: ") + e.what();
        return outcome;
    }
    outcome.ran = true;
    return outcome;
}

std::map<std::string, std::string> read_golden(const fs::path& path) {
    std::map<std::string, std::string> golden;
    std::istringstream in(read_text(path));
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string scenario, hash;
        fields >> scenario >> hash;
        if (!scenario.empty() && !hash.empty()) golden[scenario] = hash;
    }
    return golden;
}

}  // namespace

TEST_CASE("shipped scenarios reproduce their golden trajectory fingerprints", "[fingerprints][golden]") {
    const fs::path root = fs::path(TTSIM_TESTS_DIR).parent_path();
    const fs::path golden_path = fs::path(TTSIM_TESTS_DIR) / "golden" / "fingerprints.txt";
    const bool update = std::getenv("TTSIM_UPDATE_GOLDEN") != nullptr;
    std::vector<std::string> scenarios;
    for (const auto& entry : fs::directory_iterator(root / "scenarios"))
        if (entry.path().extension() == ".yaml") scenarios.push_back("scenarios/" + entry.path().filename().string());
    std::sort(scenarios.begin(), scenarios.end());
    REQUIRE(!scenarios.empty());

    const fs::path work = fs::temp_directory_path() / ("ttsim-fingerprints-" + std::to_string(::getpid()));
    const auto golden = read_golden(golden_path);
    std::ostringstream regenerated;
    regenerated << "# Golden event-trajectory fingerprints of the shipped scenarios (tests/unit/test_fingerprints.cpp).\n"
                   "# scenario  hash-of-all-reported-fingerprints  count. Regenerate deliberately: tools/update-golden.sh\n";
    int missing = 0;
    for (const auto& scenario : scenarios) {
        const Outcome outcome = run_scenario(root, scenario, work);
        INFO("scenario " << scenario);
        if (!outcome.ran) {
            // A scenario that does not run is the shipped-scenario test's failure; say so here as well.
            FAIL_CHECK(scenario << " did not run: " << outcome.error);
            continue;
        }
        if (outcome.fingerprints.empty()) {
            WARN(scenario << " reports no fingerprint in results.json; not covered by the golden file");
            continue;
        }
        const std::string hash = hash_hex(outcome.fingerprints);
        regenerated << scenario << " " << hash << " " << outcome.fingerprints.size() << "\n";
        if (update) continue;
        const auto it = golden.find(scenario);
        if (it == golden.end()) {
            ++missing;
            FAIL_CHECK(scenario << " has no golden fingerprint; if it is new, run tools/update-golden.sh");
            continue;
        }
        // A mismatch means the simulated event trajectory changed.
        INFO(scenario << ": simulated behaviour changed (fingerprint " << hash << ", golden " << it->second
                      << "); if intended, run tools/update-golden.sh");
        CHECK(hash == it->second);
    }
    fs::remove_all(work);
    if (update) {
        std::ofstream(golden_path, std::ios::binary | std::ios::trunc) << regenerated.str();
        WARN("rewrote " << golden_path.string());
    }
    CHECK(missing == 0);
}
