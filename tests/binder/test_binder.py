"""Binder's environment, built as repo2docker builds it, serves and runs every lesson (``make test-binder``).

tools/binder_env.py builds it once into build/binder-env: repo2docker's base versions first
(JupyterLab 4.4.9, Notebook 7.4.7, ...), then ``binder/requirements.txt`` (the course pins with torch
as the CPU-only build, the Notebook of the browser test, nbgitpuller) from a copy of the repository
at a home path, then ``binder/postBuild``; then the home copy is deleted, as a hub's home volume
hides it. These tests require a clean ``pip check``, that both ``/lab`` and ``/tree`` serve, that
``lessons_lib`` imports from an empty home and lesson 00 opens and runs after an nbgitpuller pull,
and every notebook under nbval in that environment's kernel (the offline kernel of
tools/offline_kernel.py, which records each kernel's peak memory against a 2 GB Binder).
The sizes it measures go to ``test-artifacts/binder.json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.course_remote import LESSON_00, NAME, learner_remote
from tests.helpers.lab_server import running_lab

TOOL = REPO / "tools" / "offline_kernel.py"
ARTIFACTS = REPO / "test-artifacts"
# Jupyter refuses to run as root unless told (containers, CI), as the Makefile's ROOT_ARGS
SERVE = ["--ServerApp.root_dir=.", *(["--ServerApp.allow_root=True"] if os.geteuid() == 0 else [])]
PEAK_LIMIT_MB = 1500  # Binder gives 1-2 GB per user; the Jupyter server needs the rest
#: pytest-xdist's options for nbval as make test-notebooks gives them (a notebook per worker, on every core)
NBVAL_PARALLEL = re.search(r"^NBVAL_PARALLEL := (.+)$", (REPO / "Makefile").read_text(), re.M)[1].split()
binder_env = load_tool("binder_env")



def _size_mb(path: Path) -> float:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return round(total / 2**20, 1)


@pytest.mark.binder
def test_binder_requirements_pin_the_cpu_build_of_the_course_torch():
    lines = [ln.split("#")[0].strip() for ln in (REPO / "binder/requirements.txt").read_text().splitlines()]
    lines = [ln for ln in lines if ln]
    assert "-r ../requirements.txt" in lines, "binder must share the course pins, not copy them"
    cpu = [ln for ln in lines if ln.startswith("torch==")]
    top = [ln.strip() for ln in (REPO / "requirements.txt").read_text().splitlines()
           if ln.startswith("torch==")]
    assert cpu and top and cpu[0] == top[0] + "+cpu", (cpu, top)
    assert any(ln.startswith("--extra-index-url https://download.pytorch.org/whl/cpu") for ln in lines)
    runtime = (REPO / "binder/runtime.txt").read_text().strip()
    assert runtime.startswith("python-3."), runtime


def _pins(path: Path) -> dict[str, str]:
    lines = (ln.split("#")[0].strip() for ln in path.read_text().splitlines())
    return dict(ln.split("==", 1) for ln in lines if "==" in ln)


@pytest.mark.binder
def test_binder_installs_the_notebook_of_the_browser_test_and_nbgitpuller():
    binder, dev = _pins(REPO / "binder/requirements.txt"), _pins(REPO / "requirements-dev.txt")
    assert binder["notebook"] == dev["notebook"], "Binder's Notebook 7 must be the one the browser test runs"
    assert "nbgitpuller" in binder, "learners get the notebooks by an nbgitpuller link"
    post = (REPO / "binder/postBuild").read_text()
    assert "pip install" in post and " -e " not in post, "an editable install lives in the home a hub hides"


@pytest.fixture(scope="module")
def binder_python() -> Path:
    """The Binder environment's python (built once by tools/binder_env.py, reused while its inputs hold)."""
    return binder_env.build()


