"""Cheaper than attention: linear attention, a decaying state, the delta rule, each in its forms. Notebook 13.

Softmax attention keeps every key and value (lesson 12's cache grows with the sequence). Drop the softmax and
the product regroups: ``(φ(Q)·φ(K)ᵀ)·V = φ(Q)·(φ(K)ᵀ·V)``, and the bracket on the right is a ``d_k × d_v``
matrix whatever the length N, a **state** that each token updates and each query reads (Katharopoulos et
al. 2020, "Transformers are RNNs"). The state here is laid out ``(d_k, d_v)``: key features down, value
features across, as transformers' Qwen3-Next and flash-linear-attention keep it. Three ways to compute the
same numbers, the ``form`` of every function:

* ``"parallel"``: the N × N matrix of lesson 07, causal mask and all (O(N²·d), what training uses);
* ``"recurrent"``: one token at a time through the state (O(N·d_k·d_v), what generation uses; the step is
  :func:`linear_attention_step`, :func:`decay_step`, :func:`delta_rule_step`);
* ``"chunked"``: exact attention inside chunks of ``chunk_size`` tokens, the state carried between them
  (what the fast kernels do).

They agree to roundoff (below 1e-12 in float64, ``tests/core/test_linear.py``). Three memories:

* :func:`linear_attention`: ``S_t = S_{t−1} + φ(k_t) v_tᵀ``, ``z_t = z_{t−1} + φ(k_t)``,
  ``o_t = S_tᵀ φ(q_t) / (φ(q_t) · z_t)``: everything is added, nothing forgotten.
* :func:`decay_attention`: ``S_t = a_t S_{t−1} + k_t v_tᵀ``, ``o_t = S_tᵀ q_t`` with a decay
  ``0 < a_t ≤ 1`` per token (RetNet's fixed decay, Mamba-2's scalar gate). Unrolled, it is masked attention
  with the decay mask ``L_ij = a_{j+1} ⋯ a_i`` (:func:`decay_mask`): ``O = (Q·Kᵀ ∘ L)·V``, the state-space
  duality of Dao & Gu (2024).
* :func:`delta_rule`: ``S_t = a_t S_{t−1} − β_t k_t (a_t S_{t−1}ᵀ k_t − v_t)ᵀ`` (DeltaNet, Gated DeltaNet):
  the state first reads what it holds for k_t and replaces a share β_t of it by v_t.

Shapes: ``q, k (..., N, d_k)``, ``v (..., N, d_v)``, a gate per token ``(..., N)``; float64 for teaching.
"""

from __future__ import annotations

import numpy as np

from .._checks import (
    as_float_array,
    check_flag,
    check_memory,
    check_output_finite,
    check_per_token,
    check_positive_int,
    check_qkv,
    check_scale,
)

__all__ = ["FEATURE_MAPS", "FORMS", "DEFAULT_CHUNK_SIZE", "feature_map", "l2_normalize", "decay_mask",
           "linear_attention_step", "decay_step", "delta_rule_step", "linear_attention", "decay_attention",
           "delta_rule"]

#: The feature maps φ of :func:`linear_attention`, by name.
FEATURE_MAPS = {
    "elu1": "elu(x) + 1, positive everywhere (Katharopoulos et al. 2020), so the normaliser is never 0",
    "identity": "φ(x) = x: plain products q·k of either sign, usable only without the normaliser",
}
#: The three ways to compute the same outputs.
FORMS = {
    "parallel": "the N × N matrix, masked (O(N²) memory, what training uses)",
    "recurrent": "one token at a time through a state of fixed size (what generation uses)",
    "chunked": "exact attention inside chunks, the state carried between them (what fast kernels do)",
}
DEFAULT_CHUNK_SIZE = 16  # tokens per chunk when chunk_size is None
_DELTA_FORMS = {key: FORMS[key] for key in ("recurrent", "chunked")}  # the delta rule has no parallel form


# --------------------------------------------------------------------------- the pieces
def feature_map(x, name: str = "elu1") -> np.ndarray:
    """φ(x), applied to every feature: ``"elu1"`` is elu(x) + 1 (x + 1 above 0, eˣ below), ``"identity"`` x.

    >>> feature_map(np.array([-1.0, 0.0, 2.0])).round(3).tolist()
    [0.368, 1.0, 3.0]
    """
    x = as_float_array(x, "x")
    return _phi(x, _check_feature_map(name))


