"""A classroom on a real JupyterHub, for tests/hub/test_hub.py and benchmarks/classroom.py.

``running_hub`` starts configurable-http-proxy as a service of its own and JupyterHub (the hub of
``.venv``) behind it, as a class hub runs them (The Littlest JupyterHub: the proxy's systemd unit;
Zero to JupyterHub: the proxy pod), on loopback ports only, with a dummy authenticator (one shared
password, every name allowed, ``teacher`` an admin) and a local process spawner that gives each
learner a home folder of their own and runs the single-user server of the Binder environment
(tools/binder_env.py), as a hub image built from binder/ does: with binder/'s server configuration
(kernels over Unix sockets) and the hub-side settings of docs/classroom.md, read from the guide
(``documented_hub_config``). Either process can be restarted alone (``Hub.stop`` and ``Hub.start``,
``Hub.restart_proxy``), as an administrator restarts a service mid-class.

``Learner`` is a learner's browser at the protocol level: it logs in with the form, follows the
nbgitpuller link as its page does (``/git-pull`` then the ``/git-pull/api`` event stream, then the
``urlpath``), saves a notebook as JupyterLab does (PUT contents), starts a kernel for a notebook
over the server's REST API, runs cells over the kernel's websocket, and moves a slider the way
JupyterLab's widget manager does (a ``comm_msg`` ``update`` of the slider's model) and times the
explorer's answer (the next ``update`` of another model, the figure). ``Teacher`` is the admin
page: it stops and starts a learner's server with the hub's REST API and the page's cookies. Every
request goes through the proxy.

``Hub.kernel_events`` reads the servers' log lines (all in ``hub.log``): kernels started, automatic
restarts, kernels that died, ports already in use; ``Hub.tally`` holds what the tests add to it
(edits saved and found again, kernels killed on purpose).
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest.mock import patch

import psutil
import websocket  # websocket-client, a dependency of jupyter_server

from tests.helpers import REPO, free_port
from tests.helpers.hub_kernel import Kernel

CHP = Path(os.environ.get("LESSONS_CHP", REPO / "build" / "node" / "node_modules" / ".bin"
                          / "configurable-http-proxy"))
CLASSROOM_GUIDE = REPO / "docs" / "classroom.md"
PASSWORD = "class-password"
TEACHER = "teacher"

HUB_CONFIG = """
import resource
from jupyterhub.spawner import SimpleLocalProcessSpawner

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
# The proxy is a service of its own (TLJH: a systemd unit; Z2JH: a pod): the hub neither starts nor
# stops it, so a hub restart leaves every route, and every open websocket, in place.
c.ConfigurableHTTPProxy.should_start = False
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.auth_token = {proxy_token!r}
# What TLJH and Z2JH both set: a hub restart leaves learners' servers running; the hub's state (its
# database, its cookie secret) outlives the process, so learners stay logged in.
c.JupyterHub.cleanup_servers = False
c.JupyterHub.db_url = "sqlite:///{tmp}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{tmp}/cookie_secret"
c.JupyterHub.pid_file = "{tmp}/jupyterhub.pid"
# Z2JH's value: every minute the hub checks the proxy's routes and puts back what a restarted proxy lost.
c.JupyterHub.last_activity_interval = {route_check_s}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allow_all = True
c.Authenticator.admin_users = {{{teacher!r}}}
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


class ClassroomSpawner(SimpleLocalProcessSpawner):   # TLJH's spawner; systemd's part by hand (below)
    def make_preexec_fn(self, name):
        prepare = super().make_preexec_fn(name)

        def preexec():
            prepare()
            resource.setrlimit(resource.RLIMIT_DATA, (DATA_LIMIT, DATA_LIMIT))

        return preexec


c.JupyterHub.spawner_class = ClassroomSpawner

# ---- docs/classroom.md's settings for The Littlest JupyterHub, loaded as TLJH loads every file of
# its jupyterhub_config.d (a config of its own, merged into this one). TLJH's spawner is not
# installed here: ClassroomSpawner stands in for it.
import sys
import types

