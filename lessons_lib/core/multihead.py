"""Multi-head attention: split → attend in parallel → concatenate → W_O.

    MultiHead(X) = Concat(head_1, …, head_h) · W_O,
    head_i = Attention(X·W_Q^i, X·W_K^i, X·W_V^i)

Like nanoGPT, the h per-head projections are stored side by side in one
``(d_model, d_model)`` matrix each: head i owns columns i·d_head … (i+1)·d_head
− 1, with d_head = d_model / h. Taught in notebook 06.
"""

from __future__ import annotations

import numpy as np

from .._checks import as_float_array, check_mask, check_positive_int, is_real_number, is_whole_number
from . import position
from .attention import project_qkv, scaled_dot_product_attention

__all__ = ["split_heads", "merge_heads", "multi_head_attention", "shape_stages", "split_projection",
           "multi_head_attention_per_head", "multi_head_cost", "handmade_heads", "HANDMADE_HEADS"]


def split_heads(x, n_heads: int) -> np.ndarray:
    """``(..., seq_len, d_model)`` → ``(..., n_heads, seq_len, d_head)``, d_head = d_model / n_heads."""
    x = as_float_array(x, "x", min_ndim=2)
    d_model = x.shape[-1]
    n_heads = check_heads(n_heads, d_model)
    seq_len = x.shape[-2]
    return np.swapaxes(x.reshape(*x.shape[:-1], n_heads, d_model // n_heads), -2, -3).reshape(
        *x.shape[:-2], n_heads, seq_len, d_model // n_heads)


def merge_heads(x) -> np.ndarray:
    """``(..., n_heads, seq_len, d_head)`` → ``(..., seq_len, n_heads·d_head)``: the concatenation."""
    x = as_float_array(x, "x", min_ndim=3, shape="(..., n_heads, seq_len, d_head)")
    n_heads, seq_len, d_head = x.shape[-3:]
    return np.swapaxes(x, -2, -3).reshape(*x.shape[:-3], seq_len, n_heads * d_head)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads: int, mask=None, causal: bool = False, *,
                         b_q=None, b_k=None, b_v=None, b_o=None, rope=None):
    """Self-attention with ``n_heads`` heads. Returns ``(output, weights)``.

        Q = X·W_Q + b_Q,  K = X·W_K + b_K,  V = X·W_V + b_V,   output = Concat(heads)·W_O + b_O

    ``x (..., L, d_model)``; ``w_q, w_k, w_v, w_o`` each ``(d_model, d_model)`` in the
    ``x @ W`` layout, (in, out): torch's ``nn.Linear`` stores the transpose, (out, in)
    (see :mod:`lessons_lib.lab.adapters`, which reads real models' weights). Biases ``b_q,
    b_k, b_v, b_o`` ``(d_model,)`` are optional (None: no bias, as in the lessons;
    GPT-2, BERT and ``nn.MultiheadAttention`` have them). ``mask`` bool (True = may
    attend), one mask per sequence: ``(L, L)`` or ``(..., L, L)`` with the batch
    dimensions of ``x``; it is applied to every head. ``output (..., L, d_model)``;
    ``weights (..., n_heads, L, L)``, one attention pattern per head. Notebook 06.

    ``rope`` turns every head's queries and keys by their positions before the scores (rotary
    embeddings, notebook 11; the values are not turned): ``True`` for positions 0 … L − 1, base 10000 and
    the "half" convention, a convention name, or ``Rotary(positions=..., base=..., convention=...)``
    (:mod:`lessons_lib.core.position`).
    """
    rotary = position.as_rotary(rope)
    x = as_float_array(x, "x", min_ndim=2)
    d_model = x.shape[-1]
    n_heads = check_heads(n_heads, d_model)
    named = {"W_Q": w_q, "W_K": w_k, "W_V": w_v, "W_O": w_o}
    for name, w in named.items():
        w = as_float_array(w, name, min_ndim=2)
        if w.shape != (d_model, d_model):
            raise ValueError(
                f"{name} has shape {w.shape}, but with d_model={d_model} it must be "
                f"({d_model}, {d_model}): all heads' projections side by side."
            )
        named[name] = w
    biases = {name: _check_bias(b, name, d_model)
              for name, b in (("b_Q", b_q), ("b_K", b_k), ("b_V", b_v), ("b_O", b_o))}
    q, k, v = (split_heads(t, n_heads) for t in project_qkv(x, named["W_Q"], named["W_K"], named["W_V"]))
    q, k, v = (t if b is None else t + _head_slices(b, n_heads).astype(t.dtype, copy=False)
               for t, b in zip((q, k, v), (biases["b_Q"], biases["b_K"], biases["b_V"])))
    if rotary is not None:  # each head's queries and keys turn by their positions; the values do not
        q_pos, k_pos = rotary.resolve(x.shape[-2], x.shape[-2])
        q = position.rope(q, q_pos, base=rotary.base, convention=rotary.convention)
        k = position.rope(k, k_pos, base=rotary.base, convention=rotary.convention)
    if mask is not None:  # checked against the shape the learner thinks in: (..., L, L)
        mask = check_mask(mask, (*x.shape[:-2], x.shape[-2], x.shape[-2]))
        if mask.ndim >= 2:
            mask = mask[..., None, :, :]  # the same mask for every head
    heads, weights = scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    output = merge_heads(heads) @ named["W_O"]
    if biases["b_O"] is not None:
        output = output + biases["b_O"].astype(output.dtype, copy=False)
    return output, weights


def _head_slices(b: np.ndarray, n_heads: int) -> np.ndarray:
    """A ``(d_model,)`` bias as ``(n_heads, 1, d_head)``: head i adds its own slice to each of its rows."""
    return b.reshape(n_heads, 1, -1)


def _check_bias(b, name: str, d_model: int):
    """An optional bias: None, or a ``(d_model,)`` float vector."""
    if b is None:
        return None
    b = as_float_array(b, name, shape="(d_model,)")
    if b.shape != (d_model,):
        raise ValueError(f"{name} has shape {b.shape}, but it must be ({d_model},): one number per "
                         f"feature, added to every token's row.")
    return b


def check_heads(n_heads, d_model: int) -> int:
    n_heads = check_positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
        raise ValueError(
            f"n_heads={n_heads} does not divide d_model={d_model}: each head gets d_model / n_heads "
            f"features, which must be a whole number. Try one of {divisors}."
        )
    return n_heads


# ====================================================================== notebook 06: the lesson's tools
# The shapes at each stage, per-head matrices, the cost, and heads built by hand.

def shape_stages(seq_len: int, d_model: int, n_heads: int) -> list[tuple[str, str, tuple]]:
    """The shape of the data at each stage of multi-head self-attention, as ``(stage, code, shape)``.

    ``code`` is the numpy that takes the previous stage to this one (as inside
    :func:`split_heads`, :func:`merge_heads` and :func:`multi_head_attention`).
    The view/transpose pair in the middle is where heads appear: ``reshape``
    only re-reads the d_model columns as n_heads groups of d_head, ``transpose``
    brings the head axis to the front so each head is an ordinary (L, d_head)
    attention problem. Notebook 06.
    """
    L = check_positive_int(seq_len, "seq_len")
    d = check_positive_int(d_model, "d_model")
    h = check_heads(n_heads, d)
    dh = d // h
    return [
        ("input X", "X", (L, d)),
        ("queries Q = X·W_Q", "Q = X @ W_Q", (L, d)),
        ("view: split the columns into heads", f"Q.reshape({L}, {h}, {dh})", (L, h, dh)),
        ("transpose: heads first", "Q.transpose(1, 0, 2)", (h, L, dh)),
        ("scores per head", "Q @ K.transpose(0, 2, 1) / √d_head", (h, L, L)),
        ("weights per head", "softmax(scores, axis=-1)", (h, L, L)),
        ("head outputs", "weights @ V", (h, L, dh)),
        ("transpose back: tokens first", "heads.transpose(1, 0, 2)", (L, h, dh)),
        ("view: concatenate the heads", f"heads.reshape({L}, {d})", (L, d)),
        ("output = Concat(heads)·W_O", "concat @ W_O", (L, d)),
    ]


def split_projection(w, n_heads: int) -> np.ndarray:
    """One big ``(d_model, d_model)`` projection → ``(n_heads, d_model, d_head)``, one matrix per head.

    Head i's own W_Q^i is the block of columns i·d_head … (i+1)·d_head − 1 of the
    big W_Q, so ``X @ split_projection(W_Q, h)[i]`` equals ``split_heads(X @ W_Q, h)[i]``:
    one big W_Q split into heads and a separate W_Q per head are the same
    computation. Notebook 06.
    """
    w = as_float_array(w, "W", min_ndim=2)
    if w.ndim != 2:
        raise ValueError(f"W must be one 2-D projection (d_model, d_model); got shape {w.shape}.")
    n_heads = check_heads(n_heads, w.shape[1])
    return np.ascontiguousarray(np.swapaxes(w.reshape(w.shape[0], n_heads, w.shape[1] // n_heads), 0, 1))


def multi_head_attention_per_head(x, w_q_heads, w_k_heads, w_v_heads, w_o, mask=None, causal: bool = False):
    """Multi-head attention written as the formula reads: each head on its own, then Concat·W_O.

        head_i = Attention(X·W_Q^i, X·W_K^i, X·W_V^i),   output = Concat(head_1 … head_h)·W_O

    ``w_q_heads, w_k_heads, w_v_heads`` are ``(n_heads, d_model, d_head)`` (a
    separate small matrix per head, e.g. from :func:`split_projection`);
    ``w_o (n_heads·d_head, d_model)``; ``x (L, d_model)``. Returns
    ``(output (L, d_model), weights (n_heads, L, L))``, equal to
    :func:`multi_head_attention` with the big matrices: a loop over heads instead
    of one batched product. Notebook 06.
    """
    x = as_float_array(x, "x", min_ndim=2)
    stacks = {}
    for name, w in (("W_Q heads", w_q_heads), ("W_K heads", w_k_heads), ("W_V heads", w_v_heads)):
        w = as_float_array(w, name)
        if w.ndim != 3 or w.shape[1] != x.shape[-1]:
            raise ValueError(
                f"{name} must be (n_heads, d_model, d_head) with d_model={x.shape[-1]} (the width of x); "
                f"got shape {w.shape}."
            )
        stacks[name] = w
    shapes = {w.shape for w in stacks.values()}
    if len(shapes) != 1:
        raise ValueError(f"W_Q, W_K and W_V heads must have the same shape; got {sorted(shapes)}.")
    n_heads, _, d_head = stacks["W_Q heads"].shape
    w_o = as_float_array(w_o, "W_O", min_ndim=2)
    if w_o.shape[0] != n_heads * d_head:
        raise ValueError(f"W_O has {w_o.shape[0]} rows but the concatenated heads have "
                         f"n_heads·d_head = {n_heads}·{d_head} = {n_heads * d_head} columns.")
    outputs, weights = [], []
    for i in range(n_heads):
        q, k, v = (x @ stacks[name][i] for name in ("W_Q heads", "W_K heads", "W_V heads"))
        out, w = scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
        outputs.append(out)
        weights.append(w)
    return np.concatenate(outputs, axis=-1) @ w_o, np.stack(weights, axis=-3)


def multi_head_cost(seq_len: int, d_model: int, n_heads: int, d_head: int | None = None) -> dict:
    """Parameters and floating-point operations of one multi-head self-attention layer.

    ``d_head`` defaults to d_model / n_heads (the usual split, the same total width
    as one big head). A multiply-add counts as 2 FLOPs, so an (m × k)·(k × n)
    product costs 2·m·k·n; the softmax is counted as 5 operations per score
    (max, subtract, exp, sum, divide) and the scaling as 1. No biases.

    Returns a dict: ``params`` (W_Q, W_K, W_V, W_O), ``flops`` (stage → FLOPs),
    ``total_flops``, ``attention_entries`` (n_heads·L², the weights a layer
    holds). With d_head = d_model / n_heads, params and every matrix product are
    the same for any number of heads; only the element-wise softmax and the
    number of attention weights grow with n_heads. Notebook 06.
    """
    L = check_positive_int(seq_len, "seq_len")
    d = check_positive_int(d_model, "d_model")
    if d_head is None:
        h = check_heads(n_heads, d)
        dh = d // h
    else:
        h = check_positive_int(n_heads, "n_heads")
        dh = check_positive_int(d_head, "d_head")
    width = h * dh
    flops = {
        "Q, K, V projections": 3 * 2 * L * d * width,
        "scores Q·Kᵀ": h * 2 * L * L * dh,
        "scale": h * L * L,
        "softmax": h * 5 * L * L,
        "weights·V": h * 2 * L * L * dh,
        "output projection W_O": 2 * L * width * d,
    }
    return {
        "params": 3 * d * width + width * d,
        "flops": flops,
        "total_flops": sum(flops.values()),
        "attention_entries": h * L * L,
    }


HANDMADE_HEADS = ("previous token", "subject", "uniform")


def handmade_heads(tokens, subject: int | str, sharpness: float = 8.0) -> dict:
    """Three heads whose weights are built by hand, each looking for something different.

    ``tokens`` (a list of words) and ``subject`` (its index or the word itself).
    Every token's embedding x_i holds a one-hot position (its first ``seq_len``
    features), a flag "is the subject" and a constant 1. The three heads (d_head
    each, d_model = 3·d_head) are, in :data:`HANDMADE_HEADS` order:

    * **previous token**: W_Q moves position i to position i − 1, W_K reads the
      position, so q_i·k_j is large only for j = i − 1 (the first token has no
      previous one: a zero query, uniform weights);
    * **subject**: W_Q turns the constant 1 into a "looking for the subject"
      feature, W_K turns the subject flag into the same feature, so every query
      matches the subject's key;
    * **uniform**: W_Q = 0, so every score is 0 and softmax spreads the weight evenly.

    Matching scores reach ``sharpness`` after the division by √d_head (so the
    preferred key gets about e^sharpness times the weight of any other). W_V copies
    the one-hot position into each head, so a head's output row is where it
    looked; W_O is the identity. Returns a dict with ``x``, ``w_q``, ``w_k``,
    ``w_v``, ``w_o`` (the big matrices for :func:`multi_head_attention`),
    ``n_heads`` = 3, ``head_names``, ``tokens``. Notebook 06.
    """
    if isinstance(tokens, str):
        raise TypeError("tokens must be a list of words; use data.tokenize(sentence) first.")
    tokens = [str(t) for t in tokens]
    L = len(tokens)
    if L < 2:
        raise ValueError(f"handmade_heads needs at least 2 tokens (a previous token to look at); got {L}.")
    if isinstance(subject, str):
        if subject not in tokens:
            raise ValueError(f"subject {subject!r} is not one of the tokens {tokens}.")
        subject = tokens.index(subject)
    if not is_whole_number(subject) or not 0 <= subject < L:
        raise ValueError(f"subject must be a word of the sentence or its index 0..{L - 1}; got {subject!r}.")
    if not is_real_number(sharpness):
        raise TypeError(f"sharpness must be a number (how much sharper the preferred key's score is, e.g. "
                        f"8.0); got {sharpness!r} ({type(sharpness).__name__}).")
    if not np.isfinite(sharpness) or sharpness < 0:
        raise ValueError(f"sharpness must be a finite number ≥ 0; got {sharpness!r}.")
    d_head = L + 2                     # positions, then "subject" and "constant" features
    d_model = 3 * d_head
    SUBJ, ONE = L, L + 1               # feature columns within a head's block and within x
    x = np.zeros((L, d_model))
    x[np.arange(L), np.arange(L)] = 1.0
    x[subject, SUBJ] = 1.0
    x[:, ONE] = 1.0
    gain = sharpness * np.sqrt(d_head)  # the score after dividing by √d_head is `sharpness`
    w_q, w_k, w_v = (np.zeros((d_model, d_model)) for _ in range(3))
    prev, subj, unif = (slice(i * d_head, (i + 1) * d_head) for i in range(3))
    # previous token: q_i = gain·e_{i-1},  k_j = e_j
    w_q[1:L, prev][np.arange(L - 1), np.arange(L - 1)] = gain
    w_k[:L, prev][np.arange(L), np.arange(L)] = 1.0
    # subject: q_i = gain·e_SUBJ (from the constant feature),  k_j = [j is the subject]·e_SUBJ
    w_q[ONE, subj.start + SUBJ] = gain
    w_k[SUBJ, subj.start + SUBJ] = 1.0
    # uniform: W_Q stays 0.  Values: every head carries the one-hot position of the key.
    for block in (prev, subj, unif):
        w_v[:L, block][np.arange(L), np.arange(L)] = 1.0
    return {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": np.eye(d_model), "n_heads": 3,
            "head_names": HANDMADE_HEADS, "tokens": tokens}
