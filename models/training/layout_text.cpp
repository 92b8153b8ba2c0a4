// The words of layout search: a layout described, the pins parsed and printed back, and the refusal when no layout
// fits (what is over, and the smallest change the search could not make itself).
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/training/layout_search.hpp"
#include "models/training/pipeline_schedule.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {

std::string describe_layout(const ParallelismConfig& c) {
    const bool gpipe = pipe_schedule_of(c.pipeline_schedule, c.virtual_pipeline) == PipeScheduleKind::gpipe;
    const std::string pipeline =
        c.pipeline_parallel > 1
            ? fmt::format(" PP {}{}{}", c.pipeline_parallel,
                          c.virtual_pipeline > 1 ? fmt::format(" VP {}", c.virtual_pipeline) : "", gpipe ? " GPipe" : "")
            : std::string();
    return fmt::format("TP {} CP {}{} DP {}, micro batch {} x {} micro steps{}{}", c.tensor_parallel, c.context_parallel,
                       pipeline, c.data_parallel, c.samples_per_micro_batch, c.gradient_accumulation,
                       c.distributed_optimizer ? ", distributed optimizer" : "",
                       c.gradient_reduction_after_backward && c.weight_replicas() > 1 ? ", gradients reduced after backward" : "");
}

std::string memory_refusal(const Workload& workload, const System& system, const ParallelismConfig& l,
                           const layers::MemoryEstimate& m, std::vector<std::string> changes) {
    // What is over, and what would make the layout fit: its model state (weights, gradients, optimizer shards of its
    // layers) or its activations; each change with the figure it needs.
    const std::size_t given = changes.size();
    const double state = m.weights + m.gradients + m.optimizer;
    const double room = m.capacity - m.reserve;
    const int domain = system.gpus_per_nvlink_domain;
    std::string over;
    if (state > room) {
        over = fmt::format("the weights, gradients and optimizer state of its layers alone are {:.1f} GB of the "
                           "{:.1f} GB left after the reserve",
                           state / 1e9, room / 1e9);
        // The state of a stage falls as 1/PP (the weights and gradients) and the optimizer's as 1/(DP x CP) with
        // the distributed optimizer: the stages it would take, at the smallest DP, to bring it under the room.
        if (workload.pipeline_parallel_modelled()) {
            // The smallest depth the blocks divide into (the stage rule) at or above that share.
            const layers::LayerGraph graph = build_layout_graph(workload, layer_description(workload), l);
            const int blocks = static_cast<int>(layers::block_count(graph));
            int stages = std::max(l.pipeline_parallel + 1, static_cast<int>(std::ceil(state * l.pipeline_parallel / room)));
            while (stages <= blocks + 2 && !layers::pipeline_stage_problem(graph, stages).empty()) ++stages;
            if (stages > blocks + 2)
                changes.push_back(fmt::format("a GPU with more memory (the {} blocks split into no more stages)", blocks));
            else
                changes.push_back(fmt::format("more pipeline stages (PP {} or more, from {}: at TP {} x CP {} that is at "
                                              "least {} GPUs per replica)",
                                              stages, l.pipeline_parallel, l.tensor_parallel, l.context_parallel,
                                              stages * l.tensor_parallel * l.context_parallel));
        } else {
            changes.push_back("a larger GPU (pipeline stages are not modelled for " + workload.name + ")");
        }
        if (!l.distributed_optimizer)
            changes.push_back(
                l.weight_replicas() > 1
                    ? fmt::format("the distributed optimizer (its {:.1f} GB of optimizer state sharded over the DP x CP "
                                  "= {} ranks)",
                                  m.optimizer / 1e9, l.weight_replicas())
                    : fmt::format("the distributed optimizer over data-parallel ranks, which takes more GPUs (its {:.1f} "
                                  "GB of optimizer state has one copy here, DP x CP = 1)",
                                  m.optimizer / 1e9));
        if (l.tensor_parallel < domain && workload.tensor_parallel_modelled())
            changes.push_back(fmt::format("more tensor parallelism (TP {} of the {}-GPU NVLink domain)",
                                          l.tensor_parallel, domain));
    } else {
        over = fmt::format("its activations are {:.1f} GB beside {:.1f} GB of model state, {:.1f} GB left after the "
                           "reserve",
                           m.activations / 1e9, state / 1e9, room / 1e9);
        if (l.samples_per_micro_batch > 1) changes.push_back("fewer samples (tokens) per micro batch");
        if (l.recompute != "full" && workload.pipeline_parallel_modelled()) changes.push_back("full recomputation");
        // Under 1F1B the first stage keeps PP micro batches of its 1/PP of the layers: more stages leave its
        // activations as they are, so only a smaller share of each micro batch helps. GPipe keeps every micro
        // batch in flight: 1F1B keeps PP of them.
        if (l.pipeline_parallel > 1 &&
            pipe_schedule_of(l.pipeline_schedule, l.virtual_pipeline) == PipeScheduleKind::gpipe &&
            l.gradient_accumulation > l.pipeline_parallel)
            changes.push_back(fmt::format("the 1F1B schedule ({} micro batches in flight instead of {})",
                                          l.pipeline_parallel, l.gradient_accumulation));
        if (l.tensor_parallel < domain && workload.tensor_parallel_modelled())
            changes.push_back(fmt::format("more tensor parallelism (TP {} of the {}-GPU NVLink domain; with sequence "
                                          "parallelism it splits the activations)",
                                          l.tensor_parallel, domain));
        if (workload.context_parallel_modelled())
            changes.push_back("more context parallelism (each rank keeps 1/CP of the sequence)");
        if (changes.size() == given)
            changes.push_back("a shorter sequence per sample (every split the search can make is in use)");
    }
    return fmt::format("{}: {}; to fit: {}", m.summary, over, fmt::join(changes, "; "));
}

