#include "models/collectives/nccl_data.hpp"

#include "models/data_dir.hpp"
#include "models/reference_data.hpp"

namespace ttsim {
namespace {

// NCCL's tables are in microseconds and GB/s; values are read in exactly those units (no SI round trip), so
// every constant reaches the formulas bit for bit as NCCL writes it.
constexpr std::string_view kMicroseconds = "us";
constexpr std::string_view kGBps = "GB/s";

ProtocolTable protocol_table(const ConfigNode& generation, std::string_view key) {
    const ConfigNode t = sourced_table(generation, key, {"LL", "LL128", "Simple"});
    return {t.required("LL").as_number_in_unit(kMicroseconds), t.required("LL128").as_number_in_unit(kMicroseconds),
            t.required("Simple").as_number_in_unit(kMicroseconds)};
}

NodeCountTable node_count_table(const ConfigNode& generation, std::string_view key) {
    const ConfigNode t = sourced_table(generation, key, {"one_node", "two_nodes", "more_nodes"});
    return {t.required("one_node").as_number_in_unit(kGBps), t.required("two_nodes").as_number_in_unit(kGBps),
            t.required("more_nodes").as_number_in_unit(kGBps)};
}

double microseconds(const ConfigNode& parent, std::string_view key) {
    return sourced(parent, key).as_number_in_unit(kMicroseconds);
}

double fraction(const ConfigNode& parent, std::string_view key) {
    const ConfigNode value = sourced(parent, key);
    const double f = value.as_double(0.0, 1.0);
    if (!(f > 0)) value.fail("must be above 0");
    return f;
}

NcclFormulaFactors read_formula(const ConfigNode& node) {
    node.check_keys({"ring_ll_of_simple", "ring_ll128_of_simple", "ring_ll128_of_simple_one_gpu_per_node",
                     "tree_simple_of_busbw", "tree_ll_divisor", "tree_ll128_one_node", "tree_ll128_multi_node",
                     "ring_simple_net_overhead_factor", "ring_plateau_factor", "ring_plateau_min_bytes",
                     "collnet_direct_per_peer"});
    NcclFormulaFactors f;
    f.ring_ll_of_simple = fraction(node, "ring_ll_of_simple");
    f.ring_ll128_of_simple = fraction(node, "ring_ll128_of_simple");
    f.ring_ll128_of_simple_one_gpu_per_node = fraction(node, "ring_ll128_of_simple_one_gpu_per_node");
    f.tree_simple_of_busbw = fraction(node, "tree_simple_of_busbw");
    f.tree_ll_divisor = sourced(node, "tree_ll_divisor").as_double(1.0, 100.0);
    f.tree_ll128_one_node = fraction(node, "tree_ll128_one_node");
    f.tree_ll128_multi_node = fraction(node, "tree_ll128_multi_node");
    f.ring_simple_net_overhead_factor = sourced(node, "ring_simple_net_overhead_factor").as_double(1.0, 100.0);
    f.ring_plateau_factor = sourced(node, "ring_plateau_factor").as_double(1.0, 100.0);
    f.ring_plateau_min_bytes = static_cast<double>(sourced(node, "ring_plateau_min_bytes").as_bytes());
    f.collnet_direct_per_peer_us = microseconds(node, "collnet_direct_per_peer");
    return f;
}

// The keys both generations share; Blackwell differs only in how its NVLS efficiency is given.
NcclGenerationData read_generation(const ConfigNode& g, std::string_view nvls_key, const NcclFormulaFactors& formula) {
    g.check_keys({"ring_base", "tree_base", "ring_nvlink", "tree_nvlink", "ring_net", "tree_net", "nvls_nvlink",
                  "nvls_net", "collnet_direct_nvlink", "collnet_direct_net", "ll_max_bw", "per_channel_ring_ll128",
                  "per_channel_tree", "per_channel_tree_ll128", "nvlink_per_link", "nvlink_links",
                  "nvlink_line_rate", nvls_key});
    NcclGenerationData out;
    NcclParams& p = out.params;
    p.ring_base_us = protocol_table(g, "ring_base");
    p.tree_base_us = protocol_table(g, "tree_base");
    p.ring_nvlink_us = protocol_table(g, "ring_nvlink");
    p.tree_nvlink_us = protocol_table(g, "tree_nvlink");
    p.ring_net_us = protocol_table(g, "ring_net");
    p.tree_net_us = protocol_table(g, "tree_net");
    p.nvls_nvlink_us = microseconds(g, "nvls_nvlink");
    p.nvls_net_us = microseconds(g, "nvls_net");
    p.collnet_direct_nvlink_us = microseconds(g, "collnet_direct_nvlink");
    p.collnet_direct_net_us = microseconds(g, "collnet_direct_net");
    p.ll_max_bw = node_count_table(g, "ll_max_bw");
    p.per_channel_ring_ll128 = sourced(g, "per_channel_ring_ll128").as_number_in_unit(kGBps);
    p.per_channel_tree = node_count_table(g, "per_channel_tree");
    p.per_channel_tree_ll128 = node_count_table(g, "per_channel_tree_ll128");
    const double per_link = sourced(g, "nvlink_per_link").as_number_in_unit(kGBps);
    const auto links = sourced(g, "nvlink_links").as_int(1, 1024);
    // NCCL's achievable NVLink rate per GPU: its per-link constant times the links (20.6 x 18 = 370.8 on Hopper).
    p.nvlink_effective_gbps = per_link * static_cast<double>(links);
    p.formula = formula;
    out.nvlink_line_rate_gbps = sourced(g, "nvlink_line_rate").as_number_in_unit(kGBps);
    if (p.nvlink_effective_gbps > out.nvlink_line_rate_gbps)
        g.required("nvlink_per_link").fail("nvlink_per_link x nvlink_links exceeds nvlink_line_rate");
    return out;
}

}  // namespace

NcclReference load_nccl_reference(const std::filesystem::path& path) {
    const ConfigNode root =
        load_reference_file(path, {"generations", "blackwell_from_nvlink_rate", "link_efficiency", "formula"});
    const NcclFormulaFactors formula = read_formula(root.required("formula"));
    const ConfigNode generations = root.required("generations");
    generations.check_keys({"hopper", "blackwell"});
    NcclReference ref;
    const ConfigNode hopper = generations.required("hopper");
    ref.hopper = read_generation(hopper, "nvls_efficiency", formula);
    ref.hopper.nvls_efficiency = fraction(hopper, "nvls_efficiency");
    const ConfigNode blackwell = generations.required("blackwell");
    ref.blackwell = read_generation(blackwell, "nvls_efficiency_vs_hopper", formula);
    // Hopper's calibrated figure scaled by NCCL_HEAD's ratio of NVLS efficiencies (nccl.yaml), in this order.
    const ConfigNode ratio = sourced_table(blackwell, "nvls_efficiency_vs_hopper", {"blackwell", "hopper"});
    ref.blackwell.nvls_efficiency = ref.hopper.nvls_efficiency * ratio.required("blackwell").as_double(0.01, 1.0) /
                                    ratio.required("hopper").as_double(0.01, 1.0);
    ref.blackwell_from_nvlink_bytes_per_s = sourced(root, "blackwell_from_nvlink_rate").as_bandwidth();
    const ConfigNode efficiency = root.required("link_efficiency");
    efficiency.check_keys({"infiniband", "pcie", "ethernet"});
    ref.infiniband_efficiency = fraction(efficiency, "infiniband");
    ref.pcie_efficiency = fraction(efficiency, "pcie");
    ref.ethernet_efficiency = fraction(efficiency, "ethernet");
    return ref;
}

const NcclReference& nccl_reference() {
    // A function-local static: initialised once, thread-safe (C++11), immutable afterwards. A malformed file
    // throws InputError from every call until fixed (the static stays uninitialised).
    static const NcclReference reference = load_nccl_reference(data_file("nccl.yaml"));
    return reference;
}

}  // namespace ttsim