sys.modules["tljh"] = types.ModuleType("tljh")
sys.modules["tljh.user_creating_spawner"] = types.ModuleType("tljh.user_creating_spawner")
sys.modules["tljh.user_creating_spawner"].UserCreatingSpawner = ClassroomSpawner
load_subconfig({documented!r})
assert issubclass(c.JupyterHub.spawner_class, ClassroomSpawner), c.JupyterHub.spawner_class
# ---- what systemd does for TLJH's spawner, done by hand: every learner here is the same Unix user
# on one /tmp, so each gets a runtime folder of their own (as isolate_tmp's private /tmp gives), and
# each server process the unit's LimitDATA (systemd sets it with setrlimit too; kernels inherit it).
assert "JUPYTER_RUNTIME_DIR" in c.Spawner.environment, "docs/classroom.md moves the runtime folder"
c.Spawner.environment["JUPYTER_RUNTIME_DIR"] = lambda spawner: "{runtime}/" + spawner.user.name
DATA_LIMIT = {data_limit}
# Other test hubs may run on this machine: this one's learners' ports start elsewhere.
c.JupyterHub.spawner_class.first_port = {first_port}
c.SimpleLocalProcessSpawner.home_dir_template = "{tmp}/home/{{username}}"
"""

# The lines of jupyter_server and jupyter_client that the tally counts, in every server's log.
KERNEL_EVENTS = {
    "started": re.compile(r"Kernel started: [0-9a-f-]{36}"),
    "restarts": re.compile(r"KernelRestarter: restarting kernel"),
    "died": re.compile(r"Kernel [0-9a-f-]{36} died, removing from map"),
    "address_in_use": re.compile(r"Address already in use"),
}


def documented_hub_config(guide: Path = CLASSROOM_GUIDE) -> str:
    """The hub settings docs/classroom.md gives The Littlest JupyterHub (its ``hub-config`` block)."""
    found = re.search(r"<!-- hub-config:begin -->\s*```python\n(.*?)```\s*<!-- hub-config:end -->",
                      guide.read_text(encoding="utf-8"), re.S)
    assert found, f"{guide} has no hub-config block"
    return textwrap.dedent(found.group(1))


def systemd_bytes(size: str) -> int:
    """A systemd size (``2G``, ``512M``: powers of 1024) in bytes."""
    number, unit = re.fullmatch(r"(\d+)([KMGT]?)", size.strip()).groups()
    return int(number) * 1024 ** " KMGT".index(unit or " ")


def documented_settings(guide: Path = CLASSROOM_GUIDE) -> dict:
    """What the documented hub settings set: the data limit per process, the learners' environment."""
    from jupyterhub.spawner import LocalProcessSpawner
    from traitlets.config import Config

    stand_in = types.ModuleType("tljh.user_creating_spawner")
    stand_in.UserCreatingSpawner = LocalProcessSpawner   # TLJH's is one too (a SystemdSpawner)
    config = Config()
    with patch.dict(sys.modules, {"tljh": types.ModuleType("tljh"), "tljh.user_creating_spawner": stand_in}):
        exec(documented_hub_config(guide), {"c": config})   # our own guide's config block
    env = config.Spawner.environment.to_dict().get("update", {})
    limit = config.SystemdSpawner.unit_extra_properties["LimitDATA"]
    return {"data_limit": systemd_bytes(limit), "environment": env,
            "isolate_tmp": config.SystemdSpawner.isolate_tmp,
            "first_port": config.JupyterHub.spawner_class.first_port}


