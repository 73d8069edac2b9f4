"""A lesson in a real browser: what the browser tests (``tests/browser/``), the hub test and the key-press
benchmark (``benchmarks/key_press.py``) share.

- **Chromium**: Debian's ``/usr/bin/chromium``, headless, driven by playwright (never a downloaded browser),
  started by :func:`started_playwright`: :func:`chromium_context` (a profile of its own, the 1280 × 800 window
  :data:`VIEWPORT`), or :func:`offline_page` (a page with the network cut off, for a static page).
- **The course served**: :func:`serving_course` starts JupyterLab as `make teach` does over a throw-away copy
  of the repository (autosave off: the committed notebooks are never written); the same server serves
  Notebook 7 under ``/notebooks/``.
- **A lesson's page**: :class:`LessonPage` opens a notebook in one of :data:`FRONT_ENDS`, clears its committed
  outputs, runs Run > Run All Cells and waits until every cell has run and every widget has drawn.
- **In the page**: :data:`PROBE` stamps each key press and each drawing of a live figure (its frame,
  alt text and the time it was painted); :class:`Wire` counts the bytes of the kernel's websocket and its
  busy / idle statuses.
- **Key presses as a learner makes them**: :func:`timed_press` (focus first, the page at rest, at most
  about three presses a second, the key held 0.1 s) and :func:`press_and_wait` (one press on a slider, until
  the explorer drew the new value: ms and kB). ``docs/measurements.md`` says why each of these matters.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import NOTEBOOKS, REPO, require
from tests.helpers.lab_server import QUIET_LAB_SETTINGS, LabServer, lab_args, running_lab

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
FRONT_ENDS = ("lab", "notebook7")
SLIDER_CLASSES = ("lessons-slider-d_k", "lessons-slider-seq_len")

KERNEL_START_S = 120
RUN_ALL_S = float(os.environ.get("LESSONS_BROWSER_RUN_TIMEOUT", "900"))
REDRAW_S = 15

# Developer option: LESSONS_BROWSER_NOTEBOOKS=/some/folder runs the browser tests over the notebooks of
# another folder (served from a copy, under notebooks/).
SOURCE_DIR = Path(os.environ.get("LESSONS_BROWSER_NOTEBOOKS", NOTEBOOKS))
SCREENSHOTS = Path(os.environ.get("LESSONS_SCREENSHOTS", REPO / "test-artifacts" / "screenshots"))

WIDGET_ERROR_TEXTS = re.compile(
    r"Error displaying widget|Error creating widget|Could not create model|Failed to load model class"
)


def lesson_notebooks() -> list[Path]:
    """The notebooks the browser tests open (:data:`SOURCE_DIR`), in lesson order."""
    return sorted(SOURCE_DIR.glob("*.ipynb"))


# ------------------------------------------------------------------ Chromium and the server

@contextlib.contextmanager
def started_playwright() -> Iterator:
    """playwright's sync API, for Debian's Chromium; skips (fails in CI) when either is missing."""
    require(CHROMIUM.exists(), f"Chromium is not installed at {CHROMIUM} (Debian package 'chromium')")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "the Python package 'playwright' is not installed (requirements-dev.txt)")
    with sync_playwright() as pw:
        yield pw


@contextlib.contextmanager
def offline_page(playwright) -> Iterator:
    """A page of Debian's Chromium (headless, the :data:`VIEWPORT` window) with the network cut off: a request
    for anything but a ``file:``, ``data:`` or loopback URL is aborted and listed in ``page.blocked``."""
    blocked: list[str] = []

    def cut_network(route):
        url = route.request.url
        if url.startswith(("file:", "data:", "http://127.0.0.1", "http://localhost")):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
    try:
        context = browser.new_context(viewport=VIEWPORT)
        context.route("**/*", cut_network)
        page = context.new_page()
        page.blocked = blocked
        yield page
    finally:
        browser.close()


@contextlib.contextmanager
def chromium_context(playwright) -> Iterator:
    """Debian's Chromium, headless, with a profile of its own (removed after) and the :data:`VIEWPORT`
    window: a persistent playwright context, its pages opened with ``context.new_page()``."""
    user_data = tempfile.mkdtemp(prefix="lessons-chromium-")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    context = playwright.chromium.launch_persistent_context(
        user_data, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, viewport=VIEWPORT,
    )
    try:
        yield context
    finally:
        context.close()
        shutil.rmtree(user_data, ignore_errors=True)


def _course_copy(source_dir: Path) -> Path:
    """A throw-away copy of the repository (notebooks from ``source_dir``) for the server to serve."""
    root = Path(tempfile.mkdtemp(prefix="lessons-browser-root-"))
    ignore = shutil.ignore_patterns(
        ".git", ".venv", "test-artifacts", "__pycache__", ".ipynb_checkpoints", ".pytest_cache",
        ".ruff_cache", ".hypothesis", "*.egg-info", "build", "notebooks",
    )
    shutil.copytree(REPO, root, ignore=ignore, dirs_exist_ok=True)
    shutil.copytree(source_dir, root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return root


@contextlib.contextmanager
def serving_course(source_dir: Path = SOURCE_DIR) -> Iterator[LabServer]:
    """JupyterLab with the flags of `make teach` (without a notebook to open: each page opens its own),
    serving a copy of the repository whose notebooks/ are ``source_dir``'s; the copy is removed after.
    Its kernels talk over Unix sockets (as on Binder and the hub): the browser stage runs two servers at
    once, and kernels on TCP ports picked free by two servers could pick the same one."""
    root = _course_copy(source_dir)
    args = [arg for arg in lab_args("notebooks") if arg.startswith("--")] + ["--KernelManager.transport=ipc"]
    try:
        with running_lab(root, args, settings=QUIET_LAB_SETTINGS) as server:
            yield server
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------ in the page

# The time of each key press, each drawing of a live figure (its frame counter, alt text and the time it
# was painted).
PROBE = """
() => {
  if (window.__lessonsProbe) { return; }
  const probe = window.__lessonsProbe = { keyAt: null, draws: [] };
  document.addEventListener('keydown', () => { probe.keyAt = performance.now(); }, true);
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      if (m.attributeName !== 'data-frame') { continue; }
      const root = m.target;
      probe.draws.push({ keyAt: probe.keyAt, drawnAt: Number(root.dataset.drawnAt), alt: root.dataset.alt });
    }
  }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-frame'] });
}
"""

PROMPTS = """
() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
  .map((el) => el.textContent.trim())
