"""The grading stage's kernels talk over Unix sockets, each process in a folder of its own.

``make test-grading`` runs its modules on two pytest-xdist workers (``--dist loadfile``): two ``nbgrader
autograde`` may start kernels at the same moment. Over TCP, a kernel's five ports are picked free by one
process and bound a moment later by the kernel, so the other process could pick the same port in between
(a kernel dead at start, one run in many). Unix sockets (``KernelManager.transport = "ipc"``, as Binder's and
the hub's servers use) are files: each worker's kernels get theirs under a folder of their own (an absolute
path, since nbgrader's kernel and nbgrader itself do not share a working folder). Every nbgrader started by
the tests reads it from ``jupyter_config.json`` in ``JUPYTER_CONFIG_DIR``; the course's own
``nbgrader_config.py`` is the teacher's, untouched.

``teacher_account``: an ordinary account the test creates, to grade as a teacher without root
(tests/helpers/teacher_account.py).
"""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import teacher_account as accounts


@pytest.fixture(scope="session", autouse=True)
def kernels_on_unix_sockets(tmp_path_factory):
    config = tmp_path_factory.mktemp("jupyter-config")
    sockets = tmp_path_factory.mktemp("kernels")
    (config / "jupyter_config.json").write_text(json.dumps(
        {"KernelManager": {"transport": "ipc", "ip": str(sockets / "kernel")}}), encoding="utf-8")
    old = os.environ.get("JUPYTER_CONFIG_DIR")
    os.environ["JUPYTER_CONFIG_DIR"] = str(config)
    yield sockets
    if old is None:
        os.environ.pop("JUPYTER_CONFIG_DIR", None)
    else:
        os.environ["JUPYTER_CONFIG_DIR"] = old


@pytest.fixture
def teacher_account():
    """An ordinary account made with useradd for the test, removed after it (skipped where not root)."""
    with accounts.teacher_account() as account:
        yield account
