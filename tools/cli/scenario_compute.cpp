#include "tools/cli/scenario_compute.hpp"

#include <map>
#include <utility>

#include "models/planning/row_codec.hpp"
#include "sim/errors.hpp"
#include "tools/cli/distributed_run.hpp"
#include "tools/cli/exit_codes.hpp"
#include "tools/cli/interrupt.hpp"
#include "tools/cli/mpi_session.hpp"
#include "tools/cli/shard_file.hpp"

namespace ttsim::cli {

using nlohmann::json;

namespace {

std::string point_name(std::size_t index) { return "point " + std::to_string(index + 1); }

// The outcomes of points[indices[k]], computed here or over the ranks; slot k nullopt when interrupted.
// Rank > 0: nullopt.
std::optional<std::vector<std::optional<planning::PointOutcome>>> compute_points(
    const std::vector<planning::SweepPoint>& points, const std::vector<std::size_t>& indices,
    const ProfileSet& profiles, const planning::SweepOptions& options) {
    std::unique_ptr<MpiSession> session = MpiSession::join_if_launched();
    if (!session || session->size() == 1) return planning::predict_points(points, indices, profiles, options);
    DistributedJob job;
    job.rows = indices.size();
    job.threads = options.threads;
    job.progress = options.progress;
    job.compute = [&](std::size_t begin, std::size_t end) {
        planning::SweepOptions chunk_options = options;
        chunk_options.progress = {};   // rank 0 counts every rank's rows as they arrive
        const std::vector<std::size_t> chunk(indices.begin() + static_cast<std::ptrdiff_t>(begin),
                                             indices.begin() + static_cast<std::ptrdiff_t>(end));
        std::vector<std::optional<json>> rows;
        for (auto& outcome : planning::predict_points(points, chunk, profiles, chunk_options))
            rows.push_back(outcome ? std::optional<json>(planning::outcome_to_json(*outcome)) : std::nullopt);
        return rows;
    };
    std::optional<std::vector<std::optional<json>>> rows = run_distributed(*session, job);
    session.reset();   // MPI_Finalize: every rank is done with MPI before rank 0 writes
    if (!rows) return std::nullopt;
    std::vector<std::optional<planning::PointOutcome>> outcomes(indices.size());
    for (std::size_t k = 0; k < indices.size(); ++k)
        if ((*rows)[k]) outcomes[k] = planning::outcome_from_json(*(*rows)[k], "the row of " + point_name(indices[k]));
    return outcomes;
}

}  // namespace

ComputedSweep compute_sweep(const std::vector<planning::SweepPoint>& points, const ProfileSet& profiles,
                            const planning::SweepOptions& options, const ScenarioContext& context, std::ostream& out) {
    std::vector<std::optional<planning::PointOutcome>> outcomes(points.size());
    if (context.merged) {
        const MergedShards& merged = *context.merged;
        if (merged.rows.size() != points.size())
            throw InputError(merged.scenario_file + ": the shards hold " + std::to_string(merged.rows.size()) +
                             " points but the scenario expands to " + std::to_string(points.size()) +
                             " with this ttsim (shards of another version?)");
        for (std::size_t i = 0; i < points.size(); ++i) {
            const std::string what = "the shards' row of " + point_name(i);
            outcomes[i] = planning::outcome_from_json(merged.rows[i], what);
            planning::require_possible_outcome(*outcomes[i], what);
        }
        return {planning::assemble_sweep(points, std::move(outcomes), profiles, options), kExitAnswered};
    }
    std::vector<std::size_t> indices;
    if (context.shard) {
        indices = shard_indices(points.size(), *context.shard);
    } else {
        for (std::size_t i = 0; i < points.size(); ++i) indices.push_back(i);
    }
    auto computed = compute_points(points, indices, profiles, options);
    if (!computed) return {std::nullopt, kExitAnswered};   // a rank other than 0: rank 0 writes
    if (!context.shard) {
        for (std::size_t k = 0; k < indices.size(); ++k) outcomes[indices[k]] = std::move((*computed)[k]);
        return {planning::assemble_sweep(points, std::move(outcomes), profiles, options), kExitAnswered};
    }
    // A shard: its file is written only when its whole share is computed, so a merge never sees a partial one.
    const ShardSpec& spec = *context.shard;
    const std::string which = "shard " + std::to_string(spec.index) + "/" + std::to_string(spec.count);
    ShardFile shard = new_shard(context.file, spec, points.size());
    for (std::size_t k = 0; k < indices.size(); ++k)
        if ((*computed)[k]) shard.rows.emplace_back(indices[k], planning::outcome_to_json(*(*computed)[k]));
    if (shard.rows.size() < indices.size()) {
        out.flush();
        return {std::nullopt, report_interrupted(shard.rows.size(), indices.size(), "points of " + which,
                                                 "no shard file was written; run " + which + " again")};
    }
    const std::string path = write_shard(*context.out_dir, shard);
    out << which << ": " << indices.size() << " of " << points.size() << " points computed into " << path
        << "; join all " << spec.count << " with `ttsim merge DIR... --out DIR`\n";
    return {std::nullopt, kExitAnswered};
}

std::optional<planning::PlanAnswer> compute_plan(const planning::PlanQuery& query,
                                                 const planning::PlanEvaluator& evaluate) {
    std::unique_ptr<MpiSession> session = MpiSession::join_if_launched();
    if (!session || session->size() == 1) return planning::answer_plan_query(query, evaluate);
    const std::vector<planning::PlanCandidate> grid = planning::plan_grid(query);
    DistributedJob job;
    job.rows = grid.size();
    job.threads = query.threads;
    job.unit = "grid configurations";
    job.compute = [&](std::size_t begin, std::size_t end) {
        const std::vector<planning::PlanCandidate> chunk(grid.begin() + static_cast<std::ptrdiff_t>(begin),
                                                         grid.begin() + static_cast<std::ptrdiff_t>(end));
        std::vector<std::optional<json>> rows;
        for (auto& e : planning::evaluate_candidates(chunk, evaluate, query.threads, query.cancelled))
            rows.push_back(e ? std::optional<json>(planning::evaluation_to_json(*e)) : std::nullopt);
        return rows;
    };
    std::optional<std::vector<std::optional<json>>> rows = run_distributed(*session, job);
    session.reset();
    if (!rows) return std::nullopt;
    // The search itself runs here, on the gathered grid (refinements, a few per boundary, evaluated on rank 0).
    std::map<std::pair<std::string, int>, planning::PlanEvaluation> gathered;
    for (std::size_t i = 0; i < grid.size(); ++i)
        if ((*rows)[i])
            gathered[{grid[i].system, grid[i].gpus}] =
                planning::evaluation_from_json(*(*rows)[i], "the row of grid configuration " + std::to_string(i + 1));
    planning::PlanQuery on_rank0 = query;
    // Interrupted: the answer covers no grid configuration (the rows that came back are not searched).
    if (gathered.size() < grid.size()) on_rank0.cancelled = [] { return true; };
    return planning::answer_plan_query(on_rank0, [&](const planning::PlanCandidate& c) {
        const auto it = gathered.find({c.system, c.gpus});
        return it != gathered.end() ? it->second : evaluate(c);
    });
}

}  // namespace ttsim::cli