"""


class Wire:
    """Bytes arriving over the page's websockets (the kernel channel), counted as frames come in, and the
    kernel's busy / idle statuses among them (every request the kernel answers opens with busy, ends with
    idle)."""

    STATUS = re.compile(rb'"execution_state":\s*"(busy|idle)"')

    def __init__(self, page):
        self.page = page
        self.received = 0
        self.statuses = {b"busy": 0, b"idle": 0}
        self.by_url: dict[str, int] = {}
        page.on("websocket", self._attach)

    def _attach(self, ws) -> None:
        ws.on("framereceived", lambda payload, url=ws.url: self._count(url, payload))

    def _count(self, url: str, payload) -> None:
        data = payload.encode("utf-8") if isinstance(payload, str) else payload
        self.received += len(data)
        key = url.split("?")[0]
        self.by_url[key] = self.by_url.get(key, 0) + len(data)
        for state in self.STATUS.findall(data):
            self.statuses[state] += 1

    @property
    def answered(self) -> int:
        """How many requests the kernel has answered (idle statuses received)."""
        return self.statuses[b"idle"]

    def wait_quiet(self, timeout_s: float) -> None:
        """Wait until the kernel has answered every request it began: what the keys before asked of it (a
        slider's redraw, the live region's words) is in, and cannot land in the middle of what comes next."""
        deadline = time.monotonic() + timeout_s
        while self.statuses[b"busy"] > self.answered:
            if time.monotonic() > deadline:
                raise AssertionError(f"the kernel still had requests after {timeout_s:.0f} s "
                                     f"(statuses received: {self.statuses})")
            self.page.wait_for_timeout(20)

    def wait_answered(self, since: int, timeout_s: float) -> None:
        """Wait until the kernel answered a request after ``since`` (:attr:`answered` then) and answered
        every request it began: a move's last message is in. Frames reach Python while playwright works,
        so the wait polls through the page."""
        deadline = time.monotonic() + timeout_s
        while self.answered <= since or self.statuses[b"busy"] > self.answered:
            if time.monotonic() > deadline:
                raise AssertionError(f"the kernel answered no request within {timeout_s:.0f} s "
                                     f"(statuses received: {self.statuses})")
            self.page.wait_for_timeout(20)


# ------------------------------------------------------------------ opening and running a notebook

def kernel_state(server: LabServer, path: str) -> str | None:
    """Execution state of the kernel of the notebook at ``path`` (server side), or None if none yet."""
    for session in server.api("sessions"):
        if session.get("path") == path and session.get("kernel"):
            return server.api(f"kernels/{session['kernel']['id']}").get("execution_state")
    return None


def wait_for_kernel_idle(server: LabServer, path: str, timeout: float, settle: float = 1.0) -> None:
    """Wait until the notebook's kernel has been idle for ``settle`` seconds in a row."""
    deadline = time.monotonic() + timeout
    idle_since = None
    while time.monotonic() < deadline:
        if kernel_state(server, path) == "idle":
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= settle:
                return
        else:
            idle_since = None
        time.sleep(0.2)
    raise AssertionError(f"the kernel of {path} did not become idle within {timeout:.0f} s")


