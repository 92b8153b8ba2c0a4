// The transformer families: an encoder with BERT's pre-training heads, and a decoder (Llama, GPT) with an LM
// head and optional LoRA adapters. Layers: embedding, `layers` blocks, head; a pipeline stage is any
// contiguous range of them.
#include <cmath>
#include <optional>

#include "models/workloads/layers/families.hpp"
#include "models/workloads/layers/graph_builder.hpp"
#include "models/workloads/layers/transformer_block.hpp"
#include "sim/errors.hpp"

namespace ttsim::layers {
namespace {

// The common block parameters of both families.
BlockConfig read_block(const ConfigNode& a, const LayerGraph& g) {
    BlockConfig c;
    c.hidden = count_param(a, "hidden");
    c.heads = count_param(a, "heads");
    c.kv_heads = count_param_or(a, "kv_heads", c.heads, 1);
    // Grouped-query attention: each key/value head serves a whole group of query heads.
    if (c.kv_heads > c.heads || c.heads % c.kv_heads != 0)
        a.required("kv_heads").fail("kv_heads (" + std::to_string(c.kv_heads) + ") must divide heads (" +
                                    std::to_string(c.heads) + "): each key/value head serves a whole group of query heads");
    // hidden / heads is the per-head width only where head_dim does not give it.
    c.head_dim = a.has("head_dim") ? count_param(a, "head_dim")
                                   : split_evenly(c.hidden, c.heads, param(a, "heads"), "hidden / heads");
    c.ffn = count_param(a, "ffn");
    c.hidden_dropout = number_param_or(a, "hidden_dropout", 0, 0, 1);
    c.tp = g.options.tensor_parallel;
    c.cp = g.options.context_parallel;
    c.sp = g.options.sequence_parallel && c.tp > 1;
    split_evenly(c.heads, c.tp, a, "heads");
    split_evenly(c.kv_heads, c.tp, a, "kv_heads");
    split_evenly(c.ffn, c.tp, a, "ffn");
    return c;
}

Layer new_layer(const std::string& name, LayerRole role) {
    Layer l;
    l.name = name;
    l.role = role;
    return l;
}

// `layers` identical blocks after the embedding, named layer0, layer1, ...; returns the last output. A block is a
// function of its input's size and whether it requires grad (the first block's may not: a frozen embedding feeds
// it), so once a block is built for an input like the one before it, the rest are copies of it under their own
// names: a 70B decoder's 80 blocks cost two builds, where a layout search builds a graph per TP x CP x micro batch.
Act add_blocks(LayerGraph& g, const BlockConfig& c, std::int64_t layers, Act x) {
    std::optional<std::size_t> template_block;   // index in g.layers of the block the copies are made from
    Act template_input, template_output;
    for (std::int64_t i = 0; i < layers; ++i) {
        if (template_block && x.grad == template_input.grad && x.elements == template_input.elements) {
            const Layer& from = g.layers[*template_block];
            Layer l = from;   // kernel names are the layer's own ("fc1.dgrad"): a copy needs only its name
            l.name = "layer" + std::to_string(i);
            TTSIM_ASSERT(template_output.id.rfind(from.name + ".", 0) == 0, "a block's output id names its layer");
            x = Act{l.name + template_output.id.substr(from.name.size()), template_output.elements, template_output.grad};
            g.layers.push_back(std::move(l));
            continue;
        }
        Layer l = new_layer("layer" + std::to_string(i), LayerRole::block);
        LayerBuilder b(l, g.facts);
        template_input = x;
        x = transformer_block(b, l, c, x, g.facts.activation_bytes);
        template_output = x;
        g.layers.push_back(std::move(l));
        template_block = g.layers.size() - 1;
    }
    return x;
}

}  // namespace

// BERT: post-LN encoder; embeddings = word + position + token type, summed and normalised in one kernel;
// heads = pooler + NSP on each sequence's first token, MLM transform + tied decoder on the masked tokens.
void build_transformer_encoder(const ConfigNode& a, LayerGraph& g) {
    a.check_keys({"layers", "hidden", "heads", "ffn", "vocab", "max_positions", "type_vocab", "tokens_per_sample",
                  "sequences_per_sample", "masked_tokens_per_sample", "hidden_dropout", "nsp_classes",
                  "fused_gemm_gelu"});
    BlockConfig c = read_block(a, g);
    const std::int64_t layers = count_param(a, "layers", 1, kMaxTransformerLayers);
    const std::int64_t vocab = count_param(a, "vocab");
    const std::int64_t per_sample_tokens = count_param(a, "tokens_per_sample");
    const std::int64_t per_sample_sequences = count_param_or(a, "sequences_per_sample", 1, 1);
    const std::int64_t masked = count_param(a, "masked_tokens_per_sample", 0);
    const std::int64_t nsp_classes = count_param(a, "nsp_classes");
    c.sequence = split_evenly(per_sample_tokens, per_sample_sequences, a, "tokens_per_sample / sequences_per_sample");
    c.sequences = per_sample_sequences * g.options.micro_batch;
    c.fused_gemm_gelu = bool_param_or(a, "fused_gemm_gelu", false);
    c.pre_norm = false;
    split_evenly(c.sequence, c.cp, a, "sequence length over CP");
    const std::int64_t tokens = c.tokens();
    const double res = c.residual_elements();
    const double ab = g.facts.activation_bytes;

    Layer emb = new_layer("embeddings", LayerRole::embedding);
    Act x;
    {
        LayerBuilder b(emb, g.facts);
        const Act words = b.embedding("word", tokens, vocab / c.tp, c.hidden, true, c.tp);
        b.add_params((count_param(a, "max_positions") + count_param(a, "type_vocab")) * c.hidden, true);
        // Sum of the three gathers and LayerNorm in one kernel: reads the position and type rows too.
        x = b.norm("sum_ln", Act{words.id, res, true}, 2 * c.hidden, true, 2 * res);
        if (c.hidden_dropout > 0) b.keep_mask(x.id + ".mask", res);
    }
    g.layers.push_back(std::move(emb));
    x = add_blocks(g, c, layers, x);

    Layer head = new_layer("heads", LayerRole::head);
    {
        LayerBuilder b(head, g.facts);
        head.input_bytes = x.elements * ab;
        const std::int64_t firsts = c.sequences;   // one [CLS] per sequence
        const Act cls = b.elementwise("gather_first", {x}, static_cast<double>(firsts) * c.hidden);
        const Act pooled = b.linear("pooler", cls, firsts, c.hidden, c.hidden, true, true);
        const Act tanh = b.elementwise("tanh", {pooled}, pooled.elements, {pooled});
        const Act nsp = b.linear("nsp", tanh, firsts, c.hidden, nsp_classes, true, true);
        b.elementwise("nsp_loss", {nsp}, static_cast<double>(firsts), {nsp});
        // The masked tokens only (dense_seq_output), or every token of the row where the submission runs the head on
        // all positions and masks the loss (BuildOptions::head_on_all_tokens).
        const std::int64_t m = (g.options.head_on_all_tokens ? per_sample_tokens : masked) * g.options.micro_batch;
        const Act picked = b.elementwise("gather_masked", {x}, static_cast<double>(m) * c.hidden);
        const Act transform = b.linear("mlm_transform", picked, m, c.hidden, c.hidden, true, true);
        b.keep(transform);   // GELU fused in the epilogue: its backward needs the pre-activation
        const Act ln = b.norm("mlm_ln", Act{transform.id + ".gelu", transform.elements, true}, 2 * c.hidden, true);
        // Decoder tied to the word embeddings (no new weights), with its own bias.
        const Act logits = b.linear("mlm_decoder", ln, m, c.hidden, vocab / c.tp, false, true, c.tp, true);
        b.add_params(vocab / c.tp, true, c.tp);
        b.elementwise("mlm_loss", {logits}, static_cast<double>(m), {logits});
    }
    g.layers.push_back(std::move(head));
}

// Llama / GPT: pre-norm decoder, causal attention (GQA when kv_heads < heads), untied or tied LM head;
// `frozen_base` + `lora` for LoRA fine-tuning (frozen weights get no weight gradients or optimizer state).
void build_transformer_decoder(const ConfigNode& a, LayerGraph& g) {
    a.check_keys({"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "gated_ffn", "sequence", "vocab",
                  "vocab_multiple", "norm", "bias", "tied_embeddings", "rope", "max_positions", "hidden_dropout",
                  "frozen_base", "lora"});
    BlockConfig c = read_block(a, g);
    const std::int64_t layers = count_param(a, "layers", 1, kMaxTransformerLayers);
    c.sequence = count_param(a, "sequence");
    c.sequences = g.options.micro_batch;
    c.gated_ffn = bool_param_or(a, "gated_ffn", true);
    c.bias = bool_param_or(a, "bias", false);
    c.causal = true;
    c.pre_norm = true;
    c.rms_norm = !a.has("norm") || param(a, "norm").as_choice({"rmsnorm", "layernorm"}) == "rmsnorm";
    c.rope = bool_param_or(a, "rope", true);
    c.frozen = bool_param_or(a, "frozen_base", false);
    if (a.has("lora")) {
        const ConfigNode lora = a.required("lora");
        lora.check_keys({"rank", "targets", "dropout"});
        c.lora.rank = count_param(lora, "rank");
        for (const ConfigNode& t : param(lora, "targets").items())
            c.lora.targets.insert(t.as_choice({"qkv", "proj", "fc1", "fc2"}));
        c.lora.dropout = number_param_or(lora, "dropout", 0, 0, 1);
    }
    // A frozen base trains only its adapters; without them nothing would train.
    if (c.frozen && !a.has("lora")) param(a, "frozen_base").fail("a frozen base trains only its LoRA adapters: add lora: {rank, targets}");
    split_evenly(c.sequence, c.cp, a, "sequence over CP");
    // Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by x TP.
    const std::int64_t multiple = count_param_or(a, "vocab_multiple", 1, 1) * c.tp;
    const std::int64_t vocab_in = count_param(a, "vocab");
    const std::int64_t vocab = (vocab_in + multiple - 1) / multiple * multiple;
    const bool tied = bool_param_or(a, "tied_embeddings", false);
    const std::int64_t positions = count_param_or(a, "max_positions", 0);
    // Learned positions (GPT) stand in for rotary ones and must cover every position of a sequence.
    if (positions > 0 && c.rope)
        param(a, "max_positions").fail("learned positions and rotary embeddings (rope, on by default) exclude each other: "
                                       "add rope: false for GPT-style learned positions");
    if (positions > 0 && positions < c.sequence)
        param(a, "max_positions").fail("learned positions (" + std::to_string(positions) +
                                       ") must cover the sequence (" + std::to_string(c.sequence) + " tokens)");
    const std::int64_t tokens = c.tokens();
    const double res = c.residual_elements();
    const double ab = g.facts.activation_bytes;
    const bool trainable = !c.frozen;

    Layer emb = new_layer("embedding", LayerRole::embedding);
    Act x;
    {
        LayerBuilder b(emb, g.facts);
        x = b.embedding("word", tokens, vocab / c.tp, c.hidden, trainable, c.tp);
        if (positions > 0) b.add_params(positions * c.hidden, trainable);   // learned positions (GPT)
        x.elements = res;
    }
    g.layers.push_back(std::move(emb));
    x = add_blocks(g, c, layers, x);
    Layer head = new_layer("lm_head", LayerRole::head);
    {
        LayerBuilder b(head, g.facts);
        head.input_bytes = x.elements * ab;
        const Act n = b.norm("final_norm", x, c.rms_norm ? c.hidden : 2 * c.hidden, trainable);
        const Act logits = b.linear("output", n, tokens, c.hidden, vocab / c.tp, false, trainable, c.tp, tied);
        b.elementwise("cross_entropy", {logits}, static_cast<double>(tokens), {logits});
    }
    g.layers.push_back(std::move(head));
}

}  // namespace ttsim::layers
