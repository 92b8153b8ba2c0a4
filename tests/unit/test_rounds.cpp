// Every MLPerf round, every GPU of the catalog: the rounds' data files, how their results become calibration points
// (or are listed as not used, with why), round offsets in a profile set, and the speedup between rounds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <unistd.h>

#include "models/calibration/calibration.hpp"
#include "models/calibration/like_system.hpp"
#include "models/calibration/method_check.hpp"
#include "models/calibration/software_stack.hpp"
#include "models/mlperf/results.hpp"
#include "models/mlperf/rounds.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {
struct Loaded {
    std::vector<CalibrationPoint> points;
    std::vector<SkippedResult> skipped;
};
const Loaded& every_round() {
    static const Loaded loaded = [] {
        Loaded l;
        CalibrationOptions options;
        options.rounds = {"4.0", "4.1", "5.0"};
        l.points = load_calibration_points(options, &l.skipped);
        return l;
    }();
    return loaded;
}
}  // namespace

TEST_CASE("rounds.yaml names every round's files and the default round", "[rounds]") {
    const MlperfRounds& rounds = mlperf_rounds();
    CHECK(rounds.names() == "4.0, 4.1, 5.0");
    CHECK(rounds.default_round == "4.1");
    CHECK(&rounds.find("v5.0") == &rounds.find("5.0"));
    CHECK(rounds.find("4.1").layouts.has_value());
    CHECK_THROWS_WITH(rounds.find("3.1"), Catch::Contains("known: 4.0, 4.1, 5.0"));
    // Whose multi-node runs reduce in the switches is data, not a name in the code.
    CHECK(rounds.in_network_reduction_submitters == std::set<std::string>{"NVIDIA"});
}

