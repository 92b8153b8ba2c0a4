// The table of `ttsim collective` (and of a `collective` scenario) in nccl-tests' layout, so that a reader or a
// script used to nccl-tests' all_reduce_perf & co. finds the same columns in the same order (nccl-tests
// src/common.cu, the rows BenchTime/TimeTest print and the summary of run()):
//   size (B), count (elements), type, redop, root, then out-of-place time (us) / algbw / busbw / #wrong and the
//   same four in-place, and after the rows "# Avg bus bandwidth    : X", X the mean busbw over every size (GB/s,
//   printf %g). ttsim's own columns (algorithm, protocol, lower bound) follow nccl-tests'.
// The simulation has no buffers: the in-place columns repeat the out-of-place figures, and #wrong is "N/A" (as
// nccl-tests prints it without data checks, -c 0). The type is nccl-tests' default, float: it fixes `count`
// only, the simulation moves bytes.
// The table is written piece by piece so that each size can be printed as soon as it finishes: the header, one
// line per size, then the footer (interruption note, average).
#pragma once

#include <cstdint>
#include <string>

#include "tools/cli/collective_sweep.hpp"

namespace ttsim::cli {

// nccl-tests' `count` column: elements of `type` per rank buffer (ParamCount in nccl-tests: S/4 for all-reduce
// and broadcast; S/4/n for reduce-scatter, all-gather and all-to-all, whose S spans all n ranks).
std::uint64_t nccl_tests_count(CollectiveOp op, std::uint64_t bytes, int ranks);
// "sum" for the reductions, "none" otherwise (as nccl-tests prints them).
std::string nccl_tests_redop(CollectiveOp op);
// Broadcast's root (rank 0, nccl-tests' default -r 0); -1 where the op has no root.
int nccl_tests_root(CollectiveOp op);
inline constexpr const char* kNcclTestsType = "float";
inline constexpr int kNcclTestsTypeBytes = 4;

// The mean busbw over the finished sizes, GB/s, as nccl-tests' "# Avg bus bandwidth" (it averages the out-of-place
// and in-place runs of every size: equal here). 0 when no size finished.
double average_busbw_gbps(const CollectiveSweepResult& result);

std::string format_collective_table_header(const CollectiveSweepSpec& spec);
std::string format_collective_table_row(const CollectiveSweepSpec& spec, const CollectiveSweepRow& row);
std::string format_collective_table_footer(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result);

}  // namespace ttsim::cli
