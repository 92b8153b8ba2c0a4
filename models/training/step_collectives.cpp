#include "models/training/step_collectives.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/lower_bound.hpp"
#include "models/collectives/tuner.hpp"
#include "sim/errors.hpp"

namespace ttsim {
namespace {

// The simulator's `auto` decision (the fastest applicable algorithm, NCCL-like protocol choice; ties to the
// earlier candidate), without simulating candidates that cannot win: each candidate's duration is at least its
// NCCL latency plus the protocol-scaled physical lower bound (lower_bound.hpp; duration is monotone in the
// bandwidth time), so candidates are simulated in ascending order of that bound and the search stops when the next
// bound is no better than the best simulated duration. Same answer as CollectiveAlgorithm::Auto; at 16,384 GPUs it
// skips e.g. ring and tree over 2,048 rail peers (seconds of flow simulation) when SHARP wins by far.
CollectiveResult auto_collective(CollectiveSimulator& simulator, const Topology& topology, const NcclParams& params,
                                 CollectiveOp op, double bytes, const std::vector<int>& group) {
    const std::uint64_t size = static_cast<std::uint64_t>(std::llround(bytes));
    const GroupLayout layout(topology, group);
    const std::vector<CollectiveAlgorithm> candidates =
        candidate_algorithms(op, layout, simulator.options().sharp_enabled);
    TTSIM_ASSERT(!candidates.empty(), "no collective algorithm applies");
    const LatencyShape shape{op, layout.size(), layout.island_count(), layout.max_per_island(),
                             simulator.options().net_overhead_us};
    // Margin: the bound includes one path latency (microseconds) that the bandwidth part need not contain.
    const double bound =
        std::max(0.0, 0.9 * collective_lower_bound(layout, op, static_cast<double>(size)).seconds() - 5e-6);
    std::vector<std::pair<double, std::size_t>> order;
    for (std::size_t i = 0; i < candidates.size(); ++i)
        order.emplace_back(choose_protocol(params, candidates[i], NcclProtocol::Auto, shape, static_cast<double>(size),
                                           bound, simulator.options().nccl_channels)
                               .total_seconds(),
                           i);
    std::sort(order.begin(), order.end());
    CollectiveResult best;
    std::size_t best_index = candidates.size();
    for (const auto& [lower, i] : order) {
        if (best_index < candidates.size() && lower > best.duration.seconds()) break;
        CollectiveRequest request;
        request.op = op;
        request.bytes = size;
        request.group = group;
        request.algorithm = candidates[i];
        CollectiveResult result = simulator.run(request);
        const double seconds = result.duration.seconds();
        if (best_index == candidates.size() || seconds < best.duration.seconds() ||
            (seconds == best.duration.seconds() && i < best_index)) {
            best = std::move(result);
            best_index = i;
        }
    }
    return best;
}

// Global rank of the GPU at (tp, cp, pp, dp) coordinates: Megatron order, TP fastest, then CP, PP, DP.
int rank_of(const ParallelismConfig& c, int tp, int cp, int pp, int dp) {
    return tp + c.tensor_parallel * (cp + c.context_parallel * (pp + c.pipeline_parallel * dp));
}

}  // namespace

// Simulates collectives on one topology with one simulator, recording what it measured.
class StepPricer {
public:
    StepPricer(const System& system, int gpus, bool sharp)
        : topology_(build_topology(system, gpus)), simulator_(topology_, CollectiveOptions{.sharp_enabled = sharp}),
          params_(nccl_params(gpu_generation_of(topology_))) {}

