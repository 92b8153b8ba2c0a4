// The shared-parameter list of a fit (`--shared`): parsed strictly, described back, and the model's defaults.
#include "models/calibration/calibration.hpp"

#include <fmt/ranges.h>

#include "sim/errors.hpp"

namespace ttsim {

namespace {

// Every option's name and member, in the order describe() writes them, and whether only the operator model
// fits it (the lumped fit would ignore it: operator_only_term).
struct NamedOption {
    const char* text;
    bool SharedFit::*member;
    bool operator_only = false;
};
constexpr bool kOperatorOnly = true;
constexpr NamedOption kOptions[] = {
    {"multi-node", &SharedFit::multi_node},   {"run-overhead", &SharedFit::run_overhead},
    {"step-jitter", &SharedFit::step_jitter}, {"half-work", &SharedFit::half_work},
    {"jitter-cv", &SharedFit::jitter_cv},     {"workload-run-overhead", &SharedFit::workload_run_overhead},
    {"config-weights", &SharedFit::configuration_weights}, {"eval-fixed", &SharedFit::eval_fixed},
    {"run-logs", &SharedFit::run_logs},       {"jitter-nodes", &SharedFit::jitter_nodes},
    {"robust", &SharedFit::robust},           {"operator", &SharedFit::operator_model},
    {"system-speed", &SharedFit::system_speed, kOperatorOnly},
    {"release-speed", &SharedFit::release_speed, kOperatorOnly},
    {"kernel-overhead", &SharedFit::kernel_overhead, kOperatorOnly},
    {"tp-exposed", &SharedFit::tp_exposed, kOperatorOnly},
    {"host-overlap", &SharedFit::host_overlap, kOperatorOnly},
    {"graph-host-overlap", &SharedFit::graph_host_overlap, kOperatorOnly},
    {"step-logs", &SharedFit::step_logs},     {"eval-logs", &SharedFit::eval_logs},
    {"eval-cost", &SharedFit::eval_cost, kOperatorOnly},
    {"eval-step-cost", &SharedFit::eval_step_cost, kOperatorOnly},
    {"warmup-logs", &SharedFit::warmup_logs},
    {"efficiency-prior", &SharedFit::efficiency_prior, kOperatorOnly},
    {"eval-passes", &SharedFit::eval_passes, kOperatorOnly},
    {"eval-launch", &SharedFit::eval_launch, kOperatorOnly},
    {"eval-host-ops", &SharedFit::eval_host_ops, kOperatorOnly},
    {"logged-overhead", &SharedFit::logged_overhead, kOperatorOnly},
    {"stream-memory", &SharedFit::stream_memory, kOperatorOnly},
    {"roof-blend", &SharedFit::roof_blend, kOperatorOnly},
    {"tensor-memory", &SharedFit::tensor_memory, kOperatorOnly},
    {"class-overhead", &SharedFit::class_overhead, kOperatorOnly},
    {"same-die", &SharedFit::same_die, kOperatorOnly},
    {"eval-stage", &SharedFit::eval_stage, kOperatorOnly},
    {"logged-scoring", &SharedFit::logged_scoring, kOperatorOnly},
    {"convergence-lag", &SharedFit::convergence_lag},
    {"pooled-convergence-lag", &SharedFit::pooled_convergence_lag},
    {"staged-logged-evals", &SharedFit::staged_logged_evals, kOperatorOnly},
    {"identified-host-cost", &SharedFit::identified_host_cost, kOperatorOnly},
    {"gpu-efficiencies", &SharedFit::gpu_efficiencies, kOperatorOnly},
    {"staged-refit", &SharedFit::staged_refit, kOperatorOnly}};

}  // namespace

std::string SharedFit::option_names() {
    std::string names;
    for (const auto& [text, member, operator_only] : kOptions) names += (names.empty() ? "" : ", ") + std::string(text);
    return names;
}

SharedFit SharedFit::parse(const std::string& list) {
    SharedFit f;
    for (const auto& [text, member, operator_only] : kOptions) f.*member = false;   // the list names everything that is on
    if (list == "none") return f;
    std::size_t start = 0;
    while (true) {   // every comma-separated token, empty ones included (they are errors)
        const std::size_t comma = list.find(',', start);
        const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (name == "none")   // the empty list, so it stands alone
            throw InputError("'none' (no shared parameter) stands alone; drop it or the other names",
                             Field::shared_parameters);
        bool known = false;
        for (const auto& [text, member, operator_only] : kOptions)
            if (name == text) known = f.*member = true;
        if (!known)
            throw InputError("unknown shared parameter '" + name +
                                 "' (expected a comma-separated list of " + option_names() + ", or none)",
                             Field::shared_parameters);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    // Options that need another, or exclude one: the first rule broken, in this order, is the error. Whether the
    // model fits an operator-only term is not asked here: the list may leave 'operator' to --model (the front
    // ends' fit_for_model adds it, or refuses the term for --model lumped, naming it).
    const std::pair<bool, const char*> rules[] = {
        {f.warmup_logs && !f.run_overhead && !f.workload_run_overhead,
         "warmup-logs fits the per-run overhead to the logs: add run-overhead or workload-run-overhead"},
        {f.eval_launch && !f.eval_passes,
         "eval-launch prices the evaluation passes' host work: add eval-passes (and operator)"},
        {f.eval_host_ops && !f.eval_passes,
         "eval-host-ops prices the evaluation passes' host work: add eval-passes (and operator)"},
        {f.logged_overhead && !f.workload_run_overhead,
         "logged-overhead (an operator-model term) sets each workload's per-run overhead from its logs: add "
         "workload-run-overhead"},
        {f.class_overhead && !f.kernel_overhead,
         "class-overhead fits the streaming kernels' overhead apart from kernel-overhead's: add kernel-overhead"},
        {f.eval_stage && !(f.eval_host_ops || f.eval_launch || f.eval_cost || f.eval_step_cost || f.eval_fixed),
         "eval-stage fits the evaluation's terms in a second stage: add eval-passes (with eval-host-ops or "
         "eval-launch), eval-cost, eval-step-cost or eval-fixed"},
        {f.logged_scoring && f.warmup_logs,
         "logged-scoring and warmup-logs exclude each other: warmup-logs compares the per-run overhead with the logged "
         "first-segment excess, which holds no final scoring"},
        {f.host_overlap && f.graph_host_overlap,
         "host-overlap already overlaps the fixed per-step host cost under every launch mode; graph-host-overlap does "
         "it only under whole-iteration CUDA graphs: choose one"},
        {f.staged_logged_evals && !f.eval_stage, "staged-logged-evals changes eval-stage's first stage: add eval-stage"},
        {f.staged_refit && !f.eval_stage, "staged-refit repeats eval-stage's two stages: add eval-stage"},
        {f.gpu_efficiencies && f.same_die,
         "gpu-efficiencies fits each GPU family's own efficiencies in place of its speed, which same-die holds at 1: "
         "choose one"},
        {f.convergence_lag && f.pooled_convergence_lag,
         "convergence-lag (one factor per workload) and pooled-convergence-lag (one over all) exclude each other"},
        {f.run_overhead && f.workload_run_overhead,
         "run-overhead (one shared value) and workload-run-overhead (one per workload) exclude each other"},
    };
    for (const auto& [broken, message] : rules)
        if (broken) throw InputError(message, Field::shared_parameters);
    return f;
}

std::string SharedFit::operator_only_term() const {
    for (const NamedOption& option : kOptions)
        if (option.operator_only && this->*option.member) return option.text;
    return "";
}

LossTerms SharedFit::loss_terms() const {
    return LossTerms{run_logs, robust, step_logs, eval_logs, warmup_logs, logged_eval_price};
}

SharedFit SharedFit::without_evaluation_terms() const {
    SharedFit f = *this;
    f.eval_passes = f.eval_host_ops = f.eval_launch = f.eval_cost = f.eval_step_cost = f.eval_fixed = false;
    f.eval_stage = false;
    if (staged_logged_evals) {
        f.staged_logged_evals = false;
        f.eval_logs = false;
        f.logged_eval_price = true;
    }
    return f;
}

SharedFit SharedFit::operator_defaults() {
    SharedFit f;
    f.operator_model = f.kernel_overhead = f.tp_exposed = f.step_logs = f.eval_logs = true;
    // Picked by forward CV (README, "How it models a training run"): the evaluation priced as the
    // framework's own passes with their host work, fitted in a second stage; RetinaNet's final scoring from its
    // logs; the fixed host cost beside a whole-iteration CUDA graph.
    f.eval_stage = f.eval_passes = f.eval_host_ops = f.eval_launch = f.logged_scoring = f.graph_host_overlap = true;
    // Picked by forward CV: predictions train each workload's measured lag behind the RCP mean.
    f.convergence_lag = true;
    // Picked by forward CV: a fixed step cost is searched only where the fit results can identify it.
    f.identified_host_cost = true;
    // Picked by forward CV: each workload's per-run overhead from its fit results' logs (the median
    // first-segment excess), and a speed per software stack (submitter and GPU family) pooled towards 1.
    f.logged_overhead = f.system_speed = true;
    return f;
}

std::string SharedFit::describe() const {
    std::vector<std::string_view> on_names;
    for (const auto& [text, member, operator_only] : kOptions)
        if (this->*member) on_names.push_back(text);
    return on_names.empty() ? "none" : fmt::format("{}", fmt::join(on_names, ","));
}

}  // namespace ttsim
