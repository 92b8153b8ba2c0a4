#include "models/convergence/convergence.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "models/data_dir.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Olympic mean as the rcp_checker computes it for these benchmarks: drop one lowest and one highest value.
double olympic_mean(std::vector<double> values) {
    TTSIM_ASSERT(values.size() >= 3, "olympic mean needs at least 3 values");
    std::sort(values.begin(), values.end());
    const double sum = std::accumulate(values.begin() + 1, values.end() - 1, 0.0);
    return sum / static_cast<double>(values.size() - 2);
}

// Population standard deviation (numpy.std default, ddof = 0), as the rcp_checker uses.
double population_stdev(const std::vector<double>& values) {
    const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    double squares = 0;
    for (double v : values) squares += (v - mean) * (v - mean);
    return std::sqrt(squares / static_cast<double>(values.size()));
}

// The runs whose spread a record's stdev measures: all but gross outliers, runs over kGrossOutlierFactor x the
// median. rcps_gpt3.json's GBS-3072 record holds one run of 13,790,871,552 tokens beside six of 1.21-1.26 B
// (models/data/mlperf/gpt3/README.md caveat 4): a logging fault, not convergence spread, whose stdev would put
// the 10th percentile of time to train below zero. The olympic mean drops it anyway; no other shipped RCP run is
// above 1.3 x its record's median, so the other workloads' spreads are the plain stdev of every run.
constexpr double kGrossOutlierFactor = 3.0;

std::vector<double> spread_runs(std::vector<double> runs) {
    std::vector<double> sorted = runs;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    std::erase_if(runs, [&](double r) { return r > kGrossOutlierFactor * median; });
    return runs;
}

double interpolate(double x, double x0, double y0, double x1, double y1) {
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

// The rcp_checker's pruning, step for step (see convergence.hpp). Marks survivors in `records` (ascending batch).
void prune(std::vector<RcpRecord>& records) {
    if (records.empty()) return;
    const auto fastest = std::min_element(records.begin(), records.end(), [](const RcpRecord& a, const RcpRecord& b) {
        return a.olympic_mean < b.olympic_mean;
    });
    std::vector<std::size_t> alive;   // indices into records, ascending batch
    for (std::size_t i = 0; i < records.size(); ++i)
        if (records[i].global_batch >= fastest->global_batch) alive.push_back(i);

    std::size_t i = 1;
    while (alive.size() >= 3 && i + 1 < alive.size()) {
        const RcpRecord& low = records[alive[i - 1]];
        const RcpRecord& mid = records[alive[i]];
        const RcpRecord& high = records[alive[i + 1]];
        const double line = interpolate(mid.global_batch, low.global_batch, low.olympic_mean, high.global_batch,
                                        high.olympic_mean);
        if (mid.olympic_mean > line)
            alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(i));   // re-test the same index next
        else
            ++i;
    }
    for (std::size_t index : alive) records[index].kept_after_pruning = true;
}

// One standard normal pair from two 64-bit uniform words (Box-Muller). u1 in (0, 1] keeps log() finite.
std::pair<double, double> box_muller(std::uint64_t word1, std::uint64_t word2) {
    constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
    const double u1 = static_cast<double>((word1 >> 11) + 1) * kTwoToMinus53;
    const double u2 = static_cast<double>(word2 >> 11) * kTwoToMinus53;
    const double radius = std::sqrt(-2.0 * std::log(u1));
    return {radius * std::cos(2 * kPi * u2), radius * std::sin(2 * kPi * u2)};
}

}  // namespace

std::vector<RcpRecord> RcpTable::kept() const {
    std::vector<RcpRecord> out;
    for (const RcpRecord& r : records)
        if (r.kept_after_pruning) out.push_back(r);
    return out;
}

namespace {

RcpTable parse_rcp_file(const Workload& workload, const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) throw InputError("cannot open RCP file " + file.string());
    nlohmann::json root;
    try {
        root = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(std::string("malformed RCP JSON: ") + e.what(), SourceLocation{file.string(), 0, 0});
    }
    if (!root.is_object()) throw InputError("RCP file is not a JSON object", SourceLocation{file.string(), 0, 0});

