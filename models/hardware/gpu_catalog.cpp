#include "models/hardware/gpu_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "models/data_dir.hpp"
#include "models/reference_data.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace ttsim {
namespace {

// A count in the file ("scaleup_links: {value: 18, ...}"); 1 << 20 bounds any real fabric.
int sourced_count(const ConfigNode& entry, std::string_view key, int min) {
    return static_cast<int>(sourced(entry, key).as_int(min, 1 << 20));
}

GpuSpec read_gpu(const ConfigNode& entry, double idle_fraction) {
    entry.check_keys({"name", "description", "vendor", "aliases", "bf16_dense", "fp8_dense", "hbm_capacity",
                      "hbm_reported", "hbm_bandwidth", "scaleup_links", "scaleup_per_direction",
                      "scaleup_bidirectional", "collective_link_bandwidth", "scaleup_switched",
                      "gpus_per_scaleup_domain", "nics_per_gpu", "nic_per_direction", "tdp", "sms", "die"});
    GpuSpec g;
    g.name = entry.required("name").as_string();
    g.description = entry.required("description").as_string();
    g.vendor = entry.required("vendor").as_string();
    g.bf16_dense_flops = sourced(entry, "bf16_dense").as_flop_rate();
    // "none": the part has no FP8 tensor cores (A100), which is a fact with a source, not a missing value.
    const ConfigNode fp8 = sourced(entry, "fp8_dense");
    if (!(fp8.is_scalar() && fp8.as_string() == "none")) g.fp8_dense_flops = fp8.as_flop_rate();
    g.hbm_capacity_bytes = static_cast<double>(sourced(entry, "hbm_capacity").as_bytes());
    if (entry.has("hbm_reported")) g.hbm_reported_bytes = static_cast<double>(sourced(entry, "hbm_reported").as_bytes());
    g.hbm_bandwidth = sourced(entry, "hbm_bandwidth").as_bandwidth();
    g.scaleup_links = sourced_count(entry, "scaleup_links", 1);
    g.scaleup_bandwidth_per_direction = sourced(entry, "scaleup_per_direction").as_bandwidth();
    g.scaleup_bandwidth_bidirectional = sourced(entry, "scaleup_bidirectional").as_bandwidth();
    if (entry.has("collective_link_bandwidth"))
        g.collective_effective_link_bandwidth = sourced(entry, "collective_link_bandwidth").as_bandwidth();
    g.scaleup_switched = sourced(entry, "scaleup_switched").as_bool();
    g.gpus_per_scaleup_domain = sourced_count(entry, "gpus_per_scaleup_domain", 1);
    g.nics_per_gpu = sourced_count(entry, "nics_per_gpu", 0);
    g.nic_bandwidth_per_direction = sourced(entry, "nic_per_direction").as_bandwidth();
    g.tdp_watts = sourced(entry, "tdp").as_power();
    if (entry.has("sms")) g.sms = sourced_count(entry, "sms", 1);
    if (entry.has("die")) g.die = sourced(entry, "die").as_string();
    g.idle_watts = idle_fraction * g.tdp_watts;
    entry.feeding([&] { validate_gpu_spec(g); });
    return g;
}

void require_positive(double value, const std::string& gpu, const char* field) {
    if (!(value > 0) || !std::isfinite(value))
        throw InputError("GPU '" + gpu + "': " + field + " must be a positive finite number");
}

}  // namespace

GpuCatalogData load_gpu_catalog(const std::filesystem::path& path) {
    const ConfigNode root = load_reference_file(path, {"idle_power", "reference_gpu", "gpus"});
    const ConfigNode idle = root.required("idle_power");
    idle.check_keys({"fraction_of_tdp"});
    const double idle_fraction = sourced(idle, "fraction_of_tdp").as_double(0.0, 1.0);

    GpuCatalogData out;
    std::vector<std::string> taken;   // normalized names and aliases, to refuse one meaning two GPUs
    auto claim = [&](const ConfigNode& where, const std::string& normalized) {
        if (std::find(taken.begin(), taken.end(), normalized) != taken.end())
            where.fail("name or alias '" + where.as_string() + "' is already used by another GPU");
        taken.push_back(normalized);
    };
    for (const ConfigNode& entry : root.required("gpus").items()) {
        GpuSpec g = read_gpu(entry, idle_fraction);
        claim(entry.required("name"), name_key(g.name));
        if (entry.has("aliases"))
            for (const ConfigNode& alias : entry.required("aliases").items()) {
                claim(alias, name_key(alias.as_string()));
                out.aliases.emplace_back(name_key(alias.as_string()), g.name);
            }
        out.gpus.push_back(std::move(g));
    }
    if (out.gpus.empty()) root.required("gpus").fail("the catalog has no GPUs");
    const ConfigNode reference = sourced(root, "reference_gpu");
    for (const GpuSpec& g : out.gpus)
        if (name_key(g.name) == name_key(reference.as_string())) out.reference_gpu = g.name;
    if (out.reference_gpu.empty()) reference.fail("'" + reference.as_string() + "' is not a GPU of this catalog");
    return out;
}

