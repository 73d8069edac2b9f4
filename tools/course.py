"""Set up the course and open it: what ``make lab`` and ``make test`` run, and the way in without make.

    python3 tools/course.py lab      # learners: set up .venv, build workspace/, open JupyterLab there
    python3 tools/course.py teach    # teachers and authors: the source notebooks, solutions included
    python3 tools/course.py env      # set up .venv only (--dev adds the test tools)

On Windows, where there is no make, the same from PowerShell: ``py tools\\course.py lab``.

Set-up, in order, each step with one clear line when it cannot go on:

1. **Python**: the version ``pyproject.toml`` requires (``requires-python``, the one place it is written).
2. **A virtual environment** in ``.venv``. Debian and Ubuntu ship ``venv`` without ``ensurepip``
   unless the package ``python3.X-venv`` is installed: we say so instead of leaving a broken ``.venv``.
3. **torch, CPU or CUDA.** On Linux x86-64, PyPI's torch is the CUDA build (several GB). Without an
   NVIDIA GPU we install the CPU build of the same version from PyTorch's CPU wheel index first, so that
   ``requirements.txt``'s pin (``torch==X``, which ``X+cpu`` satisfies) installs nothing more.
   ``TORCH=cuda`` (or ``--torch cuda``) asks for the CUDA build, ``TORCH=cpu`` for the CPU build anywhere
   on Linux. macOS and Windows take PyPI's default wheel.
4. **The pinned requirements** (``requirements.txt``, with ``--dev`` also ``requirements-dev.txt``) and the
   course library (``pip install --no-deps -e .``). A stamp in ``.venv`` holds a hash of those files: a
   second run installs nothing until one of them changes.

``lab`` then builds the learner's own workspace, ``workspace/`` (git ignores it): the lessons of the
learner release (:mod:`learner_release`: exercise cells without their solutions, answers to Predict prompts
and checks cleared). It is made once; later runs add lessons that are new after a ``git pull`` and never
overwrite a lesson the learner has, so their work survives course updates. To take a lesson's new version,
delete or rename your copy in ``workspace/`` and run ``make lab`` again.

Everything here uses the standard library only and parses with old Pythons, Python 2.7 included (no
f-strings, annotations or other newer syntax: ``tests/tools/test_setup.py`` parses this file with Python 2.7's
own grammar), and step 1 runs before anything an old Python lacks is imported, so that it can speak.
"""

# This file must parse on Python 2.7 (see the docstring): no f-strings, "{0}".format, the __future__
# import, and the imports after the version check are on purpose, so pyupgrade's rules are off here.
# ruff: noqa: UP010, UP020, UP030, UP032, E402
from __future__ import print_function

import io
import os
import re
import sys

_ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SetupError(Exception):
    """Set-up cannot go on; the message says what to do, in one line."""


# ------------------------------------------------------------------ 1. Python (runs on any Python)

