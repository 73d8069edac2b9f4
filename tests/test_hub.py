"""The course on a real JupyterHub (``make test-hub``): a class of learners, an update mid-term, isolation.

JupyterHub (``.venv``'s, the current release) behind configurable-http-proxy (npm), a dummy
authenticator and a local spawner with a home folder per learner; each learner's server is the
Binder environment's (tools/binder_env.py), as a hub image built from binder/ runs it. The course
reaches learners as a teacher ships it: an nbgitpuller link to a local bare repository holding the
learner release (tools/learner_release.py). All of it listens on 127.0.0.1 and needs a token or a
login (tests/hub_classroom.py drives each learner at the protocol level).
"""

from __future__ import annotations

import re
import statistics
import subprocess
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
from conftest import load_tool, require
from course_remote import BRANCH, LESSON_00, NAME, learner_remote, teacher_update
from hub_classroom import PASSWORD, Learner, chp_available, code_cells, running_hub
from test_browser import (
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

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
binder_env = load_tool("binder_env")

pytestmark = [pytest.mark.hub, pytest.mark.slow]

LEARNERS = 20
EXPLORER_LESSON = "notebooks/02_step1_qkv.ipynb"   # ProjectionExplorer: d_k and seed sliders
LESSON_01 = "notebooks/01_why_attention.ipynb"
EXERCISE_LINE = "my_query = np.array([0.0, 0.0, 0.0, 0.0])  # edit me"


def _link(bare: Path) -> str:
    """The nbgitpuller link of docs/classroom.md, with the local bare remote as the repository."""
    query = urllib.parse.urlencode({"repo": f"file://{bare}", "branch": BRANCH,
                                    "urlpath": f"lab/tree/{NAME}/{LESSON_00}"})
    return f"/hub/user-redirect/git-pull?{query}"


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require(chp_available(), "configurable-http-proxy is not installed (make test-hub installs it with npm)")
    singleuser = binder_env.build().parent / "jupyterhub-singleuser"
    tmp = tmp_path_factory.mktemp("hub")
    bare = learner_remote(tmp)
    with running_hub(tmp / "hub", singleuser) as hub:
        yield hub, bare


def _lesson_and_sliders(learner: Learner, link: str) -> dict:
    """Log in, click the link, run lesson 00 top to bottom, then an explorer, moving two sliders."""
    learner.log_in()
    events = learner.follow_link(link)
    assert events[-1]["phase"] == "finished", events[-3:]
    copy = learner.hub.home(learner.name) / NAME
    kernel = learner.start_kernel(f"{NAME}/{LESSON_00}")
    try:
        for code in code_cells(copy / LESSON_00):
            kernel.execute(code)
        lesson_02 = code_cells(copy / EXPLORER_LESSON)
        kernel.execute(next(c for c in lesson_02 if "import lessons_lib" in c))
        kernel.execute(next(c for c in lesson_02 if "ProjectionExplorer(" in c))
        sliders = kernel.sliders()
        assert sliders, "the explorer opened no slider"
        latencies = [kernel.move(slider, value) for slider in sliders[:2] for value in (1, 3)]
        memory = learner.memory_mb()
    finally:
        kernel.close()
    return {"landed": learner.landed, "latencies": latencies, "memory_mb": memory,
            "reconnects": kernel.reconnects}


def test_a_class_logs_in_follows_the_link_runs_a_lesson_and_moves_sliders(classroom):
    hub, bare = classroom
    learners = [Learner(hub, f"learner{i:02d}") for i in range(LEARNERS)]
    with ThreadPoolExecutor(max_workers=LEARNERS) as pool:
        results = list(pool.map(lambda lr: _lesson_and_sliders(lr, _link(bare)), learners))
    for learner, result in zip(learners, results):
        assert result["landed"].endswith(f"/user/{learner.name}/lab/tree/{NAME}/{LESSON_00}"), result
        assert (hub.home(learner.name) / NAME / LESSON_00).is_file()
    moves = sorted(t for r in results for t in r["latencies"])
    p95 = moves[int(0.95 * (len(moves) - 1))]
    print(f"\n{LEARNERS} learners, {len(moves)} slider moves through the proxy: "
          f"median {statistics.median(moves) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; memory per learner "
          f"(server + kernel, after lesson 00 and an explorer): median "
          f"{statistics.median(r['memory_mb'] for r in results):.0f} MB, "
          f"max {max(r['memory_mb'] for r in results):.0f} MB; kernel websockets reconnected: "
          f"{sum(r['reconnects'] for r in results)}")


def test_a_learner_cannot_open_another_learners_server(classroom):
    hub, bare = classroom
    alice, bob = Learner(hub, "alice"), Learner(hub, "bob")
    for learner in (alice, bob):
        learner.log_in()
        learner.follow_link(_link(bare))
    status, url, page = alice.get(f"/user/bob/api/contents/{NAME}/{LESSON_00}")
    assert status == 403 and b"cells" not in page, (status, url, page[:300])
    status, url, page = alice.get("/user/bob/lab")
    assert status == 403, (status, url, page[:300])
    stranger = Learner(hub, "nobody-logged-in")
    status, url, page = stranger.get(f"/user/bob/api/contents/{NAME}/{LESSON_00}")
    sent_to_login = url.split("?")[0].endswith("/hub/login")
    assert b'"cells"' not in page and (status == 403 or sent_to_login), (status, url)
    status, _, page = bob.get(f"/user/bob/api/contents/{NAME}/{LESSON_00}")
    assert status == 200 and b'"cells"' in page


def test_hub_proxy_servers_and_kernels_listen_on_loopback_only(classroom):
    hub, _ = classroom
    processes = [psutil.Process(hub.process.pid), *psutil.Process(hub.process.pid).children(recursive=True)]
    listening = [(p.name(), c.laddr) for p in processes for c in p.net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN]
    assert len(listening) >= 3, listening  # proxy (public + API), hub, at least one server
    assert all(addr.ip == "127.0.0.1" for _, addr in listening), listening


def _replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _edit_exercise(learner: Learner, value: str) -> None:
    """The learner edits the exercise's line in lesson 01 and saves, as JupyterLab does (PUT contents)."""
    prefix, path = f"/user/{learner.name}/", f"{NAME}/{LESSON_01}"
    model = learner.send(f"{prefix}api/contents/{path}", "GET", xsrf_path=prefix.rstrip("/"))
    cell = next(c for c in model["content"]["cells"] if EXERCISE_LINE in c["source"])
    cell["source"] = cell["source"].replace(EXERCISE_LINE, f"my_query = np.array({value})  # edit me")
    learner.send(f"{prefix}api/contents/{path}", "PUT", {"type": "notebook", "format": "json",
                                                        "content": model["content"]},
                 xsrf_path=prefix.rstrip("/"))


def test_mid_term_update_reaches_learners_and_keeps_their_edits(classroom):
    hub, bare = classroom
    kept, clash = Learner(hub, "keeps-edit"), Learner(hub, "edit-conflicts")
    for learner, value in ((kept, "[0.0, 8.0, 0.0, 0.0]"), (clash, "[0.0, 0.0, 5.0, 0.0]")):
        learner.log_in()
        learner.follow_link(_link(bare))
        _edit_exercise(learner, value)

    news = "**Update from your teacher:** lesson 01 now says more about queries."
    teacher_update(bare, lambda work: _replace_in(work / LESSON_00, "# ", f"{news}\\n\\n# "),
                   "Lesson 00: a note for the class")
    events = kept.follow_link(_link(bare))
    assert events[-1]["phase"] == "finished", events[-3:]
    mine = hub.home(kept.name) / NAME
    assert news in (mine / LESSON_00).read_text(), "the update did not arrive"
    assert "[0.0, 8.0, 0.0, 0.0]" in (mine / LESSON_01).read_text(), "the learner's edit was lost"

    # The teacher now changes the very line the second learner edited: nbgitpuller merges with
    # -Xours, so the learner's line wins and the rest of the update still arrives.
    teacher_update(bare, lambda work: _replace_in(work / LESSON_01, EXERCISE_LINE,
                                                  EXERCISE_LINE.replace("edit me", "edit me: one feature")),
                   "Lesson 01: a hint in the exercise")
    events = clash.follow_link(_link(bare))
    assert events[-1]["phase"] == "finished", events[-3:]
    theirs = hub.home(clash.name) / NAME
    assert news in (theirs / LESSON_00).read_text(), "the non-conflicting update did not arrive"
    text = (theirs / LESSON_01).read_text()
    assert "[0.0, 0.0, 5.0, 0.0]" in text and "edit me: one feature" not in text, "the edit was lost"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=theirs, capture_output=True, text=True)
    assert "UU " not in status.stdout, status.stdout  # no merge left half-done


