#include "models/planning/holdout_error.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "models/data_dir.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config.hpp"

namespace ttsim::planning {

const WorkloadHoldoutError* HoldoutErrors::find(const std::string& workload) const {
    for (const WorkloadHoldoutError& w : workloads)
        if (w.workload == workload) return &w;
    return nullptr;
}

HoldoutErrors holdout_errors(const HoldoutReport& report, int fit_max_gpus, int predict_min_gpus) {
    HoldoutErrors errors;
    errors.command = kHoldoutCommand;
    errors.fit_max_gpus = fit_max_gpus;
    errors.predict_min_gpus = predict_min_gpus;
    for (const std::string& name : workload_names()) {
        WorkloadHoldoutError w{name, 0, 0};
        double sum = 0;
        for (const PointError& p : report.predicted)
            if (p.workload == name) {
                sum += std::abs(p.error);
                ++w.results;
            }
        if (w.results > 0) w.mape_percent = 100.0 * sum / w.results;
        errors.workloads.push_back(w);
    }
    return errors;
}

std::string format_holdout_yaml(const HoldoutErrors& errors) {
    std::ostringstream out;
    out << "# The model's hold-out error per workload: calibrated on the v4.1 results with <= " << errors.fit_max_gpus
        << " GPUs, predicting\n# the H100/H200 results with >= " << errors.predict_min_gpus
        << " GPUs (section (b) of `ttsim validate`). Plans quote it. Regenerate with:\n#   " << errors.command << "\n"
        << "command: \"" << errors.command << "\"\n"
        << "fit_max_gpus: " << errors.fit_max_gpus << "\n"
        << "predict_min_gpus: " << errors.predict_min_gpus << "\n"
        << "workloads:\n";
    for (const WorkloadHoldoutError& w : errors.workloads) {
        // Two decimals, as validate prints them; more would claim a precision the data do not have.
        out << fmt::format("  {}: {{results: {}, mape_percent: {:.2f}}}\n", w.workload, w.results, w.mape_percent);
    }
    return out.str();
}

HoldoutErrors load_holdout_errors(const std::filesystem::path& path) {
    const ConfigNode root = ConfigNode::load_file(path.string());
    root.check_keys({"command", "fit_max_gpus", "predict_min_gpus", "workloads"});
    HoldoutErrors errors;
    errors.command = root.required("command").as_string();
    errors.fit_max_gpus = static_cast<int>(root.required("fit_max_gpus").as_int(1, 1 << 20));
    errors.predict_min_gpus = static_cast<int>(root.required("predict_min_gpus").as_int(1, 1 << 20));
    const ConfigNode workloads = root.required("workloads");
    // Every catalog workload must be listed, so a plan never silently lacks the figure.
    workloads.check_keys(workload_names());
    for (const std::string& name : workload_names()) {
        const ConfigNode entry = workloads.required(name);
        entry.check_keys({"results", "mape_percent"});
        WorkloadHoldoutError w;
        w.workload = name;
        w.results = static_cast<int>(entry.required("results").as_int(0, 1 << 20));
        w.mape_percent = entry.required("mape_percent").as_double(0, 1e6);
        errors.workloads.push_back(w);
    }
    return errors;
}

const HoldoutErrors& shipped_holdout_errors() {
    static const HoldoutErrors errors = load_holdout_errors(data_file("validation/holdout.yaml"));
    return errors;
}

}  // namespace ttsim::planning
