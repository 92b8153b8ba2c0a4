// The single-stage detector family (RetinaNet as torchvision builds it; models/data/models/retinanet.yaml):
// a ResNeXt bottleneck backbone (stem conv + max-pool, stages of 1x1 -> grouped 3x3 (stride here) -> 1x1
// blocks with a projection shortcut in each stage's first block), an FPN over the last stages' outputs
// (1x1 laterals, top-down nearest upsample + add, 3x3 outputs, two extra stride-2 levels on the top output),
// and classification / box-regression heads (a tower of 3x3 convs + ReLU and a 3x3 predictor) whose weights
// are shared across the pyramid levels. Frozen batch norm is folded into the convolutions (NVIDIA's
// --frozen-bn-opt) and ReLU into their epilogues, so neither has kernels. Data parallel only.
#include <vector>

#include "models/workloads/layers/families.hpp"
#include "models/workloads/layers/graph_builder.hpp"

namespace ttsim::layers {
namespace {

std::int64_t conv_out(std::int64_t h, std::int64_t kernel, std::int64_t stride) {
    return (h + 2 * (kernel / 2) - kernel) / stride + 1;   // "same" padding, as torchvision pads
}

ConvShape shape(std::int64_t n, std::int64_t c_in, std::int64_t c_out, std::int64_t h, std::int64_t kernel,
                std::int64_t stride, std::int64_t groups = 1) {
    const std::int64_t o = conv_out(h, kernel, stride);
    return ConvShape{n, c_in, c_out, h, h, o, o, kernel, stride, groups};
}

Layer& open(LayerGraph& g, const std::string& name, LayerRole role, double input_elements) {
    Layer l;
    l.name = name;
    l.role = role;
    l.input_bytes = input_elements * g.facts.activation_bytes;
    g.layers.push_back(std::move(l));
    return g.layers.back();
}

}  // namespace

void build_conv_detector(const ConfigNode& a, LayerGraph& g) {
    a.check_keys({"image_size", "image_channels", "stem_channels", "stem_kernel", "stage_blocks", "stage_widths",
                  "stage_outputs", "groups", "trainable_stages", "fpn_stages", "fpn_channels", "extra_levels",
                  "head_convs", "anchors", "classes", "box_coordinates"});
    require_data_parallel_only(g, a);
    const std::int64_t n = g.options.micro_batch;
    const std::int64_t groups = count_param(a, "groups");
    const std::vector<std::int64_t> blocks = count_list_param(a, "stage_blocks");
    const std::vector<std::int64_t> widths = count_list_param(a, "stage_widths");
    const std::vector<std::int64_t> outs = count_list_param(a, "stage_outputs");
    if (blocks.size() != widths.size() || blocks.size() != outs.size())
        a.required("stage_blocks").fail("stage_blocks, stage_widths and stage_outputs must have one entry per stage");
    const std::size_t stages = blocks.size();
    // torchvision's trainable_layers: how many of [stem, stage 1, ..., stage N] train, counted from the top.
    const std::int64_t trainable_stages = count_param(a, "trainable_stages", 0, static_cast<std::int64_t>(stages) + 1);
    const std::size_t first_trainable = stages + 1 - static_cast<std::size_t>(trainable_stages);   // 0 = stem
    const std::vector<std::int64_t> fpn_stages = count_list_param(a, "fpn_stages");   // 1-based stage numbers
    const std::int64_t fpn = count_param(a, "fpn_channels");

    // Stem: conv 7x7/2 (frozen BN folded, ReLU fused) and a 3x3/2 max-pool.
    std::int64_t h = count_param(a, "image_size", 1, kMaxImageSide);
    const std::int64_t image_ch = count_param(a, "image_channels");
    Act x{"image", static_cast<double>(n * image_ch * h * h), false};
    std::int64_t ch = count_param(a, "stem_channels");
    {
        Layer& l = open(g, "stem", LayerRole::embedding, x.elements);
        LayerBuilder b(l, g.facts);
        const bool trainable = first_trainable == 0;
        x = b.conv("conv1", x, shape(n, image_ch, ch, h, count_param(a, "stem_kernel"), 2), false, trainable);
        h = conv_out(h, count_param(a, "stem_kernel"), 2);
        const std::int64_t pooled = conv_out(h, 3, 2);
        x = b.elementwise("maxpool", {x}, static_cast<double>(n * ch * pooled * pooled), {x});
        h = pooled;
    }

    std::vector<Act> features;     // outputs of the stages the FPN reads, in stage order
    std::vector<std::int64_t> feature_ch, feature_h;
    for (std::size_t s = 0; s < stages; ++s) {
        const bool trainable = s + 1 >= first_trainable;
        for (std::int64_t i = 0; i < blocks[s]; ++i) {
            const std::int64_t stride = (i == 0 && s > 0) ? 2 : 1;
            Layer& l = open(g, "layer" + std::to_string(s + 1) + "." + std::to_string(i), LayerRole::block, x.elements);
            LayerBuilder b(l, g.facts);
            const Act c1 = b.conv("conv1", x, shape(n, ch, widths[s], h, 1, 1), false, trainable);
            const Act c2 = b.conv("conv2", c1, shape(n, widths[s], widths[s], h, 3, stride, groups), false, trainable);
            const std::int64_t ho = conv_out(h, 3, stride);
            const Act c3 = b.conv("conv3", c2, shape(n, widths[s], outs[s], ho, 1, 1), false, trainable);
            const Act shortcut =
                i == 0 ? b.conv("downsample", x, shape(n, ch, outs[s], h, 1, stride), false, trainable) : x;
            x = b.elementwise("add_relu", {c3, shortcut}, c3.elements);
            ch = outs[s];
            h = ho;
        }
        for (std::int64_t f : fpn_stages)
            if (f == static_cast<std::int64_t>(s) + 1) {
                features.push_back(x);
                feature_ch.push_back(ch);
                feature_h.push_back(h);
            }
    }
    if (features.size() != fpn_stages.size()) a.required("fpn_stages").fail("fpn_stages must name existing stages");

    // FPN, top-down: lateral 1x1 on each feature (from the top), + upsampled coarser level, 3x3 output conv.
    std::vector<Act> levels(features.size());
    std::vector<std::int64_t> level_h = feature_h;
    {
        Layer& l = open(g, "fpn", LayerRole::block, features.back().elements);
        LayerBuilder b(l, g.facts);
        Act above;
        for (std::size_t i = features.size(); i-- > 0;) {
            Act lateral = b.conv("inner" + std::to_string(i), features[i],
                                 shape(n, feature_ch[i], fpn, feature_h[i], 1, 1), true, true);
            if (i + 1 < features.size()) {
                const Act up = b.elementwise("upsample" + std::to_string(i), {above}, lateral.elements);
                lateral = b.elementwise("topdown_add" + std::to_string(i), {lateral, up}, lateral.elements);
            }
            above = lateral;
            levels[i] = b.conv("layer" + std::to_string(i), lateral, shape(n, fpn, fpn, feature_h[i], 3, 1), true, true);
        }
        // Extra levels: stride-2 3x3 convs on the top output (ReLU before each but the first, fused).
        Act top = levels.back();
        std::int64_t th = feature_h.back();
        for (std::int64_t e = 0; e < count_param(a, "extra_levels", 0); ++e) {
            top = b.conv("extra" + std::to_string(e), top, shape(n, fpn, fpn, th, 3, 2), true, true);
            th = conv_out(th, 3, 2);
            levels.push_back(top);
            level_h.push_back(th);
        }
    }

    // Heads: one set of weights, run on every level (parameters counted on the first level only).
    const std::int64_t anchors = count_param(a, "anchors"), tower = count_param(a, "head_convs");
    const std::vector<std::pair<std::string, std::int64_t>> heads = {
        {"cls_head", anchors * count_param(a, "classes")}, {"reg_head", anchors * count_param(a, "box_coordinates")}};
    for (const auto& [name, predictions] : heads) {
        Layer& l = open(g, name, LayerRole::head, levels.front().elements);
        LayerBuilder b(l, g.facts);
        for (std::size_t lv = 0; lv < levels.size(); ++lv) {
            const bool shared = lv > 0;
            const std::string tag = ".p" + std::to_string(lv);
            Act t = levels[lv];
            for (std::int64_t i = 0; i < tower; ++i)
                t = b.conv("tower" + std::to_string(i) + tag, t, shape(n, fpn, fpn, level_h[lv], 3, 1), true, true, shared);
            const Act out = b.conv("predict" + tag, t, shape(n, fpn, predictions, level_h[lv], 3, 1), true, true, shared);
            b.elementwise("loss" + tag, {out}, static_cast<double>(n), {out});   // focal (cls) or L1 (boxes)
        }
    }
}

}  // namespace ttsim::layers