def click_menu(page, menu: str, item: str) -> None:
    """Click ``menu`` > ``item`` in the menu bar (JupyterLab and Notebook 7 share it)."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(rf"^{re.escape(menu)}$")).first.click()
    page.locator(".lm-Menu:visible .lm-Menu-item", has_text=re.compile(rf"^{re.escape(item)}")).first.click()


def run_all_and_wait(page, server: LabServer, path: str, timeout: float, settle: float = 1.5) -> dict:
    """Clear the committed outputs, Run > Run All Cells, and wait until execution has finished.

    Finished means: no cell waiting ("[*]") and the kernel idle for ``settle`` s in a row. The front end
    stops a run at the first error, so cells may stay unrun ("[ ]"); the caller reports them.
    """
    click_menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function(f"() => ({PROMPTS.strip()})().every((p) => !/\\d/.test(p))", timeout=10_000)
    click_menu(page, "Run", "Run All Cells")
    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    idle_since = None
    while time.monotonic() < deadline:
        prompts = page.evaluate(PROMPTS)
        if prompts and all(re.fullmatch(r"\[\d+\]:?", p) for p in prompts):
            return {"prompts": prompts, "seconds": time.perf_counter() - start}
        waiting = any("*" in p for p in prompts)
        if not waiting and kernel_state(server, path) == "idle":
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= settle:
                return {"prompts": prompts, "seconds": time.perf_counter() - start - settle}
        else:
            idle_since = None
        time.sleep(0.1)
    raise AssertionError(f"{path}: Run All Cells had not finished after {timeout:.0f} s")


def wait_widgets_loaded(page, timeout_s: float = 30.0) -> None:
    """Wait (at most ``timeout_s``) until no output says "Loading widget..." and every live figure drew."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        loading = page.evaluate(
            """() => [...document.querySelectorAll('.jp-OutputArea-output')]
                 .some((el) => el.textContent.trim() === 'Loading widget...')
               || [...document.querySelectorAll('.lessons-figure-root')].some((el) => !el.dataset.frame)"""
        )
        if not loading:
            return
        time.sleep(0.25)


def notebook_url(server: LabServer, path: str, front: str) -> str:
    """The address of the notebook at ``path`` in JupyterLab (a fresh workspace) or Notebook 7."""
    return (f"{server.url}/lab/tree/{path}?reset&token={server.token}" if front == "lab"
            else f"{server.url}/notebooks/{path}?token={server.token}")


