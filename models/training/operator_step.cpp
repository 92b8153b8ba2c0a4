#include "models/training/operator_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/training/pipeline_schedule.hpp"
#include "models/workloads/layers/layer_workload.hpp"
#include "sim/errors.hpp"

namespace ttsim {

namespace {

std::uint8_t kind_class(layers::KernelKind kind) {
    switch (kind) {
        case layers::KernelKind::gemm: return 0;
        case layers::KernelKind::conv: return 1;
        case layers::KernelKind::attention: return 2;
        default: return 3;
    }
}

// The launch mode a layout or evaluation names ("none", "per_layer", ...), or `fallback` where it names none.
layers::CudaGraphs cuda_graphs_named(const std::string& name, layers::CudaGraphs fallback) {
    for (const auto mode : {layers::CudaGraphs::none, layers::CudaGraphs::per_layer, layers::CudaGraphs::segmented,
                            layers::CudaGraphs::full_iteration})
        if (name == layers::to_string(mode)) return mode;
    return fallback;
}

// Efficiency 1 everywhere: the table stores the two roofs before any efficiency divides them.
const layers::Efficiency& unit_efficiency() {
    static const layers::Efficiency unit = [] {
        layers::Efficiency e;
        e.gemm = e.conv = e.attention = e.memory = 1.0;
        return e;
    }();
    return unit;
}

// The reference GPU where `gpu` is another part of its vendor (the same kernel libraries) at least as fast on
// every roof the kernels are priced on (BF16 and FP8 peaks, HBM bandwidth, SMs); else null. On such a part no
// kernel may take longer than on the reference, whatever the family's fitted speed says: an H200 is an H100 die
// with more, faster HBM, and its fitted speed (0.82 in the shipped fit), which makes up for the HBM gain the
// roofline expects at the fitted memory efficiency, would otherwise slow its compute-bound GEMMs below an H100's
// (Llama2-70B LoRA at 64 GPUs came out 4 % slower on H200).
const GpuSpec* reference_floor(const GpuSpec& gpu) {
    const GpuSpec& ref = reference_gpu();
    if (gpu.name == ref.name || gpu.vendor != ref.vendor) return nullptr;
    const bool fp8_ok = !ref.fp8_dense_flops || (gpu.fp8_dense_flops && *gpu.fp8_dense_flops >= *ref.fp8_dense_flops);
    const bool sms_ok = !ref.sms || (gpu.sms && *gpu.sms >= *ref.sms);
    return gpu.bf16_dense_flops >= ref.bf16_dense_flops && fp8_ok && gpu.hbm_bandwidth >= ref.hbm_bandwidth && sms_ok
               ? &ref
               : nullptr;
}

std::vector<KernelPrice> price_list(const std::vector<layers::Kernel>& kernels, const GpuSpec& gpu) {
    std::vector<KernelPrice> out;
    out.reserve(kernels.size());
    const GpuSpec* floor = reference_floor(gpu);
    for (const layers::Kernel& k : kernels) {
        const layers::KernelTime t = layers::kernel_time(k, gpu, unit_efficiency());
        KernelPrice price{kind_class(k.kind), t.compute_seconds, t.memory_seconds};
        if (floor) {
            const layers::KernelTime r = layers::kernel_time(k, *floor, unit_efficiency());
            price.reference_compute_seconds = r.compute_seconds;
            price.reference_memory_seconds = r.memory_seconds;
        }
        out.push_back(price);
    }
    return out;
}

// Whether two kernels price the same (kernel_time reads only these), so a repeated block's kernels are priced
// once: an 80-layer decoder's blocks are identical, and a layout search builds hundreds of tables.
bool prices_alike(const layers::Kernel& a, const layers::Kernel& b) {
    auto same_gemm = [](const std::optional<layers::GemmShape>& x, const std::optional<layers::GemmShape>& y) {
        return x.has_value() == y.has_value() &&
               (!x || (x->m == y->m && x->n == y->n && x->k == y->k && x->batch == y->batch));
    };
    auto same_attention = [](const std::optional<layers::AttentionShape>& x,
                             const std::optional<layers::AttentionShape>& y) {
        return x.has_value() == y.has_value() &&
               (!x || (x->batch_heads == y->batch_heads && x->q_len == y->q_len && x->kv_len == y->kv_len &&
                       x->head_dim == y->head_dim && x->causal == y->causal));
    };
    return a.kind == b.kind && a.precision == b.precision && a.flops == b.flops && a.bytes == b.bytes &&
           a.conv.has_value() == b.conv.has_value() && same_gemm(a.gemm, b.gemm) && same_attention(a.attention, b.attention);
}
bool prices_alike(const std::vector<layers::Kernel>& a, const std::vector<layers::Kernel>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!prices_alike(a[i], b[i])) return false;
    return true;
}

// A kernel's compute roof over its class's efficiency, and its memory roof over the memory efficiency.
double class_efficiency(const KernelPrice& k, const layers::Efficiency& e) {
    const double by_class[4] = {e.gemm, e.conv, e.attention, 1.0};
    return by_class[k.kind_class];
}
double compute_roof(const KernelPrice& k, const layers::Efficiency& e) { return k.compute_seconds / class_efficiency(k, e); }
// Classes 0-2 (GEMM, convolution, attention) run on tensor cores; 3 only streams (kind_class above).
bool tensor_core(const KernelPrice& k) { return k.kind_class < 3; }
double memory_efficiency(const KernelPrice& k, const layers::Efficiency& e) {
    return layers::memory_efficiency(tensor_core(k), e);
}
double memory_roof(const KernelPrice& k, const layers::Efficiency& e) { return k.memory_seconds / memory_efficiency(k, e); }

// The longer of the two, or their blend (Efficiency::roof_exponent).
double roof_seconds(const KernelPrice& k, const layers::Efficiency& e) {
    return layers::combined_roofs(compute_roof(k, e), memory_roof(k, e), e.roof_exponent);
}

// The roof over the GPU family's `speed`, never above the reference GPU's roof where the part is at least the
// reference on every roof (KernelPrice::reference_*; reference_floor), and never below the kernel's bare roofline
// (every efficiency 1: the datasheet's peaks) once the stack's offset `stack_speed` divides it: the offsets scale
// the fraction of its roofs a kernel reaches, which no kernel passes (a family or a submitter fitted faster than
// the reference on GEMMs, with convolutions already at their roof there, leaves the convolutions at the roof). At
// roof_exponent 0 this is each roof's efficiency x the offsets held at 1.
double roof_before_cap(const KernelPrice& k, const layers::Efficiency& e, double speed) {
    const double seconds = roof_seconds(k, e) / speed;
    if (k.reference_compute_seconds < 0) return seconds;
    return std::min(seconds, layers::combined_roofs(k.reference_compute_seconds / class_efficiency(k, e),
                                                    k.reference_memory_seconds / memory_efficiency(k, e),
                                                    e.roof_exponent));
}
double bare_roof(const KernelPrice& k, const layers::Efficiency& e) {
    return layers::combined_roofs(k.compute_seconds, k.memory_seconds, e.roof_exponent);
}
double roof_over_speed(const KernelPrice& k, const layers::Efficiency& e, double speed, double stack_speed) {
    return std::max(roof_before_cap(k, e, speed), stack_speed * bare_roof(k, e));
}

// The kernels' roofs in kernel order over `speed` (a GPU family's or a stack's offset against its roofline), plus
// their per-kernel overheads, which the offset does not scale: the overhead is a fixed GPU cost per kernel (launch
// latency, ramp-up, tail), the same on GPUs of one die (H100 and H200), while an offset fitted where the roofs
// misjudge a family (H200's HBM at the fitted memory efficiency) would otherwise stretch it too, making H200
// slower than H100 wherever the overheads dominate (small per-GPU batches).
// A software stack's offset (`stack_speed`: the fitted per-stack speed, --like) divides the whole, overheads
// included: a slower cluster or software release (clocks under a power cap, older libraries) slows both.
double pass_kernel_sum(const std::vector<KernelPrice>& kernels, const layers::Efficiency& e, double speed,
                       double stack_speed, double* uncapped_up_to = nullptr);
double pass_seconds(const std::vector<KernelPrice>& kernels, const layers::Efficiency& e, double speed,
                    double stack_speed) {
    return pass_kernel_sum(kernels, e, speed, stack_speed) / stack_speed;
}

// pass_seconds before the stack's offset divides it (LayerKernelSums). `uncapped_up_to`, where given, receives the
// largest stack offset at which no kernel of the pass reaches its roof (roof_over_speed), rounded down by a part in
// 10^12 so that an offset at or below it gives the same sum to the bit.
double pass_kernel_sum(const std::vector<KernelPrice>& kernels, const layers::Efficiency& e, double speed,
                       double stack_speed, double* uncapped_up_to) {
    // The overheads first, then each roof (the order every fit so far was computed in: at speed 1 the sum is the
    // same to the bit, and the operator fits are sensitive to the last bits).
    double sum = e.kernel_overhead_seconds * static_cast<double>(kernels.size());
    if (e.streaming_overhead_seconds > 0) {   // class-overhead: the streaming kernels' own overhead
        std::size_t streaming = 0;
        for (const KernelPrice& k : kernels) streaming += tensor_core(k) ? 0 : 1;
        sum = e.kernel_overhead_seconds * static_cast<double>(kernels.size() - streaming) +
              e.streaming_overhead_seconds * static_cast<double>(streaming);
    }
    for (const KernelPrice& k : kernels) sum += roof_over_speed(k, e, speed, stack_speed);
    if (uncapped_up_to) {
        *uncapped_up_to = std::numeric_limits<double>::infinity();
        for (const KernelPrice& k : kernels)
            if (const double bare = bare_roof(k, e); bare > 0)
                *uncapped_up_to = std::min(*uncapped_up_to, roof_before_cap(k, e, speed) / bare * (1 - 1e-12));
    }
    return sum;
}

// Layer i's pass: its shared sum (LayerKernelSums) over the stack's offset where one is given and holds at that
// offset, else priced kernel by kernel; the same to the bit either way.
double layer_pass_seconds(const std::vector<KernelPrice>& kernels, const layers::Efficiency& e, double speed,
                          double stack_speed, const std::vector<double>* sums, const std::vector<double>* up_to,
                          std::size_t i) {
    return sums && stack_speed <= (*up_to)[i] ? (*sums)[i] / stack_speed : pass_seconds(kernels, e, speed, stack_speed);
}

}  // namespace