def _check_feature_map(name) -> str:
    if not isinstance(name, str) or name not in FEATURE_MAPS:
        listed = "; ".join(f"{k!r}: {v}" for k, v in FEATURE_MAPS.items())
        raise ValueError(f"feature_map must be one of the names {listed}. Got {name!r}.")
    return name


def _phi(x: np.ndarray, name: str) -> np.ndarray:
    if name == "identity":
        return x
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def l2_normalize(x, name: str = "x") -> np.ndarray:
    """Each row of ``x (..., d)`` divided by its length, as Gated DeltaNet does to q and k: a key is then a
    direction, and ``S_{t−1}ᵀ k_t`` reads what the state holds in that direction. A row of zeros has no
    direction and is refused."""
    x = as_float_array(x, name)
    norms = np.sqrt(np.sum(x * x, axis=-1, keepdims=True))
    if not np.all(norms > 0):
        where = tuple(int(i) for i in np.argwhere(norms[..., 0] == 0)[0])
        raise ValueError(f"{name} has a row of zeros at index {where}: it has no direction, so it cannot be "
                         f"scaled to length 1. Give every token a non-zero {name}.")
    return x / norms


def decay_mask(decay) -> np.ndarray:
    """The decay mask ``L (..., N, N)`` of a decay per token ``(..., N)``: ``L_ij = a_{j+1} ⋯ a_i`` for
    j ≤ i (1 on the diagonal), 0 above it.

    Key j's contribution to the state is multiplied by every decay after it, up to query i: the causal mask
    of lesson 07 with the products of the decays in place of the ones (Dao & Gu 2024).

    >>> decay_mask(np.array([0.5, 0.5, 0.5])).tolist()
    [[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.25, 0.5, 1.0]]
    """
    a = as_float_array(decay, "decay", shape="(..., N)")
    a = check_per_token(a, "decay", a.shape[:-1], a.shape[-1], low=0.0, high=1.0, low_open=True,
                        meaning="the share of the state kept at each step")
    n = a.shape[-1]
    check_memory(2 * int(np.prod(a.shape[:-1], dtype=object)) * n * n * a.itemsize,
                 f"decay_mask of {n} tokens",
                 "Use fewer tokens, or form='recurrent', which never builds the N × N mask.")
    return _decay_mask(a)


