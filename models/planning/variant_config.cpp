// What-if GPUs (`gpu_variants:` of sweeps and plans): read strictly, each figure inside its physical range
// (sim/physical_range.hpp).
#include "models/planning/variant_config.hpp"

#include <algorithm>
#include <set>

#include "models/training/predict.hpp"
#include "topologies/presets.hpp"

namespace ttsim::planning {

namespace {

HardwareVariant read_variant(const ConfigNode& node) {
    node.check_keys({"name", "base", "compute_scale", "hbm_bandwidth", "nvlink_bandwidth", "nic_bandwidth", "tdp"});
    HardwareVariant v;
    v.name = node.required("name").as_string();
    const ConfigNode base = node.required("base");
    v.base_system = base.feeding([&] { return resolve_system(base.as_string()).name; });
    if (auto x = node.optional("compute_scale")) v.compute_scale = x->as_double(0.01, 100.0);
    if (auto x = node.optional("hbm_bandwidth")) v.hbm_bandwidth = x->as_bandwidth(kHbmBandwidthRange);
    if (auto x = node.optional("nvlink_bandwidth")) v.nvlink_bandwidth = x->as_bandwidth(kLinkBandwidthRange);
    if (auto x = node.optional("nic_bandwidth")) v.nic_bandwidth = x->as_bandwidth(kNicBandwidthRange);
    if (auto x = node.optional("tdp")) v.tdp_watts = x->as_power(kGpuPowerRange);
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
