#include "sim/fields.hpp"

namespace ttsim {

std::string_view to_string(Field field) {
    switch (field) {
        case Field::workload: return "workload";
        case Field::system: return "system";
        case Field::gpus: return "gpus";
        case Field::global_batch: return "global_batch";
        case Field::batch_per_rank: return "samples_per_rank";
        case Field::tensor_parallel: return "tensor_parallel";
        case Field::context_parallel: return "context_parallel";
        case Field::layout: return "layout";
        case Field::sharp: return "sharp";
        case Field::nic: return "nic";
        case Field::oversubscription: return "oversubscription";
        case Field::spine_oversubscription: return "spine_oversubscription";
        case Field::superspine_oversubscription: return "superspine_oversubscription";
        case Field::planes: return "planes";
        case Field::switch_ports: return "switch_ports";
        case Field::tiers: return "tiers";
        case Field::rail_optimized: return "rail_optimized";
        case Field::routing: return "routing";
        case Field::min_gpus: return "min_gpus";
        case Field::max_gpus: return "max_gpus";
        case Field::deadline: return "deadline";
        case Field::confidence: return "confidence";
        case Field::margin: return "margin";
        case Field::allocation: return "allocation";
        case Field::objective: return "objective";
        case Field::profiles: return "profiles";
        case Field::shared_parameters: return "shared_parameters";
        case Field::output_dir: return "output_dir";
        case Field::memory_reserve: return "memory_reserve";
        case Field::failure_rates: return "failure_rates";
        case Field::checkpoint_interval: return "checkpoint_interval";
        case Field::storage_bandwidth: return "storage_bandwidth";
        case Field::hot_spares: return "hot_spares";
    }
    return "?";
}

}  // namespace ttsim
