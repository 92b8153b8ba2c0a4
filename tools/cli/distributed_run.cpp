#include "tools/cli/distributed_run.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <signal.h>

#include <tbb/info.h>

#include "models/planning/row_codec.hpp"
#include "tools/cli/exit_codes.hpp"
#include "tools/cli/interrupt.hpp"

namespace ttsim::cli {

using nlohmann::json;

namespace {

constexpr int kRequestTag = 1;   // rank -> 0: the rows of its last chunk, and "give me more"
constexpr int kAssignTag = 2;    // 0 -> rank: the next chunk [begin, end); empty = no more, stop
constexpr std::size_t kMaxChunk = 64;
// Rank 0's main thread polls for requests this often when none is waiting: a request waits at most this long,
// against chunks that take tens of milliseconds to seconds to compute.
constexpr auto kPollInterval = std::chrono::milliseconds(1);

// Set by SIGTERM on rank 0: mpirun is ending the job (a rank died). Like interrupt.cpp's SIGINT flag, a signal
// handler can only talk through a sig_atomic_t of static storage; nothing else reads or writes it.
volatile std::sig_atomic_t g_job_ending = 0;
extern "C" void on_sigterm(int) { g_job_ending = 1; }

// SIGUSR1, which mpirun forwards to every rank (it does not forward SIGINT: Ctrl-C makes it end the job with
// SIGTERM), is this job's Ctrl-C: it sets the same flag SIGINT does (request_interrupt is one sig_atomic_t store).
extern "C" void on_sigusr1(int) { request_interrupt(); }

// Installs `handler` for `signo` in this scope (restores the previous one after).
class SignalGuard {
public:
    SignalGuard(int signo, void (*handler)(int)) : signo_(signo) {
        struct sigaction action {};
        action.sa_handler = handler;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        ::sigaction(signo_, &action, &previous_);
    }
    ~SignalGuard() { ::sigaction(signo_, &previous_, nullptr); }
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;

private:
    int signo_;
    struct sigaction previous_ {};
};

// TTSIM_TEST_KILL_RANK=K:M (tests only): rank K kills itself with SIGKILL, as `kill -9` would, once it has
// computed M rows and before it sends them, so a test can lose a rank at a known place.
struct KillSwitch {
    int rank = -1;
    std::size_t after_rows = 0;
};
KillSwitch kill_switch_from_environment() {
    KillSwitch k;
    const char* text = std::getenv("TTSIM_TEST_KILL_RANK");
    if (text == nullptr) return k;
    unsigned long long after = 0;
    if (std::sscanf(text, "%d:%llu", &k.rank, &after) != 2) return KillSwitch{};
    k.after_rows = static_cast<std::size_t>(after);
    return k;
}

int effective_threads(int threads) { return threads > 0 ? threads : tbb::info::default_concurrency(); }

// "13-16" (1-based, the rows' numbers in the result files).
std::string range_text(std::size_t begin, std::size_t end) {
    return end - begin == 1 ? std::to_string(begin + 1) : std::to_string(begin + 1) + "-" + std::to_string(end);
}

struct Chunk {
    std::size_t begin = 0, end = 0;
};

// Rank 0's view of the job: what is handed out to whom and what has come back.
class Coordinator {
public:
    Coordinator(const DistributedJob& job, int ranks) : job_(job), ranks_(ranks), rows_(job.rows) {}

