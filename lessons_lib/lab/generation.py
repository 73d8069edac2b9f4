"""The experiments of notebook 12: generation step by step, what the KV cache saves, and what it costs.

* :func:`trace_generation` runs one attention head over the course's sentence (lesson 02's word vectors and
  projections) one token at a time with a :class:`~lessons_lib.core.decoding.KVCache`, beside the whole
  causal attention recomputed at every step (:class:`GenerationTrace`): the rows agree below 1e-12, and
  the dot products each way are counted.
* :func:`cache_agreement`: the course's decode loop against attention recomputed in full, for one head, for
  several heads with RoPE, and for grouped-query attention, fed one token or a few at a time.
* :func:`generation_flops` counts the floating-point operations of a layer generating N tokens with and
  without the cache; :func:`measure_decode` times a step each way as the context grows (one run's
  :class:`DecodeTimes`: log-log slopes and a verdict); :func:`measure_prefill_decode` times a prompt read at
  once against one generated token and says what bounds each (:class:`PrefillDecode`).
* Grouped-query attention from a trained model: :func:`pool_kv_heads` averages the key and value heads of
  each group (how Ainslie et al. 2023 convert a multi-head checkpoint), :func:`gqa_conversion` compares a
  layer before and after, :func:`pool_model_kv_heads` converts lesson 09's trained model and measures it.
* Long contexts: :func:`sink_head` (a head whose first token collects most of the weight, as trained heads
  do), :func:`window_experiment` (its outputs under a sliding window with and without sinks, against full
  attention), :func:`ring_buffer` (which token each slot of a rolling cache holds, step by step) and
  :func:`evict_sink` (lesson 09's trained sink head with its ``<s>`` evicted).

Verdicts are sentences that hold on any machine; measured numbers are printed beside them, by the cell that
measured them. torch is imported only by the experiments on lesson 09's models.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import numpy as np

from .._checks import check_int_in_range, check_kv_heads, check_positive_int, check_seed, format_bytes
from ..core import decoding, multihead
from ..core.attention import scaled_dot_product_attention
from ..core.masks import causal_mask
from . import data
from .cost import loglog_slope

__all__ = ["GENERATION_TOKENS", "GenerationTrace", "trace_generation", "cache_agreement", "GenerationFlops",
           "generation_flops", "DecodeTimes", "measure_decode", "PrefillDecode", "measure_prefill_decode",
           "pool_kv_heads", "convert_to_gqa", "GQAConversion", "gqa_conversion", "pool_model_kv_heads",
           "sink_head", "WindowRun", "window_experiment", "ring_buffer", "SinkEviction", "evict_sink",
           "conversion_verdict", "pooled_verdict"]

#: The sentence the lesson generates: lesson 02's "The cat sat on the mat." and the story that follows.
GENERATION_TOKENS = 12
D_MODEL, D_HEAD = 8, 4            # lesson 02's sizes


# --------------------------------------------------------------------------- one head, step by step
@dataclass
class GenerationTrace:
    """One head run over ``tokens`` one at a time with a KV cache, and recomputed in full at every step.

    ``q``, ``k``, ``v`` ``(L, d_head)``: every token's query, key and value (lesson 02's data); ``weights``
    ``(L, L)``: row t is what step t computed with the cache (zeros after t); ``outputs`` ``(L, d_head)``
    the cached steps' outputs; ``full_weights``, ``full_outputs``: causal attention over the whole sequence
    (what recomputing gives at the last step; its row t is what it gives at step t too).
    """

    tokens: list
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    weights: np.ndarray
    outputs: np.ndarray
    full_weights: np.ndarray
    full_outputs: np.ndarray

    @property
    def n(self) -> int:
        return len(self.tokens)

    def dot_products(self, step: int, *, cached: bool) -> int:
        """The query·key products step ``step`` computes: step + 1 with the cache (one new query against every
        key so far, its own included), 1 + 2 + … + (step + 1) when every row is recomputed."""
        step = check_int_in_range(step, "step", 0, self.n - 1)
        return step + 1 if cached else (step + 1) * (step + 2) // 2

    def projections(self, step: int, *, cached: bool) -> int:
        """The tokens whose query, key and value step ``step`` computes: 1 with the cache, step + 1
        without."""
        step = check_int_in_range(step, "step", 0, self.n - 1)
        return 1 if cached else step + 1

    def difference(self) -> float:
        """The largest difference between the cached steps and full causal attention (outputs and weights)."""
        return float(max(np.abs(self.outputs - self.full_outputs).max(),
                         np.abs(self.weights - self.full_weights).max()))


def trace_generation(n_tokens: int = GENERATION_TOKENS, *, seed: int = 0) -> GenerationTrace:
    """Generate (feed) the first ``n_tokens`` tokens of the course's story one at a time through one head.

    The head is lesson 02's: word vectors of d_model = 8, W_Q, W_K, W_V of 8 × 4 from ``seed``. Step t appends
    token t's key and value to the cache and attends its query over keys 0 … t
    (:func:`~lessons_lib.core.decoding.decode_step`). Notebook 12.
    """
    n = check_int_in_range(n_tokens, "n_tokens", 1, 64)
    seed = check_seed(seed, allow_generator=False)
    tokens = data.tokens_of_length(n)
    x = data.embed_tokens(tokens, D_MODEL, seed)
    q, k, v = (x @ w for w in data.projection_weights(D_MODEL, D_HEAD, seed))
    cache = decoding.KVCache()
    weights, outputs = np.zeros((n, n)), np.zeros((n, D_HEAD))
    for t in range(n):
        step = decoding.decode_step(q[t:t + 1], k[t:t + 1], v[t:t + 1], cache)
        weights[t, :t + 1], outputs[t] = step.weights[0], step.output[0]
    full_outputs, full_weights = scaled_dot_product_attention(q, k, v, causal=True)
    return GenerationTrace(tokens, q, k, v, weights, outputs, full_weights, full_outputs)


def cache_agreement(*, seed: int = 0) -> dict[str, float]:
    """The course's decode loop against attention recomputed in full: ``{what: largest difference}``.

    One head fed token by token (:func:`trace_generation`); four heads with RoPE (lesson 11) fed one token,
    then three at a time, against ``multi_head_attention(..., causal=True, rope=True)``; eight query heads
    sharing two key/value heads with RoPE against :func:`~lessons_lib.core.decoding.grouped_query_attention`.
    All float64: every difference is rounding, far below 1e-12. Notebook 12.
    """
    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    found = {"one head, token by token": trace_generation(seed=seed).difference()}
    x = rng.standard_normal((10, 16))
    w_q, w_k, w_v, w_o = (rng.standard_normal((16, 16)) / 4 for _ in range(4))
    full, _ = multihead.multi_head_attention(x, w_q, w_k, w_v, w_o, 4, causal=True, rope=True)
    for chunk, words in ((1, "token by token"), (3, "three tokens at a time")):
        out, _ = decoding.decode_loop(x, w_q, w_k, w_v, w_o, 4, chunk=chunk, rope=True)
        found[f"4 heads with RoPE, {words}"] = float(np.abs(out - full).max())
    w_k, w_v = (rng.standard_normal((16, 2 * 4)) / 4 for _ in range(2))
    w_q, w_o = rng.standard_normal((16, 8 * 4)) / 4, rng.standard_normal((8 * 4, 16)) / 4
    full, _ = decoding.grouped_query_attention(x, w_q, w_k, w_v, w_o, 8, 2, causal=True, rope=True)
    out, _ = decoding.decode_loop(x, w_q, w_k, w_v, w_o, 8, 2, rope=True)
    found["8 query heads sharing 2 key/value heads, with RoPE, token by token"] = float(
        np.abs(out - full).max())
    return found


# --------------------------------------------------------------------------- what it saves: counted
@dataclass
class GenerationFlops:
    """Floating-point operations of one attention layer generating ``n_tokens`` tokens, step by step.

    ``cached[t]`` and ``recomputed[t]``: step t's operations with the cache (one new token: its projections,
    its scores against t + 1 keys, its weighted sum, W_O) and without it (all t + 1 tokens again). A
    multiply-add counts 2, the softmax 5 per score (as lesson 06's ``multi_head_cost``).
    """

    n_tokens: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    cached: np.ndarray
    recomputed: np.ndarray

    @property
    def ratio(self) -> float:
        """How many times more work recomputing does over the whole generation."""
        return float(self.recomputed.sum() / self.cached.sum())

    def sentence(self) -> str:
        return (f"Generating {self.n_tokens:,} tokens through one layer (d_model = {self.d_model}, "
                f"{self.n_heads} heads): {self.cached.sum():.3g} operations with the cache, "
                f"{self.recomputed.sum():.3g} recomputing every step, {self.ratio:,.0f}× as many.")


def _step_flops(n_queries: np.ndarray, n_keys: np.ndarray, d_model: int, n_heads: int, n_kv_heads: int):
    d_head = d_model // n_heads
    width_kv = n_kv_heads * d_head
    projections = 2 * n_queries * d_model * (d_model + 2 * width_kv)
    scores = n_heads * n_queries * n_keys * (2 * d_head + 1 + 5)      # q·k, scale, softmax
    weighted = n_heads * n_queries * n_keys * 2 * d_head
    out = 2 * n_queries * d_model * d_model
    return (projections + scores + weighted + out).astype(np.float64)


def generation_flops(n_tokens: int = 1024, d_model: int = 768, n_heads: int = 12,
                     n_kv_heads: int | None = None) -> GenerationFlops:
    """Count the work of generating ``n_tokens`` tokens, with the KV cache and recomputing every step.

    With the cache step t costs projections of one token (∝ d_model²) and one row of t + 1 scores (∝ t);
    without it, projections of t + 1 tokens and all (t + 1)² scores. Over N tokens: about N·d² + N²·d
    against N²·d² + N³·d. The defaults are GPT-2 small's layer. Notebook 12.
    """
    n = check_positive_int(n_tokens, "n_tokens")
    d_model = check_positive_int(d_model, "d_model")
    n_heads = multihead.check_heads(n_heads, d_model)
    n_kv = n_heads if n_kv_heads is None else check_kv_heads(n_heads, n_kv_heads)
    if n > 1_000_000:
        raise ValueError(f"n_tokens = {n:,} is more than this count goes to (1,000,000 tokens).")
    t = np.arange(n, dtype=np.float64)
    cached = _step_flops(np.ones(n), t + 1, d_model, n_heads, n_kv)
    recomputed = _step_flops(t + 1, t + 1, d_model, n_heads, n_kv)
    return GenerationFlops(n, d_model, n_heads, n_kv, cached, recomputed)


# --------------------------------------------------------------------------- what it saves: measured
@contextlib.contextmanager
def _one_thread():
    """numpy's BLAS on one thread: on a shared machine a matrix product that waits for a second core makes
    the times jump (lesson 08 measures the same way)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _best_of(fn, repeats: int, setup=None) -> float:
    """The shortest of ``repeats`` runs of ``fn(setup())`` (``fn()`` without a setup), in seconds."""
    best = np.inf
    for _ in range(repeats):
        given = () if setup is None else (setup(),)
        start = time.perf_counter()
        fn(*given)
        best = min(best, time.perf_counter() - start)
    return best


@dataclass
class DecodeTimes:
    """Seconds per generated token at each context length, with the cache and recomputing (one run)."""

    contexts: np.ndarray
    cached: np.ndarray
    recomputed: np.ndarray
    d_model: int
    n_heads: int

    def slopes(self) -> tuple[float, float]:
        """The log-log slopes of time against the context: (with the cache, recomputing)."""
        return loglog_slope(self.contexts, self.cached), loglog_slope(self.contexts, self.recomputed)

    @property
    def ratio(self) -> float:
        """Recomputing's time over the cache's, at the longest context."""
        return float(self.recomputed[-1] / self.cached[-1])

    def verdicts(self) -> str:
        """This run's verdict: how each time grew with the context, and the cache's gain at the longest."""
        cached, recomputed = self.slopes()
        if recomputed > cached + 0.3 and self.ratio > 2:
            verdict = ("Recomputing grew faster with the context than a step with the cache: the longer the "
                       "context, the more the cache saves.")
        else:
            verdict = "On this run the two did not separate clearly (a busy machine?): measure again."
        return "\n".join([
            f"with the cache:  time per token ∝ context^{cached:.2f}",
            f"recomputing:     time per token ∝ context^{recomputed:.2f}",
            verdict,
            f"At {int(self.contexts[-1]):,} tokens of context, recomputing took {self.ratio:,.0f}× as long "
            f"as a step with the cache.",
        ])

    def __str__(self) -> str:
        lines = [f"{'context':>8} {'with cache (ms)':>16} {'recomputed (ms)':>16} {'ratio':>7}"]
        lines += [f"{int(n):>8,} {c * 1e3:>16.3f} {r * 1e3:>16.3f} {r / c:>7.1f}"
                  for n, c, r in zip(self.contexts, self.cached, self.recomputed)]
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def measure_decode(contexts=(256, 512, 1024, 2048), *, d_model: int = 128, n_heads: int = 4,
                   steps: int = 8, repeats: int = 3, seed: int = 0) -> DecodeTimes:
    """Time a generated token as the context grows, with the KV cache and recomputing everything (float32).

    With the cache: ``steps`` tokens generated one after the other by
    :func:`~lessons_lib.core.decoding.cached_attention`, after a prompt of ``context`` tokens already in the
    cache; the time per token. Recomputing: causal multi-head attention over all context + 1 tokens, whose
    last row is the new token's. The best of ``repeats`` runs each, numpy on one thread, this machine, now.
    Notebook 12.
    """
    contexts = np.array(sorted({check_positive_int(c, "each context") for c in contexts}))
    if contexts.size < 2 or contexts[-1] > 8192:
        raise ValueError(f"contexts must hold at least two different lengths up to 8,192; got "
                         f"{contexts.tolist()}.")
    d_model = check_positive_int(d_model, "d_model")
    n_heads = multihead.check_heads(n_heads, d_model)
    steps = check_int_in_range(steps, "steps", 1, 256)
    repeats = check_positive_int(repeats, "repeats")
    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    x = rng.standard_normal((int(contexts[-1]) + steps, d_model)).astype(np.float32)
    ws = [(rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(np.float32) for _ in range(4)]
    d_head = d_model // n_heads
    cached, recomputed = [], []
    with _one_thread():
        for n in (int(c) for c in contexts):
            k, v = ((x[:n] @ w).reshape(n, n_heads, d_head).swapaxes(0, 1) for w in ws[1:3])

            def generate(cache, n=n):
                for i in range(steps):
                    decoding.cached_attention(x[n + i:n + i + 1], cache, *ws, n_heads)

            def recompute(n=n):
                multihead.multi_head_attention(x[:n + 1], *ws, n_heads, causal=True)

            cached.append(_best_of(generate, repeats, setup=lambda k=k, v=v: decoding.KVCache(k, v)) / steps)
            recomputed.append(_best_of(recompute, repeats))
    return DecodeTimes(contexts, np.array(cached), np.array(recomputed), d_model, n_heads)


def _attend(q, k, v):
    """softmax(Q·Kᵀ/√d)·V without the checks (a measurement times the arithmetic, not the validation)."""
    scores = q @ np.swapaxes(k, -1, -2)
    scores *= q.dtype.type(1 / np.sqrt(q.shape[-1]))
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores @ v


@dataclass
class PrefillDecode:
    """A prompt read at once (prefill) against one generated token (decode), over the same cache (one run).

    ``prefill_s``: seconds for ``chunk`` queries against ``context`` keys; ``decode_s``: one query against
    them; ``read_s``: numpy summing an array as large as the cache (how fast this machine reads memory);
    ``cache_bytes``: the keys and values read.
    """

    context: int
    chunk: int
    n_heads: int
    d_head: int
    cache_bytes: int
    prefill_s: float
    decode_s: float
    read_s: float

    def flops(self, n_queries: int) -> float:
        """Multiply-adds ×2 of ``n_queries`` queries against the cache: scores and weighted sum."""
        return 4.0 * self.n_heads * n_queries * self.context * self.d_head

    @property
    def intensity(self) -> tuple[float, float]:
        """Operations per byte of cache read: (decode, prefill). Decode reads every key and value for one
        query."""
        return self.flops(1) / self.cache_bytes, self.flops(self.chunk) / self.cache_bytes

    @property
    def rates(self) -> dict[str, float]:
        """GFLOP/s of prefill and decode, GB/s of decode's reading and of numpy's plain reading."""
        return {"prefill GFLOP/s": self.flops(self.chunk) / self.prefill_s / 1e9,
                "decode GFLOP/s": self.flops(1) / self.decode_s / 1e9,
                "decode GB/s": self.cache_bytes / self.decode_s / 1e9,
                "read GB/s": self.cache_bytes / self.read_s / 1e9}

    def arithmetic(self) -> str:
        """What holds on every machine: the operations per byte each way."""
        decode, prefill = self.intensity
        return (f"The cache: {format_bytes(self.cache_bytes)} of keys and values ({self.context:,} tokens, "
                f"{self.n_heads} heads of {self.d_head}, float32). Decode does {decode:.1f} operation per "
                f"byte it reads; a prefill of {self.chunk} queries does {prefill:,.0f} per byte, "
                f"{prefill / decode:,.0f}× as many: one per query.")

    def verdict(self) -> str:
        """This run's verdict: decode's arithmetic speed against prefill's, its reading speed against
        numpy's."""
        r = self.rates
        slower = r["prefill GFLOP/s"] / r["decode GFLOP/s"]
        reading = r["decode GB/s"] / r["read GB/s"]
        if reading >= 0.5 and slower >= 1.5:
            bound = (f"decode read the cache at {reading:.0%} of the speed numpy reads memory, yet computed "
                     f"{slower:.1f}× fewer operations per second than prefill: it is bound by reading "
                     f"memory, not by arithmetic")
        elif reading >= 0.5:
            bound = (f"decode read the cache at {reading:.0%} of the speed numpy reads memory (it can go no "
                     f"faster), but prefill's arithmetic did not pull ahead clearly: measure again")
        else:
            bound = "the two did not separate clearly (a busy machine?): measure again"
        return (f"Prefill: {r['prefill GFLOP/s']:.1f} GFLOP/s. Decode: {r['decode GFLOP/s']:.2f} GFLOP/s, "
                f"reading the cache at {r['decode GB/s']:.1f} GB/s (numpy reads an array that size at "
                f"{r['read GB/s']:.1f} GB/s). On this run {bound}.")


def measure_prefill_decode(context: int = 8192, *, chunk: int = 256, n_heads: int = 8, d_head: int = 128,
                           repeats: int = 5, seed: int = 0) -> PrefillDecode:
    """Time ``chunk`` queries (prefill) and one query (decode) against a cache of ``context`` tokens
    (float32, numpy on one thread).

    Both do the same per query: scores against every cached key, softmax, weighted sum of the values.
    Prefill reads the cache once for all its queries (matrix products); decode reads all of it for one
    query (matrix-vector products). Notebook 12.
    """
    context = check_int_in_range(context, "context", 256, 32768)
    chunk = check_int_in_range(chunk, "chunk", 2, 1024)
    n_heads = check_int_in_range(n_heads, "n_heads", 1, 64)
    d_head = check_int_in_range(d_head, "d_head", 1, 256)
    repeats = check_positive_int(repeats, "repeats")
    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    k, v = (rng.standard_normal((n_heads, context, d_head), dtype=np.float32) for _ in range(2))
    queries = rng.standard_normal((n_heads, chunk, d_head), dtype=np.float32)
    flat = np.concatenate([k.ravel(), v.ravel()])
    with _one_thread():
        prefill = _best_of(lambda: _attend(queries, k, v), repeats)
        decode = _best_of(lambda: _attend(queries[:, :1], k, v), 4 * repeats)
        read = _best_of(flat.sum, 4 * repeats)
    return PrefillDecode(context, chunk, n_heads, d_head, int(k.nbytes + v.nbytes), prefill, decode, read)


# ---------------------------------------------------------------- grouped-query attention from heads
def pool_kv_heads(w, n_heads: int, n_kv_heads: int) -> np.ndarray:
    """The columns of a key or value projection ``(d_model, n_heads·d_head)`` averaged within each group:
    ``(d_model, n_kv_heads·d_head)``, KV head g the mean of heads g·r … g·r + r − 1 (r = n_heads /
    n_kv_heads).

    Ainslie et al. 2023 build a grouped-query checkpoint from a multi-head one this way, then train it a
    little more. A bias ``(n_heads·d_head,)`` is averaged the same way.
    """
    w = np.asarray(w, dtype=np.float64)
    n_kv = check_kv_heads(n_heads, n_kv_heads)
    width = w.shape[-1]
    if width % n_heads:
        raise ValueError(f"the projection has {width} columns, which do not share out among {n_heads} heads.")
    d_head = width // n_heads
    grouped = w.reshape(*w.shape[:-1], n_kv, n_heads // n_kv, d_head)
    return grouped.mean(axis=-2).reshape(*w.shape[:-1], n_kv * d_head)


def convert_to_gqa(layer: dict, n_kv_heads: int) -> dict:
    """A layer's weights (``multi_head_attention``'s, or an adapter's) with its key and value heads pooled
    into ``n_kv_heads``: the arguments of ``grouped_query_attention``."""
    layer = _check_layer(layer)
    n_heads = layer["n_heads"]
    out = dict(layer, n_kv_heads=check_kv_heads(n_heads, n_kv_heads))
    for name in ("w_k", "w_v", "b_k", "b_v"):
        if out.get(name) is not None:
            out[name] = pool_kv_heads(out[name], n_heads, n_kv_heads)
    return out


def conversion_verdict(relative: float) -> str:
    """How close a converted layer's outputs stay to the original's, in words (``relative``: ‖Δ‖ /
    ‖output‖)."""
    if relative < 0.05:
        return "close: the converted layer gives nearly the original outputs"
    if relative < 0.3:
        return "noticeably different: a model built from it would need some training to recover"
    return "far from the original: pooling alone does not keep what these heads did"


@dataclass
class GQAConversion:
    """A layer before and after pooling its key/value heads: outputs and the relative difference."""

    n_heads: int
    n_kv_heads: int
    original: np.ndarray
    converted: np.ndarray
    weights: np.ndarray

    @property
    def relative(self) -> float:
        return float(np.linalg.norm(self.converted - self.original) / np.linalg.norm(self.original))

    def verdict(self) -> str:
        return (f"{self.n_heads} query heads sharing {self.n_kv_heads} key/value heads: the outputs differ "
                f"by {self.relative:.0%} of their size, {conversion_verdict(self.relative)}.")


def gqa_conversion(x, layer: dict, n_kv_heads: int, *, causal: bool = False) -> GQAConversion:
    """Run a multi-head layer (``layer``: its weights, as for ``multi_head_attention``) on ``x`` before and
    after pooling its key/value heads into ``n_kv_heads`` groups; ``.weights`` are the converted layer's
    attention weights."""
    keep = {k: v for k, v in _check_layer(layer).items() if k != "n_kv_heads"}
    original, _ = decoding.grouped_query_attention(x, **keep, causal=causal)
    converted, w = decoding.grouped_query_attention(x, **convert_to_gqa(keep, n_kv_heads), causal=causal)
    return GQAConversion(keep["n_heads"], n_kv_heads, original, converted, w)


_LAYER_KEYS = {"w_q", "w_k", "w_v", "w_o", "n_heads"}


def _check_layer(layer) -> dict:
    """A layer's weights as a dict with at least W_Q, W_K, W_V, W_O and n_heads (an adapter's answer)."""
    if not isinstance(layer, dict) or not _LAYER_KEYS <= set(layer):
        missing = sorted(_LAYER_KEYS - set(layer)) if isinstance(layer, dict) else sorted(_LAYER_KEYS)
        raise TypeError(f"layer must be a dict of a layer's weights, as multi_head_attention takes them "
                        f"(w_q, w_k, w_v, w_o, n_heads, optional biases), e.g. what ll.weights_from_... "
                        f"returns; it lacks {', '.join(missing)}.")
    return layer


def pool_model_kv_heads(run, n_kv_heads: int = 1) -> dict:
    """Lesson 09's trained model with the key and value heads of every layer pooled into ``n_kv_heads``.

    Each layer's W_K and W_V rows of the heads in a group are replaced by their mean (the heads then share
    one key and one value, as in grouped-query attention). Returns the held-out accuracy before and after
    and the converted model (a copy; ``run`` is not changed).
    """
    import copy

    import torch

    from . import models

    model = models.check_model(run.model if hasattr(run, "model") else run)
    n_heads, d = model.config["n_heads"], model.config["d_model"]
    n_kv = check_kv_heads(n_heads, n_kv_heads)
    converted = copy.deepcopy(model)
    with torch.no_grad():
        for layer in converted.layers:
            w = layer.w_qkv.weight                      # (3d, d): W_Q; W_K; W_V, rows (out, in)
            for block in (1, 2):                        # keys, then values
                rows = w[block * d:(block + 1) * d].numpy().T     # (d, d) in the course's (in, out) layout
                pooled = pool_kv_heads(rows, n_heads, n_kv)
                shared = np.repeat(pooled.reshape(d, n_kv, 1, -1), n_heads // n_kv, axis=2).reshape(d, d)
                w[block * d:(block + 1) * d] = torch.as_tensor(shared.T, dtype=w.dtype)
    test = run.data.test
    return {"before": models.accuracy(model, test), "after": models.accuracy(converted, test),
            "model": converted, "n_heads": n_heads, "n_kv_heads": n_kv}


def pooled_verdict(found: dict) -> str:
    """:func:`pool_model_kv_heads`'s finding in words: how many points of accuracy the pooling cost, rounded
    to whole points (a model that stays within 2 points kept its answers)."""
    drop = 100 * (found["before"] - found["after"])
    heads = f"{found['n_heads']} heads per layer sharing {found['n_kv_heads']} key/value head" + (
        "s" if found["n_kv_heads"] > 1 else "")
    if drop <= 2:
        return f"With {heads}, lesson 09's model keeps its answers: held-out accuracy within 2 points."
    lost = (f"loses more than {10 * int(drop // 10)} points" if drop >= 10
            else f"loses more than {int(drop)} points")
    return (f"With {heads}, lesson 09's model {lost} of held-out accuracy: the two heads of a layer "
            f"did different jobs with their own keys and values, and now read the same ones. A converted "
            f"model needs more training to recover (Ainslie et al. train for 5% of the original steps).")


# --------------------------------------------------------------------------- long contexts
def sink_head(n_tokens: int = 48, d_head: int = 16, *, strength: float = 4.5, seed: int = 0):
    """Q, K, V ``(n_tokens, d_head)`` of a head with an attention sink on its first token.

    Every query shares a direction u, token 0's key points along u (``strength`` sets how far), and token
    0's value is small: the first token collects much of every row's weight and hands over little, the
    pattern lesson 09's trained head found. The other keys and values are random.
    """
    n = check_int_in_range(n_tokens, "n_tokens", 2, 512)
    d_head = check_int_in_range(d_head, "d_head", 2, 256)
    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    u = rng.standard_normal(d_head)
    u /= np.linalg.norm(u)
    q = rng.standard_normal((n, d_head)) * 0.6 + 1.5 * u
    k = rng.standard_normal((n, d_head)) * 0.6
    k[0] = strength * np.sqrt(d_head) / 1.5 * u
    v = rng.standard_normal((n, d_head))
    v[0] *= 0.05
    return q, k, v


@dataclass
class WindowRun:
    """A head under full causal attention and under a sliding window, with and without sinks."""

    window: int
    sinks: int
    value_length: float                               # the average length of a value vector
    weights: dict = field(default_factory=dict)       # "full", "window", "window + sinks" → (L, L)
    outputs: dict = field(default_factory=dict)
    masks: dict = field(default_factory=dict)

    def difference(self, name: str) -> np.ndarray:
        """Per position: ‖output − full attention's output‖, as a fraction of a value's average length."""
        return np.linalg.norm(self.outputs[name] - self.outputs["full"], axis=-1) / self.value_length

    def sentence(self) -> str:
        """Past the window, how far each variant's outputs are from full attention, on average."""
        past = slice(self.window + self.sinks, None)
        lone = float(self.difference("window")[past].mean())
        kept = float(self.difference("window + sinks")[past].mean())
        sink_share = float(self.weights["full"][past, 0].mean())
        return (f"Past the first {self.window + self.sinks} tokens, full attention puts {sink_share:.0%} of "
                f"each row on the first token. A window of {self.window} without it moves the outputs by "
                f"{lone:.0%} of a value's length on average; keeping {self.sinks} sink"
                f"{'s' if self.sinks != 1 else ''} in sight, by {kept:.0%}.")


def window_experiment(n_tokens: int = 48, window: int = 8, sinks: int = 2, *, seed: int = 0) -> WindowRun:
    """The :func:`sink_head` under full causal attention, a sliding ``window`` and the window with the first
    ``sinks`` tokens kept (StreamingLLM), with weights, outputs and masks of each. Notebook 12."""
    q, k, v = sink_head(n_tokens, seed=seed)
    n = len(q)
    window = check_int_in_range(window, "window", 1, n)
    sinks = check_int_in_range(sinks, "sinks", 0, n - 1)
    run = WindowRun(window, sinks, float(np.linalg.norm(v[1:], axis=-1).mean()))
    for name, mask in (("full", causal_mask(n)), ("window", decoding.sink_window_mask(n, window, 0)),
                       ("window + sinks", decoding.sink_window_mask(n, window, sinks))):
        run.outputs[name], run.weights[name] = scaled_dot_product_attention(q, k, v, mask=mask)
        run.masks[name] = mask
    return run


def ring_buffer(n_steps: int, window: int, sinks: int = 0) -> np.ndarray:
    """Which position each slot of a rolling KV cache holds after each step: ``(n_steps, sinks + window)``
    int, −1 for a slot still empty. Built by a real :class:`~lessons_lib.core.decoding.KVCache`: the sinks
    stay in the first slots; past them, token p lands in slot sinks + (p − sinks) mod window."""
    n_steps = check_int_in_range(n_steps, "n_steps", 1, 4096)
    cache = decoding.KVCache(window=check_positive_int(window, "window"), sinks=sinks)
    held = np.full((n_steps, cache.size), -1, dtype=np.int64)
    one = np.zeros((1, 1))
    for step in range(n_steps):
        cache.append(one, one)
        held[step, :cache.length] = cache.positions
    return held


@dataclass
class SinkEviction:
    """Lesson 09's sink head on its held-out sentences with a dummy "it", with ``<s>`` in sight and
    evicted."""

    weight_on_sink: float      # the share of the row of "it" on <s>, as trained
    error_kept: float          # mean squared distance of the output from the target (zero), <s> in sight
    error_evicted: float       # the same with <s> out of the window
    weight_on_words: float     # where the weight goes then: the share on real words

    @property
    def growth(self) -> float:
        """How many times larger the error is with ``<s>`` evicted."""
        return self.error_evicted / max(self.error_kept, 1e-12)

    def sentence(self) -> str:
        """The finding in words, with rounded shares and the growth as a power of ten it passes (no digit a
        machine's rounding could change)."""
        power = 10 ** int(np.floor(np.log10(self.growth))) if self.growth >= 10 else 1
        grown = f"more than {power:,}-fold" if power > 1 else "hardly"
        return (f"With <s> in sight, the head parks about {self.weight_on_sink:.0%} of the row of a dummy "
                f"“it” on it and its output stays near zero. With <s> evicted all of that weight must go to "
                f"real words, which hand over their values: the output's error grows {grown}.")

    def measured(self) -> str:
        """This run's numbers (another machine's rounding differs in the last digits)."""
        return (f"weight on <s>: {self.weight_on_sink:.3f}; error with <s>: {self.error_kept:.2e}, without: "
                f"{self.error_evicted:.2e} ({self.growth:,.0f}×); weight on words without <s>: "
                f"{self.weight_on_words:.3f}")


def evict_sink(run) -> SinkEviction:
    """Lesson 09's trained :class:`~lessons_lib.lab.models.SinkHead` (``train_sink_head``'s run) on its
    held-out sentences whose "it" refers to nothing, as trained and with its first token ``<s>`` taken out
    of reach (a window that no longer holds it): what evicting a sink costs. Notebook 12."""
    import torch

    from . import models

    if not isinstance(run, models.SinkRun):
        raise TypeError(f"run must be what ll.train_sink_head() returns; got {type(run).__name__}.")
    split = run.data.test
    none = np.flatnonzero(split.referent_pos < 0)
    ids = torch.as_tensor(split.ids[none])
    it_pos = torch.as_tensor(split.it_pos[none])
    adj = torch.as_tensor(np.array([1 + split.tokens[i].index(split.adjective[i]) for i in none]))
    evicted = ids.clone()
    evicted[:, 0] = 0                               # <s> masked as a key: out of the window
    with torch.no_grad():
        kept_out, kept_w = run.model(ids, it_pos, adj)
        gone_out, gone_w = run.model(evicted, it_pos, adj)
    def error(out):
        return float((out.double() ** 2).sum(-1).mean())   # the target of a dummy "it" is zero
    return SinkEviction(float(kept_w[:, 0].double().mean()), error(kept_out), error(gone_out),
                        float(gone_w[:, 1:].double().sum(-1).mean()))
