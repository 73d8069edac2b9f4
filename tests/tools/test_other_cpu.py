"""Committed outputs hold on any CPU: ``make test-other-cpu`` reruns the notebooks on another numeric path.

``tools/other_cpu.py`` switches numpy's optional SIMD features off and puts OpenBLAS on its generic core,
so sums and matrix products come out in another order, as on another machine. These tests hold that the
switch really changes the last bits of a float (a notebook that prints them fails there, as it would on
an AVX-512 laptop or an ARM hub) and that a notebook printing claims at their precision passes on both.
"""

from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import pytest

from tests.helpers import REPO, load_tool

# A float's last bits: a product summed by OpenBLAS and tanh summed by numpy's SIMD loops.
ROUNDOFF_PRINT = """\
import numpy as np
rng = np.random.default_rng(0)
a, b = rng.standard_normal((200, 64)), rng.standard_normal((64, 200))
print(repr(float((a @ b).sum())), repr(float(np.tanh(a).sum())))
"""
# The same computations, said as claims at their precision.
CLAIM_PRINT = ROUNDOFF_PRINT.replace(
    "print(repr(float((a @ b).sum())), repr(float(np.tanh(a).sum())))",
    "import lessons_lib as ll\n"
    "print(ll.difference_claim((a @ b).sum(), np.einsum('ik,kj->', a, b), below=1e-9))\n"
    "print(f'{np.tanh(a).sum():.3f}')")


def _python(source: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _committed_notebook(tmp_path, name: str, source: str):
    """A notebook run on this machine's usual path, saved with its outputs (as `make notebooks` does)."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _nbval_on_other_path(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, REPO / "tools" / "other_cpu.py", sys.executable, "-m", "pytest", "-q",
         "-p", "no:cacheprovider", "--nbval", str(path)],
        cwd=REPO, capture_output=True, text=True, timeout=300)


def test_other_path_switches_off_every_simd_feature_numpy_found():
    other_cpu = load_tool("other_cpu")
    env = other_cpu.other_path_environment({})
    found = other_cpu.found_simd_features()
    assert env.get("NPY_DISABLE_CPU_FEATURES", "").split() == found
    assert env["ATEN_CPU_CAPABILITY"] == "default", "torch's lessons must leave AVX2/AVX-512 kernels too"
    assert "numpy SIMD features off" in other_cpu.describe(env)


@pytest.mark.subprocess  # the other numeric path is another Python with its own environment
def test_other_path_moves_torch_to_its_baseline_kernels():
    other_cpu = load_tool("other_cpu")
    probe = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    assert _python(probe, other_cpu.other_path_environment()).strip() == "DEFAULT"


@pytest.mark.subprocess
def test_other_path_changes_the_last_bits_of_floats():
    other_cpu = load_tool("other_cpu")
    usual = _python(ROUNDOFF_PRINT, dict(os.environ))
    other = _python(ROUNDOFF_PRINT, other_cpu.other_path_environment())
    if usual == other:
        pytest.skip("this CPU computes the same bits on both paths (no SIMD beyond numpy's baseline, "
                    "and OpenBLAS already on its generic core): the second run cannot differ here")
    assert usual != other


@pytest.mark.subprocess
def test_a_planted_roundoff_print_fails_on_the_other_path_and_a_claim_passes(tmp_path):
    other_cpu = load_tool("other_cpu")
    other_env = other_cpu.other_path_environment()
    if _python(ROUNDOFF_PRINT, dict(os.environ)) == _python(ROUNDOFF_PRINT, other_env):
        pytest.skip("no other numeric path on this CPU")
    planted = _nbval_on_other_path(_committed_notebook(tmp_path, "planted.ipynb", ROUNDOFF_PRINT))
    assert planted.returncode != 0, "a notebook printing a float's last bits passed on another numeric path"
    assert "Cell outputs differ" in planted.stdout
    claims = _nbval_on_other_path(_committed_notebook(tmp_path, "claims.ipynb", CLAIM_PRINT))
    assert claims.returncode == 0, claims.stdout[-3000:]