def _wait_for_idle_kernel(page, sessions_url: str, path: str, timeout: float = 120) -> None:
    """Until the notebook's kernel has started and is idle (asked with the page's own cookies)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sessions = page.request.get(sessions_url).json()
        if any(s["path"] == path and s["kernel"]["execution_state"] == "idle" for s in sessions):
            return
        time.sleep(0.5)
    raise AssertionError(f"the kernel of {path} was not idle within {timeout} s")


def test_a_learner_in_chromium_sees_an_explorer_redraw_through_the_proxy(classroom):
    """The real front end: log in, click the link, land in lesson 00, run lesson 02, move its slider."""
    require(CHROMIUM.exists(), f"Chromium is not installed at {CHROMIUM} (Debian package 'chromium')")
    from playwright.sync_api import sync_playwright

    hub, bare = classroom
    name, lab = "chromium-learner", f"{hub.url}/user/chromium-learner/lab/tree/{NAME}"
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
            page.goto(hub.url + _link(bare))
            page.wait_for_url(re.compile(re.escape(f"{lab}/{LESSON_00}")), timeout=300_000)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)

            page.goto(f"{lab}/{EXPLORER_LESSON}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
            _wait_for_idle_kernel(page, f"{hub.url}/user/{name}/api/sessions", f"{NAME}/{EXPLORER_LESSON}")
            click_menu(page, "Run", "Run All Cells")
            sliders = ", ".join(f".lessons-explorer .{cls}" for cls in SLIDER_CLASSES)
            page.wait_for_selector(f"{sliders} .noUi-handle", timeout=300_000)
            wait_widgets_loaded(page)
            page.evaluate(PROBE)
            slider = page.locator(sliders).first
            handle = slider.locator(".noUi-handle").first
            handle.scroll_into_view_if_needed()
            move = press_and_wait(page, slider, handle, "ArrowRight", wire)
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
    print(f"\nChromium through the hub's proxy: key press to redraw {move['shown_ms']} ms, {move['kB']} kB")
