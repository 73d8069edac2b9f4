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

Everything here uses the standard library only and parses with old Pythons, so that step 1 can speak.
"""

import argparse
import hashlib
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
WORKSPACE = ROOT / "workspace"
START = "00_start_here.ipynb"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CHROMIUM = Path("/usr/bin/chromium")

# How JupyterLab is started (tests/test_lab_serves.py starts it with exactly these, plus port and token).
def lab_args(folder: str) -> list:
    """JupyterLab's arguments to open ``folder``/00_start_here.ipynb, served from the repository root."""
    return ["--ServerApp.root_dir=.", f"--LabApp.default_url=/lab/tree/{folder}/{START}",
            f"{folder}/{START}"]


class SetupError(Exception):
    """Set-up cannot go on; the message says what to do, in one line."""


# ------------------------------------------------------------------ 1. Python

def required_python() -> tuple:
    """The lowest Python ``pyproject.toml`` allows, as a tuple: ``requires-python = ">=3.11"`` -> (3, 11)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', text, re.M)
    if not match:
        raise SetupError("pyproject.toml has no requires-python = \">=X.Y\" line")
    return int(match.group(1)), int(match.group(2))


def check_python(version=None) -> None:
    need = required_python()
    have = tuple(version or sys.version_info[:2])
    if have < need:
        raise SetupError(
            f"This course needs Python {need[0]}.{need[1]} or newer; {sys.executable} is Python "
            f"{have[0]}.{have[1]}. Install a newer Python (python.org, or e.g. "
            f"'sudo apt install python3.{need[1]}') and run again with it: make lab PYTHON=python3.{need[1]}")


# ------------------------------------------------------------------ 2. .venv

def venv_python(venv: Path = VENV) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def venv_module_missing() -> str:
    """'' when this Python can create a venv with pip; else the one line that says what to install."""
    if importlib.util.find_spec("venv") is None or importlib.util.find_spec("ensurepip") is None:
        package = "python{}.{}-venv".format(*sys.version_info[:2])
        return (f"{sys.executable} cannot create a virtual environment: its 'venv'/'ensurepip' modules are "
                f"missing. On Debian or Ubuntu install them with: sudo apt install {package} "
                "(or python3-venv)")
    return ""


def ensure_venv(venv: Path = VENV) -> Path:
    python = venv_python(venv)
    if python.exists():
        return python
    missing = venv_module_missing()
    if missing:
        raise SetupError(missing)
    print(f"creating {venv.name} with {sys.executable}", flush=True)
    done = subprocess.run([sys.executable, "-m", "venv", str(venv)])
    if done.returncode != 0 or not python.exists():
        shutil.rmtree(str(venv), ignore_errors=True)   # never leave a half-made .venv behind
        raise SetupError(f"'{sys.executable} -m venv {venv}' failed (see above)")
    return python


# ------------------------------------------------------------------ 3. torch

def pinned(name: str, requirements: Path = ROOT / "requirements.txt") -> str:
    """The version ``requirements.txt`` pins for ``name`` (``torch==2.13.0`` -> ``2.13.0``)."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        match = re.match(rf"\s*{re.escape(name)}\s*==\s*([\w.]+)", line)
        if match:
            return match.group(1)
    raise SetupError(f"{requirements.name} pins no version of {name}")


def nvidia_gpu() -> bool:
    """Does this Linux machine have an NVIDIA GPU with its driver loaded?"""
    if Path("/proc/driver/nvidia/gpus").is_dir() and any(Path("/proc/driver/nvidia/gpus").iterdir()):
        return True
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL).returncode == 0