def _decay_mask(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    t = np.arange(n)
    after = t[:, None] > t[None, :]                       # row t, column j: is step t after key j?
    factors = np.where(after, a[..., :, None], 1.0)       # a_t where t > j, else 1
    return np.where(t[:, None] >= t[None, :], np.cumprod(factors, axis=-2), 0.0)


# --------------------------------------------------------------------------- one step (what the lesson shows)
def linear_attention_step(state, normaliser, phi_q, phi_k, v):
    """One token of linear attention: returns ``(state, normaliser, output)``.

    ``state (..., d_k, d_v)``, ``normaliser (..., d_k)`` (None: no normaliser), ``phi_q, phi_k (..., d_k)``
    already through φ, ``v (..., d_v)``::

        S_t = S_{t−1} + φ(k_t) v_tᵀ        z_t = z_{t−1} + φ(k_t)        o_t = S_tᵀ φ(q_t) / (φ(q_t) · z_t)
    """
    state, normaliser, phi_q, phi_k, v = _step_inputs(state, normaliser, phi_q, phi_k, v)
    return _linear_step(state, normaliser, phi_q, phi_k, v)


def _linear_step(state, normaliser, phi_q, phi_k, v):
    state = state + phi_k[..., :, None] * v[..., None, :]         # add the outer product φ(k_t) v_tᵀ
    output = np.einsum("...k,...kv->...v", phi_q, state)          # read it: S_tᵀ φ(q_t)
    if normaliser is not None:
        normaliser = normaliser + phi_k
        output = output / np.einsum("...k,...k->...", phi_q, normaliser)[..., None]
    return state, normaliser, output


def decay_step(state, q, k, v, a):
    """One token of a decaying state: returns ``(state, output)``: ``S_t = a_t S_{t−1} + k_t v_tᵀ``,
    ``o_t = S_tᵀ q_t``. ``state (..., d_k, d_v)``, ``q, k (..., d_k)``, ``v (..., d_v)``, ``a`` a number
    (or ``(...)``) in (0, 1]."""
    state, _, q, k, v = _step_inputs(state, None, q, k, v)
    a = check_per_token(np.asarray(a, dtype=float)[..., None], "a", state.shape[:-2], 1, low=0.0, high=1.0,
                        low_open=True, meaning="the share of the state kept")[..., 0]
    return _decay_step(state, q, k, v, a)


def _decay_step(state, q, k, v, a):
    state = a[..., None, None] * state + k[..., :, None] * v[..., None, :]   # forget a little, add k_t v_tᵀ
    return state, np.einsum("...k,...kv->...v", q, state)


def delta_rule_step(state, q, k, v, beta, a=1.0):
    """One token of the (gated) delta rule: returns ``(state, output)``. ``k`` should have length 1
    (:func:`delta_rule` normalises it); ``beta`` in [0, 2], ``a`` in (0, 1]::

        S ← a_t S_{t−1}                      decay
        u_t = β_t (v_t − Sᵀ k_t)             the error: what k_t should fetch minus what it fetches now
        S_t = S + k_t u_tᵀ                   write the correction
        o_t = S_tᵀ q_t

    which is ``S_t = a_t S_{t−1} − β_t k_t (a_t S_{t−1}ᵀ k_t − v_t)ᵀ``, transformers' Qwen3-Next
    ``torch_recurrent_gated_delta_rule`` step for step.
    """
    state, _, q, k, v = _step_inputs(state, None, q, k, v)
    lead = state.shape[:-2]
    a = check_per_token(np.asarray(a, dtype=float)[..., None], "a", lead, 1, low=0.0, high=1.0, low_open=True,
                        meaning="the share of the state kept")[..., 0]
    beta = check_per_token(np.asarray(beta, dtype=float)[..., None], "beta", lead, 1, low=0.0, high=2.0,
                           low_open=False, meaning="how much of the error is written")[..., 0]
    return _delta_step(state, q, k, v, beta, a)


def _delta_step(state, q, k, v, beta, a):
    state = a[..., None, None] * state                                       # decay
    error = v - np.einsum("...k,...kv->...v", k, state)                      # v_t − Sᵀ k_t
    state = state + k[..., :, None] * (beta[..., None] * error)[..., None, :]  # S + k_t (β_t · error)ᵀ
    return state, np.einsum("...k,...kv->...v", q, state)


def _step_inputs(state, normaliser, q, k, v):
    state = as_float_array(state, "state", min_ndim=2, shape="(..., d_k, d_v)")
    q = as_float_array(q, "q", shape="(..., d_k)")
    k = as_float_array(k, "k", shape="(..., d_k)")
    v = as_float_array(v, "v", shape="(..., d_v)")
    d_k, d_v = state.shape[-2:]
    for x, name, d, what in ((q, "q", d_k, "d_k"), (k, "k", d_k, "d_k"), (v, "v", d_v, "d_v")):
        if x.shape[-1] != d:
            raise ValueError(f"{name} has {x.shape[-1]} features but the state is {d_k} × {d_v} (d_k × d_v): "
                             f"{name} needs {what} = {d}.")
    if normaliser is not None:
        normaliser = as_float_array(normaliser, "normaliser", shape="(..., d_k)")
        if normaliser.shape[-1] != d_k:
            raise ValueError(f"normaliser has {normaliser.shape[-1]} features but the state has d_k = {d_k}: "
                             f"it is the sum of the φ(k) so far, one number per key feature.")
    return state, normaliser, q, k, v


# --------------------------------------------------------------------------- checking a whole sequence
def _sequence(q, k, v, form, chunk_size, forms, what):
    q, k, v = check_qkv(q, k, v)
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(f"Q has {q.shape[-2]} tokens but K has {k.shape[-2]}: {what} runs along one "
                         f"sequence, each token bringing its query, key and value "
                         f"(Q is {q.shape}, K is {k.shape}).")
    if not isinstance(form, str) or form not in forms:
        raise ValueError(f"form must be one of {', '.join(map(repr, forms))}; got {form!r}.")
    if form == "chunked":
        chunk_size = (DEFAULT_CHUNK_SIZE if chunk_size is None else
                      check_positive_int(chunk_size, "chunk_size"))
    elif chunk_size is not None:
        raise ValueError(f"chunk_size is for form='chunked'; form={form!r} takes none (got {chunk_size!r}).")
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n, d_k, d_v = q.shape[-2], q.shape[-1], v.shape[-1]
    q, k, v = (np.broadcast_to(x, lead + x.shape[-2:]) for x in (q, k, v))
    batch = int(np.prod(lead, dtype=object))
    per_batch = {"parallel": 3 * n * n, "recurrent": 3 * d_k * d_v,
                 "chunked": 4 * min(n, chunk_size or 1) ** 2 + 3 * d_k * d_v}[form] + 2 * n * (d_v + 1)
    check_memory(batch * per_batch * q.itemsize, f"{what} of {n} tokens in the {form} form",
                 "Use fewer tokens" + (", or form='recurrent' or 'chunked', which never build the N × N "
                                       "matrix." if form == "parallel" else "."))
    return q, k, v, lead, chunk_size


def _gate(values, name, lead, n, dtype, *, high, low_open, meaning):
    return check_per_token(values, name, lead, n, low=0.0, high=high, low_open=low_open,
                           meaning=meaning).astype(dtype, copy=False)


# ------------------------------------------------------------------- the engine: Σ_j L_ij (q_i·k_j) v_j
def _parallel(q, k, v, a, causal):
    weights = (q @ np.swapaxes(k, -1, -2)) * _two_sided(_decay_mask(a), causal)
    return weights @ v


def _two_sided(mask, causal):
    """The causal mask L, or, without causality, L + Lᵀ − I: the decay counted both ways from the query."""
    if causal:
        return mask
    return mask + np.swapaxes(mask, -1, -2) - np.eye(mask.shape[-1])


def _recurrent(q, k, v, a, causal):
    if not causal:
        return _both_ways(_recurrent, q, k, v, a)
    state = np.zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]), dtype=q.dtype)
    out = np.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for t in range(q.shape[-2]):
        state, out[..., t, :] = _decay_step(state, q[..., t, :], k[..., t, :], v[..., t, :], a[..., t])
    return out


