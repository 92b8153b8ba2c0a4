// Layout search: for one job (workload, system, GPU count, global batch), every valid
// TP x CP x DP x micro batch x gradient accumulation x distributed optimizer on/off, each checked against HBM
// with the operator model's memory estimate and priced with the operator model (prepare_with_layout +
// evaluate); the fastest to train wins. At one global batch every layout runs the same steps and evaluations,
// so "fastest" is the shortest time-to-train, i.e. the shortest step.
//
// Valid: TP divides the GPUs and is no larger than the NVLink domain, only where the workload models tensor
// parallelism; CP likewise only where it models context parallelism; DP = GPUs / (TP x CP) divides the global
// batch; micro batch x accumulation = the rank's share; the distributed optimizer only matters with more than one weight replica (DP x CP > 1)
// (off only, else); the layer graph builds for the split (heads, KV heads, FFN and sequence divide evenly:
// the family's own checks). Pipeline stages (PP, VP) and full recomputation where nothing fits without them
// (docs/pipeline.md).
//
// Speed: one collective simulator serves the whole search (StepCollectiveSession), so the data-parallel
// collectives are simulated once per (TP, CP, distributed optimizer) and the TP/CP collectives once per micro
// batch; each layout builds its own layer graph (the memory check needs it). Branch and bound: the layouts are
// priced in ascending order of their time to train with every collective taking no time (a lower bound,
// ttt_lower_bound_minutes), and one whose bound is above the fastest priced so far is not priced: the same
// winner, without simulating collectives at 16,384 ranks for layouts that cannot win. A pipelined layout is ordered
// and first bounded by a bound that needs no simulation (step_bounds.hpp); its pipeline is simulated for the
// exact bound only where that cheaper one could still win.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/compute/compute_profile.hpp"
#include "models/hardware/system.hpp"
#include "models/training/predict.hpp"