@dataclass
class LessonPage:
    """A notebook opened in a front end and run to its end (:meth:`open`), with what its page did on the
    way: the websocket's bytes (:attr:`wire`), console errors, every request that left the server, and
    ``run``, what the checks of this page record (``test-artifacts/latency.json``)."""

    source: Path
    front: str
    server: LabServer
    page: object
    wire: Wire
    prompts: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    run: dict = field(default_factory=dict)

    @property
    def path(self) -> str:
        return f"notebooks/{self.source.name}"

    @property
    def name(self) -> str:
        return f"{self.source.name} ({self.front})"

    @property
    def shot(self) -> str:
        """The stem of this page's screenshots: the lesson's, with ``-notebook7`` in Notebook 7."""
        return f"{self.source.stem}{'' if self.front == 'lab' else '-notebook7'}"

    @classmethod
    def open(cls, context, server: LabServer, source: Path, front: str,
             run: dict | None = None) -> LessonPage:
        """Open ``notebooks/<source's name>`` of the server in ``front`` (its kernel started), collapse
        JupyterLab's file browser (the notebook gets the full width), then Run All and wait until every
        cell ran, the kernel is idle and every widget drew. What it took goes into ``run`` (a new dict by
        default); a page that fails on the way leaves a screenshot (``<lesson>-FAILED.png``)."""
        page = context.new_page()
        run = {} if run is None else run
        run["front_end"] = front
        lesson = cls(source, front, server, page, Wire(page), run=run)
        errors = lesson.console_errors
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
        page.on("request", lambda req: lesson.outside.append(f"{req.resource_type} {req.url}")
                if not req.url.startswith((server.url, "data:", "blob:")) else None)
        try:
            started = time.perf_counter()
            page.goto(notebook_url(server, lesson.path, front), timeout=KERNEL_START_S * 1000)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=KERNEL_START_S * 1000)
            wait_for_kernel_idle(server, lesson.path, KERNEL_START_S)
            lesson.run["open_s"] = round(time.perf_counter() - started, 2)
            if front == "lab":
                open_tab = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
                if open_tab.count():
                    open_tab.first.click()
            ran = run_all_and_wait(page, server, lesson.path, RUN_ALL_S)
            lesson.prompts, lesson.run["run_all_s"] = ran["prompts"], round(ran["seconds"], 2)
            wait_for_kernel_idle(server, lesson.path, RUN_ALL_S)
            wait_widgets_loaded(page)
        except BaseException:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(SCREENSHOTS / f"{lesson.shot}-FAILED.png"))
            lesson.close()
            raise
        return lesson

    def close(self) -> None:
        """Stop the kernels and close the page, never saving (autosave is off, beforeunload is not run)."""
        self.run["websocket_bytes_by_url"] = self.wire.by_url
        self.run["console_errors"] = self.console_errors[:20]
        self.server.shutdown_kernels()
        self.page.close()

    def assert_no_problems(self, problems: list[str]) -> None:
        """Fail with every problem found, under the page's name, with the browser console's errors."""
        console = "\n".join(self.console_errors[:10])
        assert not problems, (f"{self.name}:\n" + "\n".join(problems)
                              + (f"\n--- browser console errors ---\n{console}" if console else ""))


# ------------------------------------------------------------------ key presses

# Resolves when the page is at rest: three animation frames in a row, each within 25 ms of the last (no
# scroll, raster or layout of newly shown cells still under way), and at least `gap` ms after the last key
# press the probe saw; at most 2 s. Then `phase` ms more (into the frame: see next_phase).
AT_REST = """
([gap, phase]) => new Promise((resolve) => {
  const probe = window.__lessonsProbe, pressed = probe && probe.keyAt !== null ? probe.keyAt : -Infinity;
  let last = performance.now(), calm = 0;
  const started = last;
  const step = (now) => {
    calm = now - last < 25 ? calm + 1 : 0;
    last = now;
    const rested = calm >= 3 && now - pressed >= gap;
    if (rested) { setTimeout(() => resolve(true), phase); }
    else if (now - started > 2000) { resolve(false); } else { requestAnimationFrame(step); }
  };
  requestAnimationFrame(step);
})
"""

# A learner's separate key presses come at most about three a second: ipykernel answers a widget's message
# that arrives within about 0.15 s of its last answer some 35 ms late (docs/measurements.md).
PRESS_GAP_MS = 300

# A picture is shown at the next animation frame, 16.7 ms apart: the timed presses step through PHASES
# points of the frame, so which frame an answer catches does not depend on the run (docs/measurements.md).
FRAME_MS, PHASES = 1000 / 60, 8
_phases = itertools.count()

# A learner's key stays down for about a tenth of a second, so it comes up after the picture; a key
# released at once lands its keyup inside the redraw (docs/measurements.md).
KEY_HOLD_MS = 100


def next_phase() -> float:
    """The delay after a frame for the next timed key press: 0, 1/8, ..., 7/8 of a frame, in turn."""
    return (next(_phases) % PHASES) * FRAME_MS / PHASES


def at_rest(page, gap_ms: float = 0, phase_ms: float = 0) -> None:
    """Wait until the page draws its frames on time (AT_REST), ``gap_ms`` after the last key press, then
    ``phase_ms``: a key press starts from a page at rest, as a learner's does, not from one still drawing
    what a scroll or the last check brought in."""
    page.evaluate(AT_REST, [gap_ms, phase_ms])


def step_key(handle) -> str:
    """The arrow key that moves a slider's handle one step: right, or left where it stands at its maximum."""
    value, high = (float(handle.get_attribute(a) or 0) for a in ("aria-valuenow", "aria-valuemax"))
    return "ArrowLeft" if value >= high else "ArrowRight"