namespace {
const GpuCatalogData& catalog_data() {
    // Function-local static: loaded once, thread-safe (C++11), immutable afterwards, so the references
    // find_gpu() hands out stay valid for the whole process.
    static const GpuCatalogData data = load_gpu_catalog(data_file("gpus.yaml"));
    return data;
}
}  // namespace

const std::vector<GpuSpec>& gpu_catalog() { return catalog_data().gpus; }

const GpuSpec& reference_gpu() { return find_gpu(catalog_data().reference_gpu); }

std::vector<std::string> gpu_names() {
    std::vector<std::string> names;
    for (const GpuSpec& g : gpu_catalog()) names.push_back(g.name);
    return names;
}

const GpuSpec& find_gpu(std::string_view name) {
    const std::string key = name_key(name);
    std::string_view canonical;
    for (const auto& [alias, target] : catalog_data().aliases)
        if (alias == key) canonical = target;
    for (const GpuSpec& g : gpu_catalog())
        if (g.name == canonical || name_key(g.name) == key) return g;

    std::string valid;
    for (const std::string& n : gpu_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError("unknown GPU '" + std::string(name) + "'; valid GPUs: " + valid +
                     " (aliases such as h100, h100-sxm5, mi300 are accepted)");
}

GpuSpec make_variant(const GpuSpec& base, std::string variant_name) {
    GpuSpec variant = base;
    variant.name = std::move(variant_name);
    variant.description = "hypothetical variant of " + base.name;
    variant.hypothetical = true;
    return variant;
}

void validate_gpu_spec(const GpuSpec& spec) {
    const std::string& n = spec.name;
    if (n.empty()) throw InputError("GPU spec has an empty name");
    require_positive(spec.bf16_dense_flops, n, "bf16_dense_flops");
    if (spec.fp8_dense_flops) require_positive(*spec.fp8_dense_flops, n, "fp8_dense_flops");
    require_positive(spec.hbm_capacity_bytes, n, "hbm_capacity_bytes");
    if (spec.hbm_reported_bytes) require_positive(*spec.hbm_reported_bytes, n, "hbm_reported_bytes");
    require_positive(spec.hbm_bandwidth, n, "hbm_bandwidth");
    require_positive(spec.scaleup_bandwidth_per_direction, n, "scaleup_bandwidth_per_direction");
    require_positive(spec.scaleup_bandwidth_bidirectional, n, "scaleup_bandwidth_bidirectional");
    if (spec.collective_effective_link_bandwidth)
        require_positive(*spec.collective_effective_link_bandwidth, n, "collective_effective_link_bandwidth");
    require_positive(spec.nic_bandwidth_per_direction, n, "nic_bandwidth_per_direction");
    require_positive(spec.tdp_watts, n, "tdp_watts");
    if (spec.scaleup_links < 1) throw InputError("GPU '" + n + "': scaleup_links must be >= 1");
    if (spec.gpus_per_scaleup_domain < 1)
        throw InputError("GPU '" + n + "': gpus_per_scaleup_domain must be >= 1");
    if (spec.sms && *spec.sms < 1) throw InputError("GPU '" + n + "': sms must be >= 1");
    if (spec.nics_per_gpu < 0) throw InputError("GPU '" + n + "': nics_per_gpu must be >= 0");
    if (spec.idle_watts < 0 || spec.idle_watts > spec.tdp_watts)
        throw InputError("GPU '" + n + "': idle_watts must be between 0 and tdp_watts");
}

}  // namespace ttsim