    // Seconds of one collective over `group` (global ranks); 0 for a group of one or nothing to move.
    double seconds(CollectiveOp op, double bytes, const std::vector<int>& group, MeasuredCollective* measured = nullptr) {
        if (group.size() < 2 || bytes <= 0) return 0.0;
        const CollectiveResult r = auto_collective(simulator_, topology_, params_, op, bytes, group);
        if (measured)
            *measured = MeasuredCollective{std::string(to_string(op)), bytes, static_cast<int>(group.size()),
                                           r.algorithm, r.protocol, r.duration.seconds(), r.busbw_bytes_per_s,
                                           r.max_link_utilisation, r.busiest_link};
        return r.duration.seconds();
    }
    const Topology& topology() const { return topology_; }
    std::uint64_t simulations() const { return simulator_.simulations(); }

private:
    Topology topology_;
    CollectiveSimulator simulator_;
    NcclParams params_;
};

namespace {

// The GPU's NVLink domain index, as the topology groups them (presets and YAML topologies alike).
int domain_of(const Topology& topology, int rank) {
    const int index = topology.gpus()[static_cast<std::size_t>(rank)].nvlink_domain_index;
    return index >= 0 ? index : -1 - rank;   // a GPU without NVLink is a domain of its own
}

// Tensor / context parallel collectives of one transformer block per micro step, for the rank class at TP = CP =
// PP = 0 (workload data: ModelParallelComm), in the order the layer issues them. Megatron-LM's block
// (megatron/core/tensor_parallel/mappings.py): without sequence parallelism an all-reduce after the attention
// output projection and after the second MLP GEMM in forward, and the conjugate all-reduces of the input gradients
// of the QKV and first MLP GEMMs in backward; with sequence parallelism each forward all-reduce becomes a
// reduce-scatter and an all-gather before the next column-parallel GEMM, and backward runs the conjugates (an
// all-gather of the output gradient, a reduce-scatter of the input gradient). Ring attention over CP exchanges the
// K/V shards once in forward and twice in backward (K/V again, then their gradients); the gradient exchange is
// priced as an all-gather of the same size, as the ring moves the same bytes.
std::vector<LayerCollective> block_collectives(StepPricer& pricer, const ModelParallelComm& m,
                                               const ParallelismConfig& c) {
    std::vector<LayerCollective> out;
    const double tokens_per_rank = m.tokens_per_sample * c.samples_per_micro_batch / c.context_parallel;
    auto add = [&](std::string name, bool backward, CollectiveOp op, double bytes, const std::vector<int>& group) {
        LayerCollective l{std::move(name), backward, {}};
        pricer.seconds(op, bytes, group, &l.measured);
        out.push_back(std::move(l));
    };
    if (c.tensor_parallel > 1) {
        std::vector<int> tp_group;
        for (int t = 0; t < c.tensor_parallel; ++t) tp_group.push_back(rank_of(c, t, 0, 0, 0));
        const double activation = tokens_per_rank * m.hidden * m.activation_bytes;
        if (m.tensor_style == ModelParallelComm::TensorStyle::allreduce) {
            add("tp allreduce (attention output)", false, CollectiveOp::AllReduce, activation, tp_group);
            add("tp allreduce (mlp output)", false, CollectiveOp::AllReduce, activation, tp_group);
            add("tp allreduce (mlp input grad)", true, CollectiveOp::AllReduce, activation, tp_group);
            add("tp allreduce (attention input grad)", true, CollectiveOp::AllReduce, activation, tp_group);
        } else {
            add("tp allgather (attention input)", false, CollectiveOp::AllGather, activation, tp_group);
            add("tp reducescatter (attention output)", false, CollectiveOp::ReduceScatter, activation, tp_group);
            add("tp allgather (mlp input)", false, CollectiveOp::AllGather, activation, tp_group);
            add("tp reducescatter (mlp output)", false, CollectiveOp::ReduceScatter, activation, tp_group);
            add("tp allgather (mlp output grad)", true, CollectiveOp::AllGather, activation, tp_group);
            add("tp reducescatter (mlp input grad)", true, CollectiveOp::ReduceScatter, activation, tp_group);
            add("tp allgather (attention output grad)", true, CollectiveOp::AllGather, activation, tp_group);
            add("tp reducescatter (attention input grad)", true, CollectiveOp::ReduceScatter, activation, tp_group);
        }
    }
    if (c.context_parallel > 1 && m.context_kv_width > 0) {
        std::vector<int> cp_group;
        for (int k = 0; k < c.context_parallel; ++k) cp_group.push_back(rank_of(c, 0, k, 0, 0));
        const double kv = tokens_per_rank * 2 * m.context_kv_width * m.activation_bytes * c.context_parallel;
        add("cp kv allgather", false, CollectiveOp::AllGather, kv, cp_group);
        add("cp kv allgather (backward)", true, CollectiveOp::AllGather, kv, cp_group);
        add("cp dkv exchange", true, CollectiveOp::AllGather, kv, cp_group);
    }
    // A collective over a group of one (or of nothing) takes no time and is not issued.
    out.erase(std::remove_if(out.begin(), out.end(), [](const LayerCollective& l) { return l.measured.ranks == 0; }),
              out.end());
    return out;
}

// The first gradient-reduction group (the ranks at TP = PP = 0 that hold the same weights: every DP and CP
// coordinate, ParallelismConfig::weight_replicas), the part of it inside the first rank's NVLink domain, and one
// rank per domain at the same position (the distributed optimizer's two levels).
struct ReplicaGroups {
    std::vector<int> all, in_domain, across_domains;
};

ReplicaGroups replica_groups(const Topology& topology, const ParallelismConfig& c) {
    ReplicaGroups g;
    for (int d = 0; d < c.data_parallel; ++d)
        for (int k = 0; k < c.context_parallel; ++k) g.all.push_back(rank_of(c, 0, k, 0, d));
    const int first_domain = domain_of(topology, g.all.front());
    for (int r : g.all)
        if (domain_of(topology, r) == first_domain) g.in_domain.push_back(r);
    for (std::size_t i = 0; i < g.all.size(); i += g.in_domain.size()) g.across_domains.push_back(g.all[i]);
    return g;
}

// The ranks the optimizer state is sharded over: the weight replicas inside the NVLink domain with the
// distributed optimizer (its reduce-scatter group), else none (1).
int optimizer_shards_of(const ParallelismConfig& c, const ReplicaGroups& groups) {
    return c.weight_replicas() > 1 && c.distributed_optimizer ? static_cast<int>(groups.in_domain.size()) : 1;
}

}  // namespace

namespace {

// The per-micro-step total as the calibrated profiles were fitted with it: the same collectives as
// block_collectives, each kind's count times its (cached) duration. Equal to the sum of the block list over the
// blocks up to rounding (checked: tests/unit/test_layer_iteration.cpp); kept because the operator fit
// (models/calibration/operator_fit.cpp) is sensitive to the last bits of this term: summing the list instead
// moved the hold-out MAPE from 21.0 to 22.6 %.
double fitted_model_parallel_seconds(StepPricer& pricer, const ModelParallelComm& m, const ParallelismConfig& c) {
    double total = 0;
    const double tokens_per_rank = m.tokens_per_sample * c.samples_per_micro_batch / c.context_parallel;
    if (c.tensor_parallel > 1) {
        std::vector<int> tp_group;
        for (int t = 0; t < c.tensor_parallel; ++t) tp_group.push_back(rank_of(c, t, 0, 0, 0));
        const double activation = tokens_per_rank * m.hidden * m.activation_bytes;
        if (m.tensor_style == ModelParallelComm::TensorStyle::allreduce)
            total += m.layers * 4 * pricer.seconds(CollectiveOp::AllReduce, activation, tp_group);
        else
            total += m.layers * 4 *
                     (pricer.seconds(CollectiveOp::AllGather, activation, tp_group) +
                      pricer.seconds(CollectiveOp::ReduceScatter, activation, tp_group));
    }
    if (c.context_parallel > 1 && m.context_kv_width > 0) {
        std::vector<int> cp_group;
        for (int k = 0; k < c.context_parallel; ++k) cp_group.push_back(rank_of(c, 0, k, 0, 0));
        const double kv = tokens_per_rank * 2 * m.context_kv_width * m.activation_bytes * c.context_parallel;
        total += m.layers * 3 * pricer.seconds(CollectiveOp::AllGather, kv, cp_group);
    }
    return total;
}

}  // namespace

StepCollectiveSession::StepCollectiveSession(const System& system, int gpus, bool sharp)
    : pricer_(std::make_unique<StepPricer>(system, gpus, sharp)), gpus_(gpus), sharp_(sharp) {}

StepCollectiveSession::~StepCollectiveSession() = default;

StepCollectives step_collectives(const Workload& workload, const System& system, int gpus,
                                 const ParallelismConfig& c) {
    StepCollectiveSession session(system, gpus, c.sharp);
    return session.price(workload, c);
}

int StepCollectiveSession::optimizer_shards(const ParallelismConfig& c) const {
    TTSIM_ASSERT(c.gpus() == gpus_, "layout of another job");
    if (c.weight_replicas() == 1 || !c.distributed_optimizer) return 1;   // not sharded: no groups to build
    return optimizer_shards_of(c, replica_groups(pricer_->topology(), c));
}

StepCollectives StepCollectiveSession::price(const Workload& workload, const ParallelismConfig& c) {
    TTSIM_ASSERT(c.gpus() == gpus_ && c.sharp == sharp_, "layout priced in a session of another job");
    StepPricer& pricer = *pricer_;
    const std::uint64_t simulations_before = pricer.simulations();
    StepCollectives out;
    out.topology = pricer.topology().name();

    const ReplicaGroups groups = replica_groups(pricer.topology(), c);
    const std::vector<int>& replica_group = groups.all;
    const std::vector<int>& replicas_in_domain = groups.in_domain;
    const std::vector<int>& replicas_across_domains = groups.across_domains;
    const int replicas_per_domain = static_cast<int>(replicas_in_domain.size());

    // Gradients per rank: TP shards the weights and PP splits the layers (an average stage's share; the pipeline
    // step scales each stage by its own layers' gradients), CP and DP do not, so they are reduced over DP x CP.
    const double gradient_bytes = static_cast<double>(workload.gradient_bytes) / c.tensor_parallel / c.pipeline_parallel;
    const double bucket_cap = workload.gradient_bucket_bytes ? static_cast<double>(*workload.gradient_bucket_bytes)
                                                             : kGradientBucketBytes;
    const int buckets = c.gradient_buckets > 0 ? c.gradient_buckets
                                               : std::max(1, static_cast<int>(std::ceil(gradient_bytes / bucket_cap)));
    const double bucket_bytes = gradient_bytes / buckets;
    if (c.weight_replicas() > 1) {
        if (!c.distributed_optimizer) {
            MeasuredCollective ar;
            out.bucket_seconds.assign(buckets, pricer.seconds(CollectiveOp::AllReduce, bucket_bytes, replica_group, &ar));
            out.bucket_collectives.push_back(std::move(ar));
        } else {
            MeasuredCollective rs, ar;
            const double rs_seconds = pricer.seconds(CollectiveOp::ReduceScatter, bucket_bytes, replicas_in_domain, &rs);
            const double ar_seconds =
                pricer.seconds(CollectiveOp::AllReduce, bucket_bytes / replicas_per_domain, replicas_across_domains, &ar);
            out.bucket_seconds.assign(buckets, rs_seconds + ar_seconds);
            if (rs.ranks > 0) out.bucket_collectives.push_back(std::move(rs));
            if (ar.ranks > 0) out.bucket_collectives.push_back(std::move(ar));
            out.bucket_name = replicas_across_domains.size() > 1 ? "reducescatter+allreduce" : "reducescatter";
            // The updated parameters are all-gathered in the model's 16-bit dtype (Megatron-LM's DistributedOptimizer
            // gathers its bf16 param buffer), not at the gradients' width: half a user model's fp32 gradient bytes.
            const double parameter_bytes = gradient_bytes * 2.0 / workload.gradient_element_bytes();
            out.param_all_gather_seconds = pricer.seconds(CollectiveOp::AllGather, parameter_bytes, replicas_in_domain);
            out.optimizer_shards = optimizer_shards_of(c, groups);
        }
    }
    if (workload.model_parallel && (c.tensor_parallel > 1 || c.context_parallel > 1)) {
        out.layer_collectives = block_collectives(pricer, *workload.model_parallel, c);
        out.collective_layers = workload.model_parallel->layers;
        out.tp_cp_seconds_per_micro_step = fitted_model_parallel_seconds(pricer, *workload.model_parallel, c);
    }
    if (c.pipeline_parallel > 1 && workload.model_parallel) {
        // Megatron-LM sends the stage's output hidden states, s x b x h at 16 bits, each TP rank its 1/TP slice
        // (sequence parallelism's scattered tensor; the scatter-gather optimisation without it), each CP rank its
        // share of the sequence, as one point-to-point message: a broadcast from the sender to one receiver, on
        // the simulated fabric (NVLink inside a domain, the NICs and switches across).
        const ModelParallelComm& m = *workload.model_parallel;
        out.pp_message_bytes = m.tokens_per_sample * c.samples_per_micro_batch / c.context_parallel * m.hidden *
                               m.activation_bytes / c.tensor_parallel;
        for (int d = 0; d < c.pipeline_parallel; ++d)
            out.pp_send_seconds.push_back(pricer.seconds(
                CollectiveOp::Broadcast, out.pp_message_bytes,
                {rank_of(c, 0, 0, d, 0), rank_of(c, 0, 0, (d + 1) % c.pipeline_parallel, 0)}));
    }
    out.simulations = pricer.simulations() - simulations_before;
    return out;
}

}  // namespace ttsim
