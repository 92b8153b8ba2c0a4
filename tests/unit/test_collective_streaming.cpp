// `ttsim collective` prints each size as it finishes (tools/cli/collective_sweep.hpp's row callback) in
// nccl-tests' layout (tools/cli/collective_table.hpp): the callback sees every row in order, as soon as it is
// simulated, and the streamed pieces add up to the whole table; the count column and the average busbw follow
// nccl-tests' definitions.
#include <catch2/catch.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli/collective_sweep.hpp"
#include "tools/cli/collective_table.hpp"

using namespace ttsim;
using namespace ttsim::cli;

namespace {

CollectiveSweepSpec small_sweep(CollectiveOp op) {
    CollectiveSweepSpec spec;
    spec.cluster.system = "dgx-h100";
    spec.cluster.gpus = 16;
    spec.op = op;
    spec.min_bytes = 1 << 20;
    spec.max_bytes = 8 << 20;
    return spec;
}

}  // namespace

TEST_CASE("collective sweep: the row callback sees each size as it finishes, in order") {
    const CollectiveSweepSpec spec = small_sweep(CollectiveOp::AllReduce);
    std::vector<std::uint64_t> seen;
    std::vector<std::size_t> done_counts;
    std::size_t rows_before_callback = 0;
    const CollectiveSweepResult result = run_collective_sweep(
        spec, {}, [&](const CollectiveSweepRow& row, std::size_t done, std::size_t total) {
            seen.push_back(row.bytes);
            done_counts.push_back(done);
            CHECK(total == 4);
            rows_before_callback = done;
        });
    REQUIRE(result.rows.size() == 4);
    CHECK(seen == std::vector<std::uint64_t>{1 << 20, 2 << 20, 4 << 20, 8 << 20});
    CHECK(done_counts == std::vector<std::size_t>{1, 2, 3, 4});
    CHECK(rows_before_callback == 4);
}

TEST_CASE("collective sweep: a cancelled sweep reports the rows it streamed and no more") {
    const CollectiveSweepSpec spec = small_sweep(CollectiveOp::AllGather);
    std::size_t streamed = 0;
    const CollectiveSweepResult result = run_collective_sweep(
        spec, [&] { return streamed >= 2; },
        [&](const CollectiveSweepRow&, std::size_t, std::size_t) { ++streamed; });
    CHECK(result.interrupted);
    CHECK(result.rows.size() == 2);
    CHECK(streamed == 2);
    const std::string footer = format_collective_table_footer(spec, result);
    CHECK(footer.find("# interrupted: 2 of 4 sizes finished") != std::string::npos);
}

TEST_CASE("collective table: header + streamed rows + footer is the whole table, with nccl-tests' columns") {
    for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::Broadcast}) {
        const CollectiveSweepSpec spec = small_sweep(op);
        std::string streamed = format_collective_table_header(spec);
        const CollectiveSweepResult result = run_collective_sweep(
            spec, {}, [&](const CollectiveSweepRow& row, std::size_t, std::size_t) {
                streamed += format_collective_table_row(spec, row);
            });
        streamed += format_collective_table_footer(spec, result);
        CHECK(streamed == format_sweep_table(spec, result));
        CHECK(streamed.find("#       size         count      type   redop    root     time   algbw   busbw") !=
              std::string::npos);

        // Each row: size, count, type, redop, root, then out-of-place and in-place time/algbw/busbw/#wrong.
        double busbw_sum = 0;
        for (const CollectiveSweepRow& row : result.rows) {
            std::istringstream fields(format_collective_table_row(spec, row));
            std::uint64_t size = 0, count = 0;
            std::string type, redop, wrong1, wrong2;
            int root = 0;
            double t1, a1, b1, t2, a2, b2;
            fields >> size >> count >> type >> redop >> root >> t1 >> a1 >> b1 >> wrong1 >> t2 >> a2 >> b2 >> wrong2;
            REQUIRE(fields);
            CHECK(size == row.bytes);
            // nccl-tests' ParamCount: all elements for all-reduce and broadcast, one rank's share for all-gather.
            CHECK(count == (op == CollectiveOp::AllGather ? row.bytes / 4 / 16 : row.bytes / 4));
            CHECK(type == "float");
            CHECK(redop == (op == CollectiveOp::AllReduce ? "sum" : "none"));
            CHECK(root == (op == CollectiveOp::Broadcast ? 0 : -1));
            CHECK(t1 == t2);
            CHECK(a1 == a2);
            CHECK(b1 == b2);
            CHECK(b1 == Approx(row.result.busbw_bytes_per_s / 1e9).margin(0.005));
            CHECK(wrong1 == "N/A");
            busbw_sum += row.result.busbw_bytes_per_s / 1e9;
        }
        CHECK(average_busbw_gbps(result) == Approx(busbw_sum / 4));
        // "%g" of the mean, as nccl-tests prints it.
        char expected[64];
        std::snprintf(expected, sizeof expected, "# Avg bus bandwidth    : %g\n", busbw_sum / 4);
        CHECK(streamed.find(expected) != std::string::npos);
    }
}