def torch_build(choice: str = "auto", system: str = "", machine: str = "", gpu=None) -> str:
    """Which torch wheel to install: 'cpu' (PyTorch's CPU index), 'cuda' or 'default' (PyPI's wheel).

    >>> torch_build("auto", "Linux", "x86_64", gpu=False), torch_build("auto", "Linux", "x86_64", gpu=True)
    ('cpu', 'cuda')
    >>> torch_build("auto", "Darwin", "arm64", gpu=False), torch_build("cpu", "Windows", "AMD64", gpu=False)
    ('default', 'default')
    """
    if choice not in ("auto", "cpu", "cuda"):
        raise SetupError(f"TORCH must be auto, cpu or cuda; got {choice!r}")
    system, machine = system or platform.system(), (machine or platform.machine()).lower()
    if system != "Linux" or machine not in ("x86_64", "amd64"):
        return "default"                      # macOS, Windows, ARM Linux: PyPI's wheel is the right one
    if choice == "auto":
        return "cuda" if (nvidia_gpu() if gpu is None else gpu) else "cpu"
    return choice


def install_torch(python: Path, build: str) -> None:
    """Install torch's CPU build before the requirements (which then find the pin satisfied)."""
    version = pinned("torch")
    reason = {"cpu": "the CPU build (no NVIDIA GPU found, or TORCH=cpu); TORCH=cuda selects the CUDA build",
              "cuda": "PyPI's CUDA build (an NVIDIA GPU, or TORCH=cuda); TORCH=cpu selects the CPU build",
              "default": "PyPI's wheel for this platform"}[build]
    print(f"torch {version}: {reason}", flush=True)
    if build != "cpu":
        return
    wheel = f"torch=={version}+cpu"
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    # a local wheel (a wheelhouse in pip's config) first, without asking any index (its dependencies come
    # with the requirements next); then PyTorch's CPU index
    local = subprocess.run(pip + ["-q", "--no-index", "--no-deps", wheel], stderr=subprocess.DEVNULL)
    if local.returncode == 0:
        return
    run(pip + [wheel, "--extra-index-url", CPU_INDEX])


# ------------------------------------------------------------------ 4. requirements

def run(command: list) -> None:
    print("$ " + " ".join(str(c) for c in command), flush=True)
    if subprocess.run([str(c) for c in command], cwd=str(ROOT)).returncode != 0:
        raise SetupError("this command failed (see above): " + " ".join(str(c) for c in command))


def inputs_hash(files, extra: str = "", root: Path = ROOT) -> str:
    """A hash of what an install layer is made from. ``pyproject.toml``'s own ``version`` line is left out:
    a release bumps it (``make release``), and a new version installs nothing new (the library is
    installed editable, and reads its version from ``pyproject.toml``)."""
    digest = hashlib.sha256(extra.encode())
    for name in files:
        data = (root / name).read_bytes()
        if name == "pyproject.toml":
            data = re.sub(rb'(?m)^version\s*=.*$', b"", data, count=1)
        digest.update(data)
    return digest.hexdigest()


def ensure_env(dev: bool = False, torch: str = "auto") -> Path:
    """A ``.venv`` with the pinned requirements (and the test tools with ``dev``); installs what changed."""
    check_python()
    python = ensure_venv()
    build = torch_build(torch)
    layers = [("runtime", ["requirements.txt", "pyproject.toml"])]
    if dev:
        layers.append(("dev", ["requirements-dev.txt", "requirements.txt", "pyproject.toml"]))
    for layer, files in layers:
        stamp = VENV / f".installed-{layer}"
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

def build_workspace(python: Path, workspace: Path = WORKSPACE) -> None:
    """Add to ``workspace`` every lesson of the learner release it does not have yet; never overwrite one."""
    run([python, ROOT / "tools" / "learner_release.py", "--workspace", workspace])


# ------------------------------------------------------------------ commands

def open_lab(python: Path, folder: str) -> None:
    command = [str(python), "-m", "jupyter", "lab", *lab_args(folder)]
    if os.name != "nt" and os.geteuid() == 0:
        command.append("--ServerApp.allow_root=True")   # containers and CI run as root
    print("$ " + " ".join(command), flush=True)
    os.chdir(str(ROOT))
    sys.exit(subprocess.call(command))


def browser_line() -> str:
    """'' when the browser test can run; else one line on what to install."""
    if CHROMIUM.exists():
        return ""
    return (f"The browser test needs Debian's Chromium at {CHROMIUM}: sudo apt-get install chromium "
            "(without it, make test skips the browser tests; in CI they fail)")


def main(argv=None) -> int:
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
        print(f"\nset-up stopped: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
