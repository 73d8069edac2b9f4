"""Where each token stands: sinusoidal encodings, rotary embeddings (RoPE), ALiBi. Notebook 11.

Attention alone ignores order: shuffle the tokens and every output is shuffled the same way
(permutation equivariance). Three ways to tell it where each token stands:

* **sinusoidal positions** (Vaswani et al. 2017, §3.5), *added* to each token's vector once::

      PE(pos, 2i) = sin(pos · ω_i),   PE(pos, 2i + 1) = cos(pos · ω_i),   ω_i = base^(−2i/d_model)

* **rotary embeddings, RoPE** (Su et al. 2021, "RoFormer"), applied to the queries and keys of every
  layer: pair i of a head's d_head dimensions turns by the angle position · θ_i, θ_i = base^(−2i/d_head),
  i = 0 … d_head/2 − 1. A rotation keeps lengths, and two rotated vectors meet at the difference of
  their angles, so the score of a query at m and a key at n depends on the offset n − m only::

      (R_m q) · (R_n k) = q · (R_{n−m} k)

  The values are not rotated. Which dimensions form pair i is a *convention*
  (:data:`~lessons_lib._checks.ROPE_CONVENTIONS`): "half" pairs (i, i + d_head/2) (GPT-NeoX, Llama in
  transformers), "interleaved" pairs (2i, 2i + 1) (the RoFormer paper, GPT-J). The same weights give other
  numbers under the other convention; :func:`convention_permutation` of the weights' columns maps one
  onto the other.

* **ALiBi** (Press et al. 2022, "Train short, test long"): no change to the vectors; head h adds
  −m_h · |i − j| to the score of query i and key j, a penalty that grows with the distance, with slopes
  m_h falling geometrically from head to head (:func:`alibi_slopes`).

Shapes: ``x (..., seq_len, d_head)`` (any leading batch and head axes), ``positions (seq_len,)`` or any
shape that broadcasts to ``x.shape[:-1]``: a decoding step passes one position, ``[t]``, for its one token.
The multi-head path is ``multi_head_attention(..., rope=True)`` (or ``rope=Rotary(...)``), the torch
path ``sdpa_attention(..., rope=...)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import (
    ROPE_CONVENTIONS,
    as_float_array,
    check_base,
    check_convention,
    check_memory,
    check_pairs,
    check_positions,
    check_positive_int,
    is_flag,
)

__all__ = ["ROPE_CONVENTIONS", "DEFAULT_BASE", "sinusoidal_positions", "rope_frequencies", "rope_angles",
           "rope_pairs", "rope", "convention_permutation", "Rotary", "as_rotary", "alibi_slopes",
           "alibi_bias"]

#: The base of the paper's sinusoids and of RoPE's frequencies (Llama 3 uses 500000).
DEFAULT_BASE = 10000.0


# --------------------------------------------------------------------------- §3.5: sinusoids
def sinusoidal_positions(seq_len: int, d_model: int, *, base: float = DEFAULT_BASE) -> np.ndarray:
    """The paper's positional encoding (§3.5), ``(seq_len, d_model)`` float64, one row per position.

    PE(pos, 2i) = sin(pos · ω_i) and PE(pos, 2i + 1) = cos(pos · ω_i), ω_i = base^(−2i/d_model): column
    pair i is a clock turning at its own speed, fast in the first columns and slow in the last. Added to the
    token vectors (``x + sinusoidal_positions(L, d)``). For an even d_model, the dot product of two rows is
    Σ_i cos((m − n)·ω_i): it depends on the distance m − n only. (An odd d_model ends with a sine of its
    own.) Notebook 11.
    """
    seq_len = check_positive_int(seq_len, "seq_len")
    d_model = check_positive_int(d_model, "d_model")
    base = check_base(base)
    check_memory(3.0 * seq_len * d_model * 8, f"sinusoidal_positions({seq_len}, {d_model})",
                 "Use fewer positions or a smaller d_model.")
    pair = np.arange(d_model) // 2
    angle = np.arange(seq_len)[:, None] / np.power(base, 2 * pair / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))


# --------------------------------------------------------------------------- RoPE
def rope_frequencies(d_head: int, *, base: float = DEFAULT_BASE) -> np.ndarray:
    """θ_i = base^(−2i/d_head) for the d_head/2 pairs, ``(d_head/2,)`` float64: radians per position.

    Pair 0 turns by one radian per position (a full turn in about 6 tokens); the last pair turns
    base^(−(d_head − 2)/d_head) radians per position, so slowly that it takes tens of thousands of tokens to
    go round once.

    >>> rope_frequencies(4, base=100.0)
    array([1. , 0.1])
    """
    d_head = check_pairs(check_positive_int(d_head, "d_head"), "d_head", "d_head")
    base = check_base(base)
    return base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def rope_angles(positions, d_head: int, *, base: float = DEFAULT_BASE) -> np.ndarray:
    """The angle of every pair at every position, position · θ_i: ``(..., seq_len, d_head/2)`` float64.

    ``positions`` is ``(seq_len,)`` (or ``(..., seq_len)``) whole numbers ≥ 0.
    """
    theta = rope_frequencies(d_head, base=base)
    positions = check_positions(positions, np.shape(positions) or (1,))
    return positions[..., None].astype(np.float64) * theta


def rope_pairs(d_head: int, convention: str = "half") -> np.ndarray:
    """Which two dimensions turn together as pair i: ``(d_head/2, 2)`` indices, row i = (first, second).

    >>> rope_pairs(6, "half").tolist(), rope_pairs(6, "interleaved").tolist()
    ([[0, 3], [1, 4], [2, 5]], [[0, 1], [2, 3], [4, 5]])
    """
    d_head = check_pairs(check_positive_int(d_head, "d_head"), "d_head", "d_head")
    convention = check_convention(convention)
    i = np.arange(d_head // 2)
    if convention == "half":
        return np.stack([i, i + d_head // 2], axis=1)
    return np.stack([2 * i, 2 * i + 1], axis=1)


def rope(x, positions, *, base: float = DEFAULT_BASE, convention: str = "half") -> np.ndarray:
    """Rotary position embedding: turn pair i of every row by position · θ_i, θ_i = base^(−2i/d_head).

    For each pair (a, b) of dimensions (:func:`rope_pairs`) and the angle φ = position · θ_i::

        a' = a·cos φ − b·sin φ,     b' = b·cos φ + a·sin φ

    ``x (..., seq_len, d_head)``: queries or keys, any leading batch and head axes, d_head even;
    ``positions``: ``(seq_len,)`` whole numbers ≥ 0 (``np.arange(seq_len)`` for a whole sequence, ``[t]``
    for one token generated at step t), or a shape that broadcasts to ``x.shape[:-1]``. ``convention``:
    "half" (GPT-NeoX, Llama in transformers) or "interleaved" (RoFormer, GPT-J). Returns an array of
    ``x``'s shape and float dtype. Lengths are kept, position 0 leaves a row as it is, and the score of a
    rotated query and key depends on their offset only. Apply it to Q and K, never to V. Notebook 11.
    """
    x = as_float_array(x, "x", min_ndim=2, shape="(..., seq_len, d_head)")
    d_head = check_pairs(x.shape[-1])
    positions = check_positions(positions, x.shape[:-1])
    angles = positions[..., None].astype(np.float64) * rope_frequencies(d_head, base=base)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    first, second = rope_pairs(d_head, convention).T
    a, b = x[..., first], x[..., second]
    out = np.empty(np.broadcast_shapes(x.shape, (*positions.shape, d_head)), dtype=x.dtype)
    out[..., first] = a * cos - b * sin
    out[..., second] = b * cos + a * sin
    return out


def convention_permutation(d_head: int) -> np.ndarray:
    """The order of columns that turns interleaved pairs into half pairs: ``(d_head,)`` indices.

    ``perm = [0, 2, 4, …, 1, 3, 5, …]``: interleaved pair i, columns (2i, 2i + 1), lands on half pair i,
    columns (i, i + d_head/2). So for every ``x``::

        rope(x, p, convention="interleaved")[..., perm] == rope(x[..., perm], p, convention="half")

    and weights W_Q, W_K written for the interleaved convention give the same scores under "half" once
    their columns are reordered, ``W_Q[:, perm]`` and ``W_K[:, perm]`` (what converters of RoFormer-style
    checkpoints to Llama's layout do). ``np.argsort(perm)`` goes back.

    >>> convention_permutation(6).tolist()
    [0, 2, 4, 1, 3, 5]
    """
    d_head = check_pairs(check_positive_int(d_head, "d_head"), "d_head", "d_head")
    return np.concatenate([np.arange(0, d_head, 2), np.arange(1, d_head, 2)])


@dataclass(frozen=True)
class Rotary:
    """How :func:`~lessons_lib.core.multihead.multi_head_attention` and ``sdpa_attention`` apply RoPE.

    ``positions`` of the queries and ``key_positions`` of the keys (None: ``0 … seq_len − 1``, the keys
    at the queries' positions when Q and K have the same length; a decoding step with fewer queries than
    keys names both: ``Rotary(positions=[t], key_positions=np.arange(t + 1))``), ``base`` and
    ``convention`` as in :func:`rope`. ``rope=True`` means ``Rotary()``.
    """

    positions: object = None
    key_positions: object = None
    base: float = DEFAULT_BASE
    convention: str = "half"

    def __post_init__(self):
        check_base(self.base)
        check_convention(self.convention)

    def resolve(self, n_queries: int, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
        """``(query positions (n_queries,), key positions (n_keys,))`` for Q with n_queries rows and K with
        n_keys (checked: whole numbers ≥ 0, one per token)."""
        n_queries = check_positive_int(n_queries, "n_queries")
        n_keys = check_positive_int(n_keys, "n_keys")
        q_pos, k_pos = self.positions, self.key_positions
        if q_pos is None and (k_pos is None or n_queries == n_keys):
            q_pos = np.arange(n_queries)
        if k_pos is None:
            if n_queries != n_keys:
                raise ValueError(
                    f"rope: Q has {n_queries} tokens and K has {n_keys}, so say where each stands: Rotary("
                    f"positions=<{n_queries} query positions>, key_positions=<{n_keys} key positions>), "
                    f"e.g. for one new token after {n_keys - 1} cached ones Rotary(positions=[{n_keys - 1}], "
                    f"key_positions=np.arange({n_keys})).")
            k_pos = q_pos
        if q_pos is None:
            raise ValueError(f"rope: key_positions are given but not positions; give the {n_queries} query "
                             f"positions too.")
        return (check_positions(q_pos, (n_queries,), "positions"),
                check_positions(k_pos, (n_keys,), "key_positions"))


def as_rotary(value) -> Rotary | None:
    """``rope=`` as given to the attention functions: None or False (no rotation), True (``Rotary()``), a
    :class:`Rotary`, or a convention name ("half", "interleaved")."""
    if value is None or (is_flag(value) and not value):
        return None
    if is_flag(value):
        return Rotary()
    if isinstance(value, Rotary):
        return value
    if isinstance(value, str):
        return Rotary(convention=check_convention(value, "rope"))
    raise TypeError(f"rope must be True, a convention name (\"half\" or \"interleaved\") or Rotary("
                    f"positions=..., base=..., convention=...); got {value!r} ({type(value).__name__}).")


# --------------------------------------------------------------------------- ALiBi
def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's slope m_h of each head, ``(n_heads,)``: for n a power of two, m_h = 2^(−8h/n), h = 1 … n.

    Other head counts take the slopes of the power of two below and every other slope of the one above,
    as in the paper's code (Press et al. 2022). With 8 heads: 1/2, 1/4, …, 1/256: the first head looks
    near, the last far.

    >>> alibi_slopes(4).tolist()
    [0.25, 0.0625, 0.015625, 0.00390625]
    """
    n_heads = check_positive_int(n_heads, "n_heads")
    power = 1 << (n_heads.bit_length() - 1)   # the largest power of two ≤ n_heads
    slopes = 2.0 ** (-8.0 * np.arange(1, power + 1) / power)
    if power == n_heads:
        return slopes
    extra = 2.0 ** (-8.0 * np.arange(1, 2 * power + 1) / (2 * power))[0::2][: n_heads - power]
    return np.concatenate([slopes, extra])


def alibi_bias(n_heads: int, seq_len: int, *, n_keys: int | None = None) -> np.ndarray:
    """ALiBi's bias, added to the scores: ``(n_heads, seq_len, n_keys)``, entry (h, i, j) = −m_h · |i − j|.

    The farther a key, the lower its score, by a slope m_h per head (:func:`alibi_slopes`); no vector is
    changed. ``n_keys`` (default seq_len) longer than seq_len puts the queries at the last positions, as
    in generation (query i stands at n_keys − seq_len + i). Behind a causal mask only j ≤ i counts, where
    |i − j| = i − j as in the paper. Notebook 11.
    """
    slopes = alibi_slopes(n_heads)
    seq_len = check_positive_int(seq_len, "seq_len")
    n_keys = seq_len if n_keys is None else check_positive_int(n_keys, "n_keys")
    if n_keys < seq_len:
        raise ValueError(f"n_keys must be at least seq_len = {seq_len} (the queries stand among the keys); "
                         f"got {n_keys}.")
    check_memory(float(n_heads) * seq_len * n_keys * 8, f"alibi_bias({n_heads}, {seq_len}, n_keys={n_keys})",
                 "Use fewer heads or a shorter sequence.")
    distance = np.abs(np.arange(n_keys - seq_len, n_keys)[:, None] - np.arange(n_keys)[None, :])
    return -slopes[:, None, None] * distance
