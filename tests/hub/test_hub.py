"""The course on a real JupyterHub (``make test-hub``): a class starting at once, its faults, isolation.

JupyterHub (``.venv``'s, the current release) behind configurable-http-proxy (npm) running as a
service of its own, a dummy authenticator and a local spawner with a home folder per learner; each
learner's server is the Binder environment's (tools/binder_env.py) with binder/'s server
configuration, as a hub image built from binder/ runs it, and the hub settings of docs/classroom.md
(tests/helpers/hub_classroom.py). The course reaches learners as a teacher ships it: an nbgitpuller link to
a local bare repository holding the learner release (tools/learner_release.py). All of it listens
on 127.0.0.1 and needs a token or a login.

The class: forty learners start together (kernels over Unix sockets: none may die). The faults a
class meets, each driven for real: a kernel killed mid-training, the hub restarted, the proxy
restarted, a server stopped and started by the teacher, a kernel at its memory limit. Every run
writes its tally (kernels started, dead, restarted; edits saved and found again) to
``test-artifacts/hub-tally.json`` and prints it; the last test holds it: no kernel died, no restart
but the kernels killed on purpose, no edit lost.
"""

from __future__ import annotations

import contextlib
import json
import re
import stat
import statistics
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import REPO, load_tool, require
from tests.helpers.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PROBE,
    SLIDER_CLASSES,
    VIEWPORT,
    Wire,
    click_menu,
    press_and_wait,
    wait_widgets_loaded,
)
from tests.helpers.course_remote import BRANCH, LESSON_00, NAME, learner_remote, teacher_update
from tests.helpers.hub_classroom import (
    PASSWORD,
    TEACHER,
    Hub,
    Kernel,
    Learner,
    Teacher,
    chp_available,
    code_cells,
    documented_settings,
    running_hub,
)

ARTIFACTS = REPO / "test-artifacts"
binder_env = load_tool("binder_env")


LEARNERS = 40
EXPLORER_LESSON = "notebooks/02_step1_qkv.ipynb"   # ProjectionExplorer: d_k and seed sliders
LESSON_01 = "notebooks/01_why_attention.ipynb"
LESSON_08 = "notebooks/08_cost_and_flashattention.ipynb"
LESSON_09 = "notebooks/09_attention_in_action.ipynb"
EXERCISE_LINE = "my_query = np.array([0.0, 0.0, 0.0, 0.0])  # edit me"
CLASS_EDIT = "d_k = 4"              # lesson 02: each learner of the class notes what to try next
IMPORTS = "import lessons_lib as ll"   # a line of every lesson that no teacher's update changes
STAY_IN_CLASS = 14                  # learners of the class the tests below take (room.mid_class)
TRAINING = "ll.train_coref_model("
ROUTES_BACK_S = 180   # the hub puts a restarted proxy's routes back at its next route check (every 15 s here)


def _link(bare: Path) -> str:
    """The nbgitpuller link of docs/classroom.md, with the local bare remote as the repository."""
    query = urllib.parse.urlencode({"repo": f"file://{bare}", "branch": BRANCH,
                                    "urlpath": f"lab/tree/{NAME}/{LESSON_00}"})
    return f"/hub/user-redirect/git-pull?{query}"


