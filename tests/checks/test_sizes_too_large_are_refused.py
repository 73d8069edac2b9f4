"""Validators at their limits: a number too large to be any size, and a memory limit that is no limit.

* Every public function, class and explorer that takes a whole number (found from ``lessons_lib.__all__``
  and the signatures' ``int`` annotations, so a new one cannot escape) answers a number beyond any size
  or index (``10**400``, ``2**64``, ``-10**30``) with the course's own error naming the argument, at once:
  never Python's OverflowError, numpy's "Maximum allowed size exceeded", torch's overflow, or a loop
  that does not end.
* The mask builders meet a count that is a whole number numpy could hold, but memory could not, with the
  memory message (SizeLimitError), before allocating anything.
* ``LESSONS_MEMORY_LIMIT_MB`` that is not a finite number of megabytes above 0 (``inf``, ``nan``,
  ``1e400``, ``-5``, ``0``, ``4GB``) is refused once, by one warning that names it, and the default holds.
* Every public function that allocates O(N²) (or O(block²)) refuses a too-large size at once, through the
  one guard (``_checks.check_memory``), before allocating: held in a Python whose address space is limited
  to 2 GB (a Binder or a small classroom machine), where an unguarded allocation would end in
  ``MemoryError`` or a killed kernel instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import json
import math
import re
import signal
import subprocess
import sys
import textwrap
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib import _checks
from lessons_lib._checks import MAX_COUNT, SizeLimitError
from tests.helpers import REPO

pytest.importorskip("torch")

# ------------------------------------------------------------------ every public whole-number argument

# A whole number beyond any count or index an array can have, on either side.
BEYOND = st.one_of(st.sampled_from([10**400, 2**63, 2**64, -(10**30)]),
                   st.integers(min_value=MAX_COUNT + 1, max_value=10**1000),
                   st.integers(min_value=-(10**1000), max_value=-(MAX_COUNT + 1)))

# Words of other libraries' overflow errors: none may reach a learner.
FOREIGN = ("Maximum allowed size", "Overflow", "too large to convert", "index-sized", "unpack",
           "cannot convert", "C long", "ufunc")


def _takes_whole_number(parameter) -> bool:
    """Annotated ``int`` or ``int | None`` (``Sequence[int]`` is a list, not a whole number)."""
    return re.fullmatch(r"int( \| None)?|None \| int|<class 'int'>", str(parameter.annotation)) is not None


def _whole_number_arguments() -> list[tuple[str, tuple[str, ...]]]:
    """``(public name, its whole-number parameters)`` for every callable of ``lessons_lib.__all__``.

    Records (dataclasses such as ``Measurement``) are left out: they hold numbers, they compute nothing.
    """
    found = []
    for name in sorted(ll.__all__):
        obj = getattr(ll, name)
        if not callable(obj) or dataclasses.is_dataclass(obj):
            continue
        try:
            parameters = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            continue
        counts = tuple(p.name for p in parameters if _takes_whole_number(p))
        if counts:
            found.append((name, counts))
    return found


WHOLE_NUMBER_ARGUMENTS = _whole_number_arguments()


@functools.cache
def _example(parameter: str):
    """A valid value for a required argument that is not the one under test, by the argument's name."""
    rng = np.random.default_rng(0)
    q, k, v = ll.random_qkv(4, 8, seed=0)
    if parameter in ("run",):
        return ll.train_coref_model(steps=2, snapshot_every=1, progress=False)
    if parameter == "attention":
        return ll.look_inside(online=False, run=_example("run"))
    if parameter == "table":
        return ll.measure_scaling(sizes=(16, 32), d=4, repeats=1, progress=False)
    if parameter == "steps":
        return ll.flash_attention_steps(q, k, v, block_size=2)
    if parameter == "trace":
        return ll.trace_generation(4)
    if parameter == "held":
        return ll.ring_buffer(6, 3, sinks=1)
    if parameter == "view":
        return ll.rotation_view(*ll.rope_vectors(8), 3, 1)
    simple = {
        "x": rng.standard_normal((4, 8)), "w": np.eye(8), "w_q": np.eye(8), "w_k": np.eye(8),
        "w_v": np.eye(8), "w_o": np.eye(8), "q": q, "k": k, "v": v, "scores": rng.standard_normal((4, 4)),
        "tokens": ["the", "cat", "sat", "down"], "mask": ll.causal_mask(4), "causal": True,
        "method": "naive numpy", "cases": [], "weights": np.full((2, 4, 4), 0.25), "width": 6, "height": 4,
        "attend": lambda x: x, "recipe": "minus_inf", "name": "my_softmax", "fn": lambda x: x,
        "positions": np.arange(4), "offsets": np.arange(-2, 3),
        "kv": np.ones((2, 4, 8)), "cache": ll.KVCache(), "x_new": rng.standard_normal((1, 8)),
        "q_latent": rng.standard_normal((4, 8)),
        "logits": np.array([2.0, 1.0, 0.0]),
        "layer": {"w_q": np.eye(8), "w_k": np.eye(8), "w_v": np.eye(8), "w_o": np.eye(8), "n_heads": 2},
        "decay": np.full(4, 0.9), "beta": np.full(4, 0.5), "mixer": "window",
    }
    if parameter not in simple:
        raise KeyError(parameter)
    return simple[parameter]


