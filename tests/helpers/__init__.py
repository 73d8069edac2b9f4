"""What every test folder shares: where things are, the CI rule for missing tools, the number of
hypothesis examples, one way to load a tool, a free port.

Test modules import these (``from tests.helpers import REPO, examples, require``) and the helper modules
beside this one (``tests.helpers.lab_server``, ``.browser``, ``.hub_classroom``, ...); a test module never
imports another test module (``tests/docs/test_architecture.py`` holds that).
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"


# ------------------------------------------------------------------ CI rule

def in_ci() -> bool:
    """True on the CI machine (``CI=true``), where nothing may be skipped for a missing dependency."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(condition: bool, reason: str) -> None:
    """Skip the test when ``condition`` is false, except in CI, where the test fails instead."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing dependency fails instead of skipping)", pytrace=False)
    pytest.skip(reason)


# ------------------------------------------------------------------ hypothesis

def examples(n: int) -> int:
    """A property test's number of examples: ``n`` in the ``ci`` profile (whose default is hypothesis's
    100), scaled like the profile's default elsewhere (``dev``: a fifth, at least 5)."""
    from hypothesis import settings

    return max(5, round(n * settings().max_examples / 100))


# ------------------------------------------------------------------ tools, ports, notebooks

def load_tool(name: str):
    """A script of ``tools/`` imported as a module: the one way the tests load a tool
    (``load_tool("course").lab_args``). ``tools/`` goes on ``sys.path`` as when the script runs, so the
    tools' own imports of each other (``from conventions import ...``) give the same modules."""
    tools = str(REPO / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    return importlib.import_module(name)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def notebook_paths() -> list[Path]:
    """The course notebooks, in lesson order (whatever is in notebooks/ right now)."""
    return sorted(NOTEBOOKS.glob("*.ipynb"))