@dataclass
class Classroom:
    """The hub, the course's remote, and the people in the room (fixtures the tests share)."""

    hub: Hub
    bare: Path
    in_class: list[Learner] = field(default_factory=list)   # mid-lesson: server up, course cloned
    latecomers: int = 0
    _teacher: Teacher | None = field(default=None, repr=False)

    @property
    def link(self) -> str:
        return _link(self.bare)

    def learner(self, name: str) -> Learner:
        """A learner who has logged in and clicked the link: their server runs, the course is in
        their home."""
        learner = Learner(self.hub, name)
        learner.log_in()
        events = learner.follow_link(self.link)
        assert events[-1]["phase"] == "finished", events[-3:]
        return learner

    def learners(self, names: list[str]) -> list[Learner]:
        """Several learners logging in and clicking the link at the same time."""
        with ThreadPoolExecutor(max_workers=len(names)) as pool:
            return list(pool.map(self.learner, names))

    def mid_class(self, n: int) -> list[Learner]:
        """``n`` learners of the class, in the middle of a lesson (their servers kept running after
        the class test); new ones, logging in now, when none is left (a test run on its own)."""
        taken, self.in_class = self.in_class[:n], self.in_class[n:]
        names = [f"latecomer{self.latecomers + i:02d}" for i in range(n - len(taken))]
        self.latecomers += len(names)
        return taken + (self.learners(names) if names else [])

    @property
    def teacher(self) -> Teacher:
        """The hub's admin (``teacher``), logged in to the hub (no server of their own)."""
        if self._teacher is None:
            self._teacher = Teacher(self.hub, TEACHER)
            self._teacher.log_in()
        return self._teacher

    def notebook(self, learner: Learner, lesson: str) -> list[str]:
        """The code cells of ``lesson`` in the learner's copy."""
        return code_cells(self.hub.home(learner.name) / NAME / lesson)

    def tally(self) -> dict:
        return {**self.hub.kernel_events(), **self.hub.tally}


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require(chp_available(), "configurable-http-proxy is not installed (make test-hub installs it with npm)")
    singleuser = binder_env.build().parent / "jupyterhub-singleuser"
    tmp = tmp_path_factory.mktemp("hub")
    bare = learner_remote(tmp)
    with running_hub(tmp / "hub", singleuser) as hub:
        room = Classroom(hub, bare)
        yield room
        tally = room.tally()
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "hub-tally.json").write_text(json.dumps(tally, indent=1) + "\n")


def _run_until(kernel: Kernel, cells: list[str], marker: str) -> str:
    """Run the cells before the first one holding ``marker``; return that one (not run)."""
    for code in cells:
        if marker in code:
            return code
        kernel.execute(code)
    raise AssertionError(f"no cell holds {marker!r}")


# ------------------------------------------------------------------------------------ the class

def _class_member(room: Classroom, name: str) -> dict:
    """Log in, click the link, run lesson 00 top to bottom, open lesson 02's explorer and move two
    sliders, save an edit of lesson 02."""
    learner = room.learner(name)
    kernel = learner.start_kernel(f"{NAME}/{LESSON_00}")
    try:
        for code in room.notebook(learner, LESSON_00):
            kernel.execute(code)
        lesson_02 = room.notebook(learner, EXPLORER_LESSON)
        kernel.execute(next(c for c in lesson_02 if "import lessons_lib" in c))
        kernel.execute(next(c for c in lesson_02 if "ProjectionExplorer(" in c))
        sliders = kernel.sliders()
        assert sliders, "the explorer opened no slider"
        latencies = [kernel.move(slider, value) for slider in sliders[:2] for value in (1, 3)]
        memory = learner.memory_mb()
    finally:
        kernel.close()
    learner.edit(f"{NAME}/{EXPLORER_LESSON}", CLASS_EDIT, _note(name))
    return {"learner": learner, "latencies": latencies, "memory_mb": memory,
            "reconnects": kernel.reconnects}


def _note(name: str) -> str:
    return f"{CLASS_EDIT}  # {name}: try d_k = 2 next"


