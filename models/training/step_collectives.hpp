// The collectives of one optimizer step, simulated on the system's topology: the only communication model of a
// training prediction (predict.hpp). The topology (models/hardware/system.hpp build_topology) and the
// CollectiveSimulator are local to the call, so predictions stay thread-safe; the simulator caches per (op,
// algorithm, bytes, group), so every gradient bucket after the first is a lookup.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/hardware/system.hpp"
#include "models/workloads/workload.hpp"

namespace ttsim {

// What the simulation measured for one collective of a gradient bucket (for traces and reports).
struct MeasuredCollective {
    std::string op;                      // "allreduce", "reducescatter", "allgather"
    double bytes = 0;                    // nccl-tests size of the collective
    int ranks = 0;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;   // what `auto` chose
    NcclProtocol protocol = NcclProtocol::Simple;
    double seconds = 0;
    double busbw_bytes_per_s = 0;
    double max_link_utilisation = 0;     // busiest link's carried bytes / (achievable capacity x window)
    std::string busiest_link;
};

// One tensor- or context-parallel collective of a layer that carries them (each transformer block: the workload's
// ModelParallelComm), per micro step, as simulated. Every such layer has the same shapes, so one list stands for all.
struct LayerCollective {
    std::string name;                    // e.g. "tp allgather (attention input)", "cp kv allgather"
    bool backward = false;               // issued in the layer's backward pass (else its forward)
    MeasuredCollective measured;
};

struct StepCollectives {
    std::vector<double> bucket_seconds;  // per gradient bucket, in backward's order
    std::string bucket_name = "allreduce";   // "allreduce", "reducescatter", "reducescatter+allreduce"
    std::vector<MeasuredCollective> bucket_collectives;   // one bucket's collectives as simulated (all alike)
    double param_all_gather_seconds = 0;  // distributed optimizer: updated parameters, inside the NVLink domain
    std::vector<LayerCollective> layer_collectives;   // of each layer that carries them, in issue order
    int collective_layers = 0;            // how many layers carry them (ModelParallelComm::layers)
    // collective_layers x the layer_collectives' seconds, up to rounding (step_collectives.cpp says why it is
    // computed apart).
    double tp_cp_seconds_per_micro_step = 0;
    int optimizer_shards = 1;
    // Pipeline parallelism: one micro batch's activations (or their gradients, the same size) sent by each rank of
    // pipeline device d to its rank on device (d+1) mod PP (the next stage; the last to the first carries the
    // interleaved schedule's chunk boundary), seconds, one per device; empty without PP.
    std::vector<double> pp_send_seconds;
    double pp_message_bytes = 0;          // per rank
    std::string topology;                 // name of the topology simulated
    std::uint64_t simulations = 0;        // flow simulations run (cache misses)
};

// Gradient bucket size, bytes, where neither the workload (Workload::gradient_bucket_bytes) nor the layout
// (ParallelismConfig::gradient_buckets) says: PyTorch DDP's default is 25 MiB, Megatron-LM's 40M parameters, and
// NVIDIA's MLPerf code sets its own (SD 288 MiB). 64 MB is our middle estimate.
inline constexpr double kGradientBucketBytes = 64e6;

// Groups (all other rank classes run the same collectives at the same time on their own rails; with one NIC per
// GPU on a rail-optimised fabric they do not share NICs, so one group is simulated):
//  - data parallel: the ranks that share TP/CP/PP coordinates (Megatron order: TP fastest, then CP, PP, DP);
//  - plain data parallel: one all-reduce per gradient bucket over the DP group;
//  - distributed optimizer (apex DistributedFusedLAMB/Adam, dwu group = the NVLink domain): reduce-scatter of the
//    bucket over the DP ranks inside the NVLink domain, all-reduce of this rank's shard over the DP ranks with the
//    same position in every other domain (SHARP when on), optimizer on the shard, all-gather of the updated
//    parameters inside the domain;
//  - tensor / context parallel: as the workload's ModelParallelComm says, over the TP and CP groups.
// Algorithm and protocol are NCCL-like `auto`; SHARP is available where the layout enables it.
StepCollectives step_collectives(const Workload& workload, const System& system, int gpus,
                                 const ParallelismConfig& layout);

// The same for many layouts of one job (a layout search, layout_search.hpp): one topology and one simulator for
// `gpus` GPUs of `system` with SHARP on or off, so a collective (op, algorithm, bytes, group) that two layouts
// share is simulated once. Not thread-safe: one session per thread. Every layout priced must have `sharp` as
// given here (checked).
class StepPricer;
class StepCollectiveSession {
public:
    StepCollectiveSession(const System& system, int gpus, bool sharp);
    ~StepCollectiveSession();
    StepCollectiveSession(const StepCollectiveSession&) = delete;
    StepCollectiveSession& operator=(const StepCollectiveSession&) = delete;
    // `simulations` of the result counts the flow simulations this call ran (cache misses).
    StepCollectives price(const Workload& workload, const ParallelismConfig& layout);
    // price(layout).optimizer_shards without simulating anything (the layout search's memory check and lower
    // bound need the operator table, which needs the shards, before deciding whether to price).
    int optimizer_shards(const ParallelismConfig& layout) const;

private:
    std::unique_ptr<StepPricer> pricer_;
    int gpus_;
    bool sharp_;
};

}  // namespace ttsim
