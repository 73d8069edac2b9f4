"""Hardening (issue 7): one section per class of problem; each test name says its class.

1 finite input never gives NaN or a warning · 2 the torch path takes every mask the numpy path
takes · 3 the torch path's errors are the course's · 4 a wrong exercise answer never passes ·
5 a check names the right mistake, or none · 6 learner code that never returns is stopped ·
7 sizes that would kill a kernel are refused at once · 8 flags and arguments are checked ·
9 messages quote only what was passed. (Classes 10 and 11 belong to other issues.)
"""

from __future__ import annotations

import dataclasses
import inspect
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lessons_lib as ll
import solutions
from lessons_lib import attention, backends, exercises
from lessons_lib._checks import SizeLimitError
from lessons_lib.data import coreference_example, embed_tokens, projection_weights, random_qkv
from lessons_lib.masks import combine_masks, padding_mask, sliding_window_mask

torch = pytest.importorskip("torch")

FLOATS = [np.float16, np.float32, np.float64]
# every exercise's worked solution, as the source notebooks hold it (tests/solutions.py)
SOLUTIONS = {name: getattr(solutions, name) for name in solutions.__all__}


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    """No test in this module may let a RuntimeWarning (or any warning) through."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _finite_arrays(dtype, shape):
    """Finite arrays of ``dtype`` over the whole range, huge magnitudes included."""
    info = np.finfo(dtype)
    elements = st.floats(-float(info.max), float(info.max), allow_nan=False, allow_infinity=False,
                         width=info.bits)
    return hnp.arrays(dtype, shape, elements=elements)


# ============================================================ class 1: no NaN from finite input
@st.composite
def _qkv_any_magnitude(draw):
    dtype = draw(st.sampled_from(FLOATS))
    L, S, d = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    q = draw(_finite_arrays(dtype, (L, d)))
    k = draw(_finite_arrays(dtype, (S, d)))
    v = draw(_finite_arrays(dtype, (S, d)))
    return q, k, v


@settings(max_examples=150, deadline=None)
@given(_qkv_any_magnitude(), st.booleans())
def test_class1_finite_input_gives_finite_output_or_a_clear_error_numpy(qkv, causal):
    q, k, v = qkv
    try:
        out, weights = ll.scaled_dot_product_attention(q, k, v, causal=causal)
    except ValueError as exc:
        assert "overflow" in str(exc) and str(q.dtype) in str(exc)
        return
    assert np.isfinite(out).all() and np.isfinite(weights).all()
    assert out.dtype == q.dtype
    np.testing.assert_allclose(weights.sum(axis=-1), 1, rtol=1e-2)


@settings(max_examples=60, deadline=None)
@given(_qkv_any_magnitude(), st.booleans())
def test_class1_finite_input_gives_finite_output_or_a_clear_error_torch(qkv, causal):
    q, k, v = qkv
    try:
        result = ll.sdpa_attention(q, k, v, causal=causal, device="cpu")
    except ValueError as exc:
        assert "overflow" in str(exc)
        return
    assert np.isfinite(result.output).all()


@pytest.mark.parametrize("factor, dtype", [(1e200, np.float64), (1e20, np.float32), (300, np.float16)])
def test_class1_the_issue_examples_raise_naming_the_dtype_and_its_largest_number(factor, dtype):
    q, k, v = (a.astype(dtype) for a in random_qkv(4, 8, seed=1))
    with pytest.raises(ValueError) as info:
        ll.scaled_dot_product_attention(q * dtype(factor), k * dtype(factor), v)
    limit = f"{float(np.finfo(dtype).max):.4g}"
    assert f"overflow {np.dtype(dtype).name}" in str(info.value) and limit in str(info.value)
    with pytest.raises(ValueError, match="overflow"):
        attention.attention_scores(q * dtype(factor), k * dtype(factor))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FLOATS).flatmap(lambda dt: _finite_arrays(dt, st.tuples(st.integers(1, 3),
                                                                                st.integers(1, 5)))))
def test_class1_softmax_of_finite_input_is_a_distribution_without_warnings(x):
    p = ll.softmax(x)
    assert np.isfinite(p).all() and (p >= 0).all()
    np.testing.assert_allclose(p.astype(np.float64).sum(axis=-1), 1, rtol=1e-2)


def test_class1_softmax_of_the_widest_row():
    np.testing.assert_array_equal(ll.softmax([[1e308, -1e308]]), [[1.0, 0.0]])
    np.testing.assert_array_equal(ll.softmax(np.array([[6e4, -6e4]], np.float16)), [[1.0, 0.0]])


def test_class1_many_float16_keys_do_not_overflow_the_row_sum():
    p = ll.softmax(np.zeros((1, 70_000), np.float16))
    assert p.dtype == np.float16 and np.isclose(p.astype(np.float64).sum(), 1, rtol=1e-2)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(FLOATS).flatmap(lambda dt: st.tuples(
    _finite_arrays(dt, (3, 4)), _finite_arrays(dt, (4, 2)))), st.floats(0.01, 1e6))
def test_class1_each_step_gives_finite_output_or_a_clear_error(arrays, scale):
    scores, v = arrays
    for step in (lambda: attention.scale_scores(scores, scale=scale),
                 lambda: attention.attention_weights(scores, scale=scale),
                 lambda: attention.weighted_values(np.abs(scores), v)):
        try:
            out = step()
        except ValueError as exc:
            assert "overflow" in str(exc)
            continue
        assert np.isfinite(out).all()


def test_class1_scaling_never_turns_a_finite_score_into_a_masked_one():
    with pytest.raises(ValueError, match=r"scores × 10 overflows float64.*although the scores are finite"):
        attention.attention_weights(np.array([[-1e308, -1e308]]), scale=10.0)


# ============================================================ class 2: the torch path takes every mask
@st.composite
def _batch_and_mask(draw):
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    L, S = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    full = (*batch, L, S)
    kind = draw(st.sampled_from(["none", "scalar", "keys", "suffix", "list"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if kind == "none":
        mask = None
    elif kind == "scalar":
        mask = draw(st.booleans())
    elif kind == "keys":
        mask = rng.random(S) < 0.6
    else:
        n = draw(st.integers(2, len(full)))
        shape = tuple(1 if draw(st.booleans()) and i < n - 2 else s for i, s in enumerate(full[-n:]))
        mask = rng.random(shape) < 0.6
        if kind == "list":
            mask = mask.tolist()
    return batch, L, S, mask


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_batch_and_mask(), st.booleans(), st.integers(0, 10_000))
def test_class2_every_mask_the_numpy_path_takes_gives_the_same_result_in_torch(case, causal, seed):
    batch, L, S, mask = case
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((*batch, n, 3)) for n in (L, S, S))
    ref, _ = ll.scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    result = ll.sdpa_attention(q, k, v, mask=mask, causal=causal)
    np.testing.assert_allclose(result.output, ref, atol=1e-10)
    out, _ = ll.torch_attention_with_weights(q, k, v, mask=mask, causal=causal)
    np.testing.assert_allclose(out, ref, atol=1e-10)


@pytest.mark.parametrize("mask", [np.array([1, 1, 0, 1], bool), True, False, [True, False, True, True]])
def test_class2_the_issue_examples(mask):
    q, k, v = random_qkv(4, 8, seed=2)
    ref, _ = ll.scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(ll.sdpa_attention(q, k, v, mask=mask).output, ref, atol=1e-12)


def test_class2_the_kernel_report_falls_back_when_torch_does_not_tell(monkeypatch):
    def broken(*args, **kwargs):
        raise IndexError("private torch function changed")

    monkeypatch.setattr(torch, "_fused_sdp_choice", broken, raising=False)
    q, k, v = random_qkv(4, 8, seed=3)
    result = ll.sdpa_attention(q, k, v)
    assert result.kernel == backends.CHOSEN_BY_TORCH
    np.testing.assert_allclose(result.output, ll.scaled_dot_product_attention(q, k, v)[0], atol=1e-12)


# ============================================================ class 3: the torch path's errors
QKV = random_qkv(6, 8, seed=4)


@pytest.mark.parametrize("kernel", ["memory-efficient", "cuDNN"])
def test_class3_a_kernel_this_device_lacks_is_explained(kernel):
    if torch.cuda.is_available():
        pytest.skip("on a GPU these kernels may run")
    with pytest.raises(ValueError, match=rf"The {kernel} kernel cannot run these inputs on cpu.*"
                                         r"flash and math.*kernel=None"):
        ll.sdpa_attention(*QKV, kernel=kernel)


@pytest.mark.parametrize("device, words", [
    ("gpu", ['torch calls an NVIDIA GPU "cuda"']),
    ("cuda:7", ["cuda"]),
    ("banana", ['"cpu" or "cuda"']),
])
def test_class3_devices_that_are_not_there_are_explained(device, words):
    if device == "cuda:7" and torch.cuda.device_count() > 7:
        pytest.skip("this machine has 8 GPUs")
    with pytest.raises(ValueError) as info:
        ll.sdpa_attention(*QKV, device=device)
    for word in words:
        assert word in str(info.value)
    with pytest.raises(ValueError):
        ll.torch_attention_with_weights(*QKV, device=device)


def test_class3_cuda_without_cuda_is_explained():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match=r"needs an NVIDIA GPU with CUDA.*device=None"):
        ll.sdpa_attention(*QKV, device="cuda")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", torch.bfloat16])
def test_class3_half_precision_runs_or_is_explained(dtype):
    try:
        result = ll.sdpa_attention(*QKV, dtype=dtype, device="cpu")
    except ValueError as exc:  # a CPU kernel without this dtype: said in words
        assert "kernel" in str(exc)
        return
    assert result.output.dtype == np.float64  # numpy in, numpy out in the input's dtype
    assert result.dtype == str(dtype).removeprefix("torch.")
    np.testing.assert_allclose(result.output, ll.scaled_dot_product_attention(*QKV)[0], atol=5e-2)


def test_class3_bfloat16_with_a_forced_kernel_it_lacks_is_explained():
    if torch.cuda.is_available():
        pytest.skip("on a GPU the memory-efficient kernel may run bfloat16")
    with pytest.raises(ValueError, match=r"memory-efficient kernel cannot run these inputs on cpu "
                                         r"\(bfloat16"):
        ll.sdpa_attention(*QKV, dtype="bfloat16", kernel="memory-efficient")


def test_class3_bfloat16_tensors_are_accepted():
    q, k, v = (torch.tensor(a, dtype=torch.bfloat16) for a in QKV)
    out = ll.sdpa_attention(q, k, v).output
    assert out.dtype == torch.bfloat16
    out, weights = ll.torch_attention_with_weights(q, k, v)
    assert weights.dtype == torch.bfloat16


@pytest.mark.parametrize("fn", [lambda q, k, v: ll.sdpa_attention(q, k, v, causal=True).output,
                                lambda q, k, v: ll.torch_attention_with_weights(q, k, v, causal=True)[0]])
def test_class3_requires_grad_keeps_the_graph(fn):
    tensors = [torch.tensor(a, requires_grad=True) for a in QKV]
    fn(*tensors).square().sum().backward()
    mine = [t.grad.clone() for t in tensors]
    direct = [torch.tensor(a, requires_grad=True) for a in QKV]
    torch.nn.functional.scaled_dot_product_attention(*direct, is_causal=True).square().sum().backward()
    for a, b in zip(mine, direct):
        torch.testing.assert_close(a, b.grad)


def test_class3_read_only_arrays_give_no_torch_warning():
    frozen = [a.copy() for a in QKV]
    for a in frozen:
        a.flags.writeable = False
    np.testing.assert_allclose(ll.sdpa_attention(*frozen).output, ll.scaled_dot_product_attention(*QKV)[0],
                               atol=1e-12)


def test_class3_bad_dtype_argument_is_explained():
    with pytest.raises(ValueError, match=r"dtype must be one of"):
        ll.sdpa_attention(*QKV, dtype="int8")


# ----------------------------------------------------------------- class 3 on a GPU (skipped without CUDA)
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_class3_gpu_half_precision_runs_a_fused_kernel_and_says_which(dtype):
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 4, 256, 64)).astype(np.float32) for _ in range(3))
    for causal in (False, True):
        result = ll.sdpa_attention(q, k, v, causal=causal, dtype=dtype)
        assert result.device.startswith("cuda") and result.dtype == dtype
        assert result.kernel in {"flash", "cuDNN"}, result.kernel
        ref, _ = ll.scaled_dot_product_attention(q.astype(np.float64), k, v, causal=causal)
        np.testing.assert_allclose(result.output, ref, atol=3e-2)
    tensors = [torch.tensor(a, device="cuda", dtype=getattr(torch, dtype), requires_grad=True)
               for a in (q, k, v)]
    out = ll.sdpa_attention(*tensors).output
    assert out.is_cuda and out.dtype == getattr(torch, dtype)
    out.float().sum().backward()
    assert tensors[0].grad is not None


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_class3_gpu_masks_and_forced_kernels():
    q, k, v = random_qkv(8, 16, seed=6)
    mask = np.array([1, 1, 0, 1, 1, 1, 0, 1], bool)
    ref, _ = ll.scaled_dot_product_attention(q, k, v, mask=mask, causal=True)
    np.testing.assert_allclose(ll.sdpa_attention(q, k, v, mask=mask, causal=True).output, ref, atol=1e-10)
    result = ll.sdpa_attention(q, k, v, kernel="flash", dtype="bfloat16")
    assert result.kernel == "flash"
    with pytest.raises(ValueError, match=r"flash kernel cannot run these inputs on cuda"):
        ll.sdpa_attention(q, k, v, kernel="flash")  # float64: flash needs half precision


# ============================================================ class 4: no wrong answer passes
def _minus(shift):
    def softmax(x):
        e = np.exp(x - shift(x))
        return e / e.sum(axis=-1, keepdims=True)
    return softmax


UNSTABLE_SOFTMAXES = {
    "no shift": _minus(lambda x: 0),
    "row mean": _minus(lambda x: x.mean(axis=-1, keepdims=True)),
    "row min": _minus(lambda x: x.min(axis=-1, keepdims=True)),
    "row median": _minus(lambda x: np.median(x, axis=-1, keepdims=True)),
    "first entry": _minus(lambda x: x[..., :1]),
    "fixed 1000": _minus(lambda x: 1000.0),
    "global max": _minus(lambda x: x.max()),
    "column max": _minus(lambda x: x.max(axis=0, keepdims=True)),
    "clipped logits": lambda x: _minus(lambda y: 0)(np.clip(x, -700, 700)),
    "half the max": _minus(lambda x: x.max(axis=-1, keepdims=True) / 2),
}


@pytest.mark.parametrize("name", UNSTABLE_SOFTMAXES)
def test_class4_no_unstable_softmax_passes(name):
    feedback = exercises.check_softmax(UNSTABLE_SOFTMAXES[name])
    assert feedback.passed is False, f"a softmax shifted by {name} passes"


def test_class4_the_checks_contain_rows_that_overflow_exp():
    spans = [np.ptp(row) for case in exercises.SOFTMAX.cases() for row in case.args["x"]]
    assert max(spans) > 710


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
@pytest.mark.parametrize("kind", [object, np.complex128])
def test_class4_answers_of_object_or_complex_dtype_do_not_pass(name, kind):
    solution = SOLUTIONS[name]

    def wrapped(*args):
        answer = solution(*args)
        if isinstance(answer, tuple):
            return tuple(a.astype(kind) for a in answer)
        return answer.astype(kind)

    feedback = exercises.EXERCISES[name].check(wrapped)
    assert feedback.passed is False
    assert feedback.mistake in {"not_numeric", "output_not_an_array"}
    assert ("complex" if kind is np.complex128 else "Python objects") in feedback.message


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_class4_the_solutions_pass(name):
    assert exercises.EXERCISES[name].check(SOLUTIONS[name]).passed


# ============================================================ class 5: the right mistake, or none
@pytest.mark.parametrize("exercise", list(exercises.EXERCISES.values()), ids=list(exercises.EXERCISES))
def test_class5_case_shapes_keep_the_mistakes_apart(exercise):
    """Within a case the sizes differ (L, S, d_k, d_v), none 4 or 16: no shape makes two mistakes alike."""
    for case in exercise.cases():
        arrays = [a for a in case.args.values() if isinstance(a, np.ndarray)]
        sizes = {n for a in arrays for n in a.shape}
        d_k = case.args.get("d_k")
        if d_k is not None:
            assert d_k not in (4, 16) and d_k not in sizes, case.label
        assert not sizes & {4, 16} or exercise.name in ("my_softmax", "my_weighted_sum"), case.label
        hand_made = case.label.startswith("hand")
        if exercise.name in ("my_scores", "my_weighted_sum", "my_projection") and hand_made:
            assert len({n for a in arrays for n in a.shape}) >= 3, case.label


ISSUE_EXAMPLES = [
    # (exercise, learner function, mistake that must be named)
    ("my_softmax", lambda x: np.exp(x - x.max(-1, keepdims=True)) // np.exp(x - x.max(-1, keepdims=True)).sum(
        -1, keepdims=True), "floor_division"),
    ("my_scores", lambda Q, K: Q @ K.T / np.sqrt(Q.shape[0]), "scaled_too_early"),
    ("my_scale", lambda scores, d_k: scores / np.sqrt(16), "fixed_number"),
    ("my_weighted_sum", lambda weights, V: (weights @ V).T, "transposed_result"),
    ("my_softmax", lambda x: tuple(solutions.my_softmax(x)), "returned_tuple"),
    ("my_softmax", lambda x: torch.from_numpy(solutions.my_softmax(x)), "returned_tensor"),
    ("my_softmax", lambda x: (row for row in solutions.my_softmax(x)), "returned_generator"),
    ("my_projection", lambda x, w_q, w_k, w_v: tuple(torch.from_numpy(x @ w) for w in (w_q, w_k, w_v)),
     "returned_tensor"),
]


@pytest.mark.parametrize("name, fn, key", ISSUE_EXAMPLES, ids=[f"{e[0]}-{e[2]}" for e in ISSUE_EXAMPLES])
def test_class5_the_issue_examples_are_named_right(name, fn, key):
    feedback = exercises.EXERCISES[name].check(fn)
    assert feedback.mistake == key, str(feedback)


def test_class5_a_function_that_raises_not_implemented_for_some_inputs_is_attempted():
    def partial(x):
        if x.shape[0] > 2:
            raise NotImplementedError("only two rows so far")
        return solutions.my_softmax(x)

    feedback = exercises.check_softmax(partial)
    assert feedback.status == "failed" and feedback.mistake == "raised"
    assert "NotImplementedError" in feedback.message and "placeholder" not in feedback.message


def test_class5_two_mistakes_at_once_get_the_generic_message_not_a_guess():
    feedback = exercises.check_scores(lambda Q, K: (K @ Q.T) / np.sqrt(Q.shape[-1]))  # swapped and scaled
    assert feedback.mistake in {"wrong_shape", "wrong_values", "raised"}, str(feedback)


# ============================================================ class 6: code that never returns
def _endless(x):
    while True:
        pass


def _endless_swallowing(x):
    while True:
        try:
            while True:
                pass
        except:  # noqa: E722 - a learner's bare except, which must not keep the check waiting
            pass


def _sleeps(x):
    time.sleep(60)


@pytest.mark.parametrize("fn", [_endless, _endless_swallowing, _sleeps])
def test_class6_a_function_that_never_returns_is_stopped_and_the_case_named(fn):
    quick = dataclasses.replace(exercises.SOFTMAX, time_limit=0.5)
    start = time.perf_counter()
    feedback = quick.check(fn)
    assert time.perf_counter() - start < 5
    assert feedback.mistake == "timed_out", str(feedback)
    assert "hand-made 2×3 scores" in feedback.message and "0.5 s" in feedback.message


def test_class6_only_the_hanging_case_is_reported():
    def hangs_on_big(x):
        if x.shape[1] == 6:
            while True:
                pass
        return solutions.my_softmax(x)

    feedback = dataclasses.replace(exercises.SOFTMAX, time_limit=0.5).check(hangs_on_big)
    assert feedback.mistake == "timed_out" and "random 4×6 scores" in feedback.message


@pytest.mark.slow
def test_class6_the_time_limit_works_inside_a_real_ipykernel():
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        code = ("import time, dataclasses\nfrom lessons_lib import exercises\n"
                "def my_softmax(x):\n    while True:\n        pass\n"
                "t = time.perf_counter()\n"
                "fb = dataclasses.replace(exercises.SOFTMAX, time_limit=1.0).check(my_softmax)\n"
                "print(fb.mistake, round(time.perf_counter() - t, 1))\n"
                "print(exercises.check_softmax(lambda x: x).mistake)\n")
        reply = kc.execute_interactive(code, timeout=60, output_hook=_collect(out := []))
        assert reply["content"]["status"] == "ok", out
        mistake, seconds, after = "".join(out).split()
        assert mistake == "timed_out" and float(seconds) < 5
        assert after != "timed_out", "the kernel works normally after a stopped check"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _collect(sink):
    def hook(msg):
        if msg["msg_type"] == "stream":
            sink.append(msg["content"]["text"])
    return hook


# ============================================================ class 7: sizes that would kill a kernel
BIG = [
    ("causal_mask(50000)", lambda: ll.causal_mask(50_000)),
    ("sliding_window_mask(50000, 3)", lambda: sliding_window_mask(50_000, 3)),
    ("padding_mask", lambda: padding_mask(lengths=[50_000], n_queries=50_000)),
    ("Attention over 20000 queries", lambda: ll.scaled_dot_product_attention(*random_qkv(20_000, 2))),
    ("Attention over 20000 queries", lambda: attention.attention_scores(*random_qkv(20_000, 2)[:2])),
    ("random_qkv", lambda: random_qkv(10**9, 64)),
    ("embed_tokens", lambda: embed_tokens(["a"], d_model=10**9)),
    ("Attention weights over 20000", lambda: ll.torch_attention_with_weights(*random_qkv(20_000, 2))),
]


@pytest.mark.parametrize("what, make", BIG, ids=[b[0] for b in BIG])
def test_class7_a_size_that_would_kill_the_kernel_is_refused_at_once(what, make):
    start = time.perf_counter()
    with pytest.raises(SizeLimitError) as info:
        make()
    assert time.perf_counter() - start < 2, "refused before allocating, not after"
    message = str(info.value)
    assert what in message and "would need about" in message and "GB" in message
    assert "LESSONS_MEMORY_LIMIT_MB" in message


def test_class7_the_limit_can_be_raised_and_lowered(monkeypatch):
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", "1")
    with pytest.raises(SizeLimitError, match=r"1.0 MB"):
        ll.causal_mask(2000)
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", "8")
    assert ll.causal_mask(2000).shape == (2000, 2000)


# ============================================================ class 8: flags and arguments
NOT_BOOLS = st.one_of(st.text(max_size=3), st.integers(), st.floats(allow_nan=False), st.none(),
                      st.lists(st.booleans(), max_size=2))
FLAGGED = {
    "sliding_window_mask": lambda c: sliding_window_mask(4, 2, causal=c),
    "combine_masks": lambda c: combine_masks(None, c, 3, 3),
    "scaled_dot_product_attention": lambda c: ll.scaled_dot_product_attention(*QKV, causal=c),
    "attention_weights": lambda c: attention.attention_weights(np.zeros((3, 3)), d_k=2, causal=c),
    "multi_head_attention": lambda c: ll.multi_head_attention(np.ones((3, 4)), *[np.eye(4)] * 4, n_heads=2,
                                                              causal=c),
    "sdpa_attention": lambda c: ll.sdpa_attention(*QKV, causal=c),
    "torch_attention_with_weights": lambda c: ll.torch_attention_with_weights(*QKV, causal=c),
}


@settings(max_examples=25, deadline=None)
@given(NOT_BOOLS)
@pytest.mark.parametrize("name", FLAGGED)
def test_class8_a_truthy_non_boolean_flag_is_refused(name, value):
    assume(not isinstance(value, bool))
    with pytest.raises(TypeError, match=r"causal must be True or False"):
        FLAGGED[name](value)


def test_class8_the_issue_example():
    with pytest.raises(TypeError, match=r"causal must be True or False; got 'no'"):
        sliding_window_mask(4, 2, causal="no")


@pytest.mark.parametrize("axis, error", [(None, TypeError), (1.0, TypeError), (True, TypeError),
                                         (2, ValueError), (-3, ValueError)])
def test_class8_softmax_axis_is_checked(axis, error):
    with pytest.raises(error, match=r"axis"):
        ll.softmax(np.zeros((2, 3)), axis=axis)
    assert ll.softmax(np.zeros((2, 3)), axis=np.int64(0)).shape == (2, 3)


def test_class8_batch_dimensions_that_do_not_broadcast_in_each_step():
    with pytest.raises(ValueError, match=r"batch dimensions of Q \(2,\) and K \(3,\)"):
        attention.attention_scores(np.ones((2, 3, 4)), np.ones((3, 5, 4)))
    with pytest.raises(ValueError, match=r"batch dimensions of the weights \(2,\) and of V \(3,\)"):
        attention.weighted_values(np.ones((2, 3, 5)), np.ones((3, 5, 4)))


@pytest.mark.parametrize("call, error, words", [
    (lambda: embed_tokens(["a"], seed="x"), TypeError, "seed must be a whole number"),
    (lambda: embed_tokens(["a"], seed=1.5), TypeError, "seed"),
    (lambda: embed_tokens(["a"], seed=True), TypeError, "seed"),
    (lambda: embed_tokens(["a"], seed=-1), ValueError, "seed must be 0 or more"),
    (lambda: embed_tokens(["a"], position_scale=np.nan), ValueError, "position_scale must be a finite"),
    (lambda: random_qkv(3, 2, seed="x"), TypeError, "np.random.Generator"),
    (lambda: random_qkv(3, 2, dtype=int), TypeError, "got int "),
    (lambda: random_qkv(3, 2, dtype="gpu"), TypeError, "float dtype"),
    (lambda: random_qkv(3, 2, dtype=np.complex128), TypeError, "floating-point"),
    (lambda: projection_weights(4, 2, seed=None), TypeError, "seed must be a whole number"),
    (lambda: coreference_example(strength=np.nan), ValueError, "strength must be a finite number"),
    (lambda: coreference_example(strength=np.inf), ValueError, "strength"),
    (lambda: coreference_example(strength="3"), TypeError, "strength must be a number"),
])
def test_class8_data_seeds_dtypes_and_strengths_are_checked(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_class8_valid_seeds_still_work():
    a = random_qkv(3, 2, seed=np.random.default_rng(1))
    b = random_qkv(3, 2, seed=np.random.default_rng(1))
    np.testing.assert_array_equal(a[0], b[0])
    assert random_qkv(3, 2, dtype="float32")[0].dtype == np.float32
    assert embed_tokens(["a", "b"], seed=np.int64(3)).shape == (2, 8)


# ============================================================ class 9: messages that are true
def test_class9_merge_heads_says_what_it_needs():
    with pytest.raises(ValueError) as info:
        ll.merge_heads(np.ones((5, 8)))
    message = str(info.value)
    assert "at least 3 dimensions" in message and "(5, 8)" in message and "2 dimensions" in message
    assert "at least 1 dimension" not in message


def test_class9_multi_head_attention_quotes_the_mask_shape_that_was_passed():
    with pytest.raises(ValueError) as info:
        ll.multi_head_attention(np.ones((4, 8)), *[np.eye(8)] * 4, n_heads=2, mask=np.ones((3, 3), bool))
    assert "mask has shape (3, 3)" in str(info.value) and "(1, 3, 3)" not in str(info.value)


def test_class9_padding_mask_of_nothing():
    with pytest.raises(ValueError) as info:
        padding_mask([])
    assert "no keys" in str(info.value) and "float64" not in str(info.value)


def test_class9_a_refused_size_quotes_the_call_as_written():
    with pytest.raises(SizeLimitError, match=r"causal_mask\(50000\) would need"):
        ll.causal_mask(50_000)


def test_class9_scaling_messages_speak_of_the_scores_they_were_given():
    with pytest.raises(ValueError) as info:
        attention.scale_scores(np.array([[1e308, 1.0]]), scale=10.0)
    assert "although the scores are finite" in str(info.value) and "Q and K" not in str(info.value)


def test_class9_float64_messages_do_not_suggest_float64():
    q, k, v = random_qkv(3, 2)
    for call in (lambda: ll.scaled_dot_product_attention(q * 1e200, k * 1e200, v),
                 lambda: ll.sdpa_attention(q * 1e200, k * 1e200, v),
                 lambda: ll.torch_attention_with_weights(q * 1e200, k * 1e200, v)):
        with pytest.raises(ValueError) as info:
            call()
        assert "float64." not in str(info.value).replace("overflow float64", "")
        assert "wider dtype" not in str(info.value) and "compute in float64" not in str(info.value)


def test_class9_dtype_messages_name_what_was_passed():
    with pytest.raises(TypeError) as info:
        random_qkv(3, 2, dtype=int)
    assert "got int " in str(info.value) and "int64" not in str(info.value)


def test_class9_an_exercise_message_never_quotes_a_shape_the_case_does_not_have():
    """A shape in a failing check's message belongs to the case, the expected answer or the learner's."""
    import re

    for exercise in exercises.EXERCISES.values():
        for mistake in exercise.mistakes:
            for candidate in getattr(mistake.test, "candidates", ()):
                feedback = exercise.check(candidate)
                # (an axis order quoted in code, .transpose(1, 2, 0), is not a shape)
                shapes = set(re.findall(r"(?<!transpose)\((\d+(?:, \d+)+)\)", feedback.message))
                known = set()
                for case in exercise.cases():
                    for value in case.args.values():
                        known.add(", ".join(map(str, np.shape(value))))
                    outputs = _runs(candidate, case)
                    for out in (outputs if isinstance(outputs, tuple) else (outputs,)):
                        known.add(", ".join(map(str, np.shape(out))))
                    expected = exercise.reference(*case.args.values())
                    for out in (expected if isinstance(expected, tuple) else (expected,)):
                        known.add(", ".join(map(str, np.shape(out))))
                assert shapes <= known, f"{exercise.name}/{mistake.key}: {shapes - known}: {feedback.message}"


def _runs(fn, case):
    """What ``fn`` returns on the case, or () when it raises."""
    try:
        with np.errstate(all="ignore"):
            return fn(*case.args.values())
    except Exception:  # noqa: BLE001
        return ()


def test_class9_every_public_function_here_has_a_docstring_and_all_lists_it():
    for module in (attention, backends, exercises, ll.masks, ll.multihead, ll.data):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                assert obj.__doc__, f"{module.__name__}.{name}"
