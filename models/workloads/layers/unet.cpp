// The latent-diffusion UNet family (Stable Diffusion v2; NeMo/LDM openaimodel.py as models/data/models/
// stable_diffusion_v2.yaml enumerates it): conv_in; per level `res_blocks` ResBlocks, each followed by a
// spatial transformer at the levels whose downsample factor is listed in attention_resolutions, then a
// stride-2 conv (all levels but the last); a middle ResBlock + transformer + ResBlock; the up path mirrors it
// with res_blocks + 1 ResBlocks per level reading the skip tensors (concatenated), nearest-2x upsample + conv
// after all levels but the first; GroupNorm + SiLU + conv_out. Data parallel only (as in MLPerf v4.1).
#include <vector>

#include "models/workloads/layers/families.hpp"
#include "models/workloads/layers/graph_builder.hpp"

namespace ttsim::layers {
namespace {

struct UNetConfig {
    std::int64_t batch = 1, head_channels = 64, context_tokens = 0, context_dim = 0, time_dim = 0, ffn_mult = 4;
};

ConvShape conv_shape(std::int64_t batch, std::int64_t c_in, std::int64_t c_out, std::int64_t h, std::int64_t kernel,
                     std::int64_t stride) {
    const std::int64_t pad = kernel / 2, out = (h + 2 * pad - kernel) / stride + 1;
    return ConvShape{batch, c_in, c_out, h, h, out, out, kernel, stride, 1};
}

struct Builder {
    LayerGraph& g;
    const UNetConfig& c;
    Act temb;   // the time embedding every ResBlock projects (one row per image)

    Layer& open(const std::string& name, LayerRole role, const Act& in) {
        Layer l;
        l.name = name;
        l.role = role;
        l.input_bytes = in.elements * g.facts.activation_bytes;
        g.layers.push_back(std::move(l));
        return g.layers.back();
    }

    // GroupNorm + SiLU (one fused kernel) -> conv3x3 -> + projected time embedding -> GroupNorm + SiLU ->
    // conv3x3, plus the input (through a 1x1 conv when the channel count changes).
    Act resblock(const std::string& name, const Act& x, std::int64_t c_in, std::int64_t c_out, std::int64_t h) {
        Layer& l = open(name, LayerRole::block, x);
        LayerBuilder b(l, g.facts);
        const Act n1 = b.norm("in_norm_silu", x, 2 * c_in, true);
        const Act h1 = b.conv("in_conv", n1, conv_shape(c.batch, c_in, c_out, h, 3, 1), true, true);
        const Act e = b.linear("emb_proj", temb, c.batch, c.time_dim, c_out, true, true);
        const Act added = b.elementwise("add_emb", {h1, e}, h1.elements);
        const Act n2 = b.norm("out_norm_silu", added, 2 * c_out, true);
        const Act h2 = b.conv("out_conv", n2, conv_shape(c.batch, c_out, c_out, h, 3, 1), true, true);
        const Act skip =
            c_in == c_out ? x : b.conv("skip_conv", x, conv_shape(c.batch, c_in, c_out, h, 1, 1), true, true);
        return b.elementwise("residual_add", {skip, h2}, h2.elements);
    }