    Chunk take(int rank, int threads) {
        std::lock_guard<std::mutex> lock(mutex_);
        Chunk c{next_, next_};
        if (!stopping_ && !interrupted()) c.end = next_ + chunk_size(job_.rows - next_, ranks_, threads);
        next_ = c.end;
        in_flight_[rank] = c;
        return c;
    }
    void store(std::size_t index, json row) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (index >= rows_.size() || rows_[index]) return;   // a duplicate or stray row is not counted twice
        rows_[index] = std::move(row);
        ++finished_;
        if (job_.progress) job_.progress(finished_, rows_.size());
    }
    void stop() {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    std::vector<std::optional<json>> rows() {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::move(rows_);
    }
    // The one stderr line of a job mpirun is ending: every row not gathered, by where it was.
    void report_lost() {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string where;
        auto add_missing = [&](Chunk c, const std::string& label) {
            std::size_t i = c.begin;
            while (i < c.end) {
                if (rows_[i]) {
                    ++i;
                    continue;
                }
                std::size_t j = i;
                while (j < c.end && !rows_[j]) ++j;
                where += (where.empty() ? "" : ", ") + range_text(i, j) + " (" + label + ")";
                i = j;
            }
        };
        for (const auto& [rank, chunk] : in_flight_) add_missing(chunk, "in flight on rank " + std::to_string(rank));
        add_missing({next_, rows_.size()}, "not handed out yet");
        std::fprintf(stderr,
                     "\nttsim: error: the MPI job is being ended (SIGTERM from mpirun: a rank died or was killed, or "
                     "mpirun got Ctrl-C; SIGUSR1 to mpirun stops a job keeping its finished rows); %zu of %zu %s "
                     "were not gathered: %s; no result file was written\n",
                     rows_.size() - finished_, rows_.size(), job_.unit.c_str(), where.c_str());
        std::fflush(stderr);
    }

private:
    const DistributedJob& job_;
    int ranks_;
    std::mutex mutex_;
    std::vector<std::optional<json>> rows_;
    std::size_t next_ = 0, finished_ = 0;
    bool stopping_ = false;
    std::map<int, Chunk> in_flight_;   // the last chunk handed to each rank
};

std::vector<std::optional<json>> gather_on_rank0(const MpiSession& session, const DistributedJob& job) {
    const SignalGuard ending_guard(SIGTERM, on_sigterm);
    Coordinator coordinator(job, session.size());
    // Rank 0's own share, computed beside the serving loop.
    std::exception_ptr local_failure;
    bool local_done = false;
    std::mutex local_mutex;
    std::thread local([&] {
        try {
            while (true) {
                const Chunk c = coordinator.take(0, job.threads);
                if (c.begin == c.end) break;
                std::vector<std::optional<json>> rows = job.compute(c.begin, c.end);
                for (std::size_t k = 0; k < rows.size(); ++k)
                    if (rows[k]) coordinator.store(c.begin + k, std::move(*rows[k]));
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(local_mutex);
            local_failure = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(local_mutex);
        local_done = true;
    });
    int serving = session.size() - 1;   // ranks not yet told to stop
    while (true) {
        if (g_job_ending) {
            coordinator.report_lost();
            std::_Exit(kExitLostRank);   // the job is going down; nothing more to write or wait for
        }
        {
            std::lock_guard<std::mutex> lock(local_mutex);
            if (local_failure) {
                try {
                    std::rethrow_exception(local_failure);
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "ttsim: internal error on rank 0: %s (please report this bug)\n", e.what());
                }
                session.abort(kExitInternalError);
            }
            if (local_done && serving == 0) break;
        }
        const std::optional<int> source = session.probe(kRequestTag);
        if (!source) {
            std::this_thread::sleep_for(kPollInterval);
            continue;
        }
        const json request = planning::from_bytes(session.receive(*source, kRequestTag),
                                                  "message from rank " + std::to_string(*source));
        for (const json& row : request.at("rows")) coordinator.store(row.at(0).get<std::size_t>(), row.at(1));
        // One rank interrupted (its own Ctrl-C): the whole job stops, as one process would.
        if (request.at("interrupted").get<bool>()) {
            request_interrupt();
            coordinator.stop();
        }
        const Chunk c = coordinator.take(*source, request.at("threads").get<int>());
        session.send(*source, kAssignTag, planning::to_bytes(json{{"begin", c.begin}, {"end", c.end}}));
        if (c.begin == c.end) --serving;
    }
    local.join();
    return coordinator.rows();
}

void serve_rank0(const MpiSession& session, const DistributedJob& job) {
    const KillSwitch kill = kill_switch_from_environment();
    std::size_t computed = 0;
    json rows = json::array();
    try {
        while (true) {
            const json request = {{"threads", effective_threads(job.threads)}, {"interrupted", interrupted()},
                                  {"rows", std::move(rows)}};
            session.send(0, kRequestTag, planning::to_bytes(request));
            const json reply = planning::from_bytes(session.receive(0, kAssignTag), "message from rank 0");
            const auto begin = reply.at("begin").get<std::size_t>(), end = reply.at("end").get<std::size_t>();
            if (begin == end) return;
            rows = json::array();
            std::vector<std::optional<json>> chunk = job.compute(begin, end);
            for (std::size_t k = 0; k < chunk.size(); ++k)
                if (chunk[k]) rows.push_back(json::array({begin + k, std::move(*chunk[k])}));
            computed += rows.size();
            if (session.rank() == kill.rank && computed >= kill.after_rows) std::raise(SIGKILL);
        }
    } catch (const std::exception& e) {
        // Rank 0 waits for this rank's rows: end the job rather than leave it waiting.
        std::fprintf(stderr, "ttsim: internal error on rank %d: %s (please report this bug)\n", session.rank(), e.what());
        session.abort(kExitInternalError);
    }
}

}  // namespace

std::size_t chunk_size(std::size_t remaining, int ranks, int threads) {
    std::size_t size = remaining / (4 * static_cast<std::size_t>(std::max(1, ranks)));
    size = std::max(size, static_cast<std::size_t>(effective_threads(threads)));
    return std::min({size, kMaxChunk, remaining});
}

std::optional<std::vector<std::optional<json>>> run_distributed(const MpiSession& session, const DistributedJob& job) {
    const SignalGuard stop_guard(SIGUSR1, on_sigusr1);
    if (session.rank() == 0) return gather_on_rank0(session, job);
    serve_rank0(session, job);
    return std::nullopt;
}

}  // namespace ttsim::cli