def _chunked(q, k, v, a, causal, chunk_size):
    if not causal:
        return _both_ways(lambda *args: _chunked(*args, chunk_size), q, k, v, a)
    state = np.zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]), dtype=q.dtype)
    out = np.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for start in range(0, q.shape[-2], chunk_size):
        c = slice(start, start + chunk_size)
        qc, kc, vc, mask = q[..., c, :], k[..., c, :], v[..., c, :], _decay_mask(a[..., c])
        kept = np.cumprod(a[..., c], axis=-1)                    # a_start ⋯ a_i: what is left of the state
        out[..., c, :] = kept[..., None] * (qc @ state) + ((qc @ np.swapaxes(kc, -1, -2)) * mask) @ vc
        state = kept[..., -1, None, None] * state + np.swapaxes(kc * mask[..., -1, :, None], -1, -2) @ vc
    return out


def _both_ways(causal_form, q, k, v, a):
    """Without causality: the causal pass, plus the same pass over the reversed sequence, minus the diagonal
    counted twice. Reversed, key j reaches query i < j through the decays a_{i+1} … a_j."""
    flip = slice(None, None, -1)
    a_back = np.concatenate([np.ones_like(a[..., :1]), a[..., flip][..., :-1]], axis=-1)
    forward = causal_form(q, k, v, a, True)
    backward = causal_form(q[..., flip, :], k[..., flip, :], v[..., flip, :], a_back, True)[..., flip, :]
    return forward + backward - np.sum(q * k, axis=-1, keepdims=True) * v


def _run(form, q, k, v, a, causal, chunk_size):
    with np.errstate(over="ignore", invalid="ignore"):
        if form == "parallel":
            return _parallel(q, k, v, a, causal)
        if form == "recurrent":
            return _recurrent(q, k, v, a, causal)
        return _chunked(q, k, v, a, causal, chunk_size)


