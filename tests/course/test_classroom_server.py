"""The class's servers' kernel manager (lessons_lib/course/classroom_server.py), with a real kernel.

A kernel that dies while busy is restarted by the server; the tab's new websocket gets the server's
check that the kernel's outputs reach it only if the server no longer believes the kernel busy. The
hub test (tests/hub/test_hub.py, a kernel killed mid-training) drives the whole path through a hub; this
test holds the one step the manager adds, fast, without a hub.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import tempfile
from pathlib import Path

import pytest
from traitlets.config import Config

from lessons_lib.course.classroom_server import ClassroomKernelManager
from tests.helpers import REPO

SERVER_CONFIG = REPO / "binder" / "jupyter_server_config.json"


def test_the_servers_config_names_the_classroom_kernel_manager():
    config = json.loads(SERVER_CONFIG.read_text())
    path = config["ServerApp"]["kernel_manager_class"]
    module, _, name = path.rpartition(".")
    assert getattr(importlib.import_module(module), name) is ClassroomKernelManager


async def _restart_done(kernel) -> None:
    """Until the restarted kernel is up: the callbacks run before the restart, and a kernel shut down in
    the middle of its restart leaves jupyter_client a start that never finished."""
    while not (kernel.has_kernel and await kernel.is_alive() and kernel.ready.done()):
        await asyncio.sleep(0.05)


async def _states_at_restart(tmp_path: Path) -> list[str]:
    """Start a kernel with the servers' settings, leave it "busy" (a cell running, as the server's
    activity monitor records it), kill it; return the states a later restart callback sees (the
    websocket's, which tells the tab "restarting")."""
    settings = {k: v for k, v in json.loads(SERVER_CONFIG.read_text()).items() if k != "ServerApp"}
    manager = ClassroomKernelManager(config=Config(settings), root_dir=str(tmp_path),
                                     connection_dir=str(tmp_path))
    kernel_id = await manager.start_kernel()
    try:
        kernel = manager.get_kernel(kernel_id)
        kernel.execution_state = "busy"
        seen: list[str] = []
        restarted = asyncio.Event()

        def heard() -> None:
            seen.append(kernel.execution_state)
            restarted.set()

        manager.add_restart_callback(kernel_id, heard, "restart")
        kernel.provisioner.process.kill()
        try:
            await asyncio.wait_for(restarted.wait(), timeout=60)
        except TimeoutError:
            pytest.fail("the server did not restart the killed kernel in 60 s")
        await asyncio.wait_for(_restart_done(kernel), timeout=60)
        return seen
    finally:
        await manager.shutdown_all(now=True)


@pytest.mark.kernel
@pytest.mark.slow
def test_a_kernel_restarted_after_dying_busy_is_starting_when_the_tab_hears_of_it(monkeypatch):
    # a short folder: a Unix socket's path must stay under 108 bytes (pytest's tmp_path is longer)
    with tempfile.TemporaryDirectory(prefix="ck-", dir="/tmp") as runtime:
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", runtime)
        states = asyncio.run(_states_at_restart(Path(runtime)))
    assert states == ["starting"], (
        "a restarted kernel still carries the dead one's 'busy': the server would skip its iopub check")
