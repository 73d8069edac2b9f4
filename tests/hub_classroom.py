"""A classroom on a real JupyterHub, for tests/test_hub.py and benchmarks/classroom.py.

``running_hub`` starts JupyterHub (the hub of ``.venv``) behind configurable-http-proxy, on loopback
ports only, with a dummy authenticator (one shared password, every name allowed) and a local
process spawner that gives each learner a home folder of their own and runs the single-user
server of the Binder environment (tools/binder_env.py), as a hub image built from binder/ would.

``Learner`` is a learner's browser at the protocol level: it logs in with the form, follows the
nbgitpuller link as its page does (``/git-pull`` then the ``/git-pull/api`` event stream, then the
``urlpath``), starts a kernel for a notebook over the server's REST API, runs cells over the
kernel's websocket, and moves a slider the way JupyterLab's widget manager does (a ``comm_msg``
``update`` of the slider's model) and times the explorer's answer (the next ``update`` of another
model, the figure). Every request goes through the proxy with the learner's own cookies.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import websocket  # websocket-client, a dependency of jupyter_server
from conftest import free_port, kill_tree

ROOT = Path(__file__).resolve().parents[1]
CHP = Path(os.environ.get("LESSONS_CHP", ROOT / "build" / "node" / "node_modules" / ".bin"
                          / "configurable-http-proxy"))
PASSWORD = "class-password"

HUB_CONFIG = """
from jupyterhub.spawner import SimpleLocalProcessSpawner

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.ConfigurableHTTPProxy.auth_token = {proxy_token!r}
c.JupyterHub.db_url = "sqlite:///{tmp}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{tmp}/cookie_secret"
c.JupyterHub.pid_file = "{tmp}/jupyterhub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allow_all = True
c.Authenticator.admin_users = set()
c.JupyterHub.spawner_class = SimpleLocalProcessSpawner
c.SimpleLocalProcessSpawner.home_dir_template = "{tmp}/home/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = {root_args!r}
c.Spawner.ip = "127.0.0.1"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300
c.Spawner.env_keep = ["PATH", "LANG", "LC_ALL", "PYTHONHASHSEED"]
c.Spawner.environment = {{"JUPYTER_PLATFORM_DIRS": "1", "MPLBACKEND": "Agg"}}
c.JupyterHub.concurrent_spawn_limit = 100
c.JupyterHub.active_server_limit = 0
"""


@dataclass
class Hub:
    url: str
    tmp: Path
    process: subprocess.Popen
    log_path: Path

    def home(self, name: str) -> Path:
        return self.tmp / "home" / name

    def log_tail(self, n: int = 80) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        return "(no hub log)"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200
    except (OSError, urllib.error.HTTPError):
        return False


@contextlib.contextmanager
def running_hub(tmp: Path, singleuser: Path, startup_timeout: float = 120,
                extra_config: str = "") -> Iterator[Hub]:
    """JupyterHub + configurable-http-proxy on loopback, stopped (every server with it) at the end;
    ``extra_config``: more lines of jupyterhub_config.py (tests/test_hub_grading.py: nbgrader's config)."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "home").mkdir(exist_ok=True)
    port = free_port()
    config = tmp / "jupyterhub_config.py"
    config.write_text(HUB_CONFIG.format(
        port=port, hub_port=free_port(), proxy_api_port=free_port(), chp=str(CHP),
        proxy_token=secrets.token_hex(16), tmp=tmp, password=PASSWORD, singleuser=str(singleuser),
        root_args=["--allow-root"] if os.geteuid() == 0 else [])  # as root (containers, CI)
        + extra_config)
    log_path = tmp / "hub.log"
    log = open(log_path, "wb")
    hub_bin = Path(sys.executable).parent / "jupyterhub"
    process = subprocess.Popen([str(hub_bin), "-f", str(config)], cwd=tmp, stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    hub = Hub(f"http://127.0.0.1:{port}", tmp, process, log_path)
    try:
        deadline = time.monotonic() + startup_timeout
        while not _answers(hub.url + "/hub/api/"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterHub did not start\n{hub.log_tail()}")
            time.sleep(0.5)
        yield hub
    finally:
        import psutil

        with contextlib.suppress(Exception):
            descendants = psutil.Process(process.pid).children(recursive=True)
        if process.poll() is None:
            process.terminate()  # the hub stops the proxy and every single-user server it spawned
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=60)
        kill_tree(process, descendants if "descendants" in locals() else [])
        log.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@dataclass
class Learner:
    """One learner's browser, at the protocol level (cookies, forms, the link, a kernel websocket)."""

    hub: Hub
    name: str
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)
    landed: str = ""

    def __post_init__(self):
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def memory_mb(self) -> float:
        """Resident memory of this learner's processes (single-user server and kernels), in MB."""
        import psutil

        home, total = str(self.hub.home(self.name)), 0
        for proc in psutil.Process(self.hub.process.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if proc.cwd().startswith(home):
                    total += proc.memory_info().rss
        return total / 2**20

    # ---------------------------------------------------------------- http
    def get(self, path: str, timeout: float = 300) -> tuple[int, str, bytes]:
        """GET through the proxy, following redirects (spawn, OAuth); returns status, final url, body."""
        try:
            with self.opener.open(self.hub.url + path, timeout=timeout) as resp:
                return resp.status, resp.url, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.url, err.read()

    def cookie(self, name: str, path_prefix: str = "/") -> str:
        return next(c.value for c in self.jar if c.name == name and c.path.startswith(path_prefix))

    def send(self, path: str, method: str, body: dict | None = None, xsrf_path: str = "/") -> dict:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.hub.url + path, data=data, method=method, headers={
            "Content-Type": "application/json", "X-XSRFToken": self.cookie("_xsrf", xsrf_path)})
        with self.opener.open(req, timeout=120) as resp:
            text = resp.read()
        return json.loads(text) if text else {}

    def log_in(self) -> None:
        status, _, page = self.get("/hub/login")
        assert status == 200, (status, page[:300])
        xsrf = re.search(rb'name="_xsrf" value="([^"]+)"', page).group(1).decode()
        form = urllib.parse.urlencode({"username": self.name, "password": PASSWORD, "_xsrf": xsrf})
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect)
        try:
            opener.open(self.hub.url + "/hub/login", data=form.encode(), timeout=60)
        except urllib.error.HTTPError as err:  # 302 to the next page: logged in
            assert err.code == 302, (err.code, err.read()[:300])

    # ----------------------------------------------------------- the link
    def follow_link(self, link: str, timeout: float = 300) -> list[dict]:
        """What a click on the nbgitpuller link does; returns the pull's events, sets ``landed``."""
        status, url, page = self.get(link, timeout)
        deadline = time.monotonic() + timeout
        while "/hub/spawn-pending/" in url and time.monotonic() < deadline:  # the server is starting
            time.sleep(1)
            status, url, page = self.get(urllib.parse.urlsplit(url)._replace(scheme="", netloc="").geturl())
        assert status == 200 and b"nbgitpuller" in page.lower(), (status, url, page[:300])
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        prefix = f"/user/{self.name}/"
        repo = query["repo"][0]  # the page clones into the folder named by the URL's last part
        api = urllib.parse.urlencode({"repo": repo, "branch": query["branch"][0],
                                      "targetpath": repo.rstrip("/").split("/")[-1]})
        events = []
        with self.opener.open(f"{self.hub.url}{prefix}git-pull/api?{api}", timeout=timeout) as stream:
            for line in stream:
                if line.startswith(b"data:"):
                    events.append(json.loads(line[5:]))
                    if events[-1].get("phase") in ("finished", "error"):
                        break
        status, self.landed, page = self.get(prefix + query["urlpath"][0])
        assert status == 200, (status, self.landed, page[:300])
        return events

    # ------------------------------------------------------------- kernel
    def start_kernel(self, notebook: str) -> Kernel:
        prefix = f"/user/{self.name}/"
        session = self.send(prefix + "api/sessions", "POST", {
            "path": notebook, "type": "notebook", "name": Path(notebook).name,
            "kernel": {"name": "python3"}}, xsrf_path=prefix.rstrip("/"))
        kernel_id = session["kernel"]["id"]
        ws_url = self.hub.url.replace("http", "ws", 1) + f"{prefix}api/kernels/{kernel_id}/channels"
        return Kernel(self.connect(ws_url), session["kernel"]["id"], self, session["id"], ws_url)

    def connect(self, ws_url: str) -> websocket.WebSocket:
        cookies = "; ".join(f"{c.name}={c.value}" for c in self.jar)
        return websocket.create_connection(ws_url, header=[f"Cookie: {cookies}"], origin=self.hub.url,
                                           timeout=300)


