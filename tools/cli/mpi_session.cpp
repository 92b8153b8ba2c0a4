#include "tools/cli/mpi_session.hpp"

#include <cstdlib>

#include "sim/errors.hpp"

#ifdef TTSIM_HAVE_MPI
// The C API only: Open MPI's mpi.h otherwise pulls in the deprecated C++ bindings (libmpi_cxx, not linked).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace ttsim::cli {

namespace {

// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE in every rank; PMIx launchers (srun --mpi=pmix, prterun) set
// PMIX_RANK. Reading the environment here is the one way to know before MPI_Init, which must not run in a
// process started without a launcher (Open MPI would start a singleton runtime).
bool launched_by_mpirun() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace

#ifdef TTSIM_HAVE_MPI

std::unique_ptr<MpiSession> MpiSession::join_if_launched() {
    if (!launched_by_mpirun()) return nullptr;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return std::unique_ptr<MpiSession>(new MpiSession(rank, size));
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::send(int to, int tag, const std::string& bytes) const {
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

std::optional<int> MpiSession::probe(int tag) const {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &status);
    if (!flag) return std::nullopt;
    return status.MPI_SOURCE;
}

std::string MpiSession::receive(int from, int tag) const {
    MPI_Status status;
    MPI_Probe(from, tag, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::string bytes(static_cast<std::size_t>(count), '\0');
    MPI_Recv(bytes.data(), count, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return bytes;
}

void MpiSession::abort(int code) const {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);   // MPI_Abort does not return; this only tells the compiler so
}

#else

std::unique_ptr<MpiSession> MpiSession::join_if_launched() {
    if (!launched_by_mpirun())
        return nullptr;
    throw InputError("started by mpirun, but this ttsim was built without MPI (install libopenmpi-dev, "
                     "tools/install-deps.sh, and rebuild), or run it without mpirun");
}

// Without MPI no session is ever made, so these are never reached.
MpiSession::~MpiSession() = default;
void MpiSession::send(int, int, const std::string&) const {}
std::optional<int> MpiSession::probe(int) const { return std::nullopt; }
std::string MpiSession::receive(int, int) const { return {}; }
void MpiSession::abort(int code) const { std::_Exit(code); }

#endif

}  // namespace ttsim::cli
