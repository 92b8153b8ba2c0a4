// The little of MPI that ttsim uses, behind one class so nothing else includes <mpi.h> and a build without
// MPI (libopenmpi-dev absent: CMake's TTSIM_MPI finds none) still compiles: then a process started by mpirun
// is refused with a message, and a process started without it never touches MPI at all.
//
// MPI is joined only when mpirun (or another PMIx launcher) started this process, which it says in the
// environment. A plain `ttsim run` therefore never initialises MPI: no singleton start-up, no extra threads,
// byte-identical behaviour to a build without MPI. Only the thread that joined calls MPI (MPI_THREAD_FUNNELED):
// TBB workers compute, the main thread talks.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace ttsim::cli {

class MpiSession {
public:
    // The session when this process is one rank of an mpirun job; nullptr when it was started without mpirun.
    // InputError when mpirun started it but this build has no MPI.
    static std::unique_ptr<MpiSession> join_if_launched();
    ~MpiSession();   // MPI_Finalize
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }

    void send(int to, int tag, const std::string& bytes) const;
    // The source rank of a message with `tag` waiting to be received, if any (does not block).
    std::optional<int> probe(int tag) const;
    // Blocks until a message with `tag` from `from` arrives; returns its bytes.
    std::string receive(int from, int tag) const;
    // Ends every rank of the job (MPI_Abort): for a rank that cannot go on and must not leave the others waiting.
    [[noreturn]] void abort(int code) const;

private:
    MpiSession(int rank, int size) : rank_(rank), size_(size) {}
    int rank_ = 0, size_ = 1;
};

}  // namespace ttsim::cli
