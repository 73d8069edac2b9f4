"""The offline kernel that `make test` runs every notebook in (tools/offline_kernel.py).

nbval runs each notebook in this kernel (``make test-notebooks``), so a lesson that reached the
network at run time would fail there. These tests prove the kernel really blocks the network,
still runs ordinary code and local sockets, and records its peak memory for the 2 GB check.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from tests.helpers import REPO

TOOL = REPO / "tools" / "offline_kernel.py"

jupyter_client = pytest.importorskip("jupyter_client")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory, monkeypatch_module):
    base = tmp_path_factory.mktemp("jupyter")
    log = base / "peaks"
    subprocess.run([sys.executable, str(TOOL), "install", str(base), "--name", "offline-test"], check=True)
    monkeypatch_module.setenv("JUPYTER_PATH", str(base))
    monkeypatch_module.setenv("LESSONS_KERNEL_LOG", str(log))
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="offline-test")
    yield kc, log
    kc.stop_channels()
    km.shutdown_kernel(now=False)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def run(kc, code: str) -> str:
    """Run ``code`` in the kernel; return what it printed (errors as 'ERROR name: value')."""
    kc.execute(code)
    text = []
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            text.append(content["text"])
        elif kind == "error":
            text.append(f"ERROR {content['ename']}: {content['evalue']}")
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(text)


@pytest.mark.subprocess  # the offline kernel and its tool: processes
@pytest.mark.kernel
def test_offline_kernel_blocks_name_lookups_and_connections(kernel):
    kc, _ = kernel
    out = run(kc, "import urllib.request\nurllib.request.urlopen('https://pypi.org/simple/', timeout=5)")
    assert "ERROR" in out and "network access is blocked" in out
    out = run(kc, "import socket\ns = socket.socket()\ns.connect(('192.0.2.1', 80))")
    assert "network access is blocked" in out and "192.0.2.1" in out


@pytest.mark.subprocess
@pytest.mark.kernel
def test_offline_kernel_still_runs_code_and_local_sockets(kernel):
    kc, _ = kernel
    assert run(kc, "import numpy as np\nprint(np.arange(4).sum())").strip() == "6"
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        out = run(kc, f"import socket\ns = socket.create_connection(('127.0.0.1', {port}))\nprint('ok')")
    finally:
        server.close()
    assert out.strip() == "ok"


@pytest.mark.subprocess
@pytest.mark.kernel
def test_offline_kernel_records_peak_memory_under_its_notebooks_name_even_when_killed(tmp_path):
    """The kernel files its peak under the notebook nbval starts it for (notebooks/conftest.py sets
    LESSONS_NOTEBOOK), so the report names each notebook whichever worker ran it, and fails for a notebook
    named with no record."""
    log = tmp_path / "peaks"
    subprocess.run([sys.executable, str(TOOL), "install", str(tmp_path), "--name", "peak-test"], check=True)
    env = {"JUPYTER_PATH": str(tmp_path), "LESSONS_KERNEL_LOG": str(log), "LESSONS_NOTEBOOK": "big.ipynb"}
    mp = pytest.MonkeyPatch()
    for key, value in env.items():
        mp.setenv(key, value)
    try:
        km, kc = jupyter_client.manager.start_new_kernel(kernel_name="peak-test")
        run(kc, "import numpy as np\nx = np.ones(40_000_000)")  # 320 MB
        kc.stop_channels()
        km.shutdown_kernel(now=True)  # as nbval stops its kernels: killed, no exit handlers
    finally:
        mp.undo()
    rows = [json.loads(f.read_text()) for f in log.glob("*.json")]
    assert len(rows) == 1 and rows[0]["peak_mb"] > 300 and rows[0]["cells"] == 1
    assert rows[0]["notebook"] == "big.ipynb"

    def report(*args):
        return subprocess.run([sys.executable, str(TOOL), "report", str(log), *args],
                              capture_output=True, text=True)

    good = report("big.ipynb", "--limit-mb", "2000")
    assert good.returncode == 0 and "big.ipynb" in good.stdout, good.stdout
    bad = report("big.ipynb", "--limit-mb", "100")
    assert bad.returncode == 1 and "over the limit" in bad.stdout
    unrun = report("big.ipynb", "small.ipynb", "--limit-mb", "2000")
    assert unrun.returncode == 1 and "small.ipynb" in unrun.stdout and "no kernel recorded" in unrun.stdout
