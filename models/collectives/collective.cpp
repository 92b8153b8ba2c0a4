// Names and nccl-tests factors of the collective vocabulary (collective.hpp).
#include "models/collectives/collective.hpp"

#include <array>
#include <cctype>
#include <vector>
#include <utility>

#include <fmt/ranges.h>

#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace ttsim {
namespace {

template <typename Enum, std::size_t N>
Enum parse_name(std::string_view text, const std::array<std::pair<const char*, Enum>, N>& names,
                const char* what) {
    const std::string key = name_key(text);
    for (const auto& [name, value] : names)
        if (key == name_key(name)) return value;
    // A plain list, not std::views::keys: clang 14 (the fuzz build) cannot compile libstdc++ 12's ranges views.
    std::vector<std::string_view> valid;
    for (const auto& entry : names) valid.push_back(entry.first);
    throw InputError(fmt::format("unknown {} '{}'; valid: {}", what, text, fmt::join(valid, ", ")));
}

constexpr std::array<std::pair<const char*, CollectiveOp>, 5> kOps{{
    {"allreduce", CollectiveOp::AllReduce},
    {"reducescatter", CollectiveOp::ReduceScatter},
    {"allgather", CollectiveOp::AllGather},
    {"broadcast", CollectiveOp::Broadcast},
    {"alltoall", CollectiveOp::AllToAll},
}};
constexpr std::array<std::pair<const char*, CollectiveAlgorithm>, 7> kAlgorithms{{
    {"auto", CollectiveAlgorithm::Auto},
    {"ring", CollectiveAlgorithm::Ring},
    {"tree", CollectiveAlgorithm::Tree},
    {"hierarchical", CollectiveAlgorithm::Hierarchical},
    {"nvls", CollectiveAlgorithm::Nvls},
    {"sharp", CollectiveAlgorithm::Sharp},
    {"direct", CollectiveAlgorithm::Direct},
}};
constexpr std::array<std::pair<const char*, NcclProtocol>, 4> kProtocols{{
    {"auto", NcclProtocol::Auto},
    {"LL", NcclProtocol::LL},
    {"LL128", NcclProtocol::LL128},
    {"Simple", NcclProtocol::Simple},
}};

template <typename Enum, std::size_t N>
std::string_view name_of(Enum value, const std::array<std::pair<const char*, Enum>, N>& names) {
    for (const auto& [name, v] : names)
        if (v == value) return name;
    TTSIM_ASSERT(false, "enum value without a name");
    return {};
}

}  // namespace

std::string_view to_string(CollectiveOp op) { return name_of(op, kOps); }
std::string_view to_string(CollectiveAlgorithm algorithm) { return name_of(algorithm, kAlgorithms); }
std::string_view to_string(NcclProtocol protocol) { return name_of(protocol, kProtocols); }

CollectiveOp parse_collective_op(std::string_view text) { return parse_name(text, kOps, "collective"); }
CollectiveAlgorithm parse_collective_algorithm(std::string_view text) {
    return parse_name(text, kAlgorithms, "collective algorithm");
}
NcclProtocol parse_nccl_protocol(std::string_view text) { return parse_name(text, kProtocols, "NCCL protocol"); }

double bus_bandwidth_factor(CollectiveOp op, int n) {
    if (n < 2) return 0.0;
    const double nn = static_cast<double>(n);
    switch (op) {
        case CollectiveOp::AllReduce: return 2.0 * (nn - 1.0) / nn;
        case CollectiveOp::ReduceScatter:
        case CollectiveOp::AllGather:
        case CollectiveOp::AllToAll: return (nn - 1.0) / nn;
        case CollectiveOp::Broadcast: return 1.0;
    }
    return 0.0;
}

std::vector<PlaneLoad> plane_loads(const CollectiveResult& result, int planes) {
    TTSIM_ASSERT(planes >= 1, "plane_loads: no plane");
    std::vector<PlaneLoad> loads;
    for (int p = 0; p < planes; ++p)
        loads.push_back({p,
                         result.busiest_fabric_link.empty() ? std::string()
                                                            : "plane" + std::to_string(p) + ":" + result.busiest_fabric_link,
                         result.max_fabric_link_utilisation, result.nic_bytes_sent / planes});
    return loads;
}

}  // namespace ttsim
