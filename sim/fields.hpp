// The closed set of request fields a library InputError can blame. Library code names the field; each front end
// (tools/cli/args.cpp for flags, sim/config.cpp for scenario keys) says how its user spells it, in one table, so
// a flag can be renamed without touching the code that validates its value.
#pragma once

#include <array>
#include <string_view>

namespace ttsim {

enum class Field {
    // A prediction (models/training/predict.hpp) and the cluster it runs on.
    workload,
    system,
    gpus,
    global_batch,
    batch_per_rank,   // samples per data-parallel rank, in place of a global batch (PredictionRequest::samples_per_rank)
    tensor_parallel,
    context_parallel,
    layout,        // the layout choice (fastest | published | tp=..,cp=..; models/training/layout_search.hpp)
    sharp,
    nic,
    oversubscription,
    spine_oversubscription,   // the spine tier's, three-tier fabrics (topologies/presets.hpp FabricOptions)
    superspine_oversubscription,   // the super-spine tier's, four-tier fabrics
    planes,                   // parallel fat trees per NIC
    switch_ports,             // switch radix
    tiers,                    // switch tiers of the fat tree (2-4)
    rail_optimized,           // NIC k of every node on rail leaf k, or a node's NICs on one leaf
    routing,
    // A planning query (models/planning/plan_query.hpp): its GPU range, constraints and objective.
    min_gpus,
    max_gpus,
    deadline,
    confidence,
    margin,
    objective,
    allocation,
    memory_reserve,   // GPU memory kept free besides the model state (models/hardware/system.hpp)
    // A long job's failures and checkpoints (models/reliability).
    failure_rates,
    checkpoint_interval,
    storage_bandwidth,
    hot_spares,
    // Calibration and the profiles it writes (models/calibration, models/compute).
    profiles,
    shared_parameters,
    output_dir,
};

// Every Field, for tables that must cover them all (each front end's test walks this list).
inline constexpr std::array kAllFields{
    Field::workload,   Field::system,     Field::gpus,     Field::global_batch,     Field::batch_per_rank, Field::tensor_parallel,
    Field::context_parallel, Field::layout, Field::sharp, Field::nic,     Field::oversubscription, Field::spine_oversubscription, Field::superspine_oversubscription, Field::planes, Field::switch_ports, Field::tiers, Field::rail_optimized, Field::routing,
    Field::min_gpus,   Field::max_gpus,   Field::deadline, Field::confidence,       Field::margin,
    Field::objective,  Field::allocation, Field::memory_reserve, Field::failure_rates,
    Field::checkpoint_interval, Field::storage_bandwidth, Field::hot_spares, Field::profiles,   Field::shared_parameters, Field::output_dir,
};

// The field's name in messages that reach no front end (a library caller's own use, a test): the request
// member's spelling, never a flag's.
std::string_view to_string(Field field);

}  // namespace ttsim