@pytest.mark.hub
@pytest.mark.slow
def test_forty_learners_start_together_and_no_kernel_is_lost(classroom, hub_figures):
    """The first minute of a class: every kernel starts (over a Unix socket, so no two can collide),
    none dies or restarts, every slider answers, and every saved edit is on disk after the teacher
    has stopped the servers of those who leave (the others stay in class for the tests below)."""
    room = classroom
    before = room.hub.kernel_events()
    names = [f"learner{i:02d}" for i in range(LEARNERS)]
    with ThreadPoolExecutor(max_workers=LEARNERS) as pool:
        results = list(pool.map(lambda name: _class_member(room, name), names))
    after = room.hub.kernel_events()
    for name, result in zip(names, results):
        assert result["learner"].landed.endswith(f"/user/{name}/lab/tree/{NAME}/{LESSON_00}"), result
    moves = sorted(t for r in results for t in r["latencies"])
    p95 = moves[int(0.95 * (len(moves) - 1))]
    hub_figures.append(f"{LEARNERS} learners at once, {len(moves)} slider moves through the proxy: "
                       f"median {statistics.median(moves) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; "
                       f"memory per learner (server + kernel, after lesson 00 and an explorer): median "
                       f"{statistics.median(r['memory_mb'] for r in results):.0f} MB, "
                       f"max {max(r['memory_mb'] for r in results):.0f} MB; kernel websockets reconnected: "
                       f"{sum(r['reconnects'] for r in results)}")
    changes = {key: after[key] - before[key] for key in after}
    assert changes == {"started": LEARNERS, "restarts": 0, "died": 0, "address_in_use": 0}, changes

    staying = [r["learner"] for r in results[:STAY_IN_CLASS]]
    leaving = names[STAY_IN_CLASS:]
    with ThreadPoolExecutor(max_workers=8) as pool:   # the admin page's Stop Server, one by one
        list(pool.map(room.teacher.stop_server, leaving))
    for name in names:
        kept = _note(name) in (room.hub.home(name) / NAME / EXPLORER_LESSON).read_text()
        room.hub.tally["edits kept"] += kept
        assert kept, f"{name}'s saved edit is not on disk"
    assert not room.hub.leftovers(leaving[0]), "a stopped server left processes behind"
    room.in_class.extend(staying)


@pytest.mark.hub
@pytest.mark.slow
def test_a_learner_cannot_open_another_learners_server(classroom):
    room = classroom
    alice, bob = room.mid_class(2)
    status, url, page = alice.get(f"{bob.prefix}api/contents/{NAME}/{LESSON_00}")
    assert status == 403 and b"cells" not in page, (status, url, page[:300])
    status, url, page = alice.get(f"{bob.prefix}lab")
    assert status == 403, (status, url, page[:300])
    stranger = Learner(room.hub, "nobody-logged-in")
    status, url, page = stranger.get(f"{bob.prefix}api/contents/{NAME}/{LESSON_00}")
    sent_to_login = url.split("?")[0].endswith("/hub/login")
    assert b'"cells"' not in page and (status == 403 or sent_to_login), (status, url)
    status, _, page = bob.get(f"{bob.prefix}api/contents/{NAME}/{LESSON_00}")
    assert status == 200 and b'"cells"' in page


@pytest.mark.hub
@pytest.mark.slow
def test_kernels_use_unix_sockets_and_everything_else_listens_on_loopback_only(classroom):
    """binder/'s server configuration reaches the kernels: their five channels are Unix sockets
    (transport ipc) in the learner's runtime folder, each path under Linux's 108 bytes; proxy, hub,
    servers and kernels listen on 127.0.0.1 only."""
    room = classroom
    learner, = room.mid_class(1)
    kernel = learner.start_kernel(f"{NAME}/{LESSON_00}")
    try:
        seen = kernel.text("from ipykernel.kernelapp import IPKernelApp\n"
                           "app = IPKernelApp.instance()\n"
                           "print(app.transport, app.ip, app.shell_port, app.iopub_port, app.stdin_port,"
                           " app.control_port, app.hb_port)").split()
        transport, ip, ports = seen[0], seen[1], seen[2:]
        assert transport == "ipc", seen
        channels = {f"{ip}-{port}" for port in ports}
        process = room.hub.kernel_process(kernel.id)
        bound = {c.laddr for c in process.net_connections(kind="unix")}
        assert channels <= bound, (channels, bound)
        assert all(len(path.encode()) < 108 for path in channels), channels
        runtime = room.hub.runtime_dir(learner.name)
        assert Path(ip).parent == runtime, ip
        assert stat.S_IMODE(runtime.stat().st_mode) & 0o777 == 0o700, "other users could open the sockets"
        listening = [(p.name(), c.laddr) for p in room.hub.processes() for c in p.net_connections(kind="inet")
                     if c.status == "LISTEN"]
        assert len(listening) >= 4, listening  # proxy (public + API), hub, at least one server
        assert all(addr.ip == "127.0.0.1" for _, addr in listening), listening
        server = process.parent()   # the learner's single-user server: on the learner's own port
        port = next(c.laddr.port for c in server.net_connections("inet") if c.status == "LISTEN")
        assert room.hub.first_port < port < min(room.hub.first_port + 200, 32768), port
    finally:
        kernel.close()