double kernel_gpu_seconds(const KernelPrice& k, const layers::Efficiency& e) {
    return roof_seconds(k, e) + layers::kernel_overhead(tensor_core(k), e);
}

bool compute_bound(const KernelPrice& k, const layers::Efficiency& e) { return compute_roof(k, e) >= memory_roof(k, e); }

double memory_bound_share(const OperatorTable& table, const layers::Efficiency& e, double speed) {
    double memory_bound = 0, total = 0;
    for (const LayerPrices& layer : table.layers)
        for (const auto* list : {&layer.forward, &layer.backward})
            for (const KernelPrice& k : *list) {
                const double seconds = roof_over_speed(k, e, speed, 1.0);
                total += seconds;
                if (!compute_bound(k, e)) memory_bound += seconds;
            }
    return total > 0 ? memory_bound / total : 0.0;
}

LayerKernelSums layer_kernel_sums(const std::vector<LayerPrices>& layers, const layers::Efficiency& e, double speed) {
    LayerKernelSums sums;
    for (auto* v : {&sums.forward, &sums.backward, &sums.forward_up_to, &sums.backward_up_to}) v->resize(layers.size());
    // Offset 0: every kernel at its roof before the cap (pass_kernel_sum), valid up to the offset it reports.
    auto sum = [&](std::size_t i, bool as_previous, const std::vector<KernelPrice>& kernels, std::vector<double>& out,
                   std::vector<double>& up_to) {
        if (as_previous) {
            out[i] = out[i - 1];
            up_to[i] = up_to[i - 1];
        } else {
            out[i] = pass_kernel_sum(kernels, e, speed, 0.0, &up_to[i]);
        }
    };
    for (std::size_t i = 0; i < layers.size(); ++i) {
        sum(i, layers[i].forward_as_previous, layers[i].forward, sums.forward, sums.forward_up_to);
        sum(i, layers[i].backward_as_previous, layers[i].backward, sums.backward, sums.backward_up_to);
    }
    return sums;
}