    RcpTable table;
    table.benchmark = workload.mlperf_benchmark;
    table.unit = workload.convergence_unit;
    for (const auto& [name, record] : root.items()) {
        const SourceLocation where{file.string(), 0, 0};
        try {
            if (record.at("Benchmark").get<std::string>() != workload.mlperf_benchmark)
                throw InputError("record is for benchmark '" + record.at("Benchmark").get<std::string>() +
                                     "', expected '" + workload.mlperf_benchmark + "'", where, name);
            // The LoRA file names its list "samples to converge"; the others keep the historical
            // "Epochs to converge" even when the values are samples (BERT, Stable Diffusion).
            const char* list_key = record.contains("samples to converge") ? "samples to converge" : "Epochs to converge";
            const std::vector<double> runs = record.at(list_key).get<std::vector<double>>();
            if (runs.size() < 3) throw InputError("an RCP record needs at least 3 runs", where, name);
            RcpRecord r;
            r.name = name;
            r.global_batch = record.at("BS").get<int>();
            if (r.global_batch < 1) throw InputError("BS must be >= 1", where, name);
            r.runs = static_cast<int>(runs.size());
            r.olympic_mean = olympic_mean(runs);
            r.stdev = population_stdev(spread_runs(runs));
            table.records.push_back(r);
        } catch (const nlohmann::json::exception& e) {
            throw InputError(std::string("malformed RCP record: ") + e.what(), where, name);
        }
    }
    if (table.records.empty()) throw InputError("RCP file has no records", SourceLocation{file.string(), 0, 0});
    std::sort(table.records.begin(), table.records.end(),
              [](const RcpRecord& a, const RcpRecord& b) { return a.global_batch < b.global_batch; });
    for (std::size_t i = 1; i < table.records.size(); ++i)
        if (table.records[i].global_batch == table.records[i - 1].global_batch)
            throw InputError("two RCP records with batch " + std::to_string(table.records[i].global_batch),
                             SourceLocation{file.string(), 0, 0}, table.records[i].name);
    prune(table.records);
    return table;
}

// Shipped RCP tables, parsed once per process: every prediction needs its workload's table, and parsing the
// JSON costs far more than the rest of the convergence model. Keyed by file and by what the parse depends on
// (benchmark id, unit), so a different data directory or workload never sees another's table. Entries are
// immutable once inserted; the mutex guards only the map.
struct RcpCache {
    std::mutex mutex;
    std::map<std::tuple<std::string, std::string, ConvergenceUnit>, std::shared_ptr<const RcpTable>> tables;
};

RcpCache& rcp_cache() {
    static RcpCache cache;
    return cache;
}

}  // namespace

RcpTable load_rcp_table(const Workload& workload, const std::optional<std::filesystem::path>& path) {
    // An explicit path is read every time: callers pass one to read a file they may have just written.
    if (path) return parse_rcp_file(workload, *path);
    const std::filesystem::path file = data_file("mlperf/rcps/rcps_" + workload.mlperf_benchmark + ".json");
    const auto key = std::make_tuple(file.string(), workload.mlperf_benchmark, workload.convergence_unit);
    RcpCache& cache = rcp_cache();
    {
        const std::lock_guard<std::mutex> lock(cache.mutex);
        if (const auto it = cache.tables.find(key); it != cache.tables.end()) return *it->second;
    }
    // Parsed outside the lock; two threads racing here parse the same file to the same table, the first one kept.
    auto parsed = std::make_shared<const RcpTable>(parse_rcp_file(workload, file));
    const std::lock_guard<std::mutex> lock(cache.mutex);
    return *cache.tables.emplace(key, std::move(parsed)).first->second;
}