def _replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


@pytest.mark.hub
@pytest.mark.slow
def test_mid_term_update_reaches_learners_and_keeps_their_edits(classroom):
    room = classroom
    kept, clash = room.mid_class(2)
    notebook = f"{NAME}/{LESSON_01}"
    kept.edit(notebook, EXERCISE_LINE, "my_query = np.array([0.0, 8.0, 0.0, 0.0])  # edit me")
    clash.edit(notebook, EXERCISE_LINE, "my_query = np.array([0.0, 0.0, 5.0, 0.0])  # edit me")

    news = "**Update from your teacher:** lesson 01 now says more about queries."
    teacher_update(room.bare, lambda work: _replace_in(work / LESSON_00, "# ", f"{news}\\n\\n# "),
                   "Lesson 00: a note for the class")
    events = kept.follow_link(room.link)
    assert events[-1]["phase"] == "finished", events[-3:]
    mine = room.hub.home(kept.name) / NAME
    assert news in (mine / LESSON_00).read_text(), "the update did not arrive"
    assert kept.kept(notebook, "[0.0, 8.0, 0.0, 0.0]"), "the learner's edit was lost"

    # The teacher now changes the very line the second learner edited: nbgitpuller merges with
    # -Xours, so the learner's line wins and the rest of the update still arrives.
    hint = EXERCISE_LINE.replace("edit me", "edit me: one feature")
    teacher_update(room.bare, lambda work: _replace_in(work / LESSON_01, EXERCISE_LINE, hint),
                   "Lesson 01: a hint in the exercise")
    events = clash.follow_link(room.link)
    assert events[-1]["phase"] == "finished", events[-3:]
    theirs = room.hub.home(clash.name) / NAME
    assert news in (theirs / LESSON_00).read_text(), "the non-conflicting update did not arrive"
    assert clash.kept(notebook, "[0.0, 0.0, 5.0, 0.0]"), "the edit was lost"
    assert "edit me: one feature" not in (theirs / LESSON_01).read_text()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=theirs, capture_output=True, text=True)
    assert "UU " not in status.stdout, status.stdout  # no merge left half-done


# ------------------------------------------------------------------------------------- faults

@pytest.mark.hub
@pytest.mark.slow
def test_a_kernel_killed_mid_training_restarts_and_the_saved_notebook_is_intact(classroom):
    """Lesson 09's training, and the kernel dies (SIGKILL, as the out-of-memory killer sends): the
    server restarts it and tells the front end ("restarting": JupyterLab's *Kernel Restarting*
    dialog), the notebook as last saved is intact, and running the lesson again trains the model."""
    room = classroom
    learner, = room.mid_class(1)
    notebook, note = f"{NAME}/{LESSON_09}", "# my note: the model learns which noun 'it' means"
    learner.edit(notebook, "SEED = 0", f"SEED = 0  {note}")
    kernel = learner.start_kernel(notebook)
    try:
        cells = room.notebook(learner, LESSON_09)
        training = _run_until(kernel, cells, TRAINING)
        request = kernel.submit(training)
        kernel.wait_for(lambda m: m["header"]["msg_type"] == "status"
                        and m["content"]["execution_state"] == "busy"
                        and m["parent_header"].get("msg_id") == request, "the training cell running")
        room.hub.kernel_process(kernel.id).kill()
        room.hub.tally["kernels killed"] += 1
        kernel.restarted()
        assert learner.kept(notebook, note), "the saved notebook lost the learner's note"
        _run_until(kernel, cells, TRAINING)
        kernel.execute(training, timeout=600)
        report = kernel.text(next(c for c in cells if "held-out accuracy" in c))
        assert "held-out accuracy" in report, report
    finally:
        kernel.close()


