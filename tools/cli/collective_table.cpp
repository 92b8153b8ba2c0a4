#include "tools/cli/collective_table.hpp"

#include <fmt/format.h>

#include "sim/units.hpp"

namespace ttsim::cli {

std::uint64_t nccl_tests_count(CollectiveOp op, std::uint64_t bytes, int ranks) {
    const std::uint64_t elements = bytes / kNcclTestsTypeBytes;
    switch (op) {
        case CollectiveOp::AllReduce:
        case CollectiveOp::Broadcast: return elements;
        case CollectiveOp::ReduceScatter:
        case CollectiveOp::AllGather:
        case CollectiveOp::AllToAll: return ranks > 0 ? elements / static_cast<std::uint64_t>(ranks) : 0;
    }
    return elements;
}

std::string nccl_tests_redop(CollectiveOp op) {
    return op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter ? "sum" : "none";
}

int nccl_tests_root(CollectiveOp op) { return op == CollectiveOp::Broadcast ? 0 : -1; }

double average_busbw_gbps(const CollectiveSweepResult& result) {
    if (result.rows.empty()) return 0.0;
    double sum = 0.0;
    for (const CollectiveSweepRow& row : result.rows) sum += row.result.busbw_bytes_per_s / 1e9;
    return sum / static_cast<double>(result.rows.size());
}

namespace {

// nccl-tests' time column: no decimals from 10 ms, one from 100 us, else two (7 characters wide).
std::string time_us(double us) {
    if (us >= 10000.0) return fmt::format("{:7.0f}", us);
    if (us >= 100.0) return fmt::format("{:7.1f}", us);
    return fmt::format("{:7.2f}", us);
}

// One placement (out-of-place or in-place): time, algbw, busbw, #wrong.
std::string placement(const CollectiveResult& r) {
    return fmt::format("  {:>7}  {:6.2f}  {:6.2f}  {:>5}", time_us(r.duration.microseconds_f()),
                       r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9, "N/A");
}

}  // namespace

std::string format_collective_table_header(const CollectiveSweepSpec& spec) {
    const std::vector<std::uint64_t> sizes = sweep_sizes(spec.min_bytes, spec.max_bytes);
    std::string out;
    if (!spec.name.empty()) out += "# " + spec.name + "\n";
    out += "# " + std::string(to_string(spec.op)) + " on " + describe_collective_cluster(spec.cluster) +
           ", algorithm " + std::string(to_string(spec.algorithm)) + "\n";
    out += "# sizes double from " + units::format_bytes(spec.min_bytes) + " (nccl-tests -f 2)";
    if (!sizes.empty() && sizes.back() != spec.max_bytes)
        out += "; the maximum " + units::format_bytes(spec.max_bytes) + " is not reached by doubling, the last size is " +
               units::format_bytes(sizes.back());
    out += "\n";
    out += "# busbw by nccl-tests' formulas; type float sets the count only; in-place = out-of-place (simulated once);"
           " lower bound = bytes through each GPU's narrowest link at line rate + minimum path latency\n";
    out += "#\n";
    std::string placements = fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:^31}  {:^31}", "", "", "", "", "",
                                         "out-of-place", "in-place");
    placements.erase(placements.find_last_not_of(' ') + 1);
    out += placements + "\n";
    out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} {:>6}"
                       "  {:>8} {:>7} {:>12}\n",
                       "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                       "busbw", "#wrong", "algo", "proto", "lowbound");
    out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  {:>5}"
                       "  {:>8} {:>7} {:>12}\n",
                       "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
                       "", "", "(us)");
    return out;
}

std::string format_collective_table_row(const CollectiveSweepSpec& spec, const CollectiveSweepRow& row) {
    const CollectiveResult& r = row.result;
    return fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", row.bytes, nccl_tests_count(spec.op, row.bytes, r.ranks),
                       kNcclTestsType, nccl_tests_redop(spec.op), nccl_tests_root(spec.op)) +
           placement(r) + placement(r) +
           fmt::format("  {:>8} {:>7} {:>12.2f}\n", to_string(r.algorithm), to_string(r.protocol),
                       r.lower_bound.microseconds_f());
}

std::string format_collective_table_footer(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result) {
    std::string out;
    // A multi-plane fabric: each plane's traffic and busiest link, size by size (collective.hpp PlaneLoad).
    if (const int planes = collective_planes(spec); planes > 1 && !result.rows.empty()) {
        out += fmt::format("# per plane: {} planes, each a copy of the fabric at 1/{} of the NIC's rate, every connection "
                           "striped evenly over them\n",
                           planes, planes);
        for (const CollectiveSweepRow& row : result.rows)
            for (const PlaneLoad& plane : plane_loads(row.result, planes))
                out += plane.busiest_link.empty()
                           ? fmt::format("# {:>12} B  plane {}: no fabric link crossed\n", row.bytes, plane.plane)
                           : fmt::format("# {:>12} B  plane {}: {:.4g} GB sent by the NICs, busiest link {} at {:.1f} %\n",
                                         row.bytes, plane.plane, plane.nic_bytes_sent / 1e9, plane.busiest_link,
                                         100 * plane.utilisation);
    }
    if (result.interrupted)
        out += fmt::format("# interrupted: {} of {} sizes finished, only those are shown\n", result.rows.size(),
                           result.sizes_requested);
    if (!result.rows.empty()) out += fmt::format("# Avg bus bandwidth    : {:g}\n", average_busbw_gbps(result));
    out += "#\n";
    return out;
}

}  // namespace ttsim::cli
