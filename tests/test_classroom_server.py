"""The class's servers' kernel manager (lessons_lib/course/classroom_server.py), with a real kernel.

A kernel that dies while busy is restarted by the server; the tab's new websocket gets the server's
check that the kernel's outputs reach it only if the server no longer believes the kernel busy. The
hub test (tests/test_hub.py, a kernel killed mid-training) drives the whole path through a hub; this
test holds the one step the manager adds, fast, without a hub.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

import pytest
from traitlets.config import Config

from lessons_lib.course.classroom_server import ClassroomKernelManager

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
SERVER_CONFIG = ROOT / "binder" / "jupyter_server_config.json"


def test_the_servers_config_names_the_classroom_kernel_manager():
    config = json.loads(SERVER_CONFIG.read_text())
    path = config["ServerApp"]["kernel_manager_class"]
    module, _, name = path.rpartition(".")
    assert getattr(__import__(module, fromlist=[name]), name) is ClassroomKernelManager


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
        manager.add_restart_callback(kernel_id, lambda: seen.append(kernel.execution_state), "restart")
        kernel.provisioner.process.kill()
        deadline = time.monotonic() + 60
        while not seen:
            assert time.monotonic() < deadline, "the server did not restart the killed kernel in 60 s"
            await asyncio.sleep(0.1)
        return seen
    finally:
        await manager.shutdown_all(now=True)


def test_a_kernel_restarted_after_dying_busy_is_starting_when_the_tab_hears_of_it(monkeypatch):
    # a short folder: a Unix socket's path must stay under 108 bytes (pytest's tmp_path is longer)
    with tempfile.TemporaryDirectory(prefix="ck-", dir="/tmp") as runtime:
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", runtime)
        states = asyncio.run(_states_at_restart(Path(runtime)))
    assert states == ["starting"], (
        "a restarted kernel still carries the dead one's 'busy': the server would skip its iopub check")
