"""Independent numpy forward passes of fairseq's Transformer and Hugging Face's MarianMT, written
from tools/interop/FORMATS.md (not from either library's code): the proof that the spec says what
the libraries do. One sentence at a time, no padding, no caches: teacher-forced log-probs."""

import math

import numpy as np


def layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def activation(name, x):
    if name == "relu":
        return np.maximum(x, 0)
    if name == "gelu":  # exact (erf) GELU
        from math import erf
        return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))
    if name in ("swish", "silu"):
        return x / (1 + np.exp(-x))
    raise ValueError(f"unknown activation {name}")


def attention(w, prefix, query, memory, heads, causal):
    """Separate q/k/v projections (fairseq and Marian both store q_proj, k_proj, v_proj,
    out_proj); q is scaled by head_dim^-0.5 after its bias."""
    def proj(name, x):
        return x @ w[f"{prefix}.{name}.weight"].T + w[f"{prefix}.{name}.bias"]
    t, d = query.shape
    s = memory.shape[0]
    hd = d // heads
    q = (proj("q_proj", query) * hd ** -0.5).reshape(t, heads, hd).transpose(1, 0, 2)
    k = proj("k_proj", memory).reshape(s, heads, hd).transpose(1, 0, 2)
    v = proj("v_proj", memory).reshape(s, heads, hd).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1)
    if causal:
        scores = scores + np.triu(np.full((t, s), -np.inf), 1)
    ctx = (softmax(scores) @ v).transpose(1, 0, 2).reshape(t, d)
    return proj("out_proj", ctx)


def sublayer(x, norm_prefix, w, pre, fn):
    """Residual block: pre-norm y = x + f(LN(x)); post-norm y = LN(x + f(x))."""
    ln = (w[f"{norm_prefix}.weight"], w[f"{norm_prefix}.bias"])
    if pre:
        return x + fn(layer_norm(x, *ln))
    return layer_norm(x + fn(x), *ln)


def ffn(w, prefix, x, act):
    h = activation(act, x @ w[f"{prefix}.fc1.weight"].T + w[f"{prefix}.fc1.bias"])
    return h @ w[f"{prefix}.fc2.weight"].T + w[f"{prefix}.fc2.bias"]


def encoder_layer(w, p, x, heads, pre, act):
    """Self-attention then feed-forward, each in a residual block (fairseq and Marian alike)."""
    x = sublayer(x, f"{p}.self_attn_layer_norm", w, pre,
                 lambda h: attention(w, f"{p}.self_attn", h, h, heads, False))
    return sublayer(x, f"{p}.final_layer_norm", w, pre, lambda h: ffn(w, p, h, act))


def decoder_layer(w, p, y, memory, heads, pre, act):
    """Causal self-attention, attention over the encoder output, feed-forward."""
    y = sublayer(y, f"{p}.self_attn_layer_norm", w, pre,
                 lambda h: attention(w, f"{p}.self_attn", h, h, heads, True))
    y = sublayer(y, f"{p}.encoder_attn_layer_norm", w, pre,
                 lambda h: attention(w, f"{p}.encoder_attn", h, memory, heads, False))
    return sublayer(y, f"{p}.final_layer_norm", w, pre, lambda h: ffn(w, p, h, act))


# ---------------------------------------------------------------- fairseq

def fairseq_sinusoidal(rows, dim, padding_idx):
    half = dim // 2
    freq = np.exp(np.arange(half, dtype=np.float32) * -(math.log(10000) / (half - 1)))
    angles = np.arange(rows, dtype=np.float32)[:, None] * freq[None, :]
    table = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    if dim % 2:
        table = np.concatenate([table, np.zeros((rows, 1), np.float32)], axis=1)
    table[padding_idx] = 0
    return table


