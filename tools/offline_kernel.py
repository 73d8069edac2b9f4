"""An IPython kernel with the network cut off, which records its own peak memory.

``make test`` runs every notebook under nbval in this kernel, so the test proves two promises of the
course at once:

* **offline**: nothing a lesson does at run time reaches the network. ``socket.connect`` (and
  ``connect_ex``) fail for every address that is not on this machine (loopback or a Unix socket),
  and name look-ups of other hosts fail too, with a message that names what was tried. The
  kernel's own ZeroMQ channels are opened by libzmq, not through Python's ``socket``, so they work;
* **fits a 2 GB machine**: after every cell the kernel writes its peak resident memory so far
  (``ru_maxrss``) to its own file in the folder ``$LESSONS_KERNEL_LOG`` (if set), with the name of
  the notebook it runs, which ``notebooks/conftest.py`` puts in ``$LESSONS_NOTEBOOK`` before nbval
  starts the kernel (so it holds whichever pytest-xdist worker ran the notebook; nbval kills kernels,
  so nothing is left to do at exit). ``report`` prints the table and fails above a limit (Binder gives
  each user 1-2 GB; the server needs some of it), or when a notebook named has no kernel's record;
* **says which lessons need PyTorch**: the same file records whether the kernel has imported torch (and
  transformers), and ``report`` fails when a lesson's kernel disagrees with its ``torch`` in the registry
  of lessons (which the teacher's guide, the README and lesson 00 list); a lesson without PyTorch may
  still import it through transformers, for a comparison made only where transformers is installed
  (lesson 14's; Binder has no transformers).

Usage::

    python tools/offline_kernel.py install DIR [--name NAME]   # kernelspec under DIR/kernels/NAME
    JUPYTER_PATH=DIR pytest --nbval notebooks/ --nbval-kernel-name NAME
    python tools/offline_kernel.py report LOGDIR --limit-mb 1500 notebooks/*.ipynb
    python tools/offline_kernel.py kernel -f CONNECTION_FILE   # what the kernelspec runs
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import socket
import sys
from pathlib import Path

BLOCKED = "network access is blocked: the course must run offline (tools/offline_kernel.py)"


def _is_local(host) -> bool:
    if not isinstance(host, str):
        return False
    if host in ("localhost", "") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def cut_network() -> None:
    """Make every connection to another machine fail, in this process."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def allowed(sock: socket.socket, address) -> bool:
        return sock.family == getattr(socket, "AF_UNIX", None) or _is_local(address[0])

    def connect(self, address):
        if not allowed(self, address):
            raise OSError(f"{BLOCKED}; tried to connect to {address!r}")
        return real_connect(self, address)

    def connect_ex(self, address):
        if not allowed(self, address):
            raise OSError(f"{BLOCKED}; tried to connect to {address!r}")
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and not _is_local(name):
            raise socket.gaierror(f"{BLOCKED}; tried to look up {name!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    socket.getaddrinfo = getaddrinfo


def peak_memory_recorder():
    """A ``post_run_cell`` callback that writes this kernel's peak memory, or None if not asked for."""
    folder = os.environ.get("LESSONS_KERNEL_LOG")
    if not folder:
        return None
    import resource
    import time

    Path(folder).mkdir(parents=True, exist_ok=True)
    path = Path(folder) / f"{time.time_ns()}-{os.getpid()}.json"
    notebook = os.environ.get("LESSONS_NOTEBOOK")  # None: a kernel not started by nbval
    cells = 0

    def write(*_args) -> None:
        nonlocal cells
        cells += 1
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux
        path.write_text(json.dumps({"notebook": notebook, "peak_mb": round(peak_kb / 1024, 1), "cells": cells,
                                    "torch": "torch" in sys.modules,
                                    "transformers": "transformers" in sys.modules}) + "\n")

    return write


def install(directory: Path, name: str) -> Path:
    spec_dir = directory / "kernels" / name
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, str(Path(__file__).resolve()), "kernel", "-f", "{connection_file}"],
        "display_name": f"Python 3 (offline, {name})",
        "language": "python",
        "metadata": {"debugger": False},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    return spec_dir


def report(folder: Path, limit_mb: float, notebooks: list[Path]) -> int:
    """Print each notebook's kernel peak memory, by notebook; non-zero exit above ``limit_mb``, for a lesson
    whose use of torch is not its registry entry's, or for one of ``notebooks`` that no kernel recorded."""
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    rows = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    names = [row.get("notebook") or f"kernel {i + 1}" for i, row in enumerate(rows)]
    print(f"peak kernel memory per notebook (limit {limit_mb:.0f} MB, so that a 2 GB Binder fits):")
    if not rows:
        print("  no kernel wrote its peak memory: was LESSONS_KERNEL_LOG set for nbval?")
        return 1
    missing = sorted({p.name for p in notebooks} - set(names))
    for name in missing:
        print(f"  {name:40s} no kernel recorded its memory   <-- did nbval run it?")
    worst, torch_wrong = 0.0, []
    registry = _registry_torch(names)
    for name, row in sorted(zip(names, rows), key=lambda pair: pair[0]):
        worst = max(worst, row["peak_mb"])
        flag = "" if row["peak_mb"] <= limit_mb else "   <-- over the limit"
        if name in registry and "torch" in row and row["torch"] != registry[name] \
                and not (row["torch"] and row.get("transformers")):
            torch_wrong.append(name)
            flag += (f"   <-- {'imports' if row['torch'] else 'does not import'} torch, but its entry in "
                     f"lessons_lib/course/lessons.py says torch={registry[name]}")
        print(f"  {name:40s} {row['peak_mb']:8.1f} MB{_torch_label(row, registry.get(name))}{flag}")
    return 0 if worst <= limit_mb and not torch_wrong and not missing else 1


def _torch_label(row: dict, needs_torch: bool | None) -> str:
    """How a kernel came to PyTorch: a lesson whose registry entry says torch=False may still import it for
    an optional comparison with transformers (which brings torch), where transformers is installed."""
    if not row.get("torch"):
        return ""
    return "  (PyTorch, through transformers)" if needs_torch is False and row.get("transformers") \
        else "  (PyTorch)"


def _registry_torch(names: list[str]) -> dict[str, bool]:
    """notebook name -> its ``torch`` in the registry of lessons, for the names that are lessons."""
    from conventions import LESSONS

    by_notebook = {f"{lesson.slug}.ipynb": lesson.torch for lesson in LESSONS.values()}
    return {name: by_notebook[name] for name in names if name in by_notebook}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_install = sub.add_parser("install", help="write the kernelspec")
    p_install.add_argument("directory", type=Path)
    p_install.add_argument("--name", default="course-offline")
    p_report = sub.add_parser("report", help="peak memory table")
    p_report.add_argument("log", type=Path, help="the folder LESSONS_KERNEL_LOG named")
    p_report.add_argument("notebooks", nargs="*", type=Path)
    p_report.add_argument("--limit-mb", type=float, default=1500)
    sub.add_parser("kernel", help="run the kernel (used by the kernelspec)", add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "install":
        print(install(args.directory, args.name))
        return 0
    if args.command == "report":
        return report(args.log, args.limit_mb, args.notebooks)
    cut_network()
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(rest)
    recorder = peak_memory_recorder()
    if recorder is not None:
        app.shell.events.register("post_run_cell", recorder)
    app.start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