    // GroupNorm -> proj_in -> [LN -> self-attention] -> [LN -> cross-attention on the text context] ->
    // [LN -> GEGLU feed-forward], each with a residual -> proj_out, plus the input.
    Act transformer(const std::string& name, const Act& x, std::int64_t ch, std::int64_t h) {
        Layer& l = open(name, LayerRole::block, x);
        LayerBuilder b(l, g.facts);
        const std::int64_t tokens = c.batch * h * h, heads = ch / c.head_channels;
        const Act ctx{"context", static_cast<double>(c.batch * c.context_tokens * c.context_dim), false};
        const Act n = b.norm("norm", x, 2 * ch, true);
        const Act p = b.linear("proj_in", n, tokens, ch, ch, true, true);
        const Act l1 = b.norm("ln1", p, 2 * ch, true);
        const Act q1 = b.linear("attn1_q", l1, tokens, ch, ch, false, true);
        const Act k1 = b.linear("attn1_k", l1, tokens, ch, ch, false, true);
        const Act v1 = b.linear("attn1_v", l1, tokens, ch, ch, false, true);
        const Act a1 = b.attention("attn1", q1, k1, v1, AttentionShape{c.batch * heads, h * h, h * h, c.head_channels, false});
        const Act o1 = b.linear("attn1_out", a1, tokens, ch, ch, true, true);
        const Act r1 = b.elementwise("res1", {p, o1}, o1.elements);
        const Act l2 = b.norm("ln2", r1, 2 * ch, true);
        const std::int64_t ctx_rows = c.batch * c.context_tokens;
        const Act q2 = b.linear("attn2_q", l2, tokens, ch, ch, false, true);
        const Act k2 = b.linear("attn2_k", ctx, ctx_rows, c.context_dim, ch, false, true);
        const Act v2 = b.linear("attn2_v", ctx, ctx_rows, c.context_dim, ch, false, true);
        const Act a2 = b.attention("attn2", q2, k2, v2,
                                   AttentionShape{c.batch * heads, h * h, c.context_tokens, c.head_channels, false});
        const Act o2 = b.linear("attn2_out", a2, tokens, ch, ch, true, true);
        const Act r2 = b.elementwise("res2", {r1, o2}, o2.elements);
        const Act l3 = b.norm("ln3", r2, 2 * ch, true);
        const std::int64_t inner = c.ffn_mult * ch;
        const Act up = b.linear("ff_geglu_proj", l3, tokens, ch, 2 * inner, true, true);
        const Act gated = b.elementwise("ff_geglu", {up}, static_cast<double>(tokens) * inner, {up});
        const Act down = b.linear("ff_out", gated, tokens, inner, ch, true, true);
        const Act r3 = b.elementwise("res3", {r2, down}, down.elements);
        const Act out = b.linear("proj_out", r3, tokens, ch, ch, true, true);
        return b.elementwise("res_outer", {x, out}, out.elements);
    }

    Act downsample(const std::string& name, const Act& x, std::int64_t ch, std::int64_t h) {
        Layer& l = open(name, LayerRole::block, x);
        LayerBuilder b(l, g.facts);
        return b.conv("conv", x, conv_shape(c.batch, ch, ch, h, 3, 2), true, true);
    }