bool same_kernel_prices(const std::vector<LayerPrices>& a, const std::vector<LayerPrices>& b) {
    auto same = [](const std::vector<KernelPrice>& x, const std::vector<KernelPrice>& y) {
        if (x.size() != y.size()) return false;
        for (std::size_t k = 0; k < x.size(); ++k)
            if (x[k].kind_class != y[k].kind_class || x[k].compute_seconds != y[k].compute_seconds ||
                x[k].memory_seconds != y[k].memory_seconds ||
                x[k].reference_compute_seconds != y[k].reference_compute_seconds ||
                x[k].reference_memory_seconds != y[k].reference_memory_seconds)
                return false;
        return true;
    };
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].forward_as_previous != b[i].forward_as_previous ||
            a[i].backward_as_previous != b[i].backward_as_previous || !same(a[i].forward, b[i].forward) ||
            !same(a[i].backward, b[i].backward))
            return false;
    return true;
}

namespace {

layers::MemoryLayout memory_layout_of(const ParallelismConfig& layout, int graph_micro) {
    layers::MemoryLayout m;
    m.tensor_parallel = layout.tensor_parallel;
    m.context_parallel = layout.context_parallel;
    m.pipeline_parallel = layout.pipeline_parallel;
    m.virtual_pipeline = layout.virtual_pipeline;
    m.micro_batches = layout.gradient_accumulation;
    m.all_micro_batches_in_flight =
        layout.pipeline_parallel > 1 &&
        pipe_schedule_of(layout.pipeline_schedule, layout.virtual_pipeline) == PipeScheduleKind::gpipe;
    if (!layout.recompute.empty()) {
        m.recompute_override = true;
        m.recompute = layout.recompute == "full" ? layers::Recompute::full : layers::Recompute::none;
    }
    m.data_parallel = layout.data_parallel;
    m.micro_batch = graph_micro;
    m.samples_per_micro_batch = layout.samples_per_micro_batch;
    m.sequence_parallel = layout.sequence_parallel && layout.tensor_parallel > 1;
    m.distributed_optimizer = layout.distributed_optimizer;
    return m;
}

// The layer graph's build options for this layout at `graph_micro` rows: its shape, and the facts of its submission
// that differ from the workload description's (precision, a masked-LM head on every token).
layers::BuildOptions graph_options(const ParallelismConfig& layout, int graph_micro) {
    layers::BuildOptions o = layers::build_options(memory_layout_of(layout, graph_micro));
    if (!layout.precision.empty()) o.precision = layers::math_precision_named(layout.precision);
    o.head_on_all_tokens = layout.head_on_all_tokens;
    if (!layout.attention_precision.empty()) o.attention_precision = layers::math_precision_named(layout.attention_precision);
    return o;
}

// A micro batch of packed rows: a partly filled row costs a whole one.
int graph_micro_batch(const LayerModelRef& ref, const ParallelismConfig& layout) {
    return std::max(1, static_cast<int>(std::ceil(layout.samples_per_micro_batch / ref.samples_per_graph_sample - 1e-9)));
}

}  // namespace