def _version(py: Path, package: str) -> str:
    return subprocess.run([str(py), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.binder
@pytest.mark.slow
def test_binder_environment_starts_from_repo2docker_base_and_pip_check_is_clean(binder_python):
    check = (binder_python.parents[2] / "pip-check.txt").read_text()
    assert "No broken requirements found" in check, check
    top, dev = _pins(REPO / "requirements.txt"), _pins(REPO / "requirements-dev.txt")
    assert _version(binder_python, "jupyterlab") == top["jupyterlab"]
    assert _version(binder_python, "notebook") == dev["notebook"]
    assert _version(binder_python, "jupyterhub").startswith("5."), "repo2docker's jupyterhub-singleuser 5"


@pytest.mark.binder
@pytest.mark.slow
def test_binder_environment_serves_lab_and_tree(binder_python, tmp_path):
    jupyter = [str(binder_python.parent / "jupyter")]
    with running_lab(tmp_path, SERVE, jupyter=jupyter) as server:
        for page, title in (("/lab", b"JupyterLab"), ("/tree", b"Jupyter Notebook")):
            status, body = server.request(page)
            assert status == 200 and title in body, (page, status, body[:300])


def _nbgitpuller_pull(server, repo: str, branch: str, timeout: float = 120) -> list[dict]:
    """What the nbgitpuller link's page does: stream ``/git-pull/api`` until it finishes."""
    query = urllib.parse.urlencode({"repo": repo, "branch": branch, "targetpath": NAME})
    req = urllib.request.Request(f"{server.url}/git-pull/api?{query}",
                                 headers={"Authorization": f"token {server.token}"})
    events = []
    with urllib.request.urlopen(req, timeout=timeout) as stream:
        for line in stream:
            if line.startswith(b"data:"):
                events.append(json.loads(line[5:]))
                if events[-1].get("phase") in ("finished", "error"):
                    break
    return events


@pytest.mark.binder
@pytest.mark.slow
def test_image_survives_an_empty_home_and_lesson_00_opens_after_nbgitpuller(binder_python, tmp_path):
    home = tmp_path / "home" / "jovyan"  # the learner's home volume, empty, over the image's copy
    home.mkdir(parents=True)
    env = dict(os.environ, HOME=str(home))
    probe = subprocess.run(
        [str(binder_python), "-c", "import lessons_lib, pathlib; print(lessons_lib.__file__); "
         "print(*sorted(p.name for p in pathlib.Path(lessons_lib.__file__).parent.rglob('live_figures.*')"
         " if p.suffix in ('.js', '.css')))"],
        cwd=home, env=env, capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr[-2000:]
    where, assets = probe.stdout.splitlines()
    assert "site-packages" in where and str(REPO / "lessons_lib") not in where, where
    assert assets.split() == ["live_figures.css", "live_figures.js"], assets

    bare = learner_remote(tmp_path)
    jupyter = [str(binder_python.parent / "jupyter")]
    with running_lab(home, SERVE, jupyter=jupyter, extra_env={"HOME": str(home)}) as server:
        link = urllib.parse.urlencode({"repo": f"file://{bare}", "branch": "learner",
                                       "urlpath": f"lab/tree/{NAME}/{LESSON_00}"})
        status, page = server.request(f"/git-pull?{link}")
        assert status == 200 and b"nbgitpuller" in page.lower(), page[:300]
        events = _nbgitpuller_pull(server, f"file://{bare}", "learner")
        assert events and events[-1]["phase"] == "finished", events[-3:]
        model = server.api(f"contents/{NAME}/{LESSON_00}")
        assert model["type"] == "notebook" and model["content"]["cells"]
    lesson = home / NAME / LESSON_00
    started = time.monotonic()
    run = subprocess.run(
        [str(binder_python), "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--output", str(tmp_path / "ran.ipynb"), str(lesson)],
        cwd=lesson.parent, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    print(f"lesson 00 ran in the Binder environment from an empty home in {time.monotonic() - started:.0f} s")


@pytest.mark.binder
@pytest.mark.slow
def test_binder_environment_runs_every_notebook(binder_python, tmp_path):
    py = binder_python
    probe = subprocess.run(
        [str(py), "-c", "import torch, lessons_lib; print(torch.__version__, torch.version.cuda)"],
        capture_output=True, text=True, check=True, cwd=tmp_path)
    version, cuda = probe.stdout.split()
    assert version.endswith("+cpu") and cuda == "None", probe.stdout
    jupyter_dir, log = tmp_path / "jupyter", tmp_path / "peaks"
    subprocess.run([str(py), str(TOOL), "install", str(jupyter_dir), "--name", "course-binder"], check=True)
    notebooks = sorted((REPO / "notebooks").glob("*.ipynb"))
    nbval = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *NBVAL_PARALLEL, "--nbval",
         "--nbval-kernel-name", "course-binder", *map(str, notebooks)],
        cwd=REPO, env=dict(os.environ, JUPYTER_PATH=str(jupyter_dir), LESSONS_KERNEL_LOG=str(log)),
        capture_output=True, text=True)
    assert nbval.returncode == 0, nbval.stdout[-6000:] + nbval.stderr[-2000:]
    peaks = subprocess.run([sys.executable, str(TOOL), "report", str(log), *map(str, notebooks),
                            "--limit-mb", str(PEAK_LIMIT_MB)], capture_output=True, text=True)
    print(peaks.stdout)
    assert peaks.returncode == 0, peaks.stdout

    venv = py.parents[1]
    site = next((venv / "lib").glob("python3*/site-packages"))
    sizes = {"venv_mb": _size_mb(venv), "torch_mb": _size_mb(site / "torch"),
             "torch_version": version,
             "peak_kernel_mb": [json.loads(f.read_text()) for f in sorted(log.glob("*.json"))]}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "binder.json").write_text(json.dumps(sizes, indent=1) + "\n")
    print(f"binder venv {sizes['venv_mb']} MB, of which torch (CPU build) {sizes['torch_mb']} MB")
