// Physical lower bound of a collective (lower_bound.hpp).
#include "models/collectives/lower_bound.hpp"

#include <algorithm>

namespace ttsim {
namespace {

struct Ports {
    double out = 0.0, in = 0.0;  // line-rate bytes/s
};

// The GPU's NIC path rate: PCIe to the NIC, then the NIC's attachments to the fabric.
Ports scale_out_ports(const Topology& topo, int rank) {
    const GpuInfo& gpu = topo.gpu(rank);
    if (gpu.pcie_up == kNoLink) return {};
    const SwitchFabric& fabric = topo.fabric();
    Ports nic;
    if (static_cast<std::size_t>(rank) + 1 < fabric.attachment_begin.size()) {
        for (std::uint32_t a = fabric.attachment_begin[static_cast<std::size_t>(rank)];
             a < fabric.attachment_begin[static_cast<std::size_t>(rank) + 1]; ++a) {
            nic.out += topo.link(fabric.attachments[a].up).bandwidth_bytes_per_s;
            nic.in += topo.link(fabric.attachments[a].down).bandwidth_bytes_per_s;
        }
    }
    return {std::min(topo.link(gpu.pcie_up).bandwidth_bytes_per_s, nic.out),
            std::min(topo.link(gpu.pcie_down).bandwidth_bytes_per_s, nic.in)};
}

}  // namespace

SimTime collective_lower_bound(const GroupLayout& layout, CollectiveOp op, double bytes) {
    const int n = layout.size();
    if (n < 2 || !(bytes > 0.0)) return SimTime::zero();
    const Topology& topo = layout.topology();
    const bool multi = layout.island_count() > 1;
    const double nn = n;
    double seconds = 0.0;
    auto cut = [&seconds](double moved, double rate) {
        if (moved > 0.0 && rate > 0.0) seconds = std::max(seconds, moved / rate);
    };
    SimTime first_hop = SimTime::max(), last_hop = SimTime::max();
    for (const GroupIsland& island : layout.islands()) {
        const double q = static_cast<double>(island.ranks.size());
        Ports island_ports;
        bool holds_root = false;
        for (const int r : island.ranks) {
            const GpuInfo& gpu = topo.gpu(r);
            Ports ports;
            if (gpu.nvlink_up != kNoLink) {
                ports.out += topo.link(gpu.nvlink_up).bandwidth_bytes_per_s;
                ports.in += topo.link(gpu.nvlink_down).bandwidth_bytes_per_s;
                first_hop = std::min(first_hop, topo.link(gpu.nvlink_up).latency);
                last_hop = std::min(last_hop, topo.link(gpu.nvlink_down).latency);
            }
            if (multi) {
                const Ports nic = scale_out_ports(topo, r);
                ports.out += nic.out;
                ports.in += nic.in;
                island_ports.out += nic.out;
                island_ports.in += nic.in;
                if (gpu.pcie_up != kNoLink) {
                    first_hop = std::min(first_hop, topo.link(gpu.pcie_up).latency);
                    last_hop = std::min(last_hop, topo.link(gpu.pcie_down).latency);
                }
            }
            const bool root = r == layout.root();
            holds_root = holds_root || root;
            switch (op) {
                case CollectiveOp::AllReduce: cut(bytes, ports.out); cut(bytes, ports.in); break;
                case CollectiveOp::ReduceScatter: cut(bytes * (nn - 1) / nn, ports.out); cut(bytes / nn, ports.in); break;
                case CollectiveOp::AllGather: cut(bytes / nn, ports.out); cut(bytes * (nn - 1) / nn, ports.in); break;
                case CollectiveOp::Broadcast: if (root) cut(bytes, ports.out); else cut(bytes, ports.in); break;
                case CollectiveOp::AllToAll: cut(bytes * (nn - 1) / nn, ports.out); cut(bytes * (nn - 1) / nn, ports.in); break;
            }
        }
        if (!multi) continue;
        switch (op) {
            case CollectiveOp::AllReduce: cut(bytes, island_ports.out); cut(bytes, island_ports.in); break;
            case CollectiveOp::ReduceScatter:
                cut(bytes * (nn - q) / nn, island_ports.out); cut(bytes * q / nn, island_ports.in); break;
            case CollectiveOp::AllGather:
                cut(bytes * q / nn, island_ports.out); cut(bytes * (nn - q) / nn, island_ports.in); break;
            case CollectiveOp::Broadcast:
                if (holds_root) cut(bytes, island_ports.out); else cut(bytes, island_ports.in);
                break;
            case CollectiveOp::AllToAll:
                cut(bytes * q * (nn - q) / nn, island_ports.out); cut(bytes * q * (nn - q) / nn, island_ports.in);
                break;
        }
    }
    SimTime latency = SimTime::zero();
    if (first_hop != SimTime::max() && last_hop != SimTime::max()) latency = first_hop + last_hop;
    return SimTime::from_seconds(seconds) + latency;
}

}  // namespace ttsim