def _decode(frame: str | bytes) -> dict:
    """A kernel message from the websocket: JSON text, or jupyter_server's binary frame (a count n,
    n offsets, the JSON message, then its buffers, e.g. a figure's pixels)."""
    if isinstance(frame, str):
        return json.loads(frame)
    count = int.from_bytes(frame[:4], "big")
    offsets = [int.from_bytes(frame[4 * i:4 * i + 4], "big") for i in range(1, count + 1)]
    return json.loads(frame[offsets[0]:offsets[1] if count > 1 else len(frame)])


@dataclass
class Kernel:
    ws: websocket.WebSocket
    id: str
    learner: Learner
    session_id: str
    ws_url: str
    reconnects: int = 0
    comms: dict = field(default_factory=dict)   # comm_id -> widget state (from comm_open)
    session: str = field(default_factory=lambda: uuid.uuid4().hex)

    def _message(self, channel: str, msg_type: str, content: dict) -> dict:
        return {"header": {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "session": self.session,
                           "username": self.learner.name, "version": "5.3",
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                "parent_header": {}, "metadata": {}, "content": content, "channel": channel, "buffers": []}

    def _receive(self) -> dict:
        msg = _decode(self.ws.recv())
        if msg.get("msg_type") == "comm_open" or msg["header"]["msg_type"] == "comm_open":
            content = msg["content"]
            self.comms[content["comm_id"]] = dict(content.get("data", {}).get("state", {}))
        elif msg["header"]["msg_type"] == "comm_msg" and msg["content"].get("comm_id") in self.comms:
            data = msg["content"].get("data", {})  # add_class and the like arrive as updates
            if data.get("method") == "update":
                self.comms[msg["content"]["comm_id"]].update(data.get("state", {}))
        return msg

    def execute(self, code: str, timeout: float = 300) -> list[dict]:
        """Run ``code``; return its iopub outputs; raise when it fails.

        When the websocket drops (it did under a load average of 20 on 2 cores), reconnect, as
        JupyterLab does, and run the cell again, as the learner would; ``reconnects`` counts it."""
        try:
            return self._execute(code, timeout)
        except websocket.WebSocketConnectionClosedException:
            self.reconnects += 1
            self.reconnect()
            return self._execute(code, timeout)

    def _execute(self, code: str, timeout: float) -> list[dict]:
        request = self._message("shell", "execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": True})
        self.ws.send(json.dumps(request))
        outputs, reply, idle = [], None, False
        deadline = time.monotonic() + timeout
        while not (reply and idle):
            assert time.monotonic() < deadline, f"no reply to {code[:80]!r} in {timeout} s"
            msg = self._receive()
            if msg["parent_header"].get("msg_id") != request["header"]["msg_id"]:
                continue
            kind = msg["header"]["msg_type"]
            if kind == "execute_reply":
                reply = msg["content"]
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
            elif kind in ("stream", "display_data", "execute_result", "error"):
                outputs.append(msg["content"])
        if reply["status"] != "ok":
            raise AssertionError(f"{code[:200]!r} failed: {reply.get('ename')}: {reply.get('evalue')}")
        return outputs

    def sliders(self) -> list[str]:
        """comm ids of the explorers' sliders (class lessons-slider-<name>; not lesson 00's echo check)."""
        return [cid for cid, state in self.comms.items()
                if any(c.startswith("lessons-slider-") and c != "lessons-slider-check"
                       for c in state.get("_dom_classes", []))]

    def move(self, slider: str, value: int, timeout: float = 60) -> float:
        """Set the slider as the browser does; seconds until the kernel updates another model in answer
        to this move (its parent header: what is left over from an earlier move does not count)."""
        key = "index" if self.comms[slider].get("_model_name") == "SelectionSliderModel" else "value"
        update = self._message("shell", "comm_msg", {
            "comm_id": slider, "data": {"method": "update", "state": {key: value}, "buffer_paths": []}})
        started = time.perf_counter()
        self.ws.send(json.dumps(update))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self._receive()
            content = msg["content"]
            if (msg["header"]["msg_type"] == "comm_msg" and content.get("comm_id") != slider
                    and msg["parent_header"].get("msg_id") == update["header"]["msg_id"]
                    and content.get("data", {}).get("method") == "update"):
                return time.perf_counter() - started
        raise AssertionError(f"no figure update within {timeout} s of moving the slider")

    def reconnect(self) -> None:
        """A new websocket to the same kernel (its widgets live on): a socket left unread for
        minutes answers no pings, and the server closes it."""
        with contextlib.suppress(Exception):
            self.ws.close()
        self.ws = self.learner.connect(self.ws_url)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        prefix = f"/user/{self.learner.name}/"
        with contextlib.suppress(Exception):
            self.learner.send(f"{prefix}api/sessions/{self.session_id}", "DELETE",
                              xsrf_path=prefix.rstrip("/"))


def code_cells(notebook: Path) -> list[str]:
    return [cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            for cell in json.loads(notebook.read_text())["cells"] if cell["cell_type"] == "code"]


def chp_available() -> bool:
    return CHP.exists() and shutil.which("node") is not None
