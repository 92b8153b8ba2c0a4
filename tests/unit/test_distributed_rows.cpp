// What lets a sweep be computed in pieces (MPI ranks, --shard runs) and give a one-process run's files: rows
// survive their encoding bit for bit, any split of the points assembles to the same result, shards cover every
// point once, and rank 0's chunks are never empty or past the end.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "models/planning/published_results.hpp"
#include "models/planning/results_format.hpp"
#include "models/planning/row_codec.hpp"
#include "models/planning/sweep_runner.hpp"
#include "sim/errors.hpp"
#include "tools/cli/distributed_run.hpp"
#include "tools/cli/shard_file.hpp"

using namespace ttsim;
using namespace ttsim::planning;

namespace {

// bert and stable_diffusion on DGX H100, 8 .. 128 GPUs (and 16,384, beyond the data: failed points too).
std::vector<SweepPoint> small_sweep() {
    SweepSpec spec;
    spec.workloads = {"bert", "stable_diffusion"};
    spec.systems = {"dgx-h100"};
    spec.gpu_counts = doubling_counts(8, 128);
    spec.gpu_counts.push_back(16384);
    return expand_sweep(spec, shipped_published_counts);
}

const ProfileSet& profiles() {
    static const ProfileSet set = ProfileSet::load_dir(ProfileSet::default_dir());
    return set;
}

PointOutcome round_trip(const PointOutcome& o) {
    return outcome_from_json(from_bytes(to_bytes(outcome_to_json(o)), "test"), "test");
}

}  // namespace

TEST_CASE("a sweep assembled from rows computed in pieces and encoded is the one-process sweep", "[planning][mpi]") {
    const std::vector<SweepPoint> points = small_sweep();
    const SweepOptions options;
    const std::string whole = format_sweep_csv(run_sweep(points, profiles(), options));
    // Three strided pieces (as three shards or ranks would compute them), each row through CBOR.
    std::vector<std::optional<PointOutcome>> outcomes(points.size());
    for (int i = 1; i <= 3; ++i) {
        const std::vector<std::size_t> share = ttsim::cli::shard_indices(points.size(), {i, 3});
        auto piece = predict_points(points, share, profiles(), options);
        for (std::size_t k = 0; k < share.size(); ++k) outcomes[share[k]] = round_trip(piece[k].value());
    }
    const SweepResult assembled = assemble_sweep(points, std::move(outcomes), profiles(), options);
    CHECK_FALSE(assembled.interrupted);
    CHECK(format_sweep_csv(assembled) == whole);
    bool some_failed = false, some_ok = false;
    for (const auto& r : assembled.points) (r.outcome.ok ? some_ok : some_failed) = true;
    CHECK(some_ok);
    CHECK(some_failed);   // the 16,384-GPU points: their error text travels too
}

TEST_CASE("a sweep missing rows is interrupted and keeps the others in order", "[planning][mpi]") {
    const std::vector<SweepPoint> points = small_sweep();
    auto outcomes = predict_points(points, {0, 2, 3}, profiles(), {});
    std::vector<std::optional<PointOutcome>> by_point(points.size());
    by_point[0] = outcomes[0];
    by_point[2] = outcomes[1];
    by_point[3] = outcomes[2];
    const SweepResult result = assemble_sweep(points, std::move(by_point), profiles(), {});
    CHECK(result.interrupted);
    CHECK(result.points_requested == points.size());
    REQUIRE(result.points.size() == 3);
    CHECK(result.points[1].point.gpus == points[2].gpus);
}

TEST_CASE("row encoding keeps every bit, infinities and NaN included", "[planning][mpi]") {
    PointOutcome o;
    o.ok = true;
    o.prediction.ttt_minutes = 0.1 + 0.2;   // not a short decimal
    o.prediction.step_ms = std::numeric_limits<double>::infinity();
    o.prediction.fixed_ms = std::numeric_limits<double>::quiet_NaN();
    o.prediction.steps = (1LL << 53) + 1;
    o.prediction.efficiency_vs_8gpu = std::nextafter(1.0, 2.0);
    o.prediction.model_flops_utilisation = 1.0 / 3.0;
    o.prediction.model_flops_per_gpu = 4.0e14 / 3.0;
    o.prediction.routing = FabricRouting::StaticEcmp;
    o.prediction.warnings = {"w, with \"quotes\""};
    o.prediction.layout.gradient_reduction_after_backward = true;   // a layout's facts travel with the row
    o.prediction.layout.gradient_buckets = 5;
    o.prediction.layout.attention_precision = "fp8";
    o.prediction.layout.precision = "fp16";
    o.prediction.layout.head_on_all_tokens = true;
    o.notes = {"n"};
    const PointOutcome back = round_trip(o);
    CHECK(back.prediction.layout.gradient_reduction_after_backward);
    CHECK(back.prediction.layout.gradient_buckets == 5);
    CHECK(back.prediction.layout.attention_precision == "fp8");
    CHECK(back.prediction.layout.precision == "fp16");
    CHECK(back.prediction.layout.head_on_all_tokens);
    CHECK(back.prediction.ttt_minutes == o.prediction.ttt_minutes);
    CHECK(std::isinf(back.prediction.step_ms));
    CHECK(std::isnan(back.prediction.fixed_ms));
    CHECK(back.prediction.steps == o.prediction.steps);
    CHECK(back.prediction.efficiency_vs_8gpu == o.prediction.efficiency_vs_8gpu);
    CHECK(back.prediction.model_flops_utilisation == o.prediction.model_flops_utilisation);
    CHECK(back.prediction.model_flops_per_gpu == o.prediction.model_flops_per_gpu);
    CHECK(back.prediction.routing == FabricRouting::StaticEcmp);
    CHECK(back.prediction.warnings == o.prediction.warnings);
    CHECK(back.notes == o.notes);
    CHECK_FALSE(round_trip(PointOutcome{}).prediction.efficiency_vs_8gpu.has_value());

    PlanEvaluation e;
    e.ok = true;
    e.cost = 1.0 / 3.0;
    e.warnings = {"x"};
    const PlanEvaluation e_back = evaluation_from_json(from_bytes(to_bytes(evaluation_to_json(e)), "t"), "t");
    CHECK(e_back.cost == e.cost);
    CHECK(e_back.warnings == e.warnings);
}

