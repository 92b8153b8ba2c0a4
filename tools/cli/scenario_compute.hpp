// Where the rows of a sweep or plan scenario are computed: in this process (TBB threads, as always without
// mpirun), over the ranks of an mpirun job (distributed_run.hpp), as one `--shard I/N` share (shard_file.hpp),
// or not at all because `ttsim merge` brings them from shard files. Every way ends in the same assembly
// (planning::assemble_sweep, answer_plan_query), so the files written are the same whichever computed them.
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include "models/planning/plan_query.hpp"
#include "models/planning/sweep_runner.hpp"
#include "tools/cli/scenario_kinds.hpp"

namespace ttsim::cli {

// `result` is empty when this process has nothing more to write (a rank other than 0, a shard that wrote its
// file, an interrupted shard): it then exits with `exit_code`, having said what it did on `out` or stderr.
struct ComputedSweep {
    std::optional<planning::SweepResult> result;
    int exit_code = 0;
};
ComputedSweep compute_sweep(const std::vector<planning::SweepPoint>& points, const ProfileSet& profiles,
                            const planning::SweepOptions& options, const ScenarioContext& context, std::ostream& out);

// The plan's answer: on rank 0 of an mpirun job the grid is evaluated by every rank (refinements then run on
// rank 0 alone); elsewhere empty (exit 0, nothing to write). Without mpirun: answer_plan_query as is.
// (`ttsim plan` and plan scenarios both come here.)
std::optional<planning::PlanAnswer> compute_plan(const planning::PlanQuery& query,
                                                 const planning::PlanEvaluator& evaluate);

}  // namespace ttsim::cli