    Act upsample(const std::string& name, const Act& x, std::int64_t ch, std::int64_t h) {
        Layer& l = open(name, LayerRole::block, x);
        LayerBuilder b(l, g.facts);
        const Act up = b.elementwise("nearest2x", {x}, 4 * x.elements);
        return b.conv("conv", up, conv_shape(c.batch, ch, ch, 2 * h, 3, 1), true, true);
    }
};

}  // namespace

void build_unet(const ConfigNode& a, LayerGraph& g) {
    a.check_keys({"in_channels", "out_channels", "latent_size", "model_channels", "channel_mult", "res_blocks",
                  "attention_resolutions", "head_channels", "context_tokens", "context_dim", "time_embed_dim",
                  "ffn_mult"});
    require_data_parallel_only(g, a);
    UNetConfig c;
    c.batch = g.options.micro_batch;
    c.head_channels = count_param(a, "head_channels");
    c.context_tokens = count_param(a, "context_tokens");
    c.context_dim = count_param(a, "context_dim");
    c.time_dim = count_param(a, "time_embed_dim");
    c.ffn_mult = count_param(a, "ffn_mult");
    const std::int64_t in_ch = count_param(a, "in_channels"), out_ch = count_param(a, "out_channels");
    const std::int64_t base = count_param(a, "model_channels"), res_blocks = count_param(a, "res_blocks");
    const std::vector<std::int64_t> mult = count_list_param(a, "channel_mult");
    const std::vector<std::int64_t> attn_ds = count_list_param(a, "attention_resolutions");
    auto has_attention = [&](std::size_t level) {
        for (std::int64_t ds : attn_ds)
            if (ds == (std::int64_t{1} << level)) return true;
        return false;
    };
    std::int64_t h = count_param(a, "latent_size", 1, kMaxImageSide);
    Builder u{g, c, {}};

    {   // timestep embedding: sinusoid (no parameters) -> linear -> SiLU -> linear, one row per image
        Layer& l = u.open("time_embed", LayerRole::embedding, Act{"t", static_cast<double>(c.batch * base), false});
        LayerBuilder b(l, g.facts);
        const Act t{"timestep_sinusoid", static_cast<double>(c.batch * base), false};
        const Act l1 = b.linear("linear1", t, c.batch, base, c.time_dim, true, true);
        const Act s = b.elementwise("silu", {l1}, l1.elements, {l1});
        u.temb = b.linear("linear2", s, c.batch, c.time_dim, c.time_dim, true, true);
    }
    Act x{"latent", static_cast<double>(c.batch * in_ch * h * h), false};
    {
        Layer& l = u.open("conv_in", LayerRole::embedding, x);
        LayerBuilder b(l, g.facts);
        x = b.conv("conv", x, conv_shape(c.batch, in_ch, base, h, 3, 1), true, true);
    }
    std::vector<std::int64_t> skips{base};   // channels of each tensor the up path concatenates
    std::vector<Act> skip_acts{x};
    std::int64_t ch = base;
    for (std::size_t level = 0; level < mult.size(); ++level) {
        const std::string lv = "down" + std::to_string(level);
        for (std::int64_t i = 0; i < res_blocks; ++i) {
            const std::int64_t out = base * mult[level];
            x = u.resblock(lv + ".res" + std::to_string(i), x, ch, out, h);
            ch = out;
            if (has_attention(level)) x = u.transformer(lv + ".attn" + std::to_string(i), x, ch, h);
            skips.push_back(ch);
            skip_acts.push_back(x);
        }
        if (level + 1 < mult.size()) {
            x = u.downsample(lv + ".downsample", x, ch, h);
            h = (h + 1) / 2;
            skips.push_back(ch);
            skip_acts.push_back(x);
        }
    }
    x = u.resblock("mid.res0", x, ch, ch, h);
    x = u.transformer("mid.attn", x, ch, h);
    x = u.resblock("mid.res1", x, ch, ch, h);
    for (std::size_t level = mult.size(); level-- > 0;) {
        const std::string lv = "up" + std::to_string(level);
        for (std::int64_t i = 0; i <= res_blocks; ++i) {
            const std::int64_t skip = skips.back(), out = base * mult[level];
            const Act skip_act = skip_acts.back();
            skips.pop_back();
            skip_acts.pop_back();
            const std::string name = lv + ".res" + std::to_string(i);
            Act cat;
            {   // the concatenation is a copy kernel of its own, in the block that reads it
                Layer& l = u.open(name + ".concat", LayerRole::block, x);
                LayerBuilder b(l, g.facts);
                cat = b.elementwise("skip_concat", {x, skip_act}, x.elements + skip_act.elements);
            }
            x = u.resblock(name, cat, ch + skip, out, h);
            ch = out;
            if (has_attention(level)) x = u.transformer(lv + ".attn" + std::to_string(i), x, ch, h);
        }
        if (level > 0) {
            x = u.upsample(lv + ".upsample", x, ch, h);
            h *= 2;
        }
    }
    Layer& l = u.open("out", LayerRole::head, x);
    LayerBuilder b(l, g.facts);
    const Act n = b.norm("norm_silu", x, 2 * ch, true);
    const Act eps = b.conv("conv_out", n, conv_shape(c.batch, ch, out_ch, h, 3, 1), true, true);
    b.elementwise("mse_loss", {eps}, static_cast<double>(c.batch), {eps});
}

}  // namespace ttsim::layers