@dataclass
class Hub:
    url: str
    tmp: Path
    process: subprocess.Popen
    proxy: subprocess.Popen
    log_path: Path
    launch_hub: Callable[[], subprocess.Popen]
    launch_proxy: Callable[[], subprocess.Popen]
    runtime: Path
    first_port: int
    tally: dict = field(default_factory=lambda: {"edits saved": 0, "edits kept": 0, "kernels killed": 0})

    def home(self, name: str) -> Path:
        return self.tmp / "home" / name

    def runtime_dir(self, name: str) -> Path:
        """The learner's server's runtime folder (its kernels' connection files and sockets)."""
        return self.runtime / name

    def log_tail(self, n: int = 80) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        return "(no hub log)"

    def kernel_events(self) -> dict[str, int]:
        """How often each line of ``KERNEL_EVENTS`` appears in the log so far."""
        text = self.log_path.read_text(errors="replace")
        return {name: len(pattern.findall(text)) for name, pattern in KERNEL_EVENTS.items()}

    # ------------------------------------------------------------ processes
    def learner_processes(self, name: str | None = None) -> list[psutil.Process]:
        """The single-user servers and kernels (of ``name``, or of everyone): the processes working
        in a learner's home. After a hub restart they are no longer the hub's children."""
        home = str(self.home(name) if name else self.tmp / "home")
        found = []
        for proc in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                cwd = proc.cwd()
                if cwd == home or cwd.startswith(home + os.sep):
                    found.append(proc)
        return found

    def leftovers(self, name: str, timeout: float = 30) -> list[psutil.Process]:
        """The learner's processes still running ``timeout`` s after their server stopped (a kernel
        notices its server is gone within a second and exits)."""
        _, alive = psutil.wait_procs(self.learner_processes(name), timeout=timeout)
        return alive

    def processes(self) -> list[psutil.Process]:
        """Proxy, hub, servers and kernels."""
        return [psutil.Process(p.pid) for p in (self.proxy, self.process) if p.poll() is None] \
            + self.learner_processes()

    def kernel_process(self, kernel_id: str) -> psutil.Process:
        """The kernel's process: the one started with the kernel's connection file."""
        for proc in self.learner_processes():
            with contextlib.suppress(psutil.Error):
                if any(f"kernel-{kernel_id}.json" in arg for arg in proc.cmdline()):
                    return proc
        raise AssertionError(f"no process for kernel {kernel_id}")

    # ------------------------------------------------------------- restarts
    def wait_until_up(self, timeout: float = 120) -> None:
        """Until the hub answers through the proxy (its API's root answers without a login)."""
        deadline = time.monotonic() + timeout
        while not _answers(self.url + "/hub/api/"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterHub did not start\n{self.log_tail()}")
            time.sleep(0.5)

    def stop(self) -> None:
        """Stop the hub process alone (SIGTERM, as ``systemctl stop jupyterhub`` does)."""
        self.process.terminate()
        self.process.wait(timeout=60)

    def start(self) -> None:
        """Start the hub process again, on the same database and cookie secret."""
        self.process = self.launch_hub()
        self.wait_until_up()

    def restart_proxy(self) -> None:
        """Stop the proxy (every route and open connection with it) and start it again, empty."""
        self.proxy.terminate()
        self.proxy.wait(timeout=30)
        self.proxy = self.launch_proxy()
        _wait_for_port(urllib.parse.urlsplit(self.url).port, self.proxy)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status == 200
    except (OSError, urllib.error.HTTPError):
        return False


def _wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"configurable-http-proxy exited with code {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.2)
    raise RuntimeError(f"configurable-http-proxy did not listen on {port} within {timeout} s")


def _free_port_block(size: int = 200, low: int = 20000, high: int = 32000) -> int:
    """The start of ``size`` ports below Linux's ephemeral range (32768 up) that nothing listens on
    now: the first ports of this hub's learners' servers (the documented rule: first port + the
    learner's number on the hub). Chosen at random, so that two test hubs on one machine differ, and
    in a range of its own for each pytest-xdist worker (make test-hub starts two hubs at once: two
    random blocks may be the same one, and neither hub's learners listen yet when the other looks)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw"):
        share = (high - low) // 4 // size * size   # four workers at most (NBVAL_PARALLEL's, the library's)
        low = low + int(worker[2:]) % 4 * share
        high = low + share
    rng = random.Random()
    for _ in range(50):
        first = rng.randrange(low, high - size, size)
        if not any(_listening(port) for port in range(first, first + size)):
            return first
    raise RuntimeError(f"no {size} free ports between {low} and {high}")


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _stop(processes: list[psutil.Process], timeout: float = 20) -> None:
    """SIGTERM, then SIGKILL for what is still running after ``timeout``."""
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(processes, timeout=timeout)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=timeout)


@contextlib.contextmanager
def running_hub(tmp: Path, singleuser: Path, route_check_s: int = 15,
                extra_config: str = "") -> Iterator[Hub]:
    """Proxy and JupyterHub on loopback; at the end both stopped, and every server and kernel.
    ``extra_config``: more lines of jupyterhub_config.py (tests/hub/test_hub_grading.py: nbgrader's
    config)."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "home").mkdir(exist_ok=True)
    # Short: a kernel's sockets are files in it, and a socket's path must stay under 108 bytes.
    runtime = Path(tempfile.mkdtemp(prefix="hub-run-"))
    port, hub_port, api_port = free_port(), free_port(), free_port()
    first_port = _free_port_block()
    token = secrets.token_hex(16)
    documented = tmp / "jupyterhub_config.d" / "attention-course.py"   # TLJH: /opt/tljh/config/...
    documented.parent.mkdir(exist_ok=True)
    documented.write_text(documented_hub_config())
    config = tmp / "jupyterhub_config.py"
    config.write_text(HUB_CONFIG.format(
        port=port, hub_port=hub_port, proxy_api_port=api_port, proxy_token=token, tmp=tmp,
        password=PASSWORD, teacher=TEACHER, singleuser=str(singleuser), route_check_s=route_check_s,
        root_args=["--allow-root"] if os.geteuid() == 0 else [],  # as root (containers, CI)
        documented=str(documented), runtime=runtime, first_port=first_port,
        data_limit=documented_settings()["data_limit"]) + extra_config)
    log_path = tmp / "hub.log"
    hub_bin = Path(sys.executable).parent / "jupyterhub"

    def start(cmd: list[str], env: dict | None = None) -> subprocess.Popen:
        # append mode: servers started by an earlier hub process keep writing to the same log
        with open(log_path, "ab") as log:
            return subprocess.Popen(cmd, cwd=tmp, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    stdin=subprocess.DEVNULL, start_new_session=True)

    def start_proxy() -> subprocess.Popen:  # the command line of Z2JH's proxy pod
        return start([str(CHP), "--ip", "127.0.0.1", "--port", str(port), "--api-ip", "127.0.0.1",
                      "--api-port", str(api_port), "--default-target", f"http://127.0.0.1:{hub_port}",
                      "--error-target", f"http://127.0.0.1:{hub_port}/hub/error"],
                     env=dict(os.environ, CONFIGPROXY_AUTH_TOKEN=token))

    def start_hub() -> subprocess.Popen:
        return start([str(hub_bin), "-f", str(config)])

    proxy = start_proxy()
    hub = None
    try:
        _wait_for_port(port, proxy)
        hub = Hub(f"http://127.0.0.1:{port}", tmp, start_hub(), proxy, log_path, start_hub, start_proxy,
                  runtime, first_port)
        hub.wait_until_up()
        yield hub
    finally:
        everyone = hub.processes() if hub else [psutil.Process(proxy.pid)]
        _stop(everyone)
        shutil.rmtree(runtime, ignore_errors=True)


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

    @property
    def prefix(self) -> str:
        return f"/user/{self.name}/"

    def memory_mb(self) -> float:
        """Resident memory of this learner's processes (single-user server and kernels), in MB."""
        total = 0
        for proc in self.hub.learner_processes(self.name):
            with contextlib.suppress(psutil.Error):
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

    def api(self, path: str, method: str = "GET", body: dict | None = None) -> dict:
        """The learner's own server's REST API (``api/contents/...``), as JupyterLab calls it."""
        return self.send(self.prefix + path, method, body, xsrf_path=self.prefix.rstrip("/"))

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

    def logged_in(self) -> bool:
        """The hub's home page answers, not its login page: the session still holds."""
        status, url, _ = self.get("/hub/home")
        return status == 200 and not urllib.parse.urlsplit(url).path.endswith("/hub/login")

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
        repo = query["repo"][0]  # the page clones into the folder named by the URL's last part
        api = urllib.parse.urlencode({"repo": repo, "branch": query["branch"][0],
                                      "targetpath": repo.rstrip("/").split("/")[-1]})
        events = []
        with self.opener.open(f"{self.hub.url}{self.prefix}git-pull/api?{api}", timeout=timeout) as stream:
            for line in stream:
                if line.startswith(b"data:"):
                    events.append(json.loads(line[5:]))
                    if events[-1].get("phase") in ("finished", "error"):
                        break
        status, self.landed, page = self.get(self.prefix + query["urlpath"][0])
        assert status == 200, (status, self.landed, page[:300])
        return events

    # ---------------------------------------------------------- notebooks
    def edit(self, notebook: str, old: str, new: str) -> None:
        """Change ``old`` to ``new`` in the first cell holding it and save, as JupyterLab does
        (GET the model, PUT it back); counted in the hub's tally of edits saved."""
        model = self.api(f"api/contents/{notebook}")
        cell = next(c for c in model["content"]["cells"] if old in c["source"])
        cell["source"] = cell["source"].replace(old, new, 1)
        self.api(f"api/contents/{notebook}", "PUT", {"type": "notebook", "format": "json",
                                                      "content": model["content"]})
        self.hub.tally["edits saved"] += 1

    def kept(self, notebook: str, text: str) -> bool:
        """Whether the saved notebook, read back through the server, still holds ``text``."""
        status, _, body = self.get(f"{self.prefix}api/contents/{notebook}")
        found = status == 200 and any(text in cell["source"] for cell in json.loads(body)["content"]["cells"])
        self.hub.tally["edits kept"] += found
        return found

    # ------------------------------------------------------------- kernel
    def start_kernel(self, notebook: str) -> Kernel:
        session = self.api("api/sessions", "POST", {
            "path": notebook, "type": "notebook", "name": Path(notebook).name,
            "kernel": {"name": "python3"}})
        kernel_id, client = session["kernel"]["id"], uuid.uuid4().hex
        # The websocket names its client, as JupyterLab's does: the server keeps what the kernel sends
        # while that client is away and hands it over when the same client connects again.
        ws_url = (self.hub.url.replace("http", "ws", 1)
                  + f"{self.prefix}api/kernels/{kernel_id}/channels?session_id={client}")
        return Kernel(self.connect(ws_url), kernel_id, self, session["id"], ws_url, session=client)

    def connect(self, ws_url: str) -> websocket.WebSocket:
        cookies = "; ".join(f"{c.name}={c.value}" for c in self.jar)
        return websocket.create_connection(ws_url, header=[f"Cookie: {cookies}"], origin=self.hub.url,
                                           timeout=300)


class Teacher(Learner):
    """The hub's admin page: the teacher's cookies, and the REST calls its buttons make."""

    def server_state(self, name: str) -> str:
        """``ready``, ``pending`` (starting or stopping) or ``stopped``, as the admin page shows it."""
        user = self.send(f"/hub/api/users/{name}", "GET", xsrf_path="/hub/")
        server = user.get("servers", {}).get("")
        if not server:
            return "stopped"
        return "ready" if server.get("ready") and not server.get("pending") else "pending"

    def wait_for(self, name: str, state: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while (now := self.server_state(name)) != state:
            assert time.monotonic() < deadline, f"{name}'s server is {now}, not {state}, after {timeout} s"
            time.sleep(0.5)

    def stop_server(self, name: str) -> None:
        """The admin page's *Stop Server*: ``DELETE /hub/api/users/{name}/server``, until stopped."""
        self.send(f"/hub/api/users/{name}/server", "DELETE", xsrf_path="/hub/")
        self.wait_for(name, "stopped")

    def start_server(self, name: str) -> None:
        """The admin page's *Start Server*: ``POST /hub/api/users/{name}/server``, until ready."""
        self.send(f"/hub/api/users/{name}/server", "POST", xsrf_path="/hub/")
        self.wait_for(name, "ready")


def code_cells(notebook: Path) -> list[str]:
    return [cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            for cell in json.loads(notebook.read_text())["cells"] if cell["cell_type"] == "code"]


def chp_available() -> bool:
    return CHP.exists() and shutil.which("node") is not None
