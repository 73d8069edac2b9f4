"""The suite's hooks and shared fixtures; the helpers themselves live in ``tests/helpers/``.

**The two loops.** `make test` runs every test. `make check` (the edit loop) runs ``pytest --edit-loop``:
it leaves out every test marked with one of ``NOT_IN_CHECK`` (``tests/helpers/loops.py``: a test that
starts a kernel, a server, a browser or another process, or trains a model), and any test left in that
starts a process or a server anyway fails at once, saying which mark it needs (``no_processes``).
Hypothesis runs the ``dev`` profile there (a fifth of the examples) and the ``ci`` profile everywhere else
(``HYPOTHESIS_PROFILE``); a test asks for ``examples(n)``, its number of examples in the ``ci`` profile.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers import NOTEBOOKS, REPO, work_units
from tests.helpers.loops import NOT_IN_CHECK, no_processes

# No test reaches the internet: lesson 10 (lab/real_model.py) takes its offline path in every kernel
# the tests start, as `make test` and CI also say.
os.environ.setdefault("LESSONS_OFFLINE", "1")


# ------------------------------------------------------------------ the two loops

def pytest_addoption(parser):
    parser.addoption("--edit-loop", action="store_true",
                     help="make check: leave out the tests marked " + ", ".join(NOT_IN_CHECK)
                     + ", and fail a test left in that starts a process or a server")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--edit-loop"):
        return
    left_out = [item for item in items if any(item.get_closest_marker(m) for m in NOT_IN_CHECK)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in set(left_out)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """In `make check`, each test (its fixtures included) runs where no process or server can start."""
    if not item.config.getoption("--edit-loop"):
        return (yield)
    with no_processes(item.nodeid):
        return (yield)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``--dist loadscope`` (make check, the library stage, the browser stage), the units of work of
    tests/helpers/work_units.py: a browser page's checks together, each case of a long independent test
    alone, every other file whole."""
    if config.getvalue("dist") != "loadscope":
        return None
    return work_units.scheduler(config, log)


@pytest.fixture(autouse=True)
def checks_in_a_thread_in_the_edit_loop(request, monkeypatch):
    """In `make check`, the exercise checks run a learner's function in a thread (the runner's ``"thread"``
    isolation, Windows' way), not in a child forked for each case: the same verdicts and messages,
    without a fork per case (forking was about a third of the edit loop's processor time). A test about the
    forked child itself is marked ``forked`` and keeps it; `make test` runs every test with the child."""
    if request.config.getoption("--edit-loop") and request.node.get_closest_marker("forked") is None:
        from lessons_lib.exercises import runner

        monkeypatch.setattr(runner, "ISOLATION", "thread")


def _hypothesis_profiles() -> None:
    """``ci``: every example each test asks for; ``dev`` (make check): a fifth of them. Neither has a
    deadline: a loaded 2-core machine must not turn a slow example into a failure."""
    from hypothesis import settings

    settings.register_profile("ci", deadline=None, print_blob=True)
    settings.register_profile("dev", deadline=None, max_examples=20)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    """Turn SIGTERM (a CI timeout, `kill`) into KeyboardInterrupt, so that fixtures still shut
    JupyterLab, its kernels and Chromium down instead of leaving them running; load the hypothesis
    profile; in `make check`, build matplotlib's font cache first (it asks fc-list, a process, once)."""
    _hypothesis_profiles()
    if config.getoption("--edit-loop"):
        import matplotlib.font_manager  # noqa: F401

    def _interrupt(signum, frame):
        raise KeyboardInterrupt(f"received signal {signum}")

    with contextlib.suppress(ValueError):  # not in the main thread
        signal.signal(signal.SIGTERM, _interrupt)


# ------------------------------------------------------------ a fresh Python's imports

#: what one fresh Python does, step by step, in this order (each step keeps what the ones before loaded)
FRESH_STEPS = {
    "import lessons_lib": "import lessons_lib",
    "ll.environment_report": "lessons_lib.environment_report",
    "import lessons_lib.lab.adapters": "import lessons_lib.lab.adapters",
    "import lessons_lib.lab.coref": "import lessons_lib.lab.coref",
    "import lessons_lib.lab.cost": "import lessons_lib.lab.cost",
    "ll.plot_weights": "import numpy; lessons_lib.plot_weights(numpy.full((2, 2), 0.5), ['a', 'b'])",
}
#: the heavy modules it watches for
WATCHED = ("torch", "matplotlib", "matplotlib.pyplot", "ipywidgets", "anywidget")


@pytest.fixture(scope="session")
def fresh_imports() -> dict[str, set[str]]:
    """Step of :data:`FRESH_STEPS` -> the :data:`WATCHED` modules loaded once it ran: one Python for every
    check that importing the library stays light (a test using it is marked ``subprocess``)."""
    code = "\n".join([
        "import json, sys",
        f"watched, loaded = {WATCHED!r}, {{}}",
        *(f"{source}\nloaded[{step!r}] = [m for m in watched if m in sys.modules]"
          for step, source in FRESH_STEPS.items()),
        "print(json.dumps(loaded))",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return {step: set(found) for step, found in json.loads(out.stdout.splitlines()[-1]).items()}


# ------------------------------------------------------------ the exported site

def _site_digest() -> str:
    """What the exported pages are made from: the notebooks, the exporting tools and their template,
    the library's packaged files, and the versions of nbconvert and MathJax."""
    import hashlib
    from importlib.metadata import version

    digest = hashlib.sha256(f"{version('nbconvert')} {version('jupyter-server-mathjax')}".encode())
    files = [*NOTEBOOKS.glob("*.ipynb"), *(REPO / "tools").glob("*.py"),
             *(REPO / "tools" / "html_template").rglob("*"), *(REPO / "lessons_lib").rglob("*.*")]
    for path in sorted(f for f in files if f.is_file() and "__pycache__" not in f.parts):
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="session")
def exported_site() -> Path:
    """The learner's static pages as `make html` writes them (``tools/export_html.py``), exported once per
    `make test`: into ``build/test-site``, kept while what they are made from is unchanged, so the library
    stage and the browser stage (two pytest processes) read the same export."""
    site, stamp = REPO / "build" / "test-site", REPO / "build" / "test-site.sha256"
    digest = _site_digest()
    site.parent.mkdir(parents=True, exist_ok=True)
    # pytest-xdist's workers ask for it at once: one exports, the others wait for it (a lock on a file)
    with open(REPO / "build" / "test-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if site.is_dir() and stamp.is_file() and stamp.read_text(encoding="utf-8") == digest:
            return site
        fresh = Path(tempfile.mkdtemp(prefix="test-site-", dir=site.parent))
        subprocess.run([sys.executable, str(REPO / "tools" / "export_html.py"), "--out", str(fresh)],
                       check=True)
        shutil.rmtree(site, ignore_errors=True)
        fresh.rename(site)
        stamp.write_text(digest, encoding="utf-8")
    return site


# ------------------------------------------------------------------ warnings

@pytest.fixture
def warnings_are_errors():
    """The test fails on any warning (a RuntimeWarning from numpy included): the library must not leak one."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
