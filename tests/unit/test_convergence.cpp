// Convergence from the RCP tables: olympic means, pruning and interpolation as mlperf_logging's rcp_checker,
// extrapolation warnings and limits, and the run-to-run spread of a score.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "models/convergence/convergence.hpp"
#include "models/data_dir.hpp"
#include "models/mlperf/results.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

struct SummaryRow {
    double olympic_mean;
    double stdev;
    bool kept;
};

// rcps_summary_4.1.csv keyed by (benchmark, batch).
std::map<std::pair<std::string, int>, SummaryRow> load_summary() {
    std::ifstream in(data_file("mlperf/rcps/rcps_summary_4.1.csv"));
    std::ostringstream text;
    text << in.rdbuf();
    const auto records = parse_csv(text.str(), "rcps_summary_4.1.csv");
    std::map<std::string, std::size_t> col;
    for (std::size_t c = 0; c < records[0].size(); ++c) col[records[0][c]] = c;
    std::map<std::pair<std::string, int>, SummaryRow> out;
    for (std::size_t r = 1; r < records.size(); ++r) {
        const auto& f = records[r];
        out[{f[col["benchmark"]], std::stoi(f[col["BS"]])}] =
            SummaryRow{std::stod(f[col["olympic_mean"]]), std::stod(f[col["stdev_pop"]]), f[col["kept_after_pruning"]] == "True"};
    }
    return out;
}

}  // namespace

TEST_CASE("RCP tables reproduce the summary's olympic means, stdevs and pruning", "[convergence]") {
    const auto summary = load_summary();
    int compared = 0;
    for (const Workload& w : workload_catalog()) {
        // The summary is the four v4.1 benchmarks' (rcps_summary_4.1.csv); GPT-3's RCPs are checked against its
        // results' rcp_mean in test_gpt3.cpp.
        if (w.convergence_unit == ConvergenceUnit::tokens) continue;
        const RcpTable table = load_rcp_table(w);
        for (const RcpRecord& r : table.records) {
            INFO(w.name << " batch " << r.global_batch);
            const auto it = summary.find({w.mlperf_benchmark, r.global_batch});
            REQUIRE(it != summary.end());
            // The summary prints 6 significant digits.
            CHECK(r.olympic_mean == Approx(it->second.olympic_mean).epsilon(1e-5));
            CHECK(r.stdev == Approx(it->second.stdev).epsilon(1e-5).margin(1e-9));
            CHECK(r.kept_after_pruning == it->second.kept);
            ++compared;
        }
    }
    CHECK(compared == static_cast<int>(summary.size()));
    CHECK(compared == 31);
}

TEST_CASE("at a kept RCP batch the model returns the table value exactly", "[convergence]") {
    for (const Workload& w : workload_catalog()) {
        const ConvergenceModel model = ConvergenceModel::for_workload(w);
        const double samples_per_unit = w.convergence_unit == ConvergenceUnit::epochs   ? static_cast<double>(*w.train_samples)
                                        : w.convergence_unit == ConvergenceUnit::tokens ? 1.0 / w.model_parallel->tokens_per_sample
                                                                                        : 1.0;
        for (const RcpRecord& r : model.table().kept()) {
            INFO(w.name << " batch " << r.global_batch);
            const ConvergenceEstimate e = model.samples_to_converge(r.global_batch);
            CHECK(e.samples_mean == r.olympic_mean * samples_per_unit);
            CHECK(e.warnings.empty());
        }
    }
    // Spot values (params.md §4.2 lists raw means; these are the olympic means the checker uses).
    const ConvergenceModel retinanet = ConvergenceModel::for_workload(find_workload("ssd"));
    CHECK(retinanet.samples_to_converge(256).samples_mean == Approx(4.0 * 1'170'301));
    const ConvergenceModel lora = ConvergenceModel::for_workload(find_workload("lora"));
    CHECK(lora.samples_to_converge(8).samples_mean == Approx(3178.67).epsilon(1e-5));
}