namespace ttsim {

class LayerGraphCache;

// The checks of `pins` that hold at every GPU count: TP or CP pinned above 1 where the workload does not model it,
// TP beyond the system's NVLink domain. InputError naming the field given. The search makes them first; a front end
// that prices many counts (a plan, a user-model scenario) makes them once up front, so an impossible pin is bad
// input (exit 2), not a configuration that failed at every count.
void check_pins_apply(const Workload& workload, const System& system, const LayoutPins& pins,
                      Field tensor_parallel_field = Field::layout, Field context_parallel_field = Field::layout);
// The same for a search over several systems (a plan's): refused (the first system's reason) only where no system
// takes the pins. `systems` must not be empty.
void check_pins_apply_somewhere(const Workload& workload, const std::vector<System>& systems, const LayoutPins& pins);
// For a front end that knows its GPU counts (a user-model scenario): the pinned TP x CP must divide one of `counts`,
// and the workload's layer graph must take the split (heads, FFN, sequence over TP and CP); InputError at
// Field::layout otherwise, the pin being the mistake at every count.
void check_pins_split_model(const Workload& workload, const LayoutPins& pins, const std::vector<int>& counts);

struct LayoutSearchJob {
    std::shared_ptr<const Workload> owned_workload;   // a user-defined model; else `workload` (catalog)
    const Workload* workload = nullptr;
    System system;
    int gpus = 0;
    int global_batch = 0;
    // Set: each layout's global batch is this many samples per data-parallel rank times its DP (a sweep's
    // `per_rank` rule), and global_batch is not used; a DP whose batch has no convergence data is skipped, with why.
    std::optional<int> samples_per_rank;
    // Switches every candidate keeps: SHARP, FP8, packing, sequence parallelism (with TP > 1), from the
    // published layout (or the user's model).
    ParallelismConfig switches;
    LayoutPins pins;                       // unset: free
    // What an impossible pin's error names: --layout's tp=/cp= (Field::layout), or the --tp / --cp that set it.
    Field tensor_parallel_field = Field::layout;
    Field context_parallel_field = Field::layout;
    // A session the caller already priced with (same system, GPU count and SHARP: the published layout's
    // prediction beside the search), so its collectives are not simulated twice; null: the search's own.
    StepCollectiveSession* collectives = nullptr;
    // Layouts to price even when the branch and bound would skip them (a user model's conventional alternative,
    // whose time is reported); unset: none.
    std::function<bool(const ParallelismConfig&)> always_price;
    // Layouts that ran, whatever the memory estimate says (PreparedScenario::ran_as_published: the published layout
    // of this GPU family, as its submission ran it), counted as fitting as prepare_as_answer counts them; the
    // estimate stays in the candidate's memory and the answer warns. Unset: the estimate decides alone.
    std::function<bool(const ParallelismConfig&)> known_to_fit;
    // Layer graphs kept beyond this search (the other points of a sweep); null: the search keeps its own.
    LayerGraphCache* graphs = nullptr;
};

struct LayoutCandidate {
    ParallelismConfig layout;
    layers::MemoryEstimate memory;
    bool priced = false;                   // its collectives simulated and the step evaluated
    double ttt_minutes = 0, step_ms = 0;   // when priced
    // When not priced but fitting: the lower bound of its time to train that was above the fastest's (minutes).
    double ttt_lower_bound_minutes = 0;
};

struct LayoutSearchResult {
    // Every layout that fits: the priced ones fastest first, then those bounded out (the search's branch and
    // bound: even without collectives they are slower than the fastest), in ascending order of their bound.
    std::vector<LayoutCandidate> fitting;
    int priced = 0;                        // of `fitting`
    std::vector<LayoutCandidate> too_big;  // valid but over HBM (memory only), smallest first
    int enumerated = 0;                    // valid layouts (fitting + too_big)
    std::vector<std::string> rejected;     // why splits were not valid (one line per distinct reason)
    std::optional<PreparedScenario> best_scenario;   // prepared for fitting.front()
    std::optional<Prediction> best;        // evaluate(best_scenario, profile)
    double seconds = 0;                    // wall time of the search
};

// Throws InputError (the job's pin fields) for pins that cannot multiply out; an empty `fitting` is not an error here
// (the caller words it: layout_refusal).
LayoutSearchResult search_layouts(const LayoutSearchJob& job, const ComputeProfile& profile);

// Why `layout` does not fit on `system`'s GPUs (`memory`, its estimate over HBM): the estimate's figures, what is
// over (the model state of its layers, or its activations) and the smallest changes that would fit, each with the
// figure it needs (PP stages, the distributed optimizer, TP only below the NVLink domain, recomputation, fewer
// tokens per micro batch), after `changes` (the caller's own first: relax the pins, keep less memory free).
std::string memory_refusal(const Workload& workload, const System& system, const ParallelismConfig& layout,
                           const layers::MemoryEstimate& memory, std::vector<std::string> changes = {});

// The InputError to raise when no layout fits: the numbers of the smallest layout tried, or why none is valid.
[[noreturn]] void refuse_layouts(const LayoutSearchJob& job, const LayoutSearchResult& result, Field field);

// Whether predict() chooses the layout by search: a user model, `--layout fastest` or pinned, or `automatic`
// with an operator profile for a workload with a layer graph (a lumped profile keeps today's published layout).
bool uses_layout_search(const PredictionRequest& request, const ProfileSet& profiles);
// predict() when the layout is searched (predict_layout.cpp): the fastest layout's prediction, with the
// published layout's beside it where one exists at this scale. --tp / --cp / gradient accumulation pin the
// search as `--layout tp=..` does.
Prediction predict_searched(const PredictionRequest& request, const ProfileSet& profiles);
// The same with the fastest layout's scenario and the profile that priced it (predict_explained).
ExplainedPrediction predict_searched_explained(const PredictionRequest& request, const ProfileSet& profiles);

// "TP 4 CP 2 DP 8, micro batch 2 x 4 micro steps, distributed optimizer".
std::string describe_layout(const ParallelismConfig& layout);

// Parses --layout / `layout:`: "fastest", "published", or "tp=4,cp=2[,micro=1,accumulation=2,
// distributed_optimizer=on|off]" (InputError, Field::layout, naming the bad part).
LayoutRequest parse_layout_request(const std::string& text);
// The inverse for pins: "tp=4,cp=2" as parse_layout_request reads it back (pins that are set, in its key order).
std::string format_layout_pins(const LayoutPins& pins);

}  // namespace ttsim
