"""Build the Binder/hub environment as repo2docker builds it, once, into ``build/binder-env``.

repo2docker (Python 3.11) starts from its own base environment, whose conda lock file
(``repo2docker/buildpacks/conda/environment.py-3.11-linux-64.lock``) holds the Jupyter versions in
``REPO2DOCKER_BASE``. It then copies the repository to the user's home (``/home/jovyan``), installs
``binder/requirements.txt`` from there and runs ``binder/postBuild``. This tool does the same in a
virtual environment: base versions first, then the Binder requirements from a copy of the
repository at a home path, then postBuild; then it deletes that home copy, as a hub does when it
mounts each learner's (empty) home volume over ``/home/jovyan``. What is left must hold everything a
learner's server needs (``lessons_lib`` with its JavaScript, nbgitpuller, JupyterLab, Notebook 7),
and ``pip check`` must be clean.

The build takes minutes, so it is skipped when nothing it reads changed (hashes of binder/ and
requirements.txt, and of lessons_lib/ and pyproject.toml, in ``build/binder-env/*.sha256``; a
change of lessons_lib or pyproject.toml alone only reinstalls the library, whose dependencies
postBuild never installs: a release's version bump costs seconds): tests/binder/test_binder.py and
tests/hub/test_hub.py share one build per ``make test``.
The one line not installed is PyTorch's CPU wheel index, which this machine cannot reach: its
local torch wheel is that same CPU build (``2.13.0+cpu``).

Usage: python tools/binder_env.py [--dest build/binder-env]   (prints the environment's python)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEST = ROOT / "build" / "binder-env"
# repo2docker's Python 3.11 base environment (conda lock file of 2025-10, repo2docker 2025.x).
REPO2DOCKER_BASE = ("jupyterlab==4.4.9", "notebook==7.4.7", "jupyter_server==2.17.0",
                    "jupyterlab_server==2.27.3", "jupyterhub==5.4.0", "ipywidgets==8.1.7")
ENV_INPUTS = ("binder", "requirements.txt")
LIB_INPUTS = ("lessons_lib", "pyproject.toml", "tools/hub_grading.py")  # what postBuild runs again
INPUTS = ENV_INPUTS + LIB_INPUTS
UNREACHABLE_INDEX = "--extra-index-url"


def inputs_hash(names: tuple[str, ...] = INPUTS, root: Path = ROOT) -> str:
    """sha256 over the files the build reads (their paths and contents, caches left out)."""
    digest = hashlib.sha256(" ".join(REPO2DOCKER_BASE).encode())
    for name in names:
        path = root / name
        for f in sorted([path] if path.is_file() else path.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                digest.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def python(dest: Path = DEST) -> Path:
    return dest / "venv" / "bin" / "python"


def _repo_at_home(home: Path, root: Path) -> Path:
    """Copy the tracked files (and the inputs, committed or not) to ``home``, as repo2docker does."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    names = {n for n in listed.decode().split("\0") if n}
    for name in INPUTS:
        path = root / name
        names.update(str(f.relative_to(root)) for f in ([path] if path.is_file() else path.rglob("*")))
    for name in sorted(names):
        src = root / name
        if src.is_file() and "__pycache__" not in src.parts:
            (home / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, home / name)
    return home


def _stamp(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


def build(dest: Path = DEST, root: Path = ROOT) -> Path:
    """Build (or reuse) the environment; return its python.

    A change of binder/ or the pins rebuilds it from scratch; a change of lessons_lib or
    pyproject.toml alone runs postBuild again (the course library reinstalled, seconds)."""
    env_key, lib_key = inputs_hash(ENV_INPUTS, root), inputs_hash(LIB_INPUTS, root)
    env_stamp, lib_stamp = dest / "environment.sha256", dest / "lessons_lib.sha256"
    fresh = not (python(dest).exists() and _stamp(env_stamp) == env_key)
    if not fresh and _stamp(lib_stamp) == lib_key:
        return python(dest)
    if fresh:
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        subprocess.run([sys.executable, "-m", "venv", str(dest / "venv")], check=True)
    py, env = python(dest), dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env["PATH"] = f"{py.parent}{os.pathsep}{env['PATH']}"
    pip = [str(py), "-m", "pip", "install", "-q"]
    home = _repo_at_home(dest / "home" / "jovyan", root)
    try:
        if fresh:
            subprocess.run([*pip, *REPO2DOCKER_BASE], check=True, env=env)
            reqs = home / "binder" / "requirements.txt"
            reqs.write_text("".join(line + "\n" for line in reqs.read_text().splitlines()
                                    if not line.startswith(UNREACHABLE_INDEX)))
            subprocess.run([*pip, "-r", str(reqs)], check=True, cwd=home, env=env)
        subprocess.run(["bash", "binder/postBuild"], check=True, cwd=home, env=env)
    finally:
        shutil.rmtree(dest / "home")  # the hub mounts an empty home volume over the image's copy
    check = subprocess.run([str(py), "-m", "pip", "check"], capture_output=True, text=True, env=env)
    (dest / "pip-check.txt").write_text(check.stdout + check.stderr)
    env_stamp.write_text(env_key + "\n")
    lib_stamp.write_text(lib_key + "\n")
    return py


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEST)
    args = parser.parse_args(argv)
    print(build(args.dest.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