ConfigNode layer_description(const Workload& workload) {
    TTSIM_ASSERT(workload.layer_model.has_value(), "workload " + workload.name + " has no layer graph");
    const LayerModelRef& ref = *workload.layer_model;
    return ref.description_yaml.empty() ? layers::load_shipped_layer_description(ref.file)
                                        : ConfigNode::load_string(ref.description_yaml, ref.source);
}

layers::BuildOptions layout_graph_options(const Workload& workload, const ParallelismConfig& layout) {
    TTSIM_ASSERT(workload.layer_model.has_value(), "workload " + workload.name + " has no layer graph");
    return graph_options(layout, graph_micro_batch(*workload.layer_model, layout));
}

layers::LayerGraph build_layout_graph(const Workload& workload, const ConfigNode& description,
                                      const ParallelismConfig& layout) {
    return layers::build_layer_graph(description, workload.layer_model->file, layout_graph_options(workload, layout));
}

std::shared_ptr<const OperatorTable> build_operator_table(const Workload& workload, const GpuSpec& gpu,
                                                          const ParallelismConfig& layout, int optimizer_shards,
                                                          const layers::MemoryAssumptions& memory) {
    return build_operator_table(workload, build_layout_graph(workload, layer_description(workload), layout), gpu, layout,
                                optimizer_shards, memory);
}

layers::MemoryAssumptions memory_assumptions_of(const System& system) {
    layers::MemoryAssumptions memory;
    if (system.memory_reserve_bytes) memory.reserve_bytes = *system.memory_reserve_bytes;
    return memory;
}