void refuse_layouts(const LayoutSearchJob& job, const LayoutSearchResult& result, Field field) {
    const Workload& workload = job.owned_workload ? *job.owned_workload : *job.workload;
    const std::string job_text =
        job.samples_per_rank
            ? fmt::format("{} on {} x {} at {} samples per data-parallel rank", workload.name, job.gpus,
                          job.system.gpu->name, *job.samples_per_rank)
            : fmt::format("{} on {} x {} at global batch {}", workload.name, job.gpus, job.system.gpu->name, job.global_batch);
    if (!result.too_big.empty()) {
        // The smallest: only changes the search could not make at this GPU count or under these pins are named.
        const LayoutCandidate& smallest = result.too_big.front();
        std::vector<std::string> pins;
        if (job.pins.any()) pins.push_back("relax the pins (" + format_layout_pins(job.pins) + ")");
        throw InputError(fmt::format("no layout of {} fits in memory ({} tried); the smallest, {}, needs {}", job_text,
                                     result.enumerated, describe_layout(smallest.layout),
                                     memory_refusal(workload, job.system, smallest.layout, smallest.memory, std::move(pins))),
                         field);
    }
    // A few reasons are enough to act on; every split has one, so a long list would bury them.
    constexpr std::size_t shown = 4;
    std::string why;
    for (std::size_t i = 0; i < result.rejected.size() && i < shown; ++i) why += (why.empty() ? "" : "; ") + result.rejected[i];
    if (result.rejected.size() > shown) why += fmt::format("; and {} more splits", result.rejected.size() - shown);
    throw InputError("no valid layout for " + job_text + (why.empty() ? std::string(" matches the pins") : ": " + why),
                     field);
}

