// The switches of a fit (`--shared`): parsed strictly, described back, and the operator model's defaults.
#include "models/calibration/calibration.hpp"

#include <fmt/ranges.h>

#include "sim/errors.hpp"

namespace ttsim {

namespace {

// Every switch's name and member, in the order describe() writes them.
struct NamedSwitch {
    const char* text;
    bool SharedFit::*member;
};
constexpr NamedSwitch kSwitches[] = {{"robust", &SharedFit::robust},
                                     {"run-logs", &SharedFit::run_logs},
                                     {"step-logs", &SharedFit::step_logs},
                                     {"eval-logs", &SharedFit::eval_logs},
                                     {"convergence-lag", &SharedFit::convergence_lag}};

}  // namespace

std::string SharedFit::option_names() {
    std::string names;
    for (const auto& [text, member] : kSwitches) names += (names.empty() ? "" : ", ") + std::string(text);
    return names;
}

SharedFit SharedFit::parse(const std::string& list) {
    SharedFit f;
    for (const auto& [text, member] : kSwitches) f.*member = false;   // the list names every switch that is on
    if (list == "none") return f;
    std::size_t start = 0;
    while (true) {   // every comma-separated token, empty ones included (they are errors)
        const std::size_t comma = list.find(',', start);
        const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (name == "none")   // the empty list, so it stands alone
            throw InputError("'none' (no switch on) stands alone; drop it or the other names", Field::shared_parameters);
        bool known = false;
        for (const auto& [text, member] : kSwitches)
            if (name == text) known = f.*member = true;
        if (!known)
            throw InputError("unknown fit switch '" + name + "' (expected a comma-separated list of " + option_names() +
                                 ", or none; the model itself is chosen with --model)",
                             Field::shared_parameters);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return f;
}

LossTerms SharedFit::loss_terms() const { return LossTerms{run_logs, robust, step_logs, eval_logs}; }

SharedFit SharedFit::operator_defaults() {
    SharedFit f;
    f.operator_model = f.step_logs = f.eval_logs = f.convergence_lag = true;
    return f;
}

std::string SharedFit::describe() const {
    std::vector<std::string_view> on_names;
    for (const auto& [text, member] : kSwitches)
        if (this->*member) on_names.push_back(text);
    return on_names.empty() ? "none" : fmt::format("{}", fmt::join(on_names, ","));
}

}  // namespace ttsim