layers::MemoryEstimate layout_memory(const Workload& workload, const layers::LayerGraph& graph, const GpuSpec& gpu,
                                     const ParallelismConfig& layout, const layers::MemoryAssumptions& memory) {
    layers::MemoryAssumptions with_gradients = memory;
    with_gradients.grad_bytes = workload.gradient_element_bytes();
    return layers::memory_per_gpu(graph, memory_layout_of(layout, graph_micro_batch(*workload.layer_model, layout)), gpu,
                                  with_gradients);
}

std::shared_ptr<const OperatorTable> table_with_layout_memory(const OperatorTable& table, const Workload& workload,
                                                              const layers::LayerGraph& graph, const GpuSpec& gpu,
                                                              const ParallelismConfig& layout,
                                                              const layers::MemoryAssumptions& memory) {
    auto copy = std::make_shared<OperatorTable>(table);
    copy->memory = layout_memory(workload, graph, gpu, layout, memory);
    return copy;
}

std::shared_ptr<const OperatorTable> build_operator_table(const Workload& workload, const layers::LayerGraph& graph,
                                                          const GpuSpec& gpu, const ParallelismConfig& layout,
                                                          int optimizer_shards, const layers::MemoryAssumptions& memory) {
    TTSIM_ASSERT(workload.layer_model.has_value(), "workload " + workload.name + " has no layer graph");
    const LayerModelRef& ref = *workload.layer_model;
    auto table = std::make_shared<OperatorTable>();
    table->graph = ref.file;
    table->samples_per_graph_sample = ref.samples_per_graph_sample;
    const int graph_micro = graph_micro_batch(ref, layout);
    table->graph_micro_batch = graph_micro;
    table->cuda_graphs = cuda_graphs_named(layout.cuda_graphs, graph.facts.cuda_graphs);
    // Gradients as the workload keeps and reduces them (Workload::gradient_dtype): held per GPU and sent by DP.
    const double gradient_element_bytes = workload.gradient_element_bytes();
    table->memory = layout_memory(workload, graph, gpu, layout, memory);

    const GpuSpec* floor = reference_floor(gpu);   // once per table: the optimizer's update is bounded the same way
    const layers::Layer* previous = nullptr;
    for (const layers::Layer& layer : graph.layers) {
        LayerPrices prices;
        prices.name = layer.name;
        prices.block = layer.role == layers::LayerRole::block;
        const LayerPrices* repeated = previous ? &table->layers.back() : nullptr;   // the previous layer's prices
        prices.forward_as_previous = repeated && prices_alike(layer.forward, previous->forward);
        prices.backward_as_previous = repeated && prices_alike(layer.backward, previous->backward);
        prices.forward = prices.forward_as_previous ? repeated->forward : price_list(layer.forward, gpu);
        prices.backward = prices.backward_as_previous ? repeated->backward : price_list(layer.backward, gpu);
        previous = &layer;
        prices.gradient_bytes = gradient_element_bytes * static_cast<double>(layer.local_trainable);
        table->kernels_per_micro_step += layer.forward.size() + layer.backward.size();
        for (const std::vector<layers::Kernel>* pass : {&layer.forward, &layer.backward})
            for (const layers::Kernel& k : *pass)
                if (k.pass != layers::Pass::recompute && k.flops > 0) {
                    table->model_flops_per_micro_step += k.flops;
                    table->model_flops_peak_seconds_per_micro_step += k.flops / layers::peak(k, gpu);
                }
        if (auto k = layers::optimizer_kernel(layer, optimizer_shards)) {
            table->optimizer_memory_seconds += layers::kernel_time(*k, gpu, unit_efficiency()).memory_seconds;
            if (floor)
                table->optimizer_reference_memory_seconds += layers::kernel_time(*k, *floor, unit_efficiency()).memory_seconds;
            ++table->optimizer_kernels;
        }
        table->layers.push_back(std::move(prices));
    }
    return table;
}

