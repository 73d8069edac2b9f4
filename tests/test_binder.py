"""Binder's environment, built as repo2docker builds it, runs every lesson (``make test-binder``).

repo2docker installs ``binder/requirements.txt`` (the course pins of ``../requirements.txt`` with
torch as the CPU-only build) and runs ``binder/postBuild``. This test does the same into a fresh
virtual environment, then runs every notebook under nbval in that environment's kernel (the
offline kernel of tools/offline_kernel.py, which also records each kernel's peak memory), and
checks that each fits a 2 GB Binder. The only line skipped is the extra index URL of PyTorch's CPU
wheels, which this machine cannot reach: its local torch wheel is that same CPU build
(``2.13.0+cpu``). The sizes it measures go to ``test-artifacts/binder.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "offline_kernel.py"
ARTIFACTS = ROOT / "test-artifacts"
PEAK_LIMIT_MB = 1500  # Binder gives 1-2 GB per user; the Jupyter server needs the rest

pytestmark = pytest.mark.binder


def _size_mb(path: Path) -> float:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return round(total / 2**20, 1)


def test_binder_requirements_pin_the_cpu_build_of_the_course_torch():
    lines = [ln.split("#")[0].strip() for ln in (ROOT / "binder/requirements.txt").read_text().splitlines()]
    lines = [ln for ln in lines if ln]
    assert "-r ../requirements.txt" in lines, "binder must share the course pins, not copy them"
    cpu = [ln for ln in lines if ln.startswith("torch==")]
    top = [ln.strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()
           if ln.startswith("torch==")]
    assert cpu and top and cpu[0] == top[0] + "+cpu", (cpu, top)
    assert any(ln.startswith("--extra-index-url https://download.pytorch.org/whl/cpu") for ln in lines)
    runtime = (ROOT / "binder/runtime.txt").read_text().strip()
    assert runtime.startswith("python-3."), runtime


@pytest.mark.slow
def test_binder_environment_installs_and_runs_every_notebook(tmp_path):
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    # repo2docker's install, minus the index this machine cannot reach (pip reads -r relative to the file).
    reqs = ROOT / "binder" / ".requirements-offline-test.txt"
    text = (ROOT / "binder/requirements.txt").read_text()
    reqs.write_text("".join(ln + "\n" for ln in text.splitlines() if not ln.startswith("--extra-index-url")))
    try:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "-r", str(reqs)], check=True, cwd=ROOT)
    finally:
        reqs.unlink()
    env = dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(["bash", "binder/postBuild"], check=True, cwd=ROOT, env=env)

    probe = subprocess.run(
        [str(py), "-c", "import torch, lessons_lib; print(torch.__version__, torch.version.cuda)"],
        capture_output=True, text=True, check=True, cwd=tmp_path)
    version, cuda = probe.stdout.split()
    assert version.endswith("+cpu") and cuda == "None", probe.stdout

    jupyter_dir, log = tmp_path / "jupyter", tmp_path / "peaks"
    subprocess.run([str(py), str(TOOL), "install", str(jupyter_dir), "--name", "course-binder"], check=True)
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    nbval = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
         "--nbval-kernel-name", "course-binder", *map(str, notebooks)],
        cwd=ROOT, env=dict(os.environ, JUPYTER_PATH=str(jupyter_dir), LESSONS_KERNEL_LOG=str(log)),
        capture_output=True, text=True)
    assert nbval.returncode == 0, nbval.stdout[-6000:] + nbval.stderr[-2000:]
    peaks = subprocess.run([sys.executable, str(TOOL), "report", str(log), *map(str, notebooks),
                            "--limit-mb", str(PEAK_LIMIT_MB)], capture_output=True, text=True)
    print(peaks.stdout)
    assert peaks.returncode == 0, peaks.stdout

    site = next((venv / "lib").glob("python3*/site-packages"))
    sizes = {"venv_mb": _size_mb(venv), "torch_mb": _size_mb(site / "torch"),
             "torch_version": version,
             "peak_kernel_mb": [json.loads(f.read_text()) for f in sorted(log.glob("*.json"))]}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "binder.json").write_text(json.dumps(sizes, indent=1) + "\n")
    print(f"binder venv {sizes['venv_mb']} MB, of which torch (CPU build) {sizes['torch_mb']} MB")
    shutil.rmtree(venv, ignore_errors=True)