# --------------------------------------------------------------------------- the three memories
def linear_attention(q, k, v, feature_map="elu1", causal=True, form="parallel",
                     chunk_size: int | None = None, *, normalize=True) -> np.ndarray:
    """Linear attention (Katharopoulos et al. 2020): ``(..., N, d_v)``, in any of the three :data:`FORMS`.

    Row i is ``Σ_j φ(q_i)·φ(k_j) v_j / Σ_j φ(q_i)·φ(k_j)`` over the keys j ≤ i (every j when
    ``causal=False``): attention with the similarity φ(q)·φ(k) in place of exp(q·k/√d_k). No 1/√d_k scale.
    Recurrently, a state ``S (d_k, d_v)`` and a normaliser ``z (d_k)`` (:func:`linear_attention_step`); the
    normaliser is the same sum with every value 1, so the forms carry it as one more value column.
    ``normalize=False`` drops the division (then ``feature_map="identity"`` is ``(Q·Kᵀ ∘ mask)·V``);
    with the normaliser the identity map is refused, since its products of either sign can sum to 0.

    >>> q = k = v = np.eye(3)
    >>> linear_attention(q, k, v, "identity", normalize=False).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    name = _check_feature_map(feature_map)
    causal = check_flag(causal, "causal")
    normalize = check_flag(normalize, "normalize")
    if normalize and name == "identity":
        raise ValueError("feature_map='identity' gives products q·k of either sign, whose sum, the "
                         "normaliser, can be 0. Use feature_map='elu1' (always positive), or "
                         "normalize=False.")
    q, k, v, lead, chunk_size = _sequence(q, k, v, form, chunk_size, FORMS, "linear_attention")
    with np.errstate(over="ignore", invalid="ignore"):
        phi_q, phi_k = _phi(q, name), _phi(k, name)
    if normalize:
        v = np.concatenate([v, np.ones_like(v[..., :1])], axis=-1)   # the normaliser: values of 1
    out = _run(form, phi_q, phi_k, v, np.ones(lead + q.shape[-2:-1], dtype=q.dtype), causal, chunk_size)
    if normalize:
        with np.errstate(over="ignore", invalid="ignore"):
            out = out[..., :-1] / out[..., -1:]
    check_output_finite(out, "linear_attention", "Q, K and V")
    return out


def decay_attention(q, k, v, decay, causal=True, form="parallel",
                    chunk_size: int | None = None) -> np.ndarray:
    """A state that decays: ``S_t = a_t S_{t−1} + k_t v_tᵀ``, ``o_t = S_tᵀ q_t``; ``(..., N, d_v)``.

    ``decay (..., N)`` is a_t in (0, 1], the share of the state each token keeps (RetNet: one fixed a;
    Mamba-2: a gate computed from the token). No feature map, no normaliser, no scale. Unrolled, the scan is
    ``O = (Q·Kᵀ ∘ L)·V`` with the decay mask ``L_ij = a_{j+1} ⋯ a_i`` (:func:`decay_mask`), the
    ``"parallel"`` form: the state-space duality (Dao & Gu 2024). ``causal=False`` counts the decay from
    the query both ways, ``L_ij = a_{i+1} ⋯ a_j`` for j > i. All decays 1 is linear attention with
    ``feature_map="identity", normalize=False``.
    """
    causal = check_flag(causal, "causal")
    q, k, v, lead, chunk_size = _sequence(q, k, v, form, chunk_size, FORMS, "decay_attention")
    a = _gate(decay, "decay", lead, q.shape[-2], q.dtype, high=1.0, low_open=True,
              meaning="the share of the state kept at each step")
    out = _run(form, q, k, v, a, causal, chunk_size)
    check_output_finite(out, "decay_attention", "Q, K and V")
    return out


def delta_rule(q, k, v, beta, decay=None, form="recurrent", chunk_size: int | None = None, *, scale=None,
               l2_norm=True) -> tuple[np.ndarray, np.ndarray]:
    """The (gated) delta rule: returns ``(output (..., N, d_v), final_state (..., d_k, d_v))``.

    As Gated DeltaNet (Yang et al. 2024) and transformers' Qwen3-Next: q and k are first divided by their
    length (``l2_norm=True``; :func:`l2_normalize`), then q is multiplied by ``scale`` (default 1/√d_k).
    Each token, with ``a_t = decay_t`` (1 when ``decay`` is None: plain DeltaNet) and ``β_t = beta_t``::

        S_t = a_t S_{t−1} − β_t k_t (a_t S_{t−1}ᵀ k_t − v_t)ᵀ        o_t = S_tᵀ q_t

    in the state layout ``(d_k, d_v)``; in the papers' layout ``(d_v, d_k)`` the same update reads
    ``S_t = a_t S_{t−1} − β_t (a_t S_{t−1} k_t − v_t) k_tᵀ``, that is
    ``a_t S_{t−1}(I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ``.
    This is transformers' ``torch_recurrent_gated_delta_rule`` with ``g = log(decay)``: decay first, then
    the error ``v_t − Sᵀk_t`` scaled by β_t is written along k_t, then the query reads the new state.
    β in [0, 2]: 1 overwrites what k_t held, 2 reflects it, beyond 2 the state would grow without bound.
    ``"chunked"`` solves each chunk's corrections at once (the WY form of DeltaNet's kernels); there is no
    ``"parallel"`` form (a chunk as long as the sequence is one).
    """
    l2_norm = check_flag(l2_norm, "l2_norm")
    q, k, v, lead, chunk_size = _sequence(q, k, v, form, chunk_size, _DELTA_FORMS, "delta_rule")
    n = q.shape[-2]
    beta = _gate(beta, "beta", lead, n, q.dtype, high=2.0, low_open=False,
                 meaning="how much of the error each token writes")
    a = (np.ones(lead + (n,), dtype=q.dtype) if decay is None else
         _gate(decay, "decay", lead, n, q.dtype, high=1.0, low_open=True,
               meaning="the share of the state kept at each step"))
    if l2_norm:
        q, k = l2_normalize(q, "Q"), l2_normalize(k, "K")
    q = q * check_scale(scale, q.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        scan = _delta_recurrent if form == "recurrent" else _delta_chunked
        out, state = scan(q, k, v, beta, a, chunk_size)
    check_output_finite(out, "delta_rule", "Q, K, V and beta")
    return out, state


def _delta_recurrent(q, k, v, beta, a, _chunk_size):
    state = np.zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]), dtype=q.dtype)
    out = np.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for t in range(q.shape[-2]):
        state, out[..., t, :] = _delta_step(state, q[..., t, :], k[..., t, :], v[..., t, :], beta[..., t],
                                            a[..., t])
    return out, state


def _delta_chunked(q, k, v, beta, a, chunk_size):
    """Inside a chunk entering with state S₀, the errors u_i = β_i (v_i − a_i S_{i−1}ᵀ k_i) solve the unit
    lower-triangular system ``u_i + Σ_{j<i} β_i L_ij (k_i·k_j) u_j = β_i (v_i − γ_i S₀ᵀ k_i)`` (γ_i the decay
    from the chunk's start, L its decay mask); then ``o_i = γ_i S₀ᵀ q_i + Σ_{j≤i} L_ij (q_i·k_j) u_j`` and
    the state leaving is ``γ_C S₀ + Σ_j L_Cj k_j u_jᵀ``."""
    state = np.zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]), dtype=q.dtype)
    out = np.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for start in range(0, q.shape[-2], chunk_size):
        c = slice(start, start + chunk_size)
        qc, kc, vc, bc, mask = q[..., c, :], k[..., c, :], v[..., c, :], beta[..., c], _decay_mask(a[..., c])
        kept = np.cumprod(a[..., c], axis=-1)
        couple = np.tril(bc[..., :, None] * mask * (kc @ np.swapaxes(kc, -1, -2)), -1)
        errors = bc[..., None] * (vc - kept[..., None] * (kc @ state))
        for i in range(1, errors.shape[-2]):                      # forward substitution, row by row
            errors[..., i, :] -= np.einsum("...j,...jv->...v", couple[..., i, :i], errors[..., :i, :])
        out[..., c, :] = kept[..., None] * (qc @ state) + ((qc @ np.swapaxes(kc, -1, -2)) * mask) @ errors
        state = kept[..., -1, None, None] * state + np.swapaxes(kc * mask[..., -1, :, None], -1, -2) @ errors
    return out, state
