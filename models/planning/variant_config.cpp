// What-if GPUs (`gpu_variants:` of sweeps and plans): read strictly, each figure inside its physical range.
#include "models/planning/variant_config.hpp"

#include <algorithm>
#include <set>

#include "models/training/predict.hpp"
#include "topologies/presets.hpp"

namespace ttsim::planning {

namespace {

// Physical ranges of the what-if hardware figures. Outside them a value is a typo, not a what-if, and it would
// break the model rather than answer a question (1B/s of NVLink overflows the event clock; 1B/s of HBM gives a
// time-to-train of a million years), so it is refused at its key.
struct PhysicalRange {
    double min, max;
    const char* text;
};
// HBM: 1 GB/s is below even one DDR4 channel (25 GB/s), far below any accelerator's memory; 100 TB/s is over
// ten times B200's 8 TB/s of HBM3e.
constexpr PhysicalRange kHbmBandwidth{1e9, 100e12, "1GB/s to 100TB/s"};
// NVLink and NIC (bytes/s per direction): 1 Gb/s is the slowest Ethernet port still in a cluster; 100 Tb/s is
// over ten times NVLink5's 900 GB/s (7.2 Tb/s) per GPU and a hundred times an 800 Gb/s XDR port.
constexpr PhysicalRange kLinkBandwidth{1e9 / 8, 100e12 / 8, "1Gb/s to 100Tb/s"};
// TDP per GPU: 10 W is below the smallest datacenter inference card (~40-75 W); 10 kW is over eight times
// GB200's 1.2 kW per GPU.
constexpr PhysicalRange kGpuPower{10, 10e3, "10W to 10kW"};

double in_range(const ConfigNode& node, double value, const PhysicalRange& range) {
    if (!(value >= range.min && value <= range.max))
        node.fail("'" + node.as_string() + "' is outside the physical range " + range.text);
    return value;
}

HardwareVariant read_variant(const ConfigNode& node) {
    node.check_keys({"name", "base", "compute_scale", "hbm_bandwidth", "nvlink_bandwidth", "nic_bandwidth", "tdp"});
    HardwareVariant v;
    v.name = node.required("name").as_string();
    const ConfigNode base = node.required("base");
    v.base_system = base.feeding([&] { return resolve_system(base.as_string()).name; });
    if (auto x = node.optional("compute_scale")) v.compute_scale = x->as_double(0.01, 100.0);
    if (auto x = node.optional("hbm_bandwidth")) v.hbm_bandwidth = in_range(*x, x->as_bandwidth(), kHbmBandwidth);
    if (auto x = node.optional("nvlink_bandwidth")) v.nvlink_bandwidth = in_range(*x, x->as_bandwidth(), kLinkBandwidth);
    if (auto x = node.optional("nic_bandwidth")) v.nic_bandwidth = in_range(*x, x->as_bandwidth(), kLinkBandwidth);
    if (auto x = node.optional("tdp")) v.tdp_watts = in_range(*x, x->as_power(), kGpuPower);
    node.feeding([&] { (void)make_variant_gpu(v); });
    return v;
}

}  // namespace

// A `gpu_variants:` list (sweeps and plans), names unique.
std::vector<HardwareVariant> read_variants(const ConfigNode& list) {
    std::vector<HardwareVariant> variants;
    std::set<std::string> names;
    for (const ConfigNode& item : list.items()) {
        HardwareVariant v = read_variant(item);
        if (!names.insert(v.name).second) item.required("name").fail("duplicate variant name '" + v.name + "'");
        // A variant named like a catalog system would stand in for it wherever `systems` names it.
        bool catalog = true;
        try {
            (void)resolve_system(v.name);
        } catch (const InputError&) {
            catalog = false;
        }
        if (catalog)
            item.required("name").fail("'" + v.name + "' names a catalog system; give the what-if GPU a name of its own");
        variants.push_back(std::move(v));
    }
    return variants;
}

// A gpu_variants entry that `systems` does not name would be read, checked and never priced: refused, as a
// typo or a leftover (the variant's own line).
void require_variants_used(const ConfigNode& variants, const std::vector<HardwareVariant>& read,
                           const std::vector<std::string>& systems, bool systems_given) {
    const std::vector<ConfigNode> items = variants.items();
    std::string listed;
    for (const std::string& s : systems) listed += (listed.empty() ? "" : ", ") + s;
    for (std::size_t i = 0; i < read.size() && i < items.size(); ++i)
        if (std::find(systems.begin(), systems.end(), read[i].name) == systems.end())
            items[i].required("name").fail("gpu variant '" + read[i].name + "' is not in `systems`" +
                                           (systems_given ? std::string() : " (not given, so the default: " + listed + ")") +
                                           ", so nothing would price it: add it there or remove it");
}

std::string base_system_of(const std::string& label, const std::vector<HardwareVariant>& variants) {
    for (const auto& v : variants)
        if (v.name == label) return v.base_system;
    return label;
}

std::vector<std::string> base_systems_of(const std::vector<std::string>& labels, const std::vector<HardwareVariant>& variants) {
    std::vector<std::string> bases;
    for (const std::string& label : labels) bases.push_back(base_system_of(label, variants));
    return bases;
}

std::vector<std::string> variant_names(const std::vector<HardwareVariant>& variants) {
    std::vector<std::string> out;
    for (const HardwareVariant& v : variants) out.push_back(v.name);
    return out;
}

std::vector<std::string> catalog_gpus(const std::vector<std::string>& systems, const std::vector<HardwareVariant>& variants) {
    std::set<std::string> gpus;
    for (const std::string& label : systems) gpus.insert(resolve_system(base_system_of(label, variants)).catalog_gpu->name);
    return {gpus.begin(), gpus.end()};
}

}  // namespace ttsim::planning
