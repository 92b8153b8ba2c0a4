// Rows computed by every rank of an mpirun job, gathered on rank 0 in row order (the sweep's expanded points,
// the plan's grid), so the files rank 0 writes are byte-identical to a one-process run's with any number of
// ranks: each row is computed by the same code wherever it runs, and only its place in the order decides where
// it goes, never which rank computed it or when.
//
// Balance (points differ in cost by orders of magnitude): rank 0 hands out chunks of consecutive rows as ranks
// ask for them, guided self-scheduling: a chunk is 1/(4 x ranks) of the rows not yet handed out, at least the
// asking rank's thread count (so its TBB threads all have a row) and at most kMaxChunk (so the last chunks are
// small and no rank holds up the end). A rank's request carries the rows of its previous chunk.
// Rank 0 computes too: a thread of its own takes chunks from the same queue (no messages) while rank 0's main
// thread answers the other ranks; it sleeps 1 ms between polls, so serving costs little CPU.
//
// Ctrl-C: a rank whose SIGINT flag is set stops after its finished rows and says so; rank 0 then hands out no
// more chunks, gathers what every rank finished and returns it (the result is `interrupted`, as in one process).
// A rank that dies (killed, crashed, MPI_Abort): mpirun ends the job by sending SIGTERM to the other ranks;
// rank 0 catches it, prints which rows were lost (in flight on which rank, or never handed out) and exits
// non-zero at once, having written nothing.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/cli/mpi_session.hpp"

namespace ttsim::cli {

// Exit code of a run that lost a rank (exit_codes.hpp's 3: the job failed, not the input).
inline constexpr int kExitLostRank = 3;

struct DistributedJob {
    std::size_t rows = 0;
    int threads = 0;                  // this rank's TBB threads (0 = all cores): sizes its chunks
    std::string unit = "points";      // what a row is, for messages
    // Computes rows [begin, end) on this rank: slot k is row begin + k, nullopt when cancelled before it ran.
    std::function<std::vector<std::optional<nlohmann::json>>(std::size_t begin, std::size_t end)> compute;
    // Rank 0: called with (finished rows of every rank, rows) as rows arrive; from rank 0's threads, serialised.
    std::function<void(std::size_t, std::size_t)> progress;
};

// Rank 0: every row in order (nullopt: not finished because the run was interrupted). Other ranks: nullopt once
// rank 0 needs them no more (they write nothing). Exits the process (kExitLostRank) when a rank is lost.
std::optional<std::vector<std::optional<nlohmann::json>>> run_distributed(const MpiSession& session,
                                                                         const DistributedJob& job);

// The size of the next chunk for a rank with `threads` threads (see above); public for the unit test.
std::size_t chunk_size(std::size_t remaining, int ranks, int threads);

}  // namespace ttsim::cli