@contextlib.contextmanager
def _mid_lesson(room: Classroom, n: int = 3) -> Iterator[list[tuple[Learner, Kernel]]]:
    """``n`` learners of the class with lesson 01 open, learner i's kernel holding ``before = i``."""
    learners = room.mid_class(n)
    kernels = [lr.start_kernel(f"{NAME}/{LESSON_01}") for lr in learners]
    try:
        for i, kernel in enumerate(kernels):
            kernel.execute(f"before = {i}")
        yield list(zip(learners, kernels))
    finally:
        for kernel in kernels:
            kernel.close()


@pytest.mark.hub
@pytest.mark.slow
def test_a_hub_restart_mid_class_keeps_servers_kernels_and_logins(classroom):
    """The hub process stops and starts again while three learners are mid-lesson: their kernels
    run cells while it is down; afterwards the same kernels hold their variables, the learners are
    still logged in, saving works, and the hub knows their servers."""
    room = classroom
    with _mid_lesson(room) as class_:
        room.hub.stop()
        for i, (_, kernel) in enumerate(class_):   # the hub is down: servers, proxy and kernels are not
            assert kernel.text(f"print(before * 10 + {i})").strip() == str(11 * i)
        room.hub.start()
        for i, (learner, kernel) in enumerate(class_):
            assert learner.logged_in(), f"{learner.name} was sent to the login page"
            assert kernel.text("print(before)").strip() == str(i)
            learner.edit(f"{NAME}/{LESSON_01}", IMPORTS, f"{IMPORTS}  # saved after the hub's restart")
            assert learner.kept(f"{NAME}/{LESSON_01}", "saved after the hub's restart")
            assert room.teacher.server_state(learner.name) == "ready"


@pytest.mark.hub
@pytest.mark.slow
def test_a_proxy_restart_gives_routes_back_and_learners_reconnect(classroom, hub_figures):
    """The proxy stops and starts again, empty: every open websocket drops; within the hub's next
    route check the learners' routes are back, their front ends reconnect to the same kernels
    (variables intact), and their notebooks open again."""
    room = classroom
    with _mid_lesson(room) as class_:
        started = time.monotonic()
        room.hub.restart_proxy()
        for _, kernel in class_:
            kernel.reconnect(timeout=ROUTES_BACK_S)
        back = time.monotonic() - started
        for i, (learner, kernel) in enumerate(class_):
            assert kernel.text("print(before)").strip() == str(i)
            status, _, _ = learner.get(f"{learner.prefix}api/contents/{NAME}/{LESSON_01}")
            assert status == 200
    hub_figures.append(f"proxy restarted: routes back and {len(class_)} learners reconnected after "
                       f"{back:.0f} s")


@pytest.mark.hub
@pytest.mark.slow
def test_a_server_stopped_and_started_by_the_teacher_keeps_the_saved_edits(classroom):
    """The teacher stops a learner's server from the admin page (its REST call), then starts it:
    the learner's saved edit is there, and a new kernel runs."""
    room = classroom
    learner, = room.mid_class(1)
    notebook, note = f"{NAME}/{LESSON_01}", "# saved before the teacher stopped my server"
    learner.edit(notebook, IMPORTS, f"{IMPORTS}  {note}")
    kernel = learner.start_kernel(notebook)
    kernel.execute("unsaved_variable = 1")
    room.teacher.stop_server(learner.name)
    assert not room.hub.leftovers(learner.name), "the stopped server left processes behind"
    room.teacher.start_server(learner.name)
    status, url, _ = learner.get(f"{learner.prefix}lab/tree/{notebook}")   # the learner reloads the page
    assert status == 200, (status, url)
    assert learner.kept(notebook, note), "the saved edit is gone"
    fresh = learner.start_kernel(notebook)
    try:
        assert fresh.text("print('unsaved_variable' in dir())").strip() == "False"   # a new kernel
    finally:
        fresh.close()