TEST_CASE("between kept batches convergence is linear, pruned records are skipped", "[convergence]") {
    const ConvergenceModel bert = ConvergenceModel::for_workload(find_workload("bert"));
    const auto kept = bert.table().kept();
    // Kept BERT batches: 448, 4608, 6144, 6912, 12288, 13056, 16384 (1536, 3072, 4096, 8192, 8704 pruned).
    REQUIRE(kept.size() == 7);
    CHECK(kept[0].global_batch == 448);
    CHECK(kept[1].global_batch == 4608);
    const double at_448 = bert.samples_to_converge(448).samples_mean;
    const double at_4608 = bert.samples_to_converge(4608).samples_mean;
    CHECK(bert.samples_to_converge(2528).samples_mean == Approx((at_448 + at_4608) / 2));
    // 768 lies between 448 and 4608 (pruned 1536 is not used).
    CHECK(bert.samples_to_converge(768).samples_mean ==
          Approx(at_448 + (at_4608 - at_448) * (768.0 - 448) / (4608 - 448)));
    // 13,888 (NVIDIA's 3472-GPU run) interpolates 13056 and 16384; the v4.1 row lists rcp_mean 4,860,355.56.
    CHECK(bert.samples_to_converge(13'888).samples_mean == Approx(4'860'355.5556).epsilon(1e-6));

    // Below the smallest kept batch the smallest's value is used, with a note.
    const ConvergenceEstimate small = bert.samples_to_converge(256);
    CHECK(small.samples_mean == at_448);
    CHECK(small.warnings.size() == 1);
}

TEST_CASE("convergence beyond the largest RCP batch is extrapolated with a warning, then refused", "[convergence]") {
    const ConvergenceModel sd = ConvergenceModel::for_workload(find_workload("sd"));
    const double at_1024 = sd.samples_to_converge(1024).samples_mean;
    const double at_2048 = sd.samples_to_converge(2048).samples_mean;
    const ConvergenceEstimate beyond = sd.samples_to_converge(3072);
    CHECK(beyond.samples_mean == Approx(at_2048 + (at_2048 - at_1024) * (3072.0 - 2048) / (2048 - 1024)));
    REQUIRE(beyond.warnings.size() == 1);
    CHECK(beyond.warnings[0] == "global batch 3072 exceeds the largest RCP batch 2048; convergence extrapolated");
    CHECK_NOTHROW(sd.samples_to_converge(4096));                  // exactly 2x: allowed
    CHECK_THROWS_AS(sd.samples_to_converge(4097), InputError);    // beyond 2x: refused
    CHECK_THROWS_AS(sd.samples_to_converge(0), InputError);

    ConvergenceOptions wide;
    wide.max_extrapolation_factor = 4;
    CHECK_NOTHROW(ConvergenceModel::for_workload(find_workload("sd"), wide).samples_to_converge(8192));
}

TEST_CASE("the spread of a score shrinks with more runs and is reproducible", "[convergence]") {
    const Workload& bert = find_workload("bert");
    const ConvergenceEstimate ten = ConvergenceModel::for_workload(bert).samples_to_converge(768);
    CHECK(ten.samples_p10 < ten.samples_mean);
    CHECK(ten.samples_mean < ten.samples_p90);

    ConvergenceOptions five_runs;
    five_runs.runs_per_result = 5;
    ConvergenceOptions forty_runs;
    forty_runs.runs_per_result = 40;
    const ConvergenceEstimate five = ConvergenceModel::for_workload(bert, five_runs).samples_to_converge(768);
    const ConvergenceEstimate forty = ConvergenceModel::for_workload(bert, forty_runs).samples_to_converge(768);
    CHECK(five.samples_p90 - five.samples_p10 > ten.samples_p90 - ten.samples_p10);
    CHECK(ten.samples_p90 - ten.samples_p10 > forty.samples_p90 - forty.samples_p10);

    // The olympic mean of 10 standard normals has stdev ~0.33, so its 90th percentile is ~1.28 x 0.33 ~ 0.42.
    const double q90 = olympic_mean_standard_quantile(10, 0.9, 20'000, 20'241'011);
    CHECK(q90 == Approx(0.42).margin(0.03));
    CHECK(olympic_mean_standard_quantile(10, 0.1, 20'000, 20'241'011) == Approx(-q90).margin(0.02));
    CHECK(q90 == olympic_mean_standard_quantile(10, 0.9, 20'000, 20'241'011));   // same seed, same answer
    CHECK_THROWS_AS(olympic_mean_standard_quantile(2, 0.5, 100, 1), InputError);
}

TEST_CASE("cached RCP tables and Monte Carlo give a fresh computation's numbers on any thread", "[convergence]") {
    for (const Workload& w : workload_catalog()) {
        INFO(w.name);
        const RcpTable cached = load_rcp_table(w);
        // An explicit path is parsed afresh on every call.
        const RcpTable fresh = load_rcp_table(w, data_file("mlperf/rcps/rcps_" + w.mlperf_benchmark + ".json"));
        REQUIRE(cached.records.size() == fresh.records.size());
        for (std::size_t i = 0; i < fresh.records.size(); ++i) {
            CHECK(cached.records[i].name == fresh.records[i].name);
            CHECK(cached.records[i].olympic_mean == fresh.records[i].olympic_mean);
            CHECK(cached.records[i].stdev == fresh.records[i].stdev);
            CHECK(cached.records[i].kept_after_pruning == fresh.records[i].kept_after_pruning);
        }
    }
    // A (runs, trials, seed) no other test uses, asked for by 8 threads at once: every thread gets the same bits.
    std::vector<double> quantiles(8);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < quantiles.size(); ++i)
        threads.emplace_back([&quantiles, i] {
            quantiles[i] = olympic_mean_standard_quantile(7, i % 2 == 0 ? 0.1 : 0.9, 3'000, 777);
        });
    for (std::thread& t : threads) t.join();
    for (std::size_t i = 2; i < quantiles.size(); ++i) CHECK(quantiles[i] == quantiles[i % 2]);
    CHECK(quantiles[0] < 0);
    CHECK(quantiles[1] > 0);
}
