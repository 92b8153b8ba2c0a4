// One computed row (a sweep point's PointOutcome, a plan candidate's PlanEvaluation) as bytes and back, exactly:
// what MPI ranks send to rank 0 and what `--shard` files hold, so a distributed or sharded run assembles the very
// values a one-process run computes (CBOR keeps every double's 64 bits, NaN and infinity included; JSON text
// would turn them into null). A row is a few hundred bytes: the prediction's numbers, names and notes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/planning/plan_query.hpp"
#include "models/planning/point_prediction.hpp"

namespace ttsim::planning {

nlohmann::json outcome_to_json(const PointOutcome& outcome);
// InputError (`what` names the source, e.g. "shard.json row 12") when a field is missing or mistyped.
PointOutcome outcome_from_json(const nlohmann::json& row, const std::string& what);
// InputError naming `what` when a row marked ok holds what no prediction gives (no GPUs, a time to train or step
// that is not a positive finite number): a row from a file a user may have edited (a shard), which would
// otherwise reach the metrics' invariants as an internal error. Rows passed between ranks are not checked.
void require_possible_outcome(const PointOutcome& outcome, const std::string& what);

nlohmann::json evaluation_to_json(const PlanEvaluation& evaluation);
PlanEvaluation evaluation_from_json(const nlohmann::json& row, const std::string& what);

// CBOR bytes of a JSON value and back (InputError naming `what` when the bytes are not CBOR).
std::string to_bytes(const nlohmann::json& value);
nlohmann::json from_bytes(const std::string& bytes, const std::string& what);

}  // namespace ttsim::planning