def fairseq_embed(w, side, a, tokens, pad):
    d = w[f"{side}.embed_tokens.weight"].shape[1]
    scale = 1.0 if a["no_scale_embedding"] else math.sqrt(d)
    x = scale * w[f"{side}.embed_tokens.weight"][tokens]
    positions = pad + 1 + np.arange(len(tokens))
    learned = a[f"{side}_learned_pos"]
    if learned:
        x = x + w[f"{side}.embed_positions.weight"][positions]
    else:
        x = x + fairseq_sinusoidal(pad + 1 + len(tokens), d, pad)[positions]
    if a.get("layernorm_embedding"):
        x = layer_norm(x, w[f"{side}.layernorm_embedding.weight"],
                       w[f"{side}.layernorm_embedding.bias"])
    return x


def fairseq_forward(w, a, src, prev, pad=1):
    """w: state dict (numpy), a: the checkpoint's model args (dict), src: source ids ending in
    </s>, prev: decoder input (</s> then the target without its last token). Returns
    log-probs [len(prev), target vocabulary]."""
    act = a["activation_fn"]
    pre = a["encoder_normalize_before"]
    x = fairseq_embed(w, "encoder", a, np.asarray(src), pad)
    for i in range(a["encoder_layers"]):
        x = encoder_layer(w, f"encoder.layers.{i}", x, a["encoder_attention_heads"], pre, act)
    if pre:
        x = layer_norm(x, w["encoder.layer_norm.weight"], w["encoder.layer_norm.bias"])
    memory = x
    pre = a["decoder_normalize_before"]
    y = fairseq_embed(w, "decoder", a, np.asarray(prev), pad)
    for i in range(a["decoder_layers"]):
        y = decoder_layer(w, f"decoder.layers.{i}", y, memory, a["decoder_attention_heads"],
                          pre, act)
    if pre:
        y = layer_norm(y, w["decoder.layer_norm.weight"], w["decoder.layer_norm.bias"])
    return log_softmax(y @ w["decoder.output_projection.weight"].T)


# ---------------------------------------------------------------- Marian

def marian_sinusoidal(rows, dim):
    """Marian's static table: sin of the even-index frequencies in the first half, cos in the
    second, frequency of column j = 10000^(-2*(j//2)/dim); row = position (no offset)."""
    pos = np.arange(rows, dtype=np.float64)[:, None]
    j = np.arange(dim)[None, :]
    enc = pos / np.power(10000, 2 * (j // 2) / dim)
    sentinel = dim // 2 + dim % 2
    table = np.zeros((rows, dim), np.float32)
    table[:, :sentinel] = np.sin(enc[:, 0::2])
    table[:, sentinel:] = np.cos(enc[:, 1::2])
    return table


def marian_forward(w, c, input_ids, decoder_input_ids):
    """w: Marian weights (model.safetensors names), c: config.json, input_ids: source ids ending
    in </s>, decoder_input_ids: decoder start (pad) then the target without its last token.
    Returns log-probs [len(decoder_input_ids), vocabulary], final_logits_bias included."""
    d = c["d_model"]
    scale = math.sqrt(d) if c["scale_embedding"] else 1.0
    act = c["activation_function"]
    emb = w["model.shared.weight"]
    table = marian_sinusoidal(c["max_position_embeddings"], d)

    x = scale * emb[np.asarray(input_ids)] + table[:len(input_ids)]
    for i in range(c["encoder_layers"]):
        x = encoder_layer(w, f"model.encoder.layers.{i}", x, c["encoder_attention_heads"],
                          False, act)
    memory = x
    y = scale * emb[np.asarray(decoder_input_ids)] + table[:len(decoder_input_ids)]
    for i in range(c["decoder_layers"]):
        y = decoder_layer(w, f"model.decoder.layers.{i}", y, memory,
                          c["decoder_attention_heads"], False, act)
    lm_head = w.get("lm_head.weight", emb)
    return log_softmax(y @ lm_head.T + w["final_logits_bias"][0])


def read_safetensors(path):
    """The safetensors layout, read with numpy only: 8-byte little-endian header length, JSON
    header, raw little-endian tensors at data_offsets relative to the end of the header."""
    import json
    import struct
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", None)
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + begin:8 + n + end],
                                  dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return out, metadata
