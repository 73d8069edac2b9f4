"""Every public function that allocates O(N²) (or O(block²)) refuses a too-large size at once.

Each goes through the one guard, ``_checks.check_memory``, and raises ``SizeLimitError``
(a ``ValueError`` with the size it would need) before allocating. Held in a subprocess whose
address space is limited to 2 GB (a Binder or a small classroom machine, ``RLIMIT_AS``), where
an unguarded allocation would end in ``MemoryError`` or a killed kernel instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.subprocess  # each size is refused in a Python of its own, under a 2 GB address space

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


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_too_large_size_is_refused_quickly_under_a_2_gb_address_space(refusals, name):
    outcome, seconds = refusals[name]
    assert outcome == "SizeLimitError", f"{CALLS[name]} -> {outcome}"
    assert seconds < 2, f"{CALLS[name]} took {seconds:.1f} s to refuse (it should not allocate first)"
