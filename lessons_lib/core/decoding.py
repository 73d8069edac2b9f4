"""Generation, one token at a time: the KV cache, grouped-query attention, windows with sinks. Notebook 12.

A causal model generates text in a loop: each step feeds one new token, whose query meets the keys of every
token so far, itself included. In a causal layer the keys and values of earlier tokens never change (a token
sees only the tokens before it), so they are computed once and kept: the **KV cache**. A step then costs one
query against the cache, not the whole sequence again, and gives the same numbers::

    output_t = softmax(q_t · [k_0 … k_t]ᵀ / √d_head) · [v_0 … v_t]

* :class:`KVCache` keeps a layer's keys and values, ``(..., n_kv_heads, length, d_head)`` each, and the
  position of each token; with ``capacity`` it refuses a step past a fixed size (a preallocated cache), with
  ``window`` it is a ring buffer that keeps the last ``window`` tokens (Mistral's rolling buffer) and, with
  ``sinks``, also the first ``sinks`` tokens for good (StreamingLLM's attention sinks).
* :func:`decode_step` attends the new tokens' queries over the cache *after* appending their keys and values:
  query t may see keys 0 … t, the causal row aligned at the bottom right (lesson 07's note), never t + 1.
* **Grouped-query attention** (Ainslie et al. 2023): n_kv_heads key/value heads, each shared by a group of
  n_heads / n_kv_heads consecutive query heads (:func:`kv_head_of`); n_kv_heads = n_heads is multi-head
  attention, 1 is multi-query attention (Shazeer 2019). :func:`repeat_kv` copies each key/value head for
  its group, as transformers' ``repeat_kv`` does; :func:`grouped_query_attention` is a whole layer.
* :func:`cached_attention` is one layer's step on new tokens (project, turn by RoPE at their positions,
  append, attend, W_O), :func:`decode_loop` runs a whole sequence through it in chunks: the course's decode
  loop, equal to :func:`grouped_query_attention` with ``causal=True`` (below 1e-12 in float64).
* :func:`sink_window_mask`: the mask of a sliding window with sinks, for a whole sequence.
* Picking the next token from the last logits: :func:`sampling_probabilities` (temperature, then top-k) and
  :func:`sample_token` (greedy at temperature 0, else one draw).

Shapes: heads are the third axis from the end, as in torch: ``q (..., n_heads, n_new, d_head)``,
``k, v (..., n_kv_heads, n_new, d_head)``; a single head may leave the head axis out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import (
    as_float_array,
    check_cache_entry,
    check_kv_heads,
    check_memory,
    check_output_finite,
    check_positive_int,
    check_scale,
    check_whole_number,
)
from . import position
from .attention import scaled_dot_product_attention
from .masks import causal_mask, sliding_window_mask
from .multihead import merge_heads, split_heads

__all__ = ["kv_head_of", "repeat_kv", "grouped_query_attention", "KVCache", "DecodeStep", "decode_step",
           "cached_attention", "decode_loop", "sink_window_mask", "sampling_probabilities", "sample_token"]


# -------------------------------------------------------------------------- which heads share keys and values
def kv_head_of(n_heads: int, n_kv_heads: int) -> np.ndarray:
    """The key/value head each query head reads: ``(n_heads,)``, query head h → h // (n_heads / n_kv_heads).

    Consecutive query heads form a group (transformers, Meta's Llama, Mistral): with 8 query heads and 2
    key/value heads, heads 0–3 read KV head 0 and heads 4–7 read KV head 1.

    >>> kv_head_of(8, 2).tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """
    n_kv_heads = check_kv_heads(n_heads, n_kv_heads)
    return np.arange(n_heads) // (n_heads // n_kv_heads)


def repeat_kv(kv, n_heads: int) -> np.ndarray:
    """Each key/value head copied for every query head of its group: ``(..., n_kv_heads, S, d_head)`` →
    ``(..., n_heads, S, d_head)``.

    KV head g appears n_heads / n_kv_heads times in a row (``np.repeat`` along the head axis, torch's
    ``repeat_interleave``; what transformers' ``repeat_kv`` does), so query head h meets KV head
    :func:`kv_head_of`\\ (h). Tiling the heads instead (``np.tile``) would pair the heads wrongly whenever
    there are at least two groups. Notebook 12.
    """
    kv = as_float_array(kv, "kv", min_ndim=3, shape="(..., n_kv_heads, seq_len, d_head)")
    n_kv = kv.shape[-3]
    try:
        check_kv_heads(n_heads, n_kv)
    except ValueError as exc:
        raise ValueError(f"kv of shape {kv.shape} holds n_kv_heads = {n_kv} key/value heads (its axis −3): "
                         f"{exc}") from None
    check_memory(float(kv.nbytes) * (n_heads // n_kv),
                 f"repeat_kv of kv {kv.shape} for n_heads = {n_heads:,}",
                 "Use fewer query heads: a real model has tens of them, each a copy of its group's head.")
    return np.repeat(kv, n_heads // n_kv, axis=-3)


# --------------------------------------------------------------------------- a whole layer
def _projection(w, name: str, d_model: int, width: int | None = None) -> np.ndarray:
    w = as_float_array(w, name, min_ndim=2, shape="(d_model, width)")
    if w.ndim != 2 or w.shape[0] != d_model or (width is not None and w.shape[1] != width):
        want = f"({d_model}, {width})" if width is not None else f"({d_model}, n_heads·d_head)"
        raise ValueError(f"{name} has shape {w.shape}, but it must be {want}: rows are the {d_model} "
                         f"features of x, columns the heads' features side by side.")
    return w


def _product(x: np.ndarray, w: np.ndarray, name: str) -> np.ndarray:
    """X·W, refused when finite inputs overflow (as step 1 of notebook 02)."""
    with np.errstate(over="ignore", invalid="ignore"):
        product = x @ w
    check_output_finite(product, f"X·{name}", "X and the weights")
    return product


def _bias(b, name: str, width: int):
    if b is None:
        return None
    b = as_float_array(b, name)
    if b.shape != (width,):
        raise ValueError(f"{name} has shape {b.shape}, but it must be ({width},): one number per output "
                         "feature.")
    return b


@dataclass(frozen=True)
class _Layer:
    """A layer's weights, checked: W_Q (d_model, n_heads·d_head), W_K and W_V (d_model, n_kv_heads·d_head),
    W_O (n_heads·d_head, d_model), optional biases, the heads and the rotary setting."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    biases: tuple
    n_heads: int
    n_kv_heads: int
    d_head: int
    rotary: position.Rotary | None

    @classmethod
    def checked(cls, d_model, w_q, w_k, w_v, w_o, n_heads, n_kv_heads, b_q, b_k, b_v, b_o, rope):
        n_heads = check_positive_int(n_heads, "n_heads")
        n_kv_heads = n_heads if n_kv_heads is None else check_kv_heads(n_heads, n_kv_heads)
        w_q = _projection(w_q, "W_Q", d_model)
        if w_q.shape[1] % n_heads:
            raise ValueError(f"W_Q has {w_q.shape[1]} columns, which do not share out among n_heads = "
                             f"{n_heads} heads: it must have n_heads·d_head columns.")
        d_head = w_q.shape[1] // n_heads
        w_k = _projection(w_k, "W_K", d_model, n_kv_heads * d_head)
        w_v = _projection(w_v, "W_V", d_model, n_kv_heads * d_head)
        w_o = as_float_array(w_o, "W_O", min_ndim=2)
        if w_o.shape != (n_heads * d_head, d_model):
            raise ValueError(f"W_O has shape {w_o.shape}, but it must be ({n_heads * d_head}, {d_model}): "
                             f"the concatenated heads in, the {d_model} features out.")
        biases = (_bias(b_q, "b_Q", n_heads * d_head), _bias(b_k, "b_K", n_kv_heads * d_head),
                  _bias(b_v, "b_V", n_kv_heads * d_head), _bias(b_o, "b_O", d_model))
        return cls(w_q, w_k, w_v, w_o, biases, n_heads, n_kv_heads, d_head, position.as_rotary(rope))

    def project(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Q ``(..., n_heads, L, d_head)``, K and V ``(..., n_kv_heads, L, d_head)`` of the tokens ``x``."""
        named = ((self.w_q, "W_Q"), (self.w_k, "W_K"), (self.w_v, "W_V"))
        q, k, v = (_product(x, w, name) for w, name in named)
        q, k, v = (t if b is None else t + b.astype(t.dtype, copy=False)
                   for t, b in zip((q, k, v), self.biases))
        return split_heads(q, self.n_heads), split_heads(k, self.n_kv_heads), split_heads(v, self.n_kv_heads)

    def turn(self, t: np.ndarray, positions) -> np.ndarray:
        if self.rotary is None:
            return t
        return position.rope(t, positions, base=self.rotary.base, convention=self.rotary.convention)

    def out(self, heads: np.ndarray) -> np.ndarray:
        output = merge_heads(heads) @ self.w_o.astype(heads.dtype, copy=False)
        b_o = self.biases[3]
        return output if b_o is None else output + b_o.astype(output.dtype, copy=False)


def grouped_query_attention(x, w_q, w_k, w_v, w_o, n_heads: int, n_kv_heads: int | None = None, mask=None,
                            causal: bool = False, *, b_q=None, b_k=None, b_v=None, b_o=None, rope=None):
    """Self-attention with ``n_heads`` query heads sharing ``n_kv_heads`` key/value heads. Returns
    ``(output, weights)``.

        Q = X·W_Q + b_Q (n_heads heads),  K = X·W_K + b_K,  V = X·W_V + b_V (n_kv_heads heads each)
        head h = Attention(Q_h, K_g, V_g) with g = kv_head_of(n_heads, n_kv_heads)[h]
        output = Concat(heads)·W_O + b_O

    ``x (..., L, d_model)``; ``w_q (d_model, n_heads·d_head)``, ``w_k`` and ``w_v (d_model,
    n_kv_heads·d_head)``, ``w_o (n_heads·d_head, d_model)``, all in the course's ``x @ W`` layout (in, out);
    d_head need not be d_model / n_heads (Llama's ``head_dim``). ``n_kv_heads`` None is multi-head attention
    (lesson 06's :func:`~lessons_lib.core.multihead.multi_head_attention`, with its square weights), 1 is
    multi-query attention. ``mask``, ``causal`` and ``rope`` as in ``multi_head_attention`` (RoPE turns the
    queries and the keys, never the values). ``weights (..., n_heads, L, L)``. Notebook 12.
    """
    x = as_float_array(x, "x", min_ndim=2)
    layer = _Layer.checked(x.shape[-1], w_q, w_k, w_v, w_o, n_heads, n_kv_heads, b_q, b_k, b_v, b_o, rope)
    q, k, v = layer.project(x)
    if layer.rotary is not None:
        q_pos, k_pos = layer.rotary.resolve(x.shape[-2], x.shape[-2])
        q, k = layer.turn(q, q_pos), layer.turn(k, k_pos)
    if mask is not None:
        mask = np.asarray(mask)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask        # the same mask for every head
    heads, weights = scaled_dot_product_attention(q, repeat_kv(k, layer.n_heads), repeat_kv(v, layer.n_heads),
                                                  mask=mask, causal=causal)
    return layer.out(heads), weights


# --------------------------------------------------------------------------- the cache
class KVCache:
    """The keys and values one causal layer has computed so far, and where each token stands.

    ``KVCache()`` grows without bound (transformers' ``DynamicCache``); ``KVCache(capacity=n)`` holds at
    most n tokens and refuses a step past them (a cache allocated once, as for a fixed context);
    ``KVCache(window=w, sinks=s)`` keeps the first ``s`` tokens for good and the last ``w`` in a ring
    buffer: token p ≥ s goes to slot s + (p − s) mod w, overwriting the token w places before it (Mistral's
    rolling buffer, with StreamingLLM's attention sinks). ``keys``/``values`` (given together) start the
    cache with tokens already computed, at positions 0, 1, … (or ``positions``).

    ``.keys``, ``.values``: ``(..., n_kv_heads, length, d_head)`` in slot order (None while empty; views of
    the cache's memory, which grows by doubling, so a step costs only its new token's copy);
    ``.positions``: the position of the token in each slot; ``.next_position``: where the next token stands;
    ``.nbytes``: the memory the tokens held take. Notebook 12.
    """

    def __init__(self, keys=None, values=None, *, positions=None, capacity: int | None = None,
                 window: int | None = None, sinks: int = 0):
        if capacity is not None and window is not None:
            raise ValueError("give a cache either a capacity (the most tokens it may hold) or a window (it "
                             "keeps the last window tokens, and sinks first ones, in a ring): a window fixes "
                             "its size.")
        self.capacity = None if capacity is None else check_positive_int(capacity, "capacity")
        self.window = None if window is None else check_positive_int(window, "window")
        self.sinks = check_positive_int(sinks, "sinks", minimum=0)
        if self.sinks and self.window is None:
            raise ValueError(f"sinks = {self.sinks} keeps the first tokens when a window drops the old ones; "
                             f"without a window every token is kept anyway. Give window=... too.")
        self._k: np.ndarray | None = None      # the memory: (..., n_kv_heads, room, d_head)
        self._v: np.ndarray | None = None
        self._positions = np.zeros(0, dtype=np.int64)
        self._length = 0
        self.next_position = 0
        if (keys is None) != (values is None):
            raise ValueError("give keys and values together (one value per key), or neither for an empty "
                             "cache.")
        if keys is not None:
            self._start(keys, values, positions)

    def _start(self, keys, values, positions) -> None:
        keys = as_float_array(keys, "keys", min_ndim=2, shape="(..., n_kv_heads, length, d_head)")
        values = as_float_array(values, "values", min_ndim=2, shape="(..., n_kv_heads, length, d_head)")
        if keys.shape[:-1] != values.shape[:-1]:
            raise ValueError(f"keys {keys.shape} and values {values.shape} must agree in every axis but "
                             f"the last: one value per key, in the same heads.")
        n = keys.shape[-2]
        if self.window is not None and n > self.size:
            raise ValueError(
                f"the cache given holds {n} tokens, but a window of {self.window}"
                f"{f' with {self.sinks} sinks' if self.sinks else ''} keeps at most {self.size}: a "
                f"sliding-window cache never holds more. Give only the tokens it keeps, or a larger window.")
        if self.capacity is not None and n > self.capacity:
            raise ValueError(f"the cache given holds {n} tokens, more than its capacity of {self.capacity}.")
        start = np.arange(n) if positions is None else _positions(positions, n)
        self._room(keys, values, n)
        self._k[..., :n, :], self._v[..., :n, :] = keys, values
        self._positions[:n] = start
        self._length = n
        self.next_position = int(start.max()) + 1

    def _room(self, k: np.ndarray, v: np.ndarray, needed: int) -> None:
        """Memory for ``needed`` tokens: the cache's whole size when it has one, else doubling as it grows."""
        room = 0 if self._k is None else self._k.shape[-2]
        if needed <= room:
            return
        target = self.size if self.size is not None else max(needed, 2 * room, 16)
        grown_k = np.empty((*k.shape[:-2], target, k.shape[-1]), dtype=k.dtype)
        grown_v = np.empty((*v.shape[:-2], target, v.shape[-1]), dtype=v.dtype)
        positions = np.full(target, -1, dtype=np.int64)
        if self._k is not None:
            grown_k[..., :self._length, :] = self.keys
            grown_v[..., :self._length, :] = self.values
            positions[:self._length] = self.positions
        self._k, self._v, self._positions = grown_k, grown_v, positions

    @property
    def keys(self) -> np.ndarray | None:
        return None if self._k is None or not self._length else self._k[..., :self._length, :]

    @property
    def values(self) -> np.ndarray | None:
        return None if self._v is None or not self._length else self._v[..., :self._length, :]

    @property
    def positions(self) -> np.ndarray:
        return self._positions[:self._length]

    @property
    def size(self) -> int | None:
        """The most tokens this cache holds at once (None: no bound)."""
        return self.sinks + self.window if self.window is not None else self.capacity

    @property
    def length(self) -> int:
        """How many tokens the cache holds now."""
        return self._length

    @property
    def nbytes(self) -> int:
        """The memory the keys and values of the tokens held take, in bytes."""
        return 0 if self.keys is None else int(self.keys.nbytes + self.values.nbytes)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        kind = ("" if self.size is None else f", capacity {self.capacity}" if self.window is None
                else f", window {self.window}, sinks {self.sinks}")
        shape = "empty" if self.keys is None else f"keys and values {self.keys.shape}"
        return f"KVCache({self.length} tokens{kind}; {shape})"

    def check_new(self, k, v) -> tuple[np.ndarray, np.ndarray]:
        """The new keys and values ``(..., n_kv_heads, n_new, d_head)`` as arrays that fit this cache."""
        k = as_float_array(k, "k", min_ndim=2, shape="(..., n_kv_heads, n_new, d_head)")
        v = as_float_array(v, "v", min_ndim=2, shape="(..., n_kv_heads, n_new, d_head)")
        if k.shape[:-1] != v.shape[:-1]:
            raise ValueError(f"the new keys {k.shape} and values {v.shape} must agree in every axis but the "
                             f"last: one value per key.")
        if self._k is not None:
            check_cache_entry(k, self._k, "key")
            check_cache_entry(v, self._v, "value")
        n_new = k.shape[-2]
        if self.capacity is not None and self.length + n_new > self.capacity:
            first = self.next_position + max(self.capacity - self.length, 0)
            raise ValueError(
                f"the token at position {first} does not fit: the cache holds {self.length} of its capacity "
                f"of {self.capacity} tokens and this step brings {n_new}. A step past the cache's capacity "
                f"has nowhere to keep its key and value: make the cache larger, or use a window.")
        return k, v

    def append(self, k, v) -> np.ndarray:
        """Keep the keys and values of ``n_new`` new tokens (positions next_position, …); return those
        positions.

        With a window, a token past the sinks overwrites the oldest token of the ring.
        """
        k, v = self.check_new(k, v)
        n_new = k.shape[-2]
        new_positions = np.arange(self.next_position, self.next_position + n_new, dtype=np.int64)
        check_memory(float(self.nbytes + k.nbytes + v.nbytes), f"a KV cache of {self.length + n_new} tokens",
                     "Use a window, or fewer tokens.")
        if self.window is None:
            self._room(k, v, self._length + n_new)
            self._k[..., self._length:self._length + n_new, :] = k
            self._v[..., self._length:self._length + n_new, :] = v
            self._positions[self._length:self._length + n_new] = new_positions
            self._length += n_new
        else:
            self._room(k, v, self.size)
            for i, p in enumerate(new_positions):
                slot = self._length if self._length < self.size else self.slot_of_oldest()
                self._k[..., slot, :], self._v[..., slot, :] = k[..., i, :], v[..., i, :]
                self._positions[slot] = p
                self._length = max(self._length, slot + 1)
        self.next_position += n_new
        return new_positions

    def slot_of_oldest(self) -> int:
        """The slot a full window overwrites next: the oldest token past the sinks (slot
        s + (p − s) mod w for the token at p)."""
        ring = np.flatnonzero(self.positions >= self.sinks)
        return int(ring[np.argmin(self.positions[ring])])

    def allowed(self, query_positions, key_positions) -> np.ndarray:
        """``(n_queries, n_keys)`` bool: which key each query may attend to, by position: j ≤ i, and with a
        window i − j < window or j < sinks."""
        i = np.asarray(query_positions)[:, None]
        j = np.asarray(key_positions)[None, :]
        ok = j <= i
        if self.window is not None:
            ok &= (i - j < self.window) | (j < self.sinks)
        return ok


def _positions(positions, n: int) -> np.ndarray:
    arr = np.asarray(positions)
    if arr.shape != (n,) or arr.dtype.kind not in "iu" or (arr < 0).any() or len(set(arr.tolist())) != n:
        raise ValueError(f"positions must give each of the {n} cached tokens its own position, whole numbers "
                         f"≥ 0; got {positions!r}.")
    return arr


# --------------------------------------------------------------------------- one step
@dataclass
class DecodeStep:
    """What :func:`decode_step` returns: ``output (..., n_heads, n_new, d_v)``, ``weights (..., n_heads,
    n_new, n_keys)`` over the keys at ``key_positions`` (the cache before the step, then the new tokens),
    and the ``positions`` of the new tokens. Unpacks as ``output, weights = decode_step(...)``."""

    output: np.ndarray
    weights: np.ndarray
    key_positions: np.ndarray
    positions: np.ndarray

    def __iter__(self):
        return iter((self.output, self.weights))


def decode_step(q, k, v, cache: KVCache, *, scale: float | None = None) -> DecodeStep:
    """The new tokens' attention over everything before them and themselves, with the cache filled on the way.

    ``q (..., n_heads, n_new, d_head)`` (or ``(n_new, d_head)`` for one head), ``k, v (..., n_kv_heads,
    n_new, d_head)``: the new tokens' queries, keys and values, already turned by RoPE at their positions
    when the model uses it (``cache.next_position`` and on). The keys and values join the cache *before* the
    scores, so each new token sees itself; the new token at position t sees keys 0 … t (with a window, only
    the last ``window`` of them and the sinks), never t + 1. With fewer key/value heads than query heads
    (grouped-query attention) each is shared by its group (:func:`repeat_kv`). ``scale`` defaults to
    1/√d_head. Notebook 12.
    """
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache (ll.KVCache()); got {type(cache).__name__}.")
    q = as_float_array(q, "q", min_ndim=2, shape="(..., n_heads, n_new, d_head)")
    k, v = cache.check_new(k, v)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"the queries have d_head = {q.shape[-1]} but the keys have {k.shape[-1]}: a query "
                         f"meets a key by a dot product, so both need the same length.")
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(f"q brings {q.shape[-2]} new tokens but k brings {k.shape[-2]}: each new token has "
                         f"one query, one key and one value.")
    factor = check_scale(scale, q.shape[-1])
    if cache.window is None:     # the cache keeps every token: after the append it holds what the step reads
        positions = cache.append(k, v)
        keys, values, key_positions = cache.keys, cache.values, cache.positions.copy()
    else:                        # a ring may overwrite keys that earlier tokens of this step still need
        before = (cache.keys, cache.values, cache.positions)
        before = tuple(None if a is None else a.copy() for a in before)
        positions = cache.append(k, v)
        keys, values = ((k, v) if before[0] is None else
                        (np.concatenate([before[0], k], axis=-2), np.concatenate([before[1], v], axis=-2)))
        key_positions = np.concatenate([before[2], positions])
    if q.ndim >= 3 and k.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        keys, values = repeat_kv(keys, q.shape[-3]), repeat_kv(values, q.shape[-3])
    allowed = cache.allowed(positions, key_positions)
    output, weights = scaled_dot_product_attention(q, keys, values, mask=allowed, scale=factor)
    return DecodeStep(output, weights, key_positions, positions)


# --------------------------------------------------------------------------- a layer, step by step
def cached_attention(x_new, cache: KVCache, w_q, w_k, w_v, w_o, n_heads: int, n_kv_heads: int | None = None,
                     *, b_q=None, b_k=None, b_v=None, b_o=None, rope=None):
    """One layer's step on the new tokens ``x_new (..., n_new, d_model)``, with its ``cache``. Returns
    ``(output (..., n_new, d_model), weights (..., n_heads, n_new, n_keys))``.

    Projects the new tokens only, turns their queries and keys by RoPE at their own positions (the cache says
    where they stand: ``cache.next_position`` and on), appends the keys and values to the cache, attends
    (:func:`decode_step`) and applies W_O. Same weights as :func:`grouped_query_attention`; ``rope`` True, a
    convention name or a ``Rotary`` whose base and convention are used (its positions come from the cache).
    """
    x_new = as_float_array(x_new, "x_new", min_ndim=2, shape="(..., n_new, d_model)")
    layer = _Layer.checked(x_new.shape[-1], w_q, w_k, w_v, w_o, n_heads, n_kv_heads, b_q, b_k, b_v, b_o, rope)
    q, k, v = layer.project(x_new)
    positions = np.arange(cache.next_position, cache.next_position + x_new.shape[-2])
    q, k = layer.turn(q, positions), layer.turn(k, positions)
    step = decode_step(q, k, v, cache)
    return layer.out(step.output), step.weights


def decode_loop(x, w_q, w_k, w_v, w_o, n_heads: int, n_kv_heads: int | None = None, *, chunk: int = 1,
                cache: KVCache | None = None, b_q=None, b_k=None, b_v=None, b_o=None, rope=None):
    """The course's decode loop: the tokens of ``x (..., L, d_model)`` fed ``chunk`` at a time through
    :func:`cached_attention`. Returns ``(output (..., L, d_model), cache)``.

    With a cache that keeps every token (the default, ``KVCache()``), the output is exactly
    ``grouped_query_attention(x, ..., causal=True)``: the tokens before a step never change, so keeping
    their keys and values loses nothing. ``chunk`` > 1 feeds several tokens per step (a prompt read at once,
    *prefill*); ``chunk`` = 1 is token-by-token generation (*decode*).
    """
    x = as_float_array(x, "x", min_ndim=2)
    chunk = check_positive_int(chunk, "chunk")
    cache = KVCache() if cache is None else cache
    weights = dict(w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, n_heads=n_heads, n_kv_heads=n_kv_heads, b_q=b_q,
                   b_k=b_k, b_v=b_v, b_o=b_o, rope=rope)
    outputs = [cached_attention(x[..., start:start + chunk, :], cache, **weights)[0]
               for start in range(0, x.shape[-2], chunk)]
    return np.concatenate(outputs, axis=-2), cache


# --------------------------------------------------------------------------- long contexts
def sink_window_mask(n: int, window: int, sinks: int = 0) -> np.ndarray:
    """``(n, n)`` bool, True = may attend: query i sees its last ``window`` tokens (i − window + 1 … i) and
    the first ``sinks`` tokens (0 … sinks − 1), never a later token.

    ``sinks = 0`` is Mistral's sliding window (lesson 07's
    :func:`~lessons_lib.core.masks.sliding_window_mask`);
    a few sinks keep the first tokens in sight for good, as StreamingLLM does (Xiao et al. 2024).

    >>> sink_window_mask(5, 2, sinks=1).astype(int)
    array([[1, 0, 0, 0, 0],
           [1, 1, 0, 0, 0],
           [1, 1, 1, 0, 0],
           [1, 0, 1, 1, 0],
           [1, 0, 0, 1, 1]])
    """
    n = check_positive_int(n, "n")
    window = check_positive_int(window, "window")
    sinks = check_whole_number(sinks, "sinks")
    if sinks < 0:
        raise ValueError(f"sinks must be 0 or more (how many first tokens stay in sight); got {sinks}.")
    mask = sliding_window_mask(n, window, causal=True)
    mask[:, :min(sinks, n)] |= causal_mask(n)[:, :min(sinks, n)]
    return mask


# --------------------------------------------------------------------------- picking the next token
def sampling_probabilities(logits, *, temperature: float = 1.0, top_k: int | None = None) -> np.ndarray:
    """The distribution the next token is drawn from: ``softmax(logits / temperature)`` over the ``top_k``
    largest logits only (the others get probability 0). ``(V,)`` float64, summing to 1.

    Temperature below 1 sharpens the distribution towards the largest logit, above 1 flattens it; as it goes
    to 0 all the probability goes to the largest logit (greedy decoding: temperature 0 is exactly that, the
    first of tied largest logits). Ties at the k-th largest logit are all kept. Notebook 12.
    """
    logits = as_float_array(logits, "logits", shape="(vocabulary,)")
    if logits.ndim != 1 or logits.size < 1:
        raise ValueError(f"logits must be one row of scores, one per token of the vocabulary: shape (V,); "
                         f"got {logits.shape}. For a sequence's logits pass the last row, logits[-1].")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.floating, np.integer)) \
            or not np.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a number ≥ 0 (0: always the most likely token); got "
                         f"{temperature!r}.")
    logits = logits.astype(np.float64)
    keep = np.ones(logits.size, bool)
    if top_k is not None:
        top_k = check_positive_int(top_k, "top_k")
        if top_k < logits.size:
            keep = logits >= np.sort(logits)[-top_k]
    if temperature == 0:
        probabilities = np.zeros(logits.size)
        probabilities[int(np.argmax(logits))] = 1.0
        return probabilities
    scaled = np.where(keep, logits / float(temperature), -np.inf)
    e = np.exp(scaled - scaled.max())
    return e / e.sum()


def sample_token(logits, *, temperature: float = 1.0, top_k: int | None = None,
                 rng: np.random.Generator | None = None) -> int:
    """The next token: the largest logit at ``temperature`` 0 (greedy), else one draw from
    :func:`sampling_probabilities` with ``rng`` (a ``np.random.Generator``; seed it for a repeatable text).
    Notebook 12."""
    probabilities = sampling_probabilities(logits, temperature=temperature, top_k=top_k)
    if temperature == 0:
        return int(np.argmax(probabilities))
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a np.random.Generator (np.random.default_rng(seed)) to draw with "
                        f"temperature {temperature}; got {type(rng).__name__}.")
    return int(rng.choice(probabilities.size, p=probabilities))