std::string format_layout_pins(const LayoutPins& pins) {
    std::vector<std::string> parts;
    if (pins.tensor_parallel) parts.push_back("tp=" + std::to_string(*pins.tensor_parallel));
    if (pins.context_parallel) parts.push_back("cp=" + std::to_string(*pins.context_parallel));
    if (pins.pipeline_parallel) parts.push_back("pp=" + std::to_string(*pins.pipeline_parallel));
    if (pins.virtual_pipeline) parts.push_back("vp=" + std::to_string(*pins.virtual_pipeline));
    if (pins.micro_batch) parts.push_back("micro=" + std::to_string(*pins.micro_batch));
    if (pins.gradient_accumulation) parts.push_back("accumulation=" + std::to_string(*pins.gradient_accumulation));
    if (pins.recompute) parts.push_back("recompute=" + *pins.recompute);
    if (pins.schedule) parts.push_back("schedule=" + *pins.schedule);
    if (pins.distributed_optimizer) parts.push_back(std::string("distributed_optimizer=") + (*pins.distributed_optimizer ? "on" : "off"));
    if (pins.reduction_after_backward)
        parts.push_back("reduction=" + std::string(gradient_reduction_name(*pins.reduction_after_backward)));
    return fmt::format("{}", fmt::join(parts, ","));
}

LayoutRequest parse_layout_request(const std::string& text) {
    LayoutRequest request;
    if (text == "fastest") {
        request.mode = LayoutMode::fastest;
        return request;
    }
    if (text == "published") {
        request.mode = LayoutMode::published;
        return request;
    }
    request.mode = LayoutMode::pinned;
    const char* usage =
        "expected fastest, published or tp=T,cp=C[,pp=P,vp=V,micro=M,recompute=none|full,schedule=gpipe|1f1b|interleaved,"
        "accumulation=A,distributed_optimizer=on|off,reduction=overlapped|after_backward]";
    std::set<std::string> seen;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t end = std::min(text.find(',', begin), text.size());
        const std::string part = text.substr(begin, end - begin);
        begin = end + 1;
        const std::size_t eq = part.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == part.size())
            throw InputError("'" + part + "' is not key=value; " + usage, Field::layout);
        const std::string key = part.substr(0, eq), value = part.substr(eq + 1);
        if (!seen.insert(key).second) throw InputError("'" + key + "' given twice", Field::layout);
        if (key == "distributed_optimizer") {
            if (value != "on" && value != "off")
                throw InputError("distributed_optimizer must be on or off, not '" + value + "'", Field::layout);
            request.pins.distributed_optimizer = value == "on";
            continue;
        }
        if (key == "recompute") {
            if (value != "none" && value != "full")
                throw InputError("recompute must be none or full, not '" + value + "'", Field::layout);
            request.pins.recompute = value;
            continue;
        }
        if (key == "schedule") {
            if (!pipe_schedule_named(value))
                throw InputError("schedule must be gpipe, 1f1b or interleaved, not '" + value + "'", Field::layout);
            request.pins.schedule = value;
            continue;
        }
        if (key == "reduction") {
            if (std::find(std::begin(kGradientReductionNames), std::end(kGradientReductionNames), value) ==
                std::end(kGradientReductionNames))
                throw InputError("reduction must be overlapped or after_backward, not '" + value + "'", Field::layout);
            request.pins.reduction_after_backward = value == gradient_reduction_name(true);
            continue;
        }
        std::optional<int>* slot = key == "tp"             ? &request.pins.tensor_parallel
                                   : key == "cp"           ? &request.pins.context_parallel
                                   : key == "pp"           ? &request.pins.pipeline_parallel
                                   : key == "vp"           ? &request.pins.virtual_pipeline
                                   : key == "micro"        ? &request.pins.micro_batch
                                   : key == "accumulation" ? &request.pins.gradient_accumulation
                                                           : nullptr;
        if (!slot) throw InputError("unknown layout key '" + key + "'; " + usage, Field::layout);
        const std::optional<long> n = units::parse_whole_number(value, 1, 1 << 20);
        if (!n) throw InputError(key + " must be a whole number from 1 to 1048576, not '" + value + "'", Field::layout);
        *slot = static_cast<int>(*n);
    }
    return request;
}

}  // namespace ttsim