OperatorStepTimes price_operator_step(const OperatorTable& table, const layers::Efficiency& e, double speed,
                                      double host_seconds_per_pass, double stack_speed, const LayerKernelSums* sums) {
    TTSIM_ASSERT(speed > 0 && stack_speed > 0, "operator speed offsets must be positive");
    TTSIM_ASSERT(!sums || (sums->forward.size() == table.layers.size() && sums->backward.size() == table.layers.size()),
                 "kernel sums of another table");
    OperatorStepTimes t;
    std::size_t eager_forward = 0, eager_backward = 0, graphs_per_pass = 0;
    std::vector<double>& backward_layer = t.backward_layer_gpu_seconds;
    backward_layer.resize(table.layers.size());
    t.forward_layer_gpu_seconds.resize(table.layers.size());
    for (std::size_t i = 0; i < table.layers.size(); ++i) {
        const LayerPrices& layer = table.layers[i];
        t.forward_layer_gpu_seconds[i] = layer.forward_as_previous ? t.forward_layer_gpu_seconds[i - 1]
                                         : layer_pass_seconds(layer.forward, e, speed, stack_speed,
                                                              sums ? &sums->forward : nullptr,
                                                              sums ? &sums->forward_up_to : nullptr, i);
        t.forward_gpu_seconds += t.forward_layer_gpu_seconds[i];
        backward_layer[i] = layer.backward_as_previous ? backward_layer[i - 1]
                            : layer_pass_seconds(layer.backward, e, speed, stack_speed,
                                                 sums ? &sums->backward : nullptr,
                                                 sums ? &sums->backward_up_to : nullptr, i);
        t.backward_gpu_seconds += backward_layer[i];
        switch (table.cuda_graphs) {
            case layers::CudaGraphs::none:
                eager_forward += layer.forward.size();
                eager_backward += layer.backward.size();
                break;
            case layers::CudaGraphs::per_layer:   // each block's passes replayed, the rest eager
                if (layer.block) {
                    ++graphs_per_pass;
                } else {
                    eager_forward += layer.forward.size();
                    eager_backward += layer.backward.size();
                }
                break;
            default: break;
        }
    }
    if (table.cuda_graphs == layers::CudaGraphs::segmented) graphs_per_pass = 1;
    const double host_forward =
        eager_forward * e.launch_seconds + graphs_per_pass * e.graph_launch_seconds + host_seconds_per_pass;
    const double host_backward =
        eager_backward * e.launch_seconds + graphs_per_pass * e.graph_launch_seconds + host_seconds_per_pass;
    t.host_seconds_per_micro_step = host_forward + host_backward;
    // The host runs ahead of the GPU within a pass, so a pass takes the longer of its kernels and its launches.
    t.forward_seconds = std::max(t.forward_gpu_seconds, host_forward);
    t.backward_seconds = std::max(t.backward_gpu_seconds, host_backward);
    t.launch_bound = host_forward > t.forward_gpu_seconds || host_backward > t.backward_gpu_seconds;

    // Never above the reference GPU's time where the part is at least it (reference_floor).
    double optimizer_memory = table.optimizer_memory_seconds / e.memory / speed;
    if (table.optimizer_reference_memory_seconds > 0)
        optimizer_memory = std::min(optimizer_memory, table.optimizer_reference_memory_seconds / e.memory);
    // Never below the bare HBM roof once the stack's offset divides it (roof_over_speed).
    optimizer_memory = std::max(optimizer_memory, stack_speed * table.optimizer_memory_seconds);
    // The optimizer's update kernels stream (no tensor-core work).
    const double optimizer_gpu = (optimizer_memory + table.optimizer_kernels * layers::kernel_overhead(false, e)) /
                                 stack_speed;   // at speed 1 the same to the bit as the earlier (memory + overheads) / speed
    const bool whole_step_graph = table.cuda_graphs == layers::CudaGraphs::full_iteration;
    const double optimizer_host = whole_step_graph ? 0.0 : table.optimizer_kernels * e.launch_seconds;
    t.optimizer_seconds = std::max(optimizer_gpu, optimizer_host);
    t.graph_launch_seconds = whole_step_graph ? e.graph_launch_seconds : 0.0;

    // Backward runs the layers last to first; a layer's gradients are ready when its backward ends.
    double done = 0;
    t.gradient_ready_fraction.reserve(table.layers.size());
    t.gradient_bytes.reserve(table.layers.size());
    for (std::size_t i = table.layers.size(); i-- > 0;) {
        done += backward_layer[i];
        t.gradient_ready_fraction.push_back(t.backward_gpu_seconds > 0 ? done / t.backward_gpu_seconds : 1.0);
        t.gradient_bytes.push_back(table.layers[i].gradient_bytes);
    }
    return t;
}