namespace {

// The sorted olympic means of `trials` seeded Monte Carlo trials of `runs` standard normal draws.
std::vector<double> sorted_olympic_means(int runs, int trials, std::uint64_t seed) {
    std::mt19937_64 engine(seed);   // mt19937_64's output sequence is fixed by the standard
    std::vector<double> draws(static_cast<std::size_t>(runs));
    std::vector<double> olympic(static_cast<std::size_t>(trials));
    double spare = 0;
    bool have_spare = false;
    for (double& trial : olympic) {
        for (double& d : draws) {
            if (have_spare) {
                d = spare;
                have_spare = false;
            } else {
                const std::uint64_t w1 = engine();
                const std::uint64_t w2 = engine();
                const auto [z0, z1] = box_muller(w1, w2);
                d = z0;
                spare = z1;
                have_spare = true;
            }
        }
        trial = olympic_mean(draws);
    }
    std::sort(olympic.begin(), olympic.end());
    return olympic;
}

// The Monte Carlo depends only on (runs, trials, seed), and every prediction of a workload asks for the same
// one (20,000 trials, ~10 ms of CPU), so each distinct one is computed once per process and shared: the same
// deterministic numbers, whichever thread asks first. Entries are immutable once computed; std::call_once
// per entry lets other keys proceed while one is computed. Each entry holds `trials` doubles (160 KB at the
// default); past kMaxEntries distinct keys (only reachable by sweeping options) results are computed uncached.
struct MonteCarloCache {
    struct Entry {
        std::once_flag once;
        std::vector<double> sorted;
    };
    static constexpr std::size_t kMaxEntries = 64;
    std::mutex mutex;
    std::map<std::tuple<int, int, std::uint64_t>, std::shared_ptr<Entry>> entries;
};

std::shared_ptr<const std::vector<double>> cached_olympic_means(int runs, int trials, std::uint64_t seed) {
    static MonteCarloCache cache;
    std::shared_ptr<MonteCarloCache::Entry> entry;
    {
        const std::lock_guard<std::mutex> lock(cache.mutex);
        const auto key = std::make_tuple(runs, trials, seed);
        if (const auto it = cache.entries.find(key); it != cache.entries.end())
            entry = it->second;
        else if (cache.entries.size() < MonteCarloCache::kMaxEntries)
            entry = cache.entries.emplace(key, std::make_shared<MonteCarloCache::Entry>()).first->second;
    }
    if (!entry) return std::make_shared<const std::vector<double>>(sorted_olympic_means(runs, trials, seed));
    std::call_once(entry->once, [&] { entry->sorted = sorted_olympic_means(runs, trials, seed); });
    return {entry, &entry->sorted};   // aliasing: keeps the entry alive while the caller reads it
}

}  // namespace

double olympic_mean_standard_quantile(int runs, double q, int trials, std::uint64_t seed) {
    if (runs < 3) throw InputError("an olympic mean needs at least 3 runs (got " + std::to_string(runs) + ")");
    if (trials < 2) throw InputError("Monte Carlo needs at least 2 trials");
    if (!(q >= 0 && q <= 1)) throw InputError("quantile must be in [0, 1]");

    const std::shared_ptr<const std::vector<double>> sorted = cached_olympic_means(runs, trials, seed);
    const std::vector<double>& olympic = *sorted;
    // Linear interpolation between order statistics (the "type 7" quantile of R and numpy's default).
    const double position = q * static_cast<double>(trials - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, olympic.size() - 1);
    return olympic[below] + (olympic[above] - olympic[below]) * (position - static_cast<double>(below));
}

ConvergenceModel::ConvergenceModel(const Workload& workload, RcpTable table, ConvergenceOptions options)
    : workload_name_(workload.name), table_(std::move(table)), options_(options) {
    if (table_.unit == ConvergenceUnit::epochs) {
        if (!workload.train_samples)
            throw InternalError("workload '" + workload.name + "' converges in epochs but has no dataset size");
        samples_per_rcp_unit_ = static_cast<double>(*workload.train_samples);
    }
    if (table_.unit == ConvergenceUnit::tokens) {
        if (!workload.model_parallel)
            throw InternalError("workload '" + workload.name + "' converges in tokens but has no tokens per sample");
        samples_per_rcp_unit_ = 1.0 / workload.model_parallel->tokens_per_sample;
    }
    kept_ = table_.kept();
    if (kept_.empty()) throw InputError("RCP table for '" + table_.benchmark + "' has no records after pruning");
    if (!(options_.max_extrapolation_factor >= 1.0))
        throw InputError("max_extrapolation_factor must be >= 1", {}, "max_extrapolation_factor");
    runs_ = options_.runs_per_result.value_or(workload.runs_per_result);
    z_p10_ = olympic_mean_standard_quantile(runs_, 0.10, options_.monte_carlo_trials, options_.seed);
    z_p90_ = olympic_mean_standard_quantile(runs_, 0.90, options_.monte_carlo_trials, options_.seed);
}