@pytest.mark.hub
@pytest.mark.slow
def test_a_kernel_at_its_memory_limit_says_so_and_the_server_survives(classroom):
    """With the documented limits: a lesson asked for more than LESSONS_MEMORY_LIMIT_MB refuses
    before allocating (the course's message); a learner's own array past the data limit fails at
    once with numpy's MemoryError; the kernel keeps its variables and the server runs on."""
    room = classroom
    settings = documented_settings()
    learner, = room.mid_class(1)
    kernel = learner.start_kernel(f"{NAME}/{LESSON_08}")
    try:
        limits = kernel.text("import os, resource\nprint(resource.getrlimit(resource.RLIMIT_DATA)[0],"
                             " os.environ['LESSONS_MEMORY_LIMIT_MB'])").split()
        assert limits == [str(settings["data_limit"]), settings["environment"]["LESSONS_MEMORY_LIMIT_MB"]]
        kernel.execute("import numpy as np\nimport lessons_lib as ll\n"
                       "q, k, v = ll.random_qkv(20_000, 64, seed=0)")
        reply, _ = kernel.run("ll.scaled_dot_product_attention(q, k, v)")
        assert reply["status"] == "error" and reply["ename"] == "SizeLimitError", reply
        assert "500.0 MB" in reply["evalue"] and "LESSONS_MEMORY_LIMIT_MB" in reply["evalue"], reply["evalue"]
        reply, _ = kernel.run("by_hand = np.ones((20_000, 20_000))   # 3.2 GB of float64")
        assert reply["status"] == "error" and "MemoryError" in reply["ename"], reply
        assert "Unable to allocate" in reply["evalue"], reply["evalue"]
        assert kernel.text("print(q.shape)").strip() == "(20000, 64)"   # the same kernel, state kept
        status, _, _ = learner.get(f"{learner.prefix}api/status")
        assert status == 200
        assert any(k["id"] == kernel.id for k in learner.api("api/kernels"))
    finally:
        kernel.close()


# ----------------------------------------------------------------------------------- Chromium

# The input prompts of the notebook in the current tab only (lesson 00 stays open in another tab).
CURRENT_PROMPTS = """
() => {
  const tab = document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current');
  const panel = tab && document.getElementById(tab.dataset.id);
  return panel ? [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
                   .map((el) => el.textContent.trim()) : [];
}
"""


def _run_all_and_settle(page, sessions_url: str, path: str, timeout: float = 300) -> None:
    """Clear the outputs, Run > Run All Cells, and wait until the run is over (no cell waiting, at
    least one run; the run stops at the learner copy's first unsolved exercise) and the kernel is
    idle: what the learner's next key press then measures is that key press alone."""
    prompts = CURRENT_PROMPTS.strip()
    click_menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function(f"() => {{ const p = ({prompts})(); "
                           f"return p.length > 0 && p.every((x) => !/\\d/.test(x)); }}", timeout=30_000)
    click_menu(page, "Run", "Run All Cells")
    page.wait_for_function(f"() => {{ const p = ({prompts})(); "
                           f"return p.some((x) => /\\d/.test(x)) && !p.some((x) => x.includes('*')); }}",
                           timeout=timeout * 1000)
    _wait_for_idle_kernel(page, sessions_url, path, timeout)