namespace {

// The evaluation's samples per graph row: the layout's, else the workload's, else the training rows'.
double eval_samples_per_row(const Workload& workload, const ParallelismConfig& layout) {
    if (layout.eval_samples_per_graph_sample > 0) return layout.eval_samples_per_graph_sample;
    if (workload.evaluation) return workload.evaluation->samples_per_graph_sample;
    return workload.layer_model->samples_per_graph_sample;
}

}  // namespace

double eval_samples_per_rank(const Workload& workload, const ParallelismConfig& layout) {
    return std::ceil(static_cast<double>(workload.eval_samples) / layout.data_parallel);
}

double eval_samples_per_pass(const Workload& workload, const ParallelismConfig& layout, double samples_per_rank) {
    const int batch = layout.eval_batch != 0 ? layout.eval_batch
                      : workload.evaluation  ? workload.evaluation->batch
                                             : layout.samples_per_micro_batch;
    const double share = std::max(1.0, samples_per_rank);
    return batch == EvalPasses::kWholeShard ? share : std::min<double>(batch, share);
}

double eval_steps_per_evaluation(const Workload& workload, const ParallelismConfig& layout, double samples_per_rank) {
    const double share = std::max(1.0, samples_per_rank);
    const bool global_batch = workload.evaluation && workload.evaluation->step == EvalPasses::Step::global_batch;
    const double per_step =
        global_batch ? std::max(1.0, static_cast<double>(layout.global_batch) / layout.data_parallel)
                     : eval_samples_per_pass(workload, layout, samples_per_rank);
    return std::ceil(share / per_step - 1e-9);
}

int eval_rows_per_pass(const Workload& workload, const ParallelismConfig& layout, double samples_per_rank) {
    return std::max(1, static_cast<int>(std::ceil(eval_samples_per_pass(workload, layout, samples_per_rank) /
                                                      eval_samples_per_row(workload, layout) - 1e-9)));
}

std::shared_ptr<const EvalTable> build_eval_table(const Workload& workload, const ConfigNode& description,
                                                  const GpuSpec& gpu, const ParallelismConfig& layout,
                                                  double samples_per_rank, const OperatorTable& training) {
    TTSIM_ASSERT(workload.layer_model.has_value(), "workload " + workload.name + " has no layer graph");
    auto table = std::make_shared<EvalTable>();
    table->samples_per_pass = eval_samples_per_pass(workload, layout, samples_per_rank);
    const int rows = eval_rows_per_pass(workload, layout, samples_per_rank);
    table->rows_per_pass = rows;
    const std::string& mode = !layout.eval_cuda_graphs.empty() ? layout.eval_cuda_graphs
                              : workload.evaluation          ? workload.evaluation->cuda_graphs
                                                             : std::string{};
    table->cuda_graphs = cuda_graphs_named(mode, training.cuda_graphs);
    table->host_kernels_per_pass =
        workload.evaluation ? workload.evaluation->host_kernels_per_sample * table->samples_per_pass : 0.0;
    table->pad_last_batch = workload.evaluation ? workload.evaluation->pad_last_batch : true;
    if (rows == static_cast<int>(training.graph_micro_batch)) {
        for (const LayerPrices& layer : training.layers)
            table->layers.push_back({layer.name, layer.block, layer.forward, {}, 0, layer.forward_as_previous, false});
        return table;
    }
    const layers::LayerGraph graph =
        layers::build_layer_graph(description, workload.layer_model->file, graph_options(layout, rows));
    const layers::Layer* previous = nullptr;
    for (const layers::Layer& layer : graph.layers) {
        const bool as_previous = previous && prices_alike(layer.forward, previous->forward);
        table->layers.push_back({layer.name, layer.role == layers::LayerRole::block,
                                 as_previous ? table->layers.back().forward : price_list(layer.forward, gpu), {}, 0,
                                 as_previous, false});
        previous = &layer;
    }
    return table;
}