ConvergenceModel ConvergenceModel::for_workload(const Workload& workload, ConvergenceOptions options) {
    return ConvergenceModel(workload, load_rcp_table(workload), options);
}

double ConvergenceModel::to_samples(double value_in_rcp_unit) const {
    return value_in_rcp_unit * samples_per_rcp_unit_;
}

ConvergenceEstimate ConvergenceModel::samples_to_converge(std::int64_t global_batch) const {
    if (global_batch < 1)
        throw InputError("global batch must be at least 1 (got " + std::to_string(global_batch) + ")", Field::global_batch);
    const double batch = static_cast<double>(global_batch);
    const RcpRecord& smallest = kept_.front();
    const RcpRecord& largest = kept_.back();
    ConvergenceEstimate out;
    double mean = 0;   // in the RCP unit
    double stdev = 0;

    if (global_batch <= smallest.global_batch) {
        mean = smallest.olympic_mean;
        stdev = smallest.stdev;
        if (global_batch < smallest.global_batch)
            out.warnings.push_back("global batch " + std::to_string(global_batch) +
                                   " is below the smallest RCP batch " + std::to_string(smallest.global_batch) +
                                   " of " + workload_name_ + "; using that batch's convergence");
    } else if (global_batch >= largest.global_batch) {
        mean = largest.olympic_mean;
        stdev = largest.stdev;
        if (global_batch > largest.global_batch) {
            const double limit = options_.max_extrapolation_factor * largest.global_batch;
            if (batch > limit)
                throw InputError("global batch " + std::to_string(global_batch) + " is more than " +
                                     units::format_number(options_.max_extrapolation_factor) +
                                     "x the largest RCP batch " + std::to_string(largest.global_batch) + " of " +
                                     workload_name_ + "; convergence there is unknown",
                                 Field::global_batch);
            if (kept_.size() >= 2) {
                const RcpRecord& previous = kept_[kept_.size() - 2];
                mean = interpolate(batch, previous.global_batch, previous.olympic_mean, largest.global_batch,
                                   largest.olympic_mean);
            }
            // Keep the largest record's coefficient of variation: a linear stdev trend could go negative.
            stdev = largest.olympic_mean > 0 ? largest.stdev * mean / largest.olympic_mean : largest.stdev;
            out.warnings.push_back("global batch " + std::to_string(global_batch) + " exceeds the largest RCP batch " +
                                   std::to_string(largest.global_batch) + "; convergence extrapolated");
        }
    } else {
        // Strictly inside: an exact record, or the survivors just below and above (numpy.interp in the checker).
        const auto above = std::find_if(kept_.begin(), kept_.end(),
                                        [&](const RcpRecord& r) { return r.global_batch >= global_batch; });
        TTSIM_ASSERT(above != kept_.begin() && above != kept_.end(), "interpolation bracket not found");
        if (above->global_batch == global_batch) {
            mean = above->olympic_mean;
            stdev = above->stdev;
        } else {
            const RcpRecord& below = *(above - 1);
            mean = interpolate(batch, below.global_batch, below.olympic_mean, above->global_batch, above->olympic_mean);
            stdev = interpolate(batch, below.global_batch, below.stdev, above->global_batch, above->stdev);
        }
    }

    out.samples_mean = to_samples(mean);
    out.samples_stdev_per_run = to_samples(stdev);
    out.samples_p10 = out.samples_mean + out.samples_stdev_per_run * z_p10_;
    out.samples_p90 = out.samples_mean + out.samples_stdev_per_run * z_p90_;
    return out;
}

}  // namespace ttsim
