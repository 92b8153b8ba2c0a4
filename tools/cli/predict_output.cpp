#include "tools/cli/predict_output.hpp"

#include "models/training/layout_search.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "models/planning/results_format.hpp"
#include "models/training/pipeline_schedule.hpp"

namespace ttsim::cli {

namespace {

// The price statement of a sweep's or plan's notes (results_format.cpp), for this prediction's system.
std::string price_note(const PredictionReport& r) {
    return "cost = rented GPU-hours x price per GPU-hour: " + r.prices->describe_prices({r.cost.system}) + "; " +
           planning::kBillingRule;
}

}  // namespace

std::string format_prediction_table(const PredictionReport& report) {
    const Prediction& p = *report.prediction;
    const planning::PredictionCost& c = report.cost;
    const bool explain = report.explain;
    // One row per line of the answer, in the order a planner reads it: the time to train first. A row's text is
    // its figures; `why` (shown with --explain, and always in the JSON) says where they came from. Wrapped to
    // planning::kTextWidth columns, continuation lines under the text.
    struct Row {
        const char* label;
        std::string text, why;
    };
    std::vector<Row> rows;
    rows.push_back({"time to train",
                    fmt::format("{:.3f} min (p10 {:.3f}, p90 {:.3f})", p.ttt_minutes, p.ttt_p10_minutes,
                                p.ttt_p90_minutes),
                    report.band ? planning::describe_band(*report.band)
                                : "p10/p90: percentiles over the run-to-run spread of convergence (MLPerf's reference "
                                  "convergence points, averaged as an MLPerf score)"});
    if (report.band) {
        // The kind of extrapolation and its measured error always, not only with --explain: a band is only as
        // good as what it says it covers.
        const planning::PredictionBand& b = *report.band;
        rows.push_back({"model error",
                        !b.model ? "not quoted: " + b.not_quoted
                        : b.cell_results > 0
                            ? fmt::format("its {} fitted results' own misfit, RMS log error {:.3f} (above {}: "
                                          "{:.1f} % MAPE)",
                                          b.cell_results, b.cell_residual, describe(b.model->kind),
                                          b.model->mape_percent)
                            : fmt::format("{}: {:.1f} % MAPE over {} cross-validated predictions", describe(b.model->kind),
                                          b.model->mape_percent, b.model->results),
                        planning::describe_band(b)});
    }
    rows.push_back({"layout", describe_layout(p.layout), ""});
    if (!p.layout_choice.empty()) {   // the layout search chose it (layout_search.hpp)
        rows.push_back({"layout choice", fmt::format("{}, searched in {:.3f} s", p.layout_choice, p.layout_search_seconds), ""});
        if (p.published) {
            const Prediction::Alternative& a = *p.published;
            const bool published = a.basis == Prediction::Alternative::Basis::published;
            rows.push_back({published ? "published layout" : "Megatron layout",
                            fmt::format("{}: {:.3f} min, step {:.3f} ms, {:.3f} GB per GPU{}", describe_layout(a.layout),
                                        a.ttt_minutes, a.step_ms, a.memory_per_gpu_bytes / 1e9,
                                        a.memory_fits ? "" : " (over HBM)"),
                            a.label});
        } else {
            rows.push_back({"published layout", "none at this scale", ""});
        }
    }
    if (p.reliability) {
        const reliability::RunReliability& r = *p.reliability;
        rows.push_back({"failures",
                        fmt::format("MTTF {:.3g} h ({} rates): {:.3g} interruptions expected; checkpoint every {:.3g} "
                                    "min ({}, {:.3g} GB written in {:.3g} s); restart {:.3g} min",
                                    r.mttf_hours, r.failure_rates, r.runs.mean_interruptions,
                                    r.checkpoint_interval_minutes, r.interval_pinned ? "pinned" : "Daly's optimum",
                                    r.checkpoint_bytes / 1e9, r.checkpoint_write_seconds, r.restart_seconds / 60),
                        ""});
        rows.push_back({"with failures",
                        fmt::format("{:.3f} min expected (p10 {:.3f}, p50 {:.3f}, p90 {:.3f}); goodput {:.2f} %",
                                    r.expected_wall_minutes(), r.runs.p10_wall_seconds / 60,
                                    r.runs.p50_wall_seconds / 60, r.runs.p90_wall_seconds / 60, 100 * r.runs.goodput),
                        ""});
    }
    rows.push_back({"global batch",
                    fmt::format("{}, samples to converge {:.0f}, steps {}", p.global_batch, p.samples_to_converge, p.steps),
                    p.convergence_lag != 1.0
                        ? fmt::format("the RCP mean x {:.3f}, how much later the calibration's results converged",
                                      p.convergence_lag)
                        : ""});
    if (p.layout.pipeline_parallel > 1)
        rows.push_back({"step",
                        fmt::format("{:.3f} ms = compute {:.3f} + pipeline bubble {:.3f} ({:.1f} % of the busiest "
                                    "stage's compute) + exposed comm {:.3f} + fixed {:.3f} (gradient comm total {:.3f})",
                                    p.step_ms, p.compute_ms, p.bubble_ms, 100 * p.bubble_fraction, p.exposed_comm_ms,
                                    p.fixed_ms, p.comm_total_ms),
                        ""});
    else
        rows.push_back({"step",
                        fmt::format("{:.3f} ms = compute {:.3f} + exposed comm {:.3f} + fixed {:.3f} (gradient comm "
                                    "total {:.3f})",
                                    p.step_ms, p.compute_ms, p.exposed_comm_ms, p.fixed_ms, p.comm_total_ms),
                        ""});
    if (p.compute_model == "operator")
        rows.push_back({"compute model",
                        std::string("operator") + (p.launch_bound ? "; launch-bound: the host's kernel launches, not the "
                                                                    "GPU, set a pass's time"
                                                                  : ""),
                        "the workload's layer graph, every kernel priced by its roofline"});
    // The layout's memory is the layer graph's, whichever model priced the step.
    if (!p.memory_summary.empty())
        rows.push_back({"memory per GPU",
                        fmt::format("{:.1f} GB of {:.1f} GB: {}", p.memory_per_gpu_bytes / 1e9,
                                    p.memory_capacity_bytes / 1e9, p.memory_fits ? "fits" : "over HBM"),
                        p.memory_summary});
    if (p.tp_cp_comm_ms > 0)
        rows.push_back({"TP/CP comm",
                        fmt::format("{:.3f} ms per step, {:.3f} ms of it exposed (counted in compute)", p.tp_cp_comm_ms,
                                    p.tp_cp_exposed_ms),
                        ""});
    rows.push_back({"evaluation", fmt::format("{:.3f} min on the clock ({} evaluations)", p.eval_minutes, p.evaluations), ""});
    rows.push_back({"per-run overhead", fmt::format("{:.3f} min", p.run_overhead_minutes),
                    "once per run; time to train = steps x step + evaluation + this"});
    rows.push_back({"per-GPU throughput", fmt::format("{:.3f} samples/s", p.per_gpu_throughput), ""});
    if (p.model_flops_utilisation > 0)
        rows.push_back({"MFU",
                        fmt::format("{:.1f} % ({:.0f} TFLOP/s per GPU)", 100 * p.model_flops_utilisation,
                                    p.model_flops_per_gpu / 1e12),
                        "model FLOPs utilisation: the training FLOPs the step is priced for, each at the dense peak of "
                        "its precision"});
    if (p.efficiency_vs_8gpu)
        rows.push_back({"throughput eff.", fmt::format("{:.3f} (per-GPU samples/s against 8 GPUs)", *p.efficiency_vs_8gpu),
                        "relative to the published layout on 8 GPUs, so a searched layout may exceed 1; convergence "
                        "not included, unlike the time-to-train efficiency of `ttsim run`"});
    // The cost bills whole allocation units (a node, a GB200 NVL72 rack): say so where that is more than the job.
    const double rented_hours = c.rented_gpu_hours;
    rows.push_back({"GPU hours",
                    rented_hours > p.gpu_hours * (1 + 1e-9)
                        ? fmt::format("{:.3f} ({:.3f} rented: the whole allocation units, which the cost bills)",
                                      p.gpu_hours, rented_hours)
                        : fmt::format("{:.3f}", p.gpu_hours),
                    ""});
    // Cost and energy with the figures and units of a sweep or plan row ("cost USD", "energy kWh").
    rows.push_back({"cost",
                    fmt::format("{:.2f} {} ({:.2f} {} per GPU-hour{})", c.cost, report.prices->currency,
                                c.price_per_gpu_hour, report.prices->currency,
                                c.price_is_estimate ? ", default estimate" : ""),
                    price_note(report)});
    rows.push_back({"energy",
                    fmt::format("{:.1f} kWh (GPUs {:.1f}, nodes {:.1f}, network {:.1f}; x PUE {:.2f})",
                                c.energy.facility_kwh, c.energy.gpu_kwh, c.energy.node_kwh, c.energy.network_kwh,
                                report.energy->pue),
                    planning::describe_energy_model(*report.energy)});

    // The header states the fabric choices: a non-default routing, and SHARP either way (on by default across
    // NVLink domains, so whether it ran is not obvious from the request).
    std::string out = planning::wrap_text(
        "", 2,
        fmt::format("{} on {} x {} ({}, {}{})", p.workload, p.gpus, p.gpu, p.system, p.fabric,
                    p.layout.sharp ? ", SHARP on" : ", SHARP off"));
    constexpr std::size_t kLabelWidth = 19, kIndent = 2 + kLabelWidth;
    for (const Row& r : rows) {
        out += planning::wrap_text(fmt::format("  {:<{}}", r.label, kLabelWidth), kIndent, r.text);
        if (explain && !r.why.empty()) out += planning::wrap_text(std::string(kIndent, ' '), kIndent + 2, "(" + r.why + ")");
    }
    if (explain)
        for (const auto& d : p.defaults) out += planning::wrap_text("  default: ", 4, d);
    for (const auto& w : p.warnings) out += planning::wrap_text("  warning: ", 4, w);
    if (!explain)
        out += "  (--explain: where each default and figure comes from; the JSON carries the same)\n";
    return out;
}

std::string format_prediction_csv(const PredictionReport& report) {
    const Prediction& p = *report.prediction;
    const planning::PredictionCost& c = report.cost;
    using planning::csv_field;
    using planning::csv_number;
    std::string out =
        "workload,system,gpu,gpus,fabric,routing,tp,cp,pp,dp,micro_batch,gradient_accumulation,distributed_optimizer,"
        "sharp_used,global_batch,ttt_minutes,ttt_p10_minutes,ttt_p90_minutes,samples_to_converge,steps,step_ms,"
        "compute_ms,exposed_comm_ms,comm_total_ms,tp_cp_comm_ms,fixed_ms,eval_minutes,evaluations,"
        "run_overhead_minutes,per_gpu_throughput,throughput_efficiency_vs_8gpu,gpu_hours,price_per_gpu_hour,"
        "price_is_estimate,cost,currency,gpu_kwh,node_kwh,network_kwh,energy_kwh,warnings,memory_per_gpu_gb,"
        "memory_capacity_gb,memory_fits,layout_choice,published_layout_minutes,gradient_reduction,rented_gpu_hours,mfu,"
        "model_tflops_per_gpu," +
        std::string(planning::kReliabilityCsvColumns) + "\n";
    const ParallelismConfig& l = p.layout;
    std::string warnings;
    for (const auto& w : p.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", csv_field(p.workload), csv_field(p.system),
                       csv_field(p.gpu), p.gpus, csv_field(p.fabric), to_string(p.routing), l.tensor_parallel,
                       l.context_parallel, l.pipeline_parallel, l.data_parallel, l.samples_per_micro_batch,
                       l.gradient_accumulation, l.distributed_optimizer, l.sharp, p.global_batch);
    for (const double v : {p.ttt_minutes, p.ttt_p10_minutes, p.ttt_p90_minutes, p.samples_to_converge})
        out += csv_number(v) + ",";
    out += std::to_string(p.steps) + ",";
    for (const double v : {p.step_ms, p.compute_ms, p.exposed_comm_ms, p.comm_total_ms, p.tp_cp_comm_ms, p.fixed_ms,
                           p.eval_minutes})
        out += csv_number(v) + ",";
    out += std::to_string(p.evaluations) + ",";
    out += csv_number(p.run_overhead_minutes) + "," + csv_number(p.per_gpu_throughput) + ",";
    out += (p.efficiency_vs_8gpu ? csv_number(*p.efficiency_vs_8gpu) : "") + ",";
    out += csv_number(p.gpu_hours) + "," + csv_number(c.price_per_gpu_hour) + "," +
           (c.price_is_estimate ? "true" : "false") + "," + csv_number(c.cost) + "," +
           csv_field(report.prices->currency) + ",";
    for (const double v : {c.energy.gpu_kwh, c.energy.node_kwh, c.energy.network_kwh, c.energy.facility_kwh})
        out += csv_number(v) + ",";
    // Appended after warnings, so every earlier column keeps its place. Memory is empty where the
    // workload has no layer graph (the lumped model's memory check counts model state only).
    const bool has_memory = !p.memory_summary.empty();
    out += csv_field(warnings) + "," + (has_memory ? csv_number(p.memory_per_gpu_bytes / 1e9) : "") + "," +
           (has_memory ? csv_number(p.memory_capacity_bytes / 1e9) : "") + "," +
           (has_memory ? (p.memory_fits ? "true" : "false") : "") + "," +
           csv_field(planning::layout_choice_text(p)) + "," +
           (p.published ? csv_number(p.published->ttt_minutes) : "") + "," +
           std::string(gradient_reduction_name(l.gradient_reduction_after_backward)) + "," +
           // The whole allocation units the cost bills (a node, an NVL72 rack): appended, as the columns above.
           csv_number(c.rented_gpu_hours) + "," +
           // Model FLOPs utilisation and the FLOP/s behind it, appended likewise; empty without FLOPs.
           planning::mfu_csv_fields(p) + "," +
           // Failures and checkpoints over the run (models/reliability), appended likewise.
           planning::reliability_csv_fields(p) + "\n";
    return out;
}

std::string format_prediction_json(const PredictionReport& report) {
    const Prediction& p = *report.prediction;
    const planning::PredictionCost& c = report.cost;
    nlohmann::ordered_json j;
    // What the file is and its version, as a sweep's `schema` (docs/results-schema.md).
    j["schema"] = "ttsim.prediction/1";
    j["workload"] = p.workload;
    j["system"] = p.system;
    j["gpu"] = p.gpu;
    j["gpus"] = p.gpus;
    if (p.routing != FabricOptions{}.routing) j["routing"] = to_string(p.routing);   // only when not the default
    j["fabric"] = p.fabric;
    j["comm_topology"] = p.comm_topology;
    j["layout"] = {{"tp", p.layout.tensor_parallel}, {"cp", p.layout.context_parallel},
                   {"pp", p.layout.pipeline_parallel}, {"vp", p.layout.virtual_pipeline}, {"dp", p.layout.data_parallel},
                   {"micro_batch", p.layout.samples_per_micro_batch},
                   {"gradient_accumulation", p.layout.gradient_accumulation},
                   {"distributed_optimizer", p.layout.distributed_optimizer}, {"sharp", p.layout.sharp},
                   {"gradient_reduction", std::string(gradient_reduction_name(p.layout.gradient_reduction_after_backward))}};
    if (p.layout.pipeline_parallel > 1)   // the schedule the pipeline ran (pipeline_schedule.hpp)
        j["layout"]["schedule"] = to_string(pipe_schedule_of(p.layout.pipeline_schedule, p.layout.virtual_pipeline));
    j["ttt_minutes"] = p.ttt_minutes;
    j["ttt_p10_minutes"] = p.ttt_p10_minutes;
    j["ttt_p90_minutes"] = p.ttt_p90_minutes;
    if (const planning::PredictionBand* b = report.band) {
        // The band's terms (log-space sigmas, prediction_band.hpp) and the kind of extrapolation it carries.
        j["band"] = {{"convergence_sigma_low", b->convergence_low_sigma},
                     {"convergence_sigma_high", b->convergence_high_sigma},
                     {"parameter_sigma", b->parameter_sigma},
                     {"model_sigma", b->model_sigma},
                     {"kind", b->model ? nlohmann::ordered_json(key_of(b->model->kind)) : nlohmann::ordered_json(nullptr)},
                     {"kind_mape_percent", b->model ? nlohmann::ordered_json(b->model->mape_percent) : nlohmann::ordered_json(nullptr)},
                     {"kind_results", b->model ? nlohmann::ordered_json(b->model->results) : nlohmann::ordered_json(nullptr)},
                     {"cell_residual", b->cell_results > 0 ? nlohmann::ordered_json(b->cell_residual) : nlohmann::ordered_json(nullptr)},
                     {"cell_results", b->cell_results},
                     {"description", planning::describe_band(*b)},
                     {"model_error_not_quoted", b->not_quoted},
                     {"command", kModelErrorCommand}};
    }
    planning::add_reliability_json(j, p);   // goodput, interruptions, checkpoint interval (models/reliability)
    j["samples_to_converge"] = p.samples_to_converge;
    j["convergence_lag"] = p.convergence_lag;
    j["global_batch"] = p.global_batch;
    j["steps"] = p.steps;
    j["step_ms"] = p.step_ms;
    j["compute_ms"] = p.compute_ms;
    j["bubble_ms"] = p.bubble_ms;
    j["bubble_fraction"] = p.bubble_fraction;
    j["exposed_comm_ms"] = p.exposed_comm_ms;
    j["comm_total_ms"] = p.comm_total_ms;
    j["tp_cp_comm_ms"] = p.tp_cp_comm_ms;
    j["tp_cp_exposed_ms"] = p.tp_cp_exposed_ms;
    j["fixed_ms"] = p.fixed_ms;
    j["eval_minutes"] = p.eval_minutes;
    j["evaluations"] = p.evaluations;
    j["run_overhead_minutes"] = p.run_overhead_minutes;
    j["per_gpu_throughput"] = p.per_gpu_throughput;
    planning::add_mfu_json(j, p);   // model FLOPs utilisation (Prediction::model_flops_utilisation)
    if (!p.layout_choice.empty()) {   // what the layout search adds (only when it chose the layout)
        j["layout_choice"] = p.layout_choice;
        j["layouts_valid"] = p.layouts_enumerated;
        j["layouts_fitting"] = p.layouts_fitting;
        j["layouts_priced"] = p.layouts_priced;
        // No search wall time here: a result file is the same for the same request on any machine and load
        // (the table states it; `ttsim_bench --benchmark_filter=search_` measures it).
        if (p.published) {
            j["published"] = planning::published_alternative_json(*p.published);
        } else {
            j["published"] = nullptr;
        }
    }
    j["compute_model"] = p.compute_model;
    if (p.compute_model == "operator") j["launch_bound"] = p.launch_bound;
    if (!p.memory_summary.empty())
        j["memory_per_gpu"] = {{"bytes", p.memory_per_gpu_bytes}, {"capacity_bytes", p.memory_capacity_bytes},
                               {"fits", p.memory_fits}, {"summary", p.memory_summary}};
    // Throughput efficiency (per-GPU samples/s relative to 8 GPUs), not the time-to-train efficiency of
    // `ttsim run` (speedup / GPU ratio, which includes convergence): named so the two are never confused.
    j["throughput_efficiency_vs_8gpu"] = p.efficiency_vs_8gpu ? nlohmann::ordered_json(*p.efficiency_vs_8gpu) : nullptr;
    j["gpu_hours"] = p.gpu_hours;
    j["rented_gpu_hours"] = c.rented_gpu_hours;   // the whole allocation units the cost bills
    // The same objects as a sweep point's (docs/results-schema.md).
    j["cost"] = {{"amount", c.cost}, {"currency", report.prices->currency},
                 {"price_per_gpu_hour", c.price_per_gpu_hour}, {"price_is_estimate", c.price_is_estimate}};
    j["energy_kwh"] = {{"gpu", c.energy.gpu_kwh}, {"nodes", c.energy.node_kwh}, {"network", c.energy.network_kwh},
                       {"it", c.energy.it_kwh}, {"total", c.energy.facility_kwh}};
    j["models"] = {{"cost", price_note(report)}, {"energy", planning::describe_energy_model(*report.energy)}};
    j["compute_only_bound_minutes"] = p.compute_only_bound_minutes;
    j["defaults"] = p.defaults;
    j["warnings"] = p.warnings;
    return j.dump(2) + "\n";
}

}  // namespace ttsim::cli