TEST_CASE("a damaged row or message is an InputError naming it", "[planning][mpi]") {
    nlohmann::json row = outcome_to_json(PointOutcome{});
    row.erase("catalog_gpu");
    CHECK_THROWS_WITH(outcome_from_json(row, "shard.cbor row 3"), Catch::Contains("shard.cbor row 3: not a row"));
    // ("not cbor at all" would be one: 0x6e starts a 14-byte text string, the rest of it.)
    CHECK_THROWS_WITH(from_bytes("# a YAML file, not CBOR", "x.cbor"), Catch::Contains("x.cbor: not a file or message"));
}

TEST_CASE("a merged row marked ok must hold a possible prediction", "[planning][mpi]") {
    PointOutcome o;
    o.ok = true;
    o.prediction.gpus = 8;
    o.prediction.ttt_minutes = 12.5;
    o.prediction.step_ms = 95.0;
    o.prediction.gpu_hours = 1.7;
    CHECK_NOTHROW(require_possible_outcome(o, "row"));
    for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        PointOutcome edited = o;
        edited.prediction.ttt_minutes = bad;   // a hand-edited shard: reached scaling_metrics' assert (exit 3)
        CHECK_THROWS_WITH(require_possible_outcome(edited, "the shards' row of point 1"),
                          Catch::Contains("the shards' row of point 1: not a row ttsim wrote"));
    }
    PointOutcome no_gpus = o;
    no_gpus.prediction.gpus = 0;
    CHECK_THROWS_AS(require_possible_outcome(no_gpus, "row"), InputError);
    PointOutcome failed;   // a failed point carries no prediction: nothing to check
    CHECK_NOTHROW(require_possible_outcome(failed, "row"));
}

TEST_CASE("a shard file whose own counts are impossible is refused before they size anything", "[cli][shard]") {
    // A shard's I/N and point count come from the file: 0 shards looped forever in shard_indices, 2^62 points
    // sized the merge's table (exit 3, out of memory). They are checked as --shard and a sweep's size are.
    const std::string dir = "test_shard_counts.tmp";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto merge_one = [&](int index, int count, std::size_t points) {
        ttsim::cli::ShardFile shard;
        shard.scenario_file = "s.yaml";
        shard.scenario_text = "scenario: sweep\n";
        shard.shard = {index, count};
        shard.points = points;
        const std::string path = ttsim::cli::write_shard(dir, shard);
        try {
            (void)ttsim::cli::merge_shards({path});
        } catch (const InputError& e) {
            std::filesystem::remove(path);
            return std::string(e.what());
        }
        std::filesystem::remove(path);
        return std::string("merged");
    };
    CHECK_THAT(merge_one(1, 0, 4), Catch::Contains("damaged or edited shard file") && Catch::Contains("1/0"));
    CHECK_THAT(merge_one(3, 2, 4), Catch::Contains("I must be in 1..N"));
    CHECK_THAT(merge_one(1, 1, std::size_t{1} << 62), Catch::Contains("sweep points"));
    CHECK_THAT(merge_one(1, 2, 4), Catch::Contains("does not hold exactly the points of shard 1/2"));
    CHECK_THAT(merge_one(2, 100000, 0), Catch::Contains("shard(s) 1, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 99989 more"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("shards: I/N parsed strictly, every point in exactly one shard", "[cli][shard]") {
    using ttsim::cli::parse_shard;
    const auto spec = parse_shard("2/8");
    CHECK(spec.index == 2);
    CHECK(spec.count == 8);
    for (const char* bad : {"0/3", "4/3", "a/3", "3", "1/0", "1/3x", "/3", "1/", "-1/3", "1/3/4"})
        CHECK_THROWS_AS(parse_shard(bad), InputError);
    for (std::size_t points : {0u, 1u, 7u, 144u}) {
        std::multiset<std::size_t> seen;
        for (int i = 1; i <= 5; ++i)
            for (std::size_t p : ttsim::cli::shard_indices(points, {i, 5})) seen.insert(p);
        CHECK(seen.size() == points);
        for (std::size_t p = 0; p < points; ++p) CHECK(seen.count(p) == 1);
    }
    CHECK(ttsim::cli::shard_file_name({2, 3}) == "shard-2-of-3.cbor");
}

TEST_CASE("rank 0's chunks: guided, at least a rank's threads, at most 64, never past the end", "[cli][mpi]") {
    using ttsim::cli::chunk_size;
    CHECK(chunk_size(1000, 2, 2) == 64);    // 1000 / 8 = 125, capped
    CHECK(chunk_size(200, 2, 2) == 25);     // 200 / 8
    CHECK(chunk_size(10, 4, 3) == 3);       // 10 / 16 = 0: the rank's 3 threads each get a point
    CHECK(chunk_size(2, 4, 3) == 2);        // the last points
    CHECK(chunk_size(0, 4, 3) == 0);        // nothing left: the rank is told to stop
    for (std::size_t remaining = 1; remaining < 300; ++remaining) {
        const std::size_t c = chunk_size(remaining, 3, 2);
        CHECK(c >= 1);
        CHECK(c <= remaining);
    }
}