double eval_pass_seconds(const EvalTable& table, const layers::Efficiency& e, double speed, double fill,
                         double stack_speed, double fitted_host_kernels_per_pass, const LayerKernelSums* sums) {
    TTSIM_ASSERT(speed > 0 && stack_speed > 0, "operator speed offsets must be positive");
    TTSIM_ASSERT(!sums || sums->forward.size() == table.layers.size(), "kernel sums of another table");
    double gpu = 0, layer_gpu = 0;
    std::size_t eager = 0, graphs = 0;
    for (std::size_t i = 0; i < table.layers.size(); ++i) {
        const LayerPrices& layer = table.layers[i];
        if (!layer.forward_as_previous)
            layer_gpu = layer_pass_seconds(layer.forward, e, speed, stack_speed, sums ? &sums->forward : nullptr,
                                           sums ? &sums->forward_up_to : nullptr, i);
        gpu += layer_gpu;
        if (table.cuda_graphs == layers::CudaGraphs::none ||
            (table.cuda_graphs == layers::CudaGraphs::per_layer && !layer.block))
            eager += layer.forward.size();
        else if (table.cuda_graphs == layers::CudaGraphs::per_layer)
            ++graphs;
    }
    if (table.cuda_graphs == layers::CudaGraphs::segmented || table.cuda_graphs == layers::CudaGraphs::full_iteration)
        graphs = 1;
    const double launch = e.eval_launch_seconds > 0 ? e.eval_launch_seconds : e.launch_seconds;
    const double host = (static_cast<double>(eager) + fill * (table.host_kernels_per_pass + fitted_host_kernels_per_pass)) * launch +
                        static_cast<double>(graphs) * e.graph_launch_seconds;
    return std::max(fill * gpu, host);
}

double operator_eval_seconds(const EvalTable& table, const layers::Efficiency& e, double speed, double samples_per_rank,
                             double exposed_fraction, double tp_cp_seconds_per_micro_step, double training_rows,
                             double stack_speed, double fitted_host_kernels_per_sample, const LayerKernelSums* sums) {
    const double fitted_per_pass = fitted_host_kernels_per_sample * table.samples_per_pass;
    const double whole = std::floor(samples_per_rank / table.samples_per_pass + 1e-9);
    const double rest = std::max(0.0, samples_per_rank - whole * table.samples_per_pass) / table.samples_per_pass;
    const double tp_cp_per_pass = 0.5 * exposed_fraction * tp_cp_seconds_per_micro_step * table.rows_per_pass / training_rows;
    double seconds =
        whole * (eval_pass_seconds(table, e, speed, 1.0, stack_speed, fitted_per_pass, sums) + tp_cp_per_pass);
    if (rest > 1e-9) {
        const double fill = table.pad_last_batch ? 1.0 : rest;
        seconds += eval_pass_seconds(table, e, speed, fill, stack_speed, fitted_per_pass, sums) + fill * tp_cp_per_pass;
    }
    return seconds;
}

double operator_eval_seconds_at_training_batch(const OperatorTable& table, const OperatorStepTimes& step,
                                               double samples_per_rank, double exposed_fraction,
                                               double tp_cp_seconds_per_micro_step) {
    const double samples_per_micro_step = table.graph_micro_batch * table.samples_per_graph_sample;
    const double passes = samples_per_rank / samples_per_micro_step;
    return step.forward_seconds * samples_per_rank / samples_per_micro_step +
           passes * 0.5 * exposed_fraction * tp_cp_seconds_per_micro_step;
}

std::vector<std::size_t> bucket_completing_layers(const OperatorStepTimes& step, std::size_t buckets) {
    const std::size_t none = step.gradient_ready_fraction.size();
    std::vector<std::size_t> layers(buckets, none);
    double total = 0;
    for (double b : step.gradient_bytes) total += b;
    if (buckets == 0 || total <= 0) return layers;
    std::size_t layer = 0;
    double filled = 0;
    for (std::size_t b = 0; b + 1 < buckets; ++b) {
        const double target = total * static_cast<double>(b + 1) / static_cast<double>(buckets);
        while (layer < step.gradient_bytes.size() && filled + step.gradient_bytes[layer] < target) filled += step.gradient_bytes[layer++];
        layers[b] = std::min(layer, none);
    }
    return layers;
}

std::vector<double> bucket_ready_fractions(const OperatorStepTimes& step, std::size_t buckets) {
    std::vector<double> ready;
    ready.reserve(buckets);
    for (std::size_t layer : bucket_completing_layers(step, buckets))
        ready.push_back(layer < step.gradient_ready_fraction.size() ? step.gradient_ready_fraction[layer] : 1.0);
    return ready;
}

}  // namespace ttsim
