// Runs a collective plan on the flow network: each phase's flows start together on a FlowNetwork built
// from only the links the plan uses (so the cost follows the group, not the cluster), the phase's step time
// is when its last flow has drained (its bandwidth time; hop latencies belong to NCCL's latency terms, so
// the network's links get none), and phases run back to back on one Simulation. A plan's "links" are flow
// resources (FlowResources below): topology links, or spray groups under adaptive routing.
//
// Equivalence classes. A symmetric collective's flows are alike: the 8,192 flows of a ring all-reduce step over
// 4,096 GPUs of h100-100k fall into 3 classes, the same 3 at 1,024 GPUs (test_flow_classes.cpp), each class
// crossing the same numbers of each class of link. The runner finds such classes of flows and links
// (colour refinement to an equitable partition, phase_runner.cpp classify) and simulates ONE flow per class,
// loading one link per link class as often as the class's flows cross it. Exact, not an approximation:
// max-min rates, drain times and every link's load are those of the flow-by-flow simulation (phase_runner.cpp
// states why), up to floating-point summation order (the tests compare both at a few thousand GPUs). Every
// used link still gets its own utilisation (its class's), and the busiest is named as before: the first used
// link with the highest. With `per_flow`, every flow is its own class and only links whose crossing lists
// are identical merge: the reference simulation. Deterministic: classes are numbered in first-use order,
// flows start in plan order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/plan.hpp"
#include "sim/time.hpp"

namespace ttsim {

// What the flow network's links stand for. Resource ids 0..L-1 are the topology's directed links. When the
// fabric routes adaptively (Topology::routing()), id L + g stands for spray group g (topology.hpp SprayGroup):
// every member carries the same share of every flow crossing the group, so the group is ONE constraint, a
// link of capacity (members x smallest member capacity) that a flow loads once per traversal, whichever
// member its static route happened to name. Exact under even spraying, not an approximation of it.
struct FlowResources {
    std::vector<double> capacity;  // bytes/s per resource (NCCL-achievable rates, nccl_params.hpp link_capacity)
    std::vector<LinkId> of_link;   // per topology link: the resource its traffic loads (itself, or its group)
    std::vector<std::uint8_t> role;   // per resource: its ResourceRole
};

// What a resource is to the per-fabric report (SimulatedPlan's fabric fields): a scale-out fabric link
// (InfiniBand or Ethernet, or a spray group of them), and of those a NIC's link up into its leaf.
enum ResourceRole : std::uint8_t { kOtherLink = 0, kFabricLink = 1, kNicUplink = 2 };
// The role of every resource of `topology`: its links, then its spray groups.
std::vector<std::uint8_t> resource_roles(const Topology& topology);

// `link_capacity[id]` per topology link. Without adaptive routing every link is its own resource.
FlowResources make_flow_resources(const Topology& topology, const std::vector<double>& link_capacity);

// Rewrites every link of the plan's flows to the resource it loads. Not for SHARP: its aggregation trees are
// fixed sets of links (the aggregation manager builds them), so its traffic is not sprayed.
void spray_over_groups(CollectivePlan& plan, const FlowResources& resources);

// A resource's name: the link's ("su0.rail3.leaf->spine5"), or the spray group's ("su0.rail3.leaf->spines").
std::string resource_name(const Topology& topology, LinkId resource);

struct SimulatedPlan {
    std::vector<SimTime> step_times;   // per phase, one step: drain time of its last flow
    SimTime bandwidth_time;            // sum of repeat x step time, before pipeline fill/drain
    std::uint64_t fingerprint = 0;
    std::uint64_t events = 0;
    std::uint64_t flows = 0;          // flows of the plan
    std::uint64_t flow_classes = 0;   // flows the network simulated (one per class)
    std::size_t links_used = 0;
    double max_link_utilisation = 0.0;  // over the simulated window (one step of every phase)
    double mean_link_utilisation = 0.0;
    std::string busiest_link;
    // The scale-out fabric's part (InfiniBand or Ethernet links and spray groups): its busiest link, by the same
    // rule as busiest_link, and the bytes the NICs sent into it over the whole collective (every phase's step
    // times its repeats). What the per-plane report divides among a fabric's planes (FabricOptions::planes).
    double max_fabric_utilisation = 0.0;
    std::string busiest_fabric_link;
    double nic_bytes_sent = 0.0;
};

// A plan reduced to its classes (header comment): what the flow network runs, and what each class of links stands
// for. Small whatever the group: a few flows and links per class, plus counts.
struct ClassifiedPlan {
    struct Phase {
        std::int64_t repeat = 1;
        std::size_t flows = 0;  // flows of the plan in this phase
        std::uint32_t first_class = 0, end_class = 0;  // its flow classes
    };
    std::vector<Phase> phases;
    std::vector<double> class_bytes;              // per flow class: bytes of each of its flows
    std::vector<std::uint32_t> class_path_begin{0};  // per flow class: [begin, next begin) of class_path
    std::vector<std::uint32_t> class_path;        // link classes, once per crossing of the leader link
    std::vector<LinkId> link_resource;            // per link class: its leader (first used link), a resource id
    std::vector<std::uint32_t> link_members;      // per link class: used links in it
    // Per link class, of its members (classes may join links of several kinds that carry alike): the NIC uplinks,
    // and the first fabric link (kNoLink if none). Filled when classify_plan is given the resources' roles.
    std::vector<std::uint32_t> nic_uplinks;
    std::vector<LinkId> fabric_member;
    std::size_t links_used = 0;
};

// `capacity[id]` is the bytes/s the flow network gives resource `id` (FlowResources::capacity, or one entry
// per topology link when the plan names links only). `per_flow`: no flow classes, the reference.
// `roles` (resource_roles), when given, fills the classes' fabric members.
ClassifiedPlan classify_plan(const CollectivePlan& plan, const std::vector<double>& capacity, bool per_flow,
                             const std::vector<std::uint8_t>* roles = nullptr);

// Simulates a classified plan with every flow's bytes multiplied by `scale`. Builders' flow sizes are linear in
// the collective's size S (plan.hpp), so a plan built and classified once for S = 1 byte simulates any S with
// scale = S: the routes and classes are the same, only the quotient's small simulation runs again.
SimulatedPlan simulate_classified(const ClassifiedPlan& plan, double scale, const Topology& topology,
                                  const std::vector<double>& capacity, bool check_capacities);

// With `check_capacities`, FlowNetwork::check_link_capacities runs right after each phase's flows are
// shared (InternalError if any link is over-allocated).
// classify_plan, then simulate_classified at scale 1.
SimulatedPlan simulate_plan(const CollectivePlan& plan, const Topology& topology,
                            const std::vector<double>& capacity, bool check_capacities, bool per_flow = false);

}  // namespace ttsim
