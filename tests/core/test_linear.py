"""Linear attention, a decaying state and the delta rule (notebook 13): the three forms are one computation.

Properties over random shapes and chunk sizes (float64, below 1e-12): the parallel, recurrent and chunked
forms of ``linear_attention`` and ``decay_attention`` agree, causal or not; the delta rule's recurrent and
chunked forms agree, outputs and final state. Against formulas written out here: linear attention with
φ = identity and no normaliser is the masked product (Q·Kᵀ ∘ mask)·V; with elu + 1 it is the normalised
sum of Katharopoulos et al.; the decay scan is masked attention with L_ij = a_{j+1} ⋯ a_i (the state-space
duality); the delta rule's sequence is its step, token by token. Against transformers' Qwen3-Next
``torch_recurrent_gated_delta_rule`` and ``torch_chunk_gated_delta_rule`` (float32 inside): below 1e-5
relative, with and without their L2 norm. No future leaks into any form.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib._checks import SizeLimitError
from tests.helpers import examples, require

TIGHT = 1e-12


@st.composite
def sequences(draw, max_n=24):
    """Random (q, k, v, gates) with batch axes, N tokens, d_k ≠ d_v, and a chunk size (may exceed N)."""
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n, d_k, d_v = draw(st.integers(1, max_n)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q, k, v = (rng.standard_normal(lead + (n, d)) for d in (d_k, d_k, d_v))
    decay = rng.uniform(0.05, 1.0, lead + (n,))
    beta = rng.uniform(0.0, 2.0, lead + (n,))
    return q, k, v, decay, beta, draw(st.integers(1, n + 3))


def _largest(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


# ------------------------------------------------------------------ the three forms are one computation
@settings(max_examples=examples(60), deadline=None)
@given(case=sequences(), causal=st.booleans(), feature_map=st.sampled_from(["elu1", "identity"]))
def test_linear_attention_parallel_recurrent_and_chunked_agree(case, causal, feature_map):
    q, k, v, _, _, chunk = case
    normalize = feature_map == "elu1"
    parallel = ll.linear_attention(q, k, v, feature_map, causal, normalize=normalize)
    recurrent = ll.linear_attention(q, k, v, feature_map, causal, "recurrent", normalize=normalize)
    chunked = ll.linear_attention(q, k, v, feature_map, causal, "chunked", chunk, normalize=normalize)
    assert parallel.shape == q.shape[:-1] + (v.shape[-1],)
    assert _largest(parallel, recurrent) < TIGHT
    assert _largest(parallel, chunked) < TIGHT


@settings(max_examples=examples(60), deadline=None)
@given(case=sequences(), causal=st.booleans())
def test_decay_attention_parallel_recurrent_and_chunked_agree(case, causal):
    q, k, v, decay, _, chunk = case
    parallel = ll.decay_attention(q, k, v, decay, causal)
    assert _largest(parallel, ll.decay_attention(q, k, v, decay, causal, "recurrent")) < TIGHT
    assert _largest(parallel, ll.decay_attention(q, k, v, decay, causal, "chunked", chunk)) < TIGHT


@settings(max_examples=examples(60), deadline=None)
@given(case=sequences(), gated=st.booleans(), l2_norm=st.booleans())
def test_delta_rule_recurrent_and_chunked_agree_outputs_and_state(case, gated, l2_norm):
    q, k, v, decay, beta, chunk = case
    decay = decay if gated else None
    if not l2_norm:     # β_t·|k_t|² ≤ 2 keeps the state bounded: keys no longer than 1 (the L2 norm's job)
        k = k / np.maximum(1.0, np.linalg.norm(k, axis=-1, keepdims=True))
    out, state = ll.delta_rule(q, k, v, beta, decay, l2_norm=l2_norm)
    out_c, state_c = ll.delta_rule(q, k, v, beta, decay, "chunked", chunk, l2_norm=l2_norm)
    assert state.shape == q.shape[:-2] + (q.shape[-1], v.shape[-1])
    assert _largest(out, out_c) < TIGHT
    assert _largest(state, state_c) < TIGHT


# ------------------------------------------------------------------ against the formulas written out
def test_identity_without_normaliser_is_the_masked_product():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((7, 3)), rng.standard_normal((7, 3)), rng.standard_normal((7, 4))
    direct = (q @ k.T * np.tril(np.ones((7, 7)))) @ v
    for form in ("parallel", "recurrent", "chunked"):
        out = ll.linear_attention(q, k, v, "identity", form=form, normalize=False)
        assert _largest(out, direct) < TIGHT, form
    both_ways = ll.linear_attention(q, k, v, "identity", causal=False, form="recurrent", normalize=False)
    assert _largest(both_ways, q @ (k.T @ v)) < TIGHT        # regrouped: φ(Q)·(φ(K)ᵀ·V)


def test_elu1_is_the_normalised_sum_over_the_past():
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((6, 3)), rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # noqa: E731
    expected = np.array([sum(phi(q[i]) @ phi(k[j]) * v[j] for j in range(i + 1)) /
                         sum(phi(q[i]) @ phi(k[j]) for j in range(i + 1)) for i in range(6)])
    assert _largest(ll.linear_attention(q, k, v, form="recurrent"), expected) < TIGHT
    constant = ll.linear_attention(q, k, np.full((6, 2), 3.5))          # weights sum to 1 in every row
    assert _largest(constant, 3.5) < TIGHT


def test_the_step_carries_state_and_normaliser():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    state, z, rows = np.zeros((3, 2)), np.zeros(3), []
    for t in range(5):
        state, z, out = ll.linear_attention_step(state, z, ll.feature_map(q[t]), ll.feature_map(k[t]), v[t])
        rows.append(out)
    assert _largest(rows, ll.linear_attention(q, k, v)) < TIGHT
    assert _largest(state, ll.feature_map(k).T @ v) < TIGHT          # Σ φ(k_t) v_tᵀ, d_k × d_v


def test_the_decay_scan_is_attention_with_the_decay_mask():
    rng = np.random.default_rng(4)
    n = 9
    q, k, v, a = rng.standard_normal((n, 4)), rng.standard_normal((n, 4)), rng.standard_normal((n, 3)), \
        rng.uniform(0.2, 1.0, n)
    written_out = np.array([[np.prod(a[j + 1:i + 1]) if j <= i else 0.0 for j in range(n)] for i in range(n)])
    assert _largest(ll.decay_mask(a), written_out) < TIGHT
    assert _largest(ll.decay_attention(q, k, v, a, form="recurrent"), (q @ k.T * written_out) @ v) < TIGHT
    state = np.zeros((4, 3))
    for t in range(n):
        state, out = ll.decay_step(state, q[t], k[t], v[t], a[t])
    assert _largest(out, (q @ k.T * written_out)[-1] @ v) < TIGHT
    ones = ll.decay_attention(q, k, v, np.ones(n), form="chunked", chunk_size=4)   # no decay: linear
    assert _largest(ones, ll.linear_attention(q, k, v, "identity", normalize=False)) < TIGHT


def test_the_delta_rule_is_its_step_token_by_token():
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((2, 8, 4)), rng.standard_normal((2, 8, 4)), rng.standard_normal((2, 8, 3))
    beta, a = rng.uniform(0, 2, (2, 8)), rng.uniform(0.5, 1, (2, 8))
    out, state = ll.delta_rule(q, k, v, beta, a, scale=1.0)
    qn, kn = ll.l2_normalize(q), ll.l2_normalize(k)
    s = np.zeros((2, 4, 3))
    for t in range(8):
        s, o = ll.delta_rule_step(s, qn[:, t], kn[:, t], v[:, t], beta[:, t], a[:, t])
        assert _largest(o, out[:, t]) < TIGHT
    assert _largest(s, state) < TIGHT


def test_beta_one_overwrites_what_a_key_holds():
    """With orthonormal keys and β = 1 the state stores every pair exactly; a key written again keeps only its
    last value (the delta rule replaces; linear attention would add the two)."""
    keys = np.eye(4)[[0, 1, 2, 0]]
    values = np.arange(12.0).reshape(4, 3)
    _, state = ll.delta_rule(keys, keys, values, np.ones(4), scale=1.0)
    assert _largest(keys[:3] @ state, values[[3, 1, 2]]) < TIGHT
    _, nothing = ll.delta_rule(keys, keys, values, np.zeros(4))
    assert not nothing.any()


@pytest.mark.parametrize("function", ["linear", "decay", "delta"])
def test_no_future_token_changes_the_past(function):
    rng = np.random.default_rng(6)
    q, k, v = rng.standard_normal((10, 3)), rng.standard_normal((10, 3)), rng.standard_normal((10, 2))
    k2, v2 = k.copy(), v.copy()
    k2[6:], v2[6:] = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    gates = rng.uniform(0.5, 1, 10)
    run = {"linear": lambda kk, vv, form: ll.linear_attention(q, kk, vv, form=form),
           "decay": lambda kk, vv, form: ll.decay_attention(q, kk, vv, gates, form=form),
           "delta": lambda kk, vv, form: ll.delta_rule(q, kk, vv, gates, gates,
                                                       form="recurrent" if form == "parallel" else form)[0]}
    for form in ("parallel", "recurrent", "chunked"):
        assert _largest(run[function](k, v, form)[:6], run[function](k2, v2, form)[:6]) == 0.0


# ------------------------------------------------------------------ transformers' Qwen3-Next
@pytest.fixture(scope="module")
def qwen3_next():
    require(importlib.util.find_spec("transformers") is not None,
            "transformers is not installed (requirements-dev.txt pins it)")
    torch = pytest.importorskip("torch")
    from transformers.models.qwen3_next import modeling_qwen3_next

    return torch, modeling_qwen3_next


@pytest.mark.parametrize("kernel", ["recurrent", "chunk"])
@pytest.mark.parametrize(("gated", "l2_in_kernel", "n", "chunk"),
                         [(True, True, 37, 64), (True, False, 37, 8), (False, True, 20, 16),
                          (True, True, 70, 32)])
def test_agrees_with_transformers_qwen3_next(qwen3_next, kernel, gated, l2_in_kernel, n, chunk):
    """transformers takes (batch, N, heads, d) and the decay as its log g; it computes in float32."""
    torch, qwen = qwen3_next
    rng = np.random.default_rng(7)
    batch, heads, d_k, d_v = 2, 3, 8, 6
    q, k = rng.standard_normal((batch, heads, n, d_k)), rng.standard_normal((batch, heads, n, d_k))
    v = rng.standard_normal((batch, heads, n, d_v))
    beta = rng.uniform(0.0, 2.0, (batch, heads, n))
    decay = rng.uniform(0.6, 1.0, (batch, heads, n)) if gated else np.ones((batch, heads, n))
    ours, our_state = ll.delta_rule(q, k, v, beta, decay if gated else None, form="chunked", chunk_size=chunk)
    if not l2_in_kernel:                    # hand transformers the keys and queries already normalised
        q, k = ll.l2_normalize(q), ll.l2_normalize(k)

    def t(x):                               # (batch, heads, N, ...) → transformers' (batch, N, heads, ...)
        return torch.from_numpy(np.ascontiguousarray(np.moveaxis(x, 1, 2)))

    arguments = dict(query=t(q), key=t(k), value=t(v), g=t(np.log(decay)), beta=t(beta),
                     output_final_state=True, use_qk_l2norm_in_kernel=l2_in_kernel)
    if kernel == "chunk":
        theirs, their_state = qwen.torch_chunk_gated_delta_rule(**arguments, chunk_size=chunk)
    else:
        theirs, their_state = qwen.torch_recurrent_gated_delta_rule(**arguments)
    theirs = np.moveaxis(theirs.double().numpy(), 2, 1)
    assert _largest(ours, theirs) <= 1e-5 * np.max(np.abs(ours))
    assert _largest(our_state, their_state.double().numpy()) <= 1e-5 * np.max(np.abs(our_state))


# ------------------------------------------------------------------ bad input, refused by name
Q3 = np.ones((4, 3))


@pytest.mark.parametrize(("call", "words"), [
    (lambda: ll.linear_attention(Q3, np.ones((5, 3)), np.ones((5, 2))), "Q has 4 tokens but K has 5"),
    (lambda: ll.linear_attention(Q3, np.ones((4, 2)), np.ones((4, 2))), "K has d_k=2 but Q has d_k=3"),
    (lambda: ll.linear_attention(Q3, Q3, Q3, form="fast"), "form must be one of"),
    (lambda: ll.linear_attention(Q3, Q3, Q3, chunk_size=2), "chunk_size is for form='chunked'"),
    (lambda: ll.linear_attention(Q3, Q3, Q3, form="chunked", chunk_size=0), "chunk_size must be at least 1"),
    (lambda: ll.linear_attention(Q3, Q3, Q3, "identity"), "normalize=False"),
    (lambda: ll.linear_attention(Q3, Q3, Q3, "relu"), "feature_map must be one of"),
    (lambda: ll.linear_attention(Q3, Q3, Q3, causal="yes"), "causal"),
    (lambda: ll.linear_attention(np.full((4, 3), np.nan), Q3, Q3), "Q contains nan"),
    (lambda: ll.decay_attention(Q3, Q3, Q3, np.zeros(4)), "decay must lie in (0, 1]"),
    (lambda: ll.decay_attention(Q3, Q3, Q3, np.full(4, 1.5)), "decay must lie in (0, 1]"),
    (lambda: ll.decay_attention(Q3, Q3, Q3, np.full(3, 0.5)), "decay has 3 numbers on its last axis"),
    (lambda: ll.decay_attention(Q3, Q3, Q3, [0.5, np.inf, 0.5, 0.5]), "decay contains inf"),
    (lambda: ll.decay_attention(Q3, Q3, Q3, np.full((2, 4), 0.5)), "would enlarge the batch axes"),
    (lambda: ll.delta_rule(Q3, Q3, Q3, np.full(4, 2.5)), "beta must lie in [0, 2]"),
    (lambda: ll.delta_rule(Q3, Q3, Q3, np.full(4, -0.1)), "beta must lie in [0, 2]"),
    (lambda: ll.delta_rule(Q3, Q3, Q3, np.full(4, np.nan)), "beta contains nan"),
    (lambda: ll.delta_rule(Q3, Q3, Q3, np.ones(4), np.full(4, 0.0)), "decay must lie in (0, 1]"),
    (lambda: ll.delta_rule(Q3, Q3, Q3, np.ones(4), form="parallel"), "'recurrent', 'chunked'"),
    (lambda: ll.delta_rule(Q3, np.zeros((4, 3)), Q3, np.ones(4)), "K has a row of zeros at index (0,)"),
    (lambda: ll.delta_rule_step(np.zeros((3, 2)), np.ones(3), np.ones(3), np.ones(3), 1.0),
     "v needs d_v = 2"),
    (lambda: ll.linear_attention_step(np.zeros((3, 2)), np.zeros(2), np.ones(3), np.ones(3), np.ones(2)),
     "normaliser has 2 features"),
])
def test_bad_input_is_refused_by_name(call, words):
    with pytest.raises((TypeError, ValueError), match=None) as error:
        call()
    assert words in str(error.value)


@pytest.mark.parametrize("form", ["parallel", "chunked", "recurrent"])
def test_memory_is_guarded_before_allocating(monkeypatch, form):
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", "1")
    x = np.ones((1, 2000, 4))
    chunk = 2000 if form == "chunked" else None
    if form == "recurrent":
        x = np.ones((200, 4, 60))                  # 200 states of 60 × 60
    with pytest.raises(SizeLimitError, match="LESSONS_MEMORY_LIMIT_MB"):
        ll.decay_attention(x, x, x, np.full(x.shape[:-1], 0.9), form=form, chunk_size=chunk)
    with pytest.raises(SizeLimitError):
        ll.decay_mask(np.full(4000, 0.5))