def press(page, handle, key: str, hold_ms: float = 0) -> None:
    """Press ``key`` on a focused slider handle (held ``hold_ms`` before it comes up).

    A real key press in JupyterLab, and in Notebook 7 on the course's own controls: their box (an explorer,
    the set-up check) keeps the arrow keys from Notebook 7's shortcuts (``access.js``). Notebook 7 (7.6)
    swallows trusted arrow-key presses on any other focused ipywidgets slider (the benchmark's bare slider),
    so there the key event is dispatched to the handle itself (the slider's own keyboard handling runs; the
    rest of the path, kernel and drawing, is the same).
    """
    handle.focus()
    if "/lab/" in page.url.split("?")[0] or handle.evaluate("(h) => !!h.closest('[data-lessons-keys]')"):
        page.keyboard.press(key, delay=hold_ms)
    else:
        handle.dispatch_event("keydown", {"key": key, "code": key, "bubbles": True})
        if hold_ms:   # and its keyup as late as a held key's
            handle.evaluate("""(h, [key, ms]) => setTimeout(() => h.dispatchEvent(
                new KeyboardEvent('keyup', { key, code: key, bubbles: true })), ms)""", [key, hold_ms])


def timed_press(page, handle, key: str) -> None:
    """A key press as a learner makes it: the handle takes focus first (as a Tab or a click comes before the
    key, so the frame that draws the new focus is not the key's), the page comes to rest at the next phase
    of the frame, at least PRESS_GAP_MS after the last press, and the key is held KEY_HOLD_MS."""
    handle.focus()
    at_rest(page, PRESS_GAP_MS, next_phase())
    press(page, handle, key, KEY_HOLD_MS)


def press_and_wait(page, slider, handle, key: str, wire: Wire) -> dict:
    """One key press on a slider (:func:`timed_press`); wait until the explorer drew the new value and the
    kernel answered the whole move. Returns the value, ``shown_ms`` (key press → picture, in the page's
    clock) and ``kB`` (received over the websocket for the move). Needs :data:`PROBE` in the page."""
    n_draws = page.evaluate("() => window.__lessonsProbe.draws.length")
    bytes_before, answered = wire.received, wire.answered
    readout = slider.locator(".widget-readout").first
    before = readout.inner_text()
    timed_press(page, handle, key)
    # While the time runs, wait on a number the probe keeps, reading no element (an element's text forces
    # the page's layout, and its locator a query over the whole page, on the main thread the redraw needs);
    # the slider's new value is read after the picture.
    page.wait_for_function("(n) => window.__lessonsProbe.draws.length > n", arg=n_draws,
                           timeout=REDRAW_S * 1000)
    name = "d_k" if "lessons-slider-d_k" in (slider.get_attribute("class") or "") else "seq_len"
    page.wait_for_function("([el, b]) => el.textContent.trim() !== b.trim()",
                           arg=[readout.element_handle(), before], timeout=REDRAW_S * 1000)
    value = readout.inner_text().strip()
    wanted = f"{name} = {value}"
    page.wait_for_function(
        """([n, wanted]) => window.__lessonsProbe.draws.slice(n).some((d) => d.alt.includes(wanted))""",
        arg=[n_draws, wanted], timeout=REDRAW_S * 1000,
    )
    draws = page.evaluate(f"() => window.__lessonsProbe.draws.slice({n_draws})")
    first = next(d for d in draws if wanted in d["alt"])
    wire.wait_answered(answered, REDRAW_S)  # the rest of the move's messages arrive (kB per move)
    return {"value": value, "shown_ms": round(first["drawnAt"] - first["keyAt"], 1),
            "kB": round((wire.received - bytes_before) / 1024, 2)}


def explorer_sliders(page):
    """The d_k and seq_len sliders of every explorer on the page (a locator), in page order."""
    return page.locator(", ".join(f".{cls}" for cls in SLIDER_CLASSES))


@contextlib.contextmanager
def whole_notebook_in_view(page):
    """The viewport grown to the notebook's height, scrolled to its top, so every cell is on screen (a full
    screenshot; axe can compute the colours behind text only where an element is in view); restored after."""
    height = page.evaluate(
        """() => {
            const panel = '.jp-NotebookPanel:not(.lm-mod-hidden)';
            const outer = document.querySelector(`${panel} .jp-WindowedPanel-outer`)
              || document.querySelector('.jp-Notebook');
            return outer ? outer.scrollHeight : document.body.scrollHeight;
        }"""
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": int(min(max(height + 160, 800), 30000))})
    page.evaluate(
        """() => document.querySelectorAll('.jp-WindowedPanel-outer, .jp-Notebook')
                   .forEach((el) => { el.scrollTop = 0; })"""
    )
    at_rest(page)
    try:
        yield
    finally:
        page.set_viewport_size(VIEWPORT)
