"""Lesson 06's experiments with heads: the shape at each stage, what heads cost, heads built by hand.

The formulas are in :mod:`lessons_lib.core.multihead` (``split_heads``, ``merge_heads``,
``multi_head_attention``, the per-head form); this module is what notebook 06 shows with them:

* :func:`shape_stages`, the shape of the data after each line of multi-head attention;
* :func:`multi_head_cost`, the parameters and FLOPs of a layer for any number of heads;
* :func:`handmade_heads`, three heads whose weights are set by hand to look for different things.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_positive_int, is_real_number, is_whole_number
from ..core.multihead import check_heads

__all__ = ["shape_stages", "multi_head_cost", "handmade_heads", "HANDMADE_HEADS"]


def shape_stages(seq_len: int, d_model: int, n_heads: int) -> list[tuple[str, str, tuple]]:
    """The shape of the data at each stage of multi-head self-attention, as ``(stage, code, shape)``.

    ``code`` is the numpy that takes the previous stage to this one (as inside
    :func:`~lessons_lib.core.multihead.split_heads`, :func:`~lessons_lib.core.multihead.merge_heads` and
    :func:`~lessons_lib.core.multihead.multi_head_attention`).
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
    ``w_v``, ``w_o`` (the big matrices for
    :func:`~lessons_lib.core.multihead.multi_head_attention`),
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