TEST_CASE("rounds.yaml: the in-network reduction submitters are a list, each once", "[rounds]") {
    // A folder of its own (the process id), so parallel test runs do not share it.
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("ttsim-test-rounds-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const char* name : {"r.csv", "u.csv", "t.csv"}) std::ofstream(dir / name) << "x\n";
    auto load = [&](const std::string& sharp) {
        std::ofstream(dir / "rounds.yaml") << "format: ttsim-mlperf-rounds-1\ndefault_round: \"1.0\"\n" << sharp
                                           << "rounds:\n  - {round: \"1.0\", results: r.csv, runs: u.csv, timing: t.csv, "
                                              "source: test}\n";
        return load_mlperf_rounds(dir / "rounds.yaml");
    };
    CHECK(load("in_network_reduction_submitters: [A, B]\n").in_network_reduction_submitters.size() == 2);
    CHECK(load("").in_network_reduction_submitters.empty());
    CHECK_THROWS_WITH(load("in_network_reduction_submitters: [A, A]\n"), Catch::Contains("listed twice"));
    CHECK_THROWS_WITH(load("in_network_reduction_submitters: A\n"), Catch::Contains("in_network_reduction_submitters"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("every published result of every round is a calibration point or listed with why not", "[rounds]") {
    const Loaded& l = every_round();
    std::size_t rows = 0;
    for (const MlperfRound& r : mlperf_rounds().rounds) rows += load_mlperf_results(r.results).size();
    CHECK(l.points.size() + l.skipped.size() == rows);
    for (const SkippedResult& s : l.skipped) {
        INFO(s.round << " " << s.key);
        CHECK_FALSE(s.reason.empty());
    }
    // Every GPU of the rounds that the catalog has is used: v5.0's Blackwell and AMD results among them.
    std::map<std::string, int> per_gpu;
    for (const CalibrationPoint& p : l.points) ++per_gpu[p.scenario.gpu->name];
    for (const char* gpu : {"H100-SXM", "H200-SXM", "B200", "GB200", "MI300X", "MI325X"}) {
        INFO(gpu);
        CHECK(per_gpu[gpu] > 0);
    }
    CHECK(per_gpu["GB200"] >= 30);   // v5.0 has 38 scored GB200 results at 8-512 GPUs
    // A GPU the catalog lacks is said to be so.
    const auto l40s = std::find_if(l.skipped.begin(), l.skipped.end(), [](const SkippedResult& s) { return s.gpu == "L40S"; });
    REQUIRE(l40s != l.skipped.end());
    CHECK_THAT(l40s->reason, Catch::Contains("not in the GPU catalog"));
}

TEST_CASE("a benchmark renamed between rounds is one workload", "[rounds]") {
    std::map<std::string, std::set<std::string>> benchmarks_of;   // workload -> names the rounds' files use
    for (const CalibrationPoint& p : every_round().points) benchmarks_of[p.scenario.workload->name].insert(p.result.benchmark);
    CHECK(benchmarks_of["retinanet"] == std::set<std::string>{"retinanet", "ssd"});
    ResultFilter filter;
    filter.benchmark = "retinanet";
    CHECK_FALSE(distinct_scored_results(load_mlperf_results(mlperf_rounds().find("4.1").results), filter).empty());
    CHECK_FALSE(distinct_scored_results(load_mlperf_results(mlperf_rounds().find("5.0").results), filter).empty());
}

TEST_CASE("a result whose runs an earlier loaded round publishes is used once, from that round", "[rounds]") {
    const Loaded& l = every_round();
    // ASUSTeK's ESC_N8_E11 BERT: v5.0 republishes its v4.1 runs.
    auto is_it = [](const std::string& key) { return key == "ASUSTeK/ESC_N8_E11/bert"; };
    int used = 0;
    for (const CalibrationPoint& p : l.points)
        if (is_it(p.result.key())) {
            ++used;
            CHECK(p.result.round == "4.1");
        }
    CHECK(used == 1);
    const auto twin = std::find_if(l.skipped.begin(), l.skipped.end(),
                                   [&](const SkippedResult& s) { return is_it(s.key) && s.round == "5.0"; });
    REQUIRE(twin != l.skipped.end());
    CHECK_THAT(twin->reason, Catch::Contains("v4.1:ASUSTeK/ESC_N8_E11/bert"));
    // Alone, v5.0 uses it.
    CalibrationOptions only;
    only.rounds = {"5.0"};
    const std::vector<CalibrationPoint> v50 = load_calibration_points(only);
    CHECK(std::count_if(v50.begin(), v50.end(), [&](const CalibrationPoint& p) { return is_it(p.result.key()); }) == 1);
}

TEST_CASE("round offsets price a profile set's workloads with that round's software", "[rounds]") {
    ComputeProfile bert;
    bert.workload = "bert";
    bert.gpu = "H100-SXM";
    ComputeProfile lora = bert;
    lora.workload = "llama2_70b_lora";
    ProfileSet set;
    set.add(bert);
    set.add(lora);
    set.stack_speeds[round_offset_key("5.0", "bert", "H100-SXM")] = 1.25;
    set.stack_speeds["NVIDIA/H100-SXM"] = 1.1;
    std::vector<std::string> notes;
    const ProfileSet v50 = with_round(set, "5.0", "4.1", notes);
    CHECK(v50.find(find_workload("bert"), find_gpu("H100-SXM")).operator_stack_speed == Approx(1.25));
    CHECK(v50.find(find_workload("lora"), find_gpu("H100-SXM")).operator_stack_speed == Approx(1.0));   // none fitted
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("llama2_70b_lora on H100-SXM"));
    // The default round is the reference: nothing changes, nothing is said.
    notes.clear();
    CHECK(with_round(set, "4.1", "4.1", notes).find(find_workload("bert"), find_gpu("H100-SXM")).operator_stack_speed ==
          Approx(1.0));
    CHECK(notes.empty());
    // A round the set has no offsets for is refused.
    CHECK_THROWS_AS(with_round(set, "4.0", "4.1", notes), InputError);
    // Round offsets are not software stacks a prediction can be `--like`d to.
    CHECK(is_round_offset(round_offset_key("5.0", "bert", "H100-SXM")));
    CHECK_FALSE(is_round_offset("NVIDIA/H100-SXM"));
}

TEST_CASE("the speedup between rounds compares the same GPU and count", "[rounds]") {
    const std::vector<RoundSpeedup> speedups = round_speedups(every_round().points, {"4.0", "4.1", "5.0"});
    std::map<std::pair<std::string, std::string>, const RoundSpeedup*> by;
    for (const RoundSpeedup& s : speedups) by[{s.workload, s.from_round}] = &s;
    for (const char* workload : {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"}) {
        INFO(workload);
        REQUIRE(by.count({workload, "4.0"}));
        CHECK(by[{workload, "4.0"}]->cells > 0);
        // Software between rounds six months apart: within 0.5-3x (a physical reading; the same hardware).
        CHECK(by[{workload, "4.0"}]->speedup > 0.5);
        CHECK(by[{workload, "4.0"}]->speedup < 3.0);
    }
}