def _wait_for_idle_kernel(page, sessions_url: str, path: str, timeout: float = 120) -> None:
    """Until the notebook's kernel has started and is idle (asked with the page's own cookies)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sessions = page.request.get(sessions_url).json()
        if any(s["path"] == path and s["kernel"]["execution_state"] == "idle" for s in sessions):
            return
        time.sleep(0.5)
    raise AssertionError(f"the kernel of {path} was not idle within {timeout} s")


@pytest.mark.hub
@pytest.mark.slow
def test_a_learner_in_chromium_sees_an_explorer_redraw_and_a_dead_kernel_restart(classroom, hub_figures):
    """The real front end: log in, click the link, land in lesson 00, run lesson 02, move its slider
    with the kernel idle; then the kernel is killed and JupyterLab says it is restarting it."""
    require(CHROMIUM.exists(), f"Chromium is not installed at {CHROMIUM} (Debian package 'chromium')")
    from playwright.sync_api import sync_playwright

    room = classroom
    hub, name = room.hub, "chromium-learner"
    lab, sessions = f"{hub.url}/user/{name}/lab/tree/{NAME}", f"{hub.url}/user/{name}/api/sessions"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            wire = Wire(page)
            console: list[str] = []
            page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
            page.goto(f"{hub.url}/hub/login")
            page.fill("input[name=username]", name)
            page.fill("input[name=password]", PASSWORD)
            page.click("#login_submit")
            page.wait_for_load_state()
            page.goto(hub.url + room.link)
            page.wait_for_url(re.compile(re.escape(f"{lab}/{LESSON_00}")), timeout=300_000)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)

            page.goto(f"{lab}/{EXPLORER_LESSON}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
            _wait_for_idle_kernel(page, sessions, f"{NAME}/{EXPLORER_LESSON}")
            _run_all_and_settle(page, sessions, f"{NAME}/{EXPLORER_LESSON}")
            sliders = ", ".join(f".lessons-explorer .{cls}" for cls in SLIDER_CLASSES)
            page.wait_for_selector(f"{sliders} .noUi-handle", timeout=60_000)
            wait_widgets_loaded(page)
            page.evaluate(PROBE)
            slider = page.locator(sliders).first
            handle = slider.locator(".noUi-handle").first
            handle.scroll_into_view_if_needed()
            move = press_and_wait(page, slider, handle, "ArrowRight", wire)

            kernel_id = next(s["kernel"]["id"] for s in page.request.get(sessions).json()
                             if s["path"] == f"{NAME}/{EXPLORER_LESSON}")
            hub.kernel_process(kernel_id).kill()
            hub.tally["kernels killed"] += 1
            dialog = page.locator(".jp-Dialog", has_text="appears to have died")
            dialog.wait_for(timeout=60_000)
            assert "Kernel Restarting" in dialog.inner_text()
            dialog.locator(".jp-Dialog-button.jp-mod-accept").click()
            _wait_for_idle_kernel(page, sessions, f"{NAME}/{EXPLORER_LESSON}")
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "hub-chromium-failure.png"))
            print("\n".join(console[-20:]), page.url)
            raise
        finally:
            browser.close()
    assert move["shown_ms"] > 0 and move["kB"] > 0, move
    through_proxy = hub.url.replace("http", "ws", 1) + f"/user/{name}/"
    assert wire.by_url and all(url.startswith(through_proxy) for url in wire.by_url), wire.by_url
    hub_figures.append(f"Chromium through the hub's proxy, kernel idle: key press to redraw "
                       f"{move['shown_ms']} ms, {move['kB']} kB")


# --------------------------------------------------------------------------------- the tally

@pytest.mark.hub
@pytest.mark.slow
def test_the_class_lost_no_kernel_and_no_edit(classroom, hub_figures):
    """Over every test above: no kernel died, none restarted but those killed on purpose, no port
    was already in use, and every saved edit was found again."""
    tally = classroom.tally()
    hub_figures.append(f"kernels started {tally['started']}, dead {tally['died']}, automatic restarts "
                       f"{tally['restarts']} (kernels killed on purpose {tally['kernels killed']}), "
                       f"edits kept {tally['edits kept']} of {tally['edits saved']}")
    assert tally["died"] == 0 and tally["address_in_use"] == 0, tally
    assert tally["restarts"] == tally["kernels killed"], tally
    assert tally["edits kept"] == tally["edits saved"], tally
