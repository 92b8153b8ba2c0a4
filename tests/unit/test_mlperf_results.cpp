// MLPerf v4.1 results loader: CSV parsing, known rows, and counting each distinct scored result once.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "models/mlperf/results.hpp"
#include "sim/errors.hpp"
#include "results_csv_helpers.hpp"

using namespace ttsim;

TEST_CASE("CSV parser handles quotes, embedded commas, doubled quotes and line breaks", "[mlperf]") {
    const auto rows = parse_csv("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\n2,,\"two\nlines\"\n\n", "inline");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0] == std::vector<std::string>{"a", "b", "c"});
    CHECK(rows[1] == std::vector<std::string>{"1", "x, y", "say \"hi\""});
    CHECK(rows[2] == std::vector<std::string>{"2", "", "two\nlines"});
    CHECK(parse_csv("x,\"\"", "inline")[0] == std::vector<std::string>{"x", ""});
    CHECK_THROWS_AS(parse_csv("a,\"open\n", "inline"), InputError);
    CHECK_THROWS_AS(parse_csv("a,b\"c\n", "inline"), InputError);
    CHECK_THROWS_AS(parse_csv("a,\"b\"c\n", "inline"), InputError);
}

TEST_CASE("the v4.1 results load with known values", "[mlperf]") {
    const std::vector<MlperfResult> results = load_mlperf_results();
    REQUIRE(results.size() == 110);

    const MlperfResult* eos = nullptr;
    for (const MlperfResult& r : results)
        if (r.submitter == "NVIDIA" && r.system == "eos_n434_ngc23.09_pytorch" && r.benchmark == "bert") eos = &r;
    REQUIRE(eos != nullptr);
    CHECK(eos->n_accelerators == 3472);
    CHECK(eos->n_nodes == 434);
    CHECK(eos->accel_per_node == 8);
    CHECK(eos->accelerator_family == "H100-SXM");
    CHECK(*eos->global_batch_size == 13'888);
    CHECK(*eos->local_batch_size == 2);   // packed rows: 2 x 3472 x 2 = 13,888
    CHECK(*eos->ttt_minutes_official_scaled == Approx(0.1193));
    CHECK(*eos->samples_to_converge_mean == Approx(5'437'152.0));
    CHECK_FALSE(eos->epochs_to_converge_mean.has_value());
    CHECK(eos->log_predates_round);
    CHECK(eos->same_run_times_as == "v4.0:NVIDIA/eos_n434_ngc23.09_pytorch/bert");
    CHECK(eos->status == "available");
    CHECK(eos->rcp_passed());
    // hparams_json is a quoted CSV field full of commas and doubled quotes; it must come out as valid JSON.
    const auto hparams = nlohmann::json::parse(eos->hparams_json);
    CHECK(hparams.at("opt_base_learning_rate").get<double>() == Approx(0.0036));
    CHECK(hparams.at("eval_samples").get<int>() == 10'000);

    int unscored = 0;
    for (const MlperfResult& r : results) {
        if (!r.ttt_minutes_official_scaled) ++unscored;
        if (r.benchmark == "ssd") CHECK(r.epochs_to_converge_mean.has_value());
    }
    CHECK(unscored == 1);   // Clemson 7x8xH100 Llama2-LoRA: logs absent
}

TEST_CASE("a results CSV's counts and times are checked at their column", "[mlperf][hostile]") {
    // calibrate --data takes a user's MLPerf-format CSV. An accumulation of 2^29 wrapped DP x accumulation to 0
    // (SIGFPE), 2^31 was read as 1, a time of 0 reached an internal assert, 1e300 minutes an infinite error.
    auto with = [](const std::string& column, const std::string& value) {
        const std::string path = test::write_results_row("test_results_checks.tmp.csv", {{column, value}});
        try {
            const std::vector<MlperfResult> results = load_mlperf_results(path);
            std::filesystem::remove(path);
            return results.at(0).gradient_accumulation_steps.value_or(-1);
        } catch (const InputError&) {
            std::filesystem::remove(path);
            throw;
        }
    };
    CHECK(with("gradient_accumulation_steps", "3") == 3);
    CHECK(with("gradient_accumulation_steps", "") == -1);
    CHECK_THROWS_WITH(with("gradient_accumulation_steps", "536870912"),
                      Catch::Contains(":2: 'gradient_accumulation_steps'") && Catch::Contains("outside 1..1000000"));
    CHECK_THROWS_WITH(with("gradient_accumulation_steps", "2147483648"), Catch::Contains("outside 1..1000000"));
    CHECK_THROWS_WITH(with("gradient_accumulation_steps", "0"), Catch::Contains("outside 1..1000000"));
    CHECK_THROWS_WITH(with("n_accelerators", "0"), Catch::Contains("'n_accelerators'"));
    CHECK_THROWS_WITH(with("n_accelerators", "99999999999"), Catch::Contains("'n_accelerators'"));
    CHECK_THROWS_WITH(with("global_batch_size", "-8"), Catch::Contains("'global_batch_size'"));
    CHECK_THROWS_WITH(with("ttt_minutes_official_scaled", "0"), Catch::Contains("must be positive"));
    CHECK_THROWS_WITH(with("ttt_minutes_official_scaled", "-5"), Catch::Contains("must be positive"));
    CHECK_THROWS_WITH(with("ttt_minutes_official_scaled", "1e300"), Catch::Contains("is above 1000000"));
    CHECK_THROWS_WITH(with("samples_to_converge_mean", "-1"), Catch::Contains("'samples_to_converge_mean'"));
    CHECK_THROWS_WITH(with("n_runs", "-1"), Catch::Contains("'n_runs'"));
}

TEST_CASE("distinct scored results count each result once", "[mlperf]") {
    const std::vector<MlperfResult> results = load_mlperf_results();
    const std::vector<MlperfResult> distinct = distinct_scored_results(results);
    // 110 rows - 1 unscored - 1 twin (Dell 8xXE9680 and its -POWER copy share run times) = 108.
    CHECK(distinct.size() == 108);
    int power_twins = 0;
    for (const MlperfResult& r : distinct)
        if (r.submitter == "Dell" && r.benchmark == "llama2_70b_lora" && r.n_accelerators == 64) ++power_twins;
    CHECK(power_twins == 1);

    std::map<std::string, int> by_family;
    for (const std::string family : {"H100-SXM", "H200-SXM", "B200"}) {
        ResultFilter filter;
        filter.accelerator_family = family;
        by_family[family] = static_cast<int>(distinct_scored_results(results, filter).size());
    }
    CHECK(by_family["H100-SXM"] == 60);
    CHECK(by_family["H200-SXM"] == 31);
    CHECK(by_family["B200"] == 4);

    ResultFilter fresh_h100;
    fresh_h100.accelerator_family = "h100-sxm";
    fresh_h100.include_predating_logs = false;
    fresh_h100.require_rcp_pass = true;
    const int fresh = static_cast<int>(distinct_scored_results(results, fresh_h100).size());
    ResultFilter retinanet;
    retinanet.benchmark = "retinanet";
    const int retinanet_results = static_cast<int>(distinct_scored_results(results, retinanet).size());
    retinanet.require_rcp_pass = true;
    CHECK(static_cast<int>(distinct_scored_results(results, retinanet).size()) == retinanet_results - 1);   // Dell H100-NVL

    std::cout << "[mlperf] v4.1 distinct scored results: " << distinct.size() << " of " << results.size()
              << " rows; H100-SXM " << by_family["H100-SXM"] << " (" << fresh
              << " with v4.1 logs and an RCP pass), H200-SXM " << by_family["H200-SXM"] << ", B200 "
              << by_family["B200"] << "\n";
}