# Arguments a function needs beyond its signature's required ones (padding_mask takes valid or lengths).
EXTRA = {"padding_mask": {"lengths": [3, 2]}}
WHOLE_NUMBER_EXAMPLE = 2     # a required whole number that is not under test (a count, or a token index)


def _arguments(name: str, under_test: str) -> dict:
    arguments = dict(EXTRA.get(name, {}))
    for p in inspect.signature(getattr(ll, name)).parameters.values():
        if p.name == under_test or p.default is not inspect.Parameter.empty or p.kind in (
                p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if _takes_whole_number(p):
            arguments[p.name] = WHOLE_NUMBER_EXAMPLE
        else:
            try:
                arguments[p.name] = _example(p.name)
            except KeyError:
                pytest.fail(f"{name} needs {p.name}: add an example for it to _example() in this test")
    return arguments


@contextlib.contextmanager
def _time_limit(seconds: float, what: str):
    """Fail (instead of hanging) when the call has not come back within ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"{what} did not come back within {seconds} s: a loop over the huge count?")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_every_whole_number_argument_is_found():
    """The walk below finds the functions of every layer, so a new one is tested without being listed."""
    names = {name for name, _ in WHOLE_NUMBER_ARGUMENTS}
    assert {"causal_mask", "padding_mask", "sliding_window_mask", "causal_average_weights",
            "bottom_right_causal_mask", "random_qkv", "measure", "multi_head_attention",
            "train_coref_model", "HeadGridExplorer", "tick_indices"} <= names
    assert len(WHOLE_NUMBER_ARGUMENTS) > 60


@pytest.mark.parametrize(("name", "parameters"), WHOLE_NUMBER_ARGUMENTS,
                         ids=[name for name, _ in WHOLE_NUMBER_ARGUMENTS])
@settings(max_examples=6, deadline=None, derandomize=True)
@given(data=st.data())
def test_a_whole_number_beyond_any_size_gets_the_courses_error_naming_it(name, parameters, data):
    parameter = data.draw(st.sampled_from(parameters), label="argument")
    value = data.draw(BEYOND, label="value")
    arguments = {**_arguments(name, parameter), parameter: value}
    with warnings.catch_warnings(), _time_limit(30, f"{name}({parameter}={_checks.short_number(value)})"):
        warnings.simplefilter("ignore")      # a progress bar's or matplotlib's warning is not the point
        try:
            getattr(ll, name)(**arguments)
        except (TypeError, ValueError) as error:
            message = str(error)
            assert parameter in message, f"{name}({parameter}=...) answered without naming it: {message}"
            assert not any(words in message for words in FOREIGN), f"{name}, others' words: {message}"
        # Coming back is fine too: the number was no size there (a seed for numpy, a cap on labels).


# ------------------------------------------------------------------ the mask builders: memory, not overflow

MASK_BUILDERS = {
    "causal_mask": lambda n: ll.causal_mask(n),
    "causal_mask(n_keys=...)": lambda n: ll.causal_mask(3, n),
    "sliding_window_mask": lambda n: ll.sliding_window_mask(n, 3),
    "causal_average_weights": lambda n: ll.causal_average_weights(n),
    "bottom_right_causal_mask": lambda n: ll.bottom_right_causal_mask(2, n),
    "padding_mask(n_keys=...)": lambda n: ll.padding_mask(lengths=[3, 2], n_keys=n),
    "padding_mask(n_queries=...)": lambda n: ll.padding_mask([1, 1, 0], n_queries=n),
    "padding_mask(lengths=...)": lambda n: ll.padding_mask(lengths=[n]),
}


@pytest.mark.parametrize("builder", MASK_BUILDERS)
@settings(max_examples=15, deadline=None)
@given(n=st.one_of(st.integers(min_value=10**10, max_value=MAX_COUNT), st.sampled_from([10**400, 2**64])))
def test_a_mask_too_big_for_memory_gets_the_memory_message_before_anything_is_allocated(builder, n):
    with _time_limit(10, builder), pytest.raises(SizeLimitError) as error:
        MASK_BUILDERS[builder](n)
    message = str(error.value)
    assert "would need about" in message or "beyond any size or index" in message, message
    assert not any(words in message for words in FOREIGN), message


def test_a_window_wider_than_the_sequence_sees_all_of_it():
    np.testing.assert_array_equal(ll.sliding_window_mask(5, MAX_COUNT), ll.causal_mask(5))
    np.testing.assert_array_equal(ll.sliding_window_mask(5, 10**12, causal=False), np.ones((5, 5), bool))


def test_sizes_of_any_magnitude_are_written_as_a_learner_reads_them():
    assert _checks.format_bytes(10**400) == "1.0e+388 TB"
    assert _checks.format_bytes(4.01e10) == "40.1 GB"
    assert _checks.format_bytes(2.1e37) == "2.1e+25 TB"
    assert _checks.short_number(10**400) == "about 1.0e+400" and _checks.short_number(2048) == "2048"


# ------------------------------------------------------------------ LESSONS_MEMORY_LIMIT_MB

def _a_limit(text: str) -> bool:
    """What the variable must be: a finite number of megabytes above 0."""
    try:
        return math.isfinite(float(text)) and float(text) > 0
    except ValueError:
        return False


@pytest.fixture
def fresh_refusals(monkeypatch):
    """Each test starts with no setting refused yet (a refusal is said once per process)."""
    monkeypatch.setattr(_checks, "refused_limits", set())


@pytest.mark.parametrize("setting", ["inf", "nan", "1e400", "-5", "0", "4GB", "-inf", "lots"])
def test_a_memory_limit_that_is_no_limit_is_refused_once_naming_it(setting, monkeypatch, fresh_refusals):
    monkeypatch.setenv("LESSONS_MEMORY_LIMIT_MB", setting)
    with pytest.warns(UserWarning) as record:
        mask = ll.causal_mask(4)                                 # every check works: the default holds
        with pytest.raises(SizeLimitError, match=r"1\.0 GB"):
            ll.causal_mask(40_000)
        ll.causal_average_weights(5)
    assert mask.shape == (4, 4)
    refusals = [str(w.message) for w in record if "LESSONS_MEMORY_LIMIT_MB" in str(w.message)]
    assert len(refusals) == 1, refusals                         # once, not at every check
    assert repr(setting) in refusals[0] and "finite number of megabytes above 0" in refusals[0]
    assert "1000 MB" in refusals[0]


@settings(max_examples=60, deadline=None)
@given(setting=st.one_of(st.text(max_size=8), st.floats().map(repr), st.integers(-5, 10**6).map(str),
                         st.sampled_from(["1e400", "inf", "NaN", " 64 ", "1_000", "0.5", "-0.0"])))
def test_the_memory_limit_is_a_finite_number_of_megabytes_above_0_or_refused(setting):
    if "\x00" in setting:
        return                                               # no environment variable can hold it
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_checks, "refused_limits", set())
        patch.setenv("LESSONS_MEMORY_LIMIT_MB", setting)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            limit = _checks.memory_limit_bytes()
    if not setting.strip():
        assert limit == _checks.DEFAULT_MEMORY_LIMIT_MB * 10**6 and not record
    elif _a_limit(setting):
        assert limit == max(int(Fraction(float(setting)) * 10**6), 1) and not record
    else:
        assert limit == _checks.DEFAULT_MEMORY_LIMIT_MB * 10**6
        assert len(record) == 1 and "LESSONS_MEMORY_LIMIT_MB" in str(record[0].message)


# ------------------------------------------------------------------ under a 2 GB address space
# name -> the call, with a size far past the 1 GB default limit. Inputs are small (or broadcast
# views, which take no memory), so only the function's own O(N²) buffer could be large.
CALLS = {
    "causal_mask": "ll.causal_mask(100_000)",
    "bottom_right_causal_mask": "ll.bottom_right_causal_mask(50_000, 100_000)",
    "sliding_window_mask": "ll.sliding_window_mask(100_000, 3)",
    "padding_mask (lengths)": "ll.padding_mask(lengths=[100_000, 5], n_queries=100_000)",
    "padding_mask (key padding)": "ll.padding_mask(np.ones(100_000, dtype=int))",
    "causal_average_weights": "ll.causal_average_weights(20_000)",
    "mask_gallery": "ll.mask_gallery(50_000)",
    "additive_mask": "ll.additive_mask(np.broadcast_to(True, (50_000, 50_000)))",
    "softmax": "ll.softmax(np.broadcast_to(0.0, (50_000, 50_000)))",
    "softmax_off": "ll.softmax_off(np.broadcast_to(0.0, (50_000, 50_000)))",
    "attention_scores": "ll.attention_scores(long, long)",
    "scale_scores": "ll.scale_scores(np.broadcast_to(0.0, (50_000, 50_000)), d_k=4)",
    "attention_weights": "ll.attention_weights(np.broadcast_to(0.0, (50_000, 50_000)), d_k=4)",
    "scaled_dot_product_attention": "ll.scaled_dot_product_attention(long, long, long)",
    "multi_head_attention": "ll.multi_head_attention(long, *[np.eye(4)] * 4, n_heads=2)",
    "flash_attention (block_size)": "ll.flash_attention(long, long, long, block_size=50_000)",
    "flash_attention_steps (block_size)": "ll.flash_attention_steps(long, long, long, block_size=50_000)",
    "check_fits": "ll.check_fits('naive numpy', 100_000)",
    "measure": "ll.measure('naive numpy', 100_000)",
    "measure_scaling": "ll.measure_scaling([100_000], ['naive numpy'], progress=False)",
    "random_qkv": "ll.random_qkv(10**9, 64)",
}

SCRIPT = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
    import numpy as np
    import lessons_lib as ll
    from lessons_lib._checks import SizeLimitError
    long = np.ones((50_000, 4))
    results = {}
    for name, call in json.loads(sys.argv[1]).items():
        start = time.perf_counter()
        try:
            eval(call)
            outcome = "returned"
        except SizeLimitError:
            outcome = "SizeLimitError"
        except BaseException as exc:
            outcome = f"{type(exc).__name__}: {exc}"[:300]
        results[name] = [outcome, time.perf_counter() - start]
    print(json.dumps(results))
""")


@pytest.fixture(scope="module")
def refusals():
    env = {"LESSONS_MEMORY_LIMIT_MB": "1000", "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CALLS)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.subprocess  # each size is refused in a Python of its own, under a 2 GB address space
@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_too_large_size_is_refused_quickly_under_a_2_gb_address_space(refusals, name):
    outcome, seconds = refusals[name]
    assert outcome == "SizeLimitError", f"{CALLS[name]} -> {outcome}"
    assert seconds < 2, f"{CALLS[name]} took {seconds:.1f} s to refuse (it should not allocate first)"
