"""A state of fixed size against lesson 12's growing cache, measured: memory and time per token. Notebook 13.

Generating one token, softmax attention reads the whole KV cache, ``2·N·d`` numbers after N tokens, and
its step costs time in proportion to N; linear attention reads and updates one ``d × d`` state (and its
normaliser of d numbers) whatever N is. :func:`state_and_cache` fills both token by token and records how
many numbers each holds; :func:`measure_state_and_cache` times one step of each at growing contexts (numpy,
one thread, the best of a few runs, this machine now) and :meth:`StateAndCacheTimes.verdicts` states what
this run found, as ratios, in words computed from its numbers.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from .._checks import check_int_in_range, check_positive_int, check_seed
from .cost import loglog_slope

__all__ = ["state_and_cache", "StateAndCacheTimes", "measure_state_and_cache", "SEPARATED"]

SEPARATED = 0.3      # a slope this much larger than the other's is a clear difference in growth


def state_and_cache(n_tokens: int, d: int = 16) -> dict:
    """The numbers each memory holds after every token 1 … ``n_tokens``: ``{"cache": 2·t·d, "state":
    d·d + d}`` as arrays (the state's size does not depend on t).

    >>> grown = state_and_cache(4, 2)
    >>> grown["cache"].tolist(), grown["state"].tolist()
    ([4, 8, 12, 16], [6, 6, 6, 6])
    """
    n = check_int_in_range(n_tokens, "n_tokens", 1, 10**7)
    d = check_int_in_range(d, "d", 1, 4096)
    t = np.arange(1, n + 1)
    return {"cache": 2 * t * d, "state": np.full(n, d * d + d)}


@contextlib.contextmanager
def _one_thread():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _best_of(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@dataclass
class StateAndCacheTimes:
    """Seconds per generated token at each context, through the cache and through the state (one run)."""

    contexts: np.ndarray
    cache: np.ndarray
    state: np.ndarray
    d: int

    def slopes(self) -> tuple[float, float]:
        """The log-log slopes of time against the context: (the cache, the state)."""
        return loglog_slope(self.contexts, self.cache), loglog_slope(self.contexts, self.state)

    @property
    def time_ratio(self) -> float:
        """The cache's time per token over the state's, at the longest context."""
        return float(self.cache[-1] / self.state[-1])

    @property
    def memory_ratio(self) -> float:
        """The cache's numbers over the state's, at the longest context (exact: a count, not a timing)."""
        return float(2 * self.contexts[-1] * self.d / (self.d * self.d + self.d))

    def verdicts(self) -> str:
        """This run's verdict: how each step's time grew with the context, and the ratios at the longest."""
        cache, state = self.slopes()
        if cache > state + SEPARATED and self.time_ratio > 1:
            found = ("The cache's step grew with the context and the state's did not: the longer the "
                     "context, the more a fixed state saves per token.")
        else:
            found = "On this run the two did not separate clearly (a busy machine?): measure again."
        longest = int(self.contexts[-1])
        return "\n".join([
            f"through the cache: time per token ∝ context^{cache:.2f}",
            f"through the state: time per token ∝ context^{state:.2f}",
            found,
            f"At {longest:,} tokens the cache holds {self.memory_ratio:,.0f}× the numbers of the state, and "
            f"its step took {self.time_ratio:,.1f}× as long.",
        ])

    def __str__(self) -> str:
        lines = [f"{'context':>8} {'cache (µs)':>11} {'state (µs)':>11} {'ratio':>7}"]
        lines += [f"{int(n):>8,} {c * 1e6:>11.1f} {s * 1e6:>11.1f} {c / s:>7.1f}"
                  for n, c, s in zip(self.contexts, self.cache, self.state)]
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def measure_state_and_cache(contexts=(512, 2048, 8192, 32768), *, d: int = 64, steps: int = 16,
                            repeats: int = 5, seed: int = 0) -> StateAndCacheTimes:
    """Time one generated token after ``context`` tokens, through a KV cache and through a linear-attention
    state (float32, one head of ``d`` features, numpy on one thread, the best of ``repeats`` runs of
    ``steps`` tokens each). The cache's step is one query against every cached key and value (lesson 12);
    the state's adds φ(k)vᵀ and reads it (:func:`~lessons_lib.core.linear.linear_attention_step`'s
    arithmetic, without its checks: a measurement times the work). Notebook 13.
    """
    contexts = np.array(sorted({check_int_in_range(c, "each context", 1, 65536) for c in contexts}))
    if contexts.size < 2:
        raise ValueError(f"contexts must hold at least two different lengths; got {contexts.tolist()}.")
    d = check_int_in_range(d, "d", 1, 1024)
    steps = check_int_in_range(steps, "steps", 1, 256)
    repeats = check_positive_int(repeats, "repeats")
    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    longest = int(contexts[-1]) + steps
    keys, values = (rng.standard_normal((longest, d)).astype(np.float32) for _ in range(2))
    queries = rng.standard_normal((steps, d)).astype(np.float32)
    phi = np.abs(keys[:steps]) + np.float32(1)                   # positive features, as elu + 1 gives
    cache_times, state_times = [], []
    with _one_thread():
        for n in (int(c) for c in contexts):
            def through_cache(n=n):
                for i in range(steps):
                    scores = keys[:n + i + 1] @ queries[i]
                    weights = np.exp(scores - scores.max())
                    _ = (weights / weights.sum()) @ values[:n + i + 1]

            state, normaliser = np.ones((d, d), np.float32), np.ones(d, np.float32)

            def through_state(state=state, normaliser=normaliser):
                for i in range(steps):
                    state += np.outer(phi[i], values[i])
                    normaliser += phi[i]
                    _ = (phi[i] @ state) / (phi[i] @ normaliser)

            cache_times.append(_best_of(through_cache, repeats) / steps)
            state_times.append(_best_of(through_state, repeats) / steps)
    return StateAndCacheTimes(contexts, np.array(cache_times), np.array(state_times), d)