def required_python(root=None):
    """The lowest Python ``pyproject.toml`` allows, as a tuple: ``requires-python = ">=3.11"`` -> (3, 11).

    The one reading of the floor on the tools' side (the library reads it with
    ``lessons_lib.course.project.python_floor``); ``root``: another course folder than this one.
    """
    with io.open(os.path.join(str(root or _ROOT_DIR), "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    match = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', text, re.M)
    if not match:
        raise SetupError('pyproject.toml has no requires-python = ">=X.Y" line')
    return int(match.group(1)), int(match.group(2))


def check_python(version=None):
    need = required_python()
    have = tuple(version or sys.version_info[:2])
    if have < need:
        raise SetupError(
            "This course needs Python {0}.{1} or newer; {2} is Python {3}.{4}. Install a newer Python "
            "(python.org, or e.g. 'sudo apt install python3.{1}') and run again with it: "
            "make lab PYTHON=python3.{1}".format(need[0], need[1], sys.executable, have[0], have[1]))


if __name__ == "__main__" and tuple(sys.version_info[:2]) < required_python():
    # Before the imports an old Python lacks (pathlib, importlib.util): say why, then stop.
    try:
        check_python()
    except SetupError as too_old:
        print("\nset-up stopped: {0}".format(too_old), file=sys.stderr)
        sys.exit(2)

import argparse  # after the version check, which must run on any Python
import hashlib
import importlib.util
import platform
import shutil
import subprocess
from pathlib import Path

ROOT = Path(_ROOT_DIR)
VENV = ROOT / ".venv"
WORKSPACE = ROOT / "workspace"
START = "00_start_here.ipynb"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CHROMIUM = Path("/usr/bin/chromium")
TORCH_CHOICES = ("auto", "cpu", "cuda")


# How JupyterLab is started (tests/tools/test_make_lab_serves.py starts it with exactly these, plus port
# and token).
def lab_args(folder):
    """JupyterLab's arguments to open ``folder``/00_start_here.ipynb, served from the repository root."""
    return ["--ServerApp.root_dir=.", "--LabApp.default_url=/lab/tree/{0}/{1}".format(folder, START),
            "{0}/{1}".format(folder, START)]


# ------------------------------------------------------------------ 2. .venv

def venv_python(venv=VENV):
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def venv_module_missing():
    """'' when this Python can create a venv with pip; else the one line that says what to install."""
    if importlib.util.find_spec("venv") is None or importlib.util.find_spec("ensurepip") is None:
        package = "python{0}.{1}-venv".format(*sys.version_info[:2])
        return ("{0} cannot create a virtual environment: its 'venv'/'ensurepip' modules are missing. On "
                "Debian or Ubuntu install them with: sudo apt install {1} (or python3-venv)".format(
                    sys.executable, package))
    return ""


def venv_broken(venv=VENV):
    """'' when ``venv`` is absent or its python runs; else why it is broken, in words.

    A Python upgrade (or a moved folder) leaves ``.venv/bin/python`` a link to a Python that is gone.
    """
    python = venv_python(venv)
    if not venv.exists():
        return ""
    if python.is_symlink() and not python.exists():
        return "its python is a link to {0}, which no longer exists (a Python upgrade removes it)".format(
            os.readlink(str(python)))
    if not python.exists():
        return "it has no {0}".format(python.relative_to(venv))
    try:
        runs = subprocess.call([str(python), "-c", "pass"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL) == 0
    except OSError as error:
        runs, why = False, error.strerror
    else:
        why = "it exits with an error"
    if not runs:
        return "its python does not start ({0})".format(why)
    return ""


def ensure_venv(venv=VENV):
    python = venv_python(venv)
    broken = venv_broken(venv)
    if broken:
        print("{0} is broken: {1}. Building it again.".format(venv.name, broken), flush=True)
        shutil.rmtree(str(venv), ignore_errors=True)
    if python.exists():
        return python
    missing = venv_module_missing()
    if missing:
        raise SetupError(missing)
    print("creating {0} with {1}".format(venv.name, sys.executable), flush=True)
    done = subprocess.run([sys.executable, "-m", "venv", str(venv)])
    if done.returncode != 0 or not python.exists():
        shutil.rmtree(str(venv), ignore_errors=True)   # never leave a half-made .venv behind
        raise SetupError("'{0} -m venv {1}' failed (see above)".format(sys.executable, venv))
    return python


# ------------------------------------------------------------------ 3. torch

def pinned(name, requirements=ROOT / "requirements.txt"):
    """The version ``requirements.txt`` pins for ``name`` (``torch==2.13.0`` -> ``2.13.0``)."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\s*" + re.escape(name) + r"\s*==\s*([\w.]+)", line)
        if match:
            return match.group(1)
    raise SetupError("{0} pins no version of {1}".format(requirements.name, name))


def nvidia_gpu():
    """Does this Linux machine have an NVIDIA GPU with its driver loaded?"""
    if Path("/proc/driver/nvidia/gpus").is_dir() and any(Path("/proc/driver/nvidia/gpus").iterdir()):
        return True
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL).returncode == 0


def check_torch_choice(choice):
    """``choice`` when it is auto, cpu or cuda; else the one line that says so (before anything is made)."""
    if choice not in TORCH_CHOICES:
        raise SetupError("TORCH must be auto, cpu or cuda; got {0!r}".format(choice))
    return choice


def torch_build(choice="auto", system="", machine="", gpu=None):
    """Which torch wheel to install: 'cpu' (PyTorch's CPU index), 'cuda' or 'default' (PyPI's wheel).

    >>> torch_build("auto", "Linux", "x86_64", gpu=False), torch_build("auto", "Linux", "x86_64", gpu=True)
    ('cpu', 'cuda')
    >>> torch_build("auto", "Darwin", "arm64", gpu=False), torch_build("cpu", "Windows", "AMD64", gpu=False)
    ('default', 'default')
    """
    check_torch_choice(choice)
    system, machine = system or platform.system(), (machine or platform.machine()).lower()
    if system != "Linux" or machine not in ("x86_64", "amd64"):
        return "default"                      # macOS, Windows, ARM Linux: PyPI's wheel is the right one
    if choice == "auto":
        return "cuda" if (nvidia_gpu() if gpu is None else gpu) else "cpu"
    return choice


def install_torch(python, build):
    """Install torch's CPU build before the requirements (which then find the pin satisfied)."""
    version = pinned("torch")
    reason = {"cpu": "the CPU build (no NVIDIA GPU found, or TORCH=cpu); TORCH=cuda selects the CUDA build",
              "cuda": "PyPI's CUDA build (an NVIDIA GPU, or TORCH=cuda); TORCH=cpu selects the CPU build",
              "default": "PyPI's wheel for this platform"}[build]
    print("torch {0}: {1}".format(version, reason), flush=True)
    if build != "cpu":
        return
    wheel = "torch=={0}+cpu".format(version)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    # a local wheel (a wheelhouse in pip's config) first, without asking any index (its dependencies come
    # with the requirements next); then PyTorch's CPU index
    local = subprocess.run(pip + ["-q", "--no-index", "--no-deps", wheel], stderr=subprocess.DEVNULL)
    if local.returncode == 0:
        return
    run(pip + [wheel, "--extra-index-url", CPU_INDEX])


# ------------------------------------------------------------------ 4. requirements

def run(command):
    print("$ " + " ".join(str(c) for c in command), flush=True)
    if subprocess.run([str(c) for c in command], cwd=str(ROOT)).returncode != 0:
        raise SetupError("this command failed (see above): " + " ".join(str(c) for c in command))


def inputs_hash(files, extra="", root=None):
    """A hash of what an install layer is made from. ``pyproject.toml``'s own ``version`` line is left out:
    a release bumps it (``make release``), and a new version installs nothing new (the library is
    installed editable, and reads its version from ``pyproject.toml``)."""
    root = ROOT if root is None else root
    digest = hashlib.sha256(extra.encode())
    for name in files:
        data = (root / name).read_bytes()
        if name == "pyproject.toml":
            data = re.sub(br'(?m)^version\s*=.*$', b"", data, count=1)
        digest.update(data)
    return digest.hexdigest()


def ensure_env(dev=False, torch="auto"):
    """A ``.venv`` with the pinned requirements (and the test tools with ``dev``); installs what changed.

    Every choice is checked before ``.venv`` is touched: a wrong TORCH costs no venv.
    """
    check_python()
    check_torch_choice(torch)
    build = torch_build(torch)
    python = ensure_venv()
    layers = [("runtime", ["requirements.txt", "pyproject.toml"])]
    if dev:
        layers.append(("dev", ["requirements-dev.txt", "requirements.txt", "pyproject.toml"]))
    for layer, files in layers:
        stamp = VENV / ".installed-{0}".format(layer)
        wanted = inputs_hash(files, build)
        if stamp.exists() and stamp.read_text().strip() == wanted:
            stamp.touch()       # up to date: make compares the stamp's time with the files'
            continue
        pip = [python, "-m", "pip", "install", "--disable-pip-version-check"]
        if layer == "runtime":
            install_torch(python, build)
            run(pip + ["-r", "requirements.txt"])
            run(pip + ["--no-deps", "-e", "."])
        else:
            run(pip + ["-r", "requirements-dev.txt"])
        stamp.write_text(wanted + "\n")
    return python


# ------------------------------------------------------------------ the learner's workspace

def build_workspace(python, workspace=WORKSPACE):
    """Add to ``workspace`` every lesson of the learner release it does not have yet; never overwrite one."""
    run([python, ROOT / "tools" / "learner_release.py", "--workspace", workspace])


# ------------------------------------------------------------------ commands

def open_lab(python, folder):
    command = [str(python), "-m", "jupyter", "lab"] + lab_args(folder)
    if os.name != "nt" and os.geteuid() == 0:
        command.append("--ServerApp.allow_root=True")   # containers and CI run as root
    print("$ " + " ".join(command), flush=True)
    os.chdir(str(ROOT))
    sys.exit(subprocess.call(command))


def browser_line():
    """'' when the browser test can run; else one line on what to install."""
    if CHROMIUM.exists():
        return ""
    return ("The browser test needs Debian's Chromium at {0}: sudo apt-get install chromium "
            "(without it, make test skips the browser tests; in CI they fail)".format(CHROMIUM))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["lab", "teach", "env", "workspace", "check-browser"])
    parser.add_argument("--dev", action="store_true",
                        help="also install the test tools (requirements-dev.txt)")
    parser.add_argument("--torch", default=os.environ.get("TORCH", "auto") or "auto",
                        help="auto (default: CPU build unless an NVIDIA GPU is found), cpu or cuda")
    parser.add_argument("--no-open", action="store_true", help="set up, but do not start JupyterLab")
    args = parser.parse_args(argv)
    try:
        if args.command == "check-browser":
            line = browser_line()
            if line:
                print(line)
            return 1 if line else 0
        python = ensure_env(dev=args.dev, torch=args.torch)
        if args.command in ("lab", "workspace"):
            build_workspace(python)
        if args.command in ("lab", "teach") and not args.no_open:
            open_lab(python, "workspace" if args.command == "lab" else "notebooks")
    except SetupError as exc:
        print("\nset-up stopped: {0}".format(exc), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
