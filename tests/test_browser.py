"""Every notebook runs in a real browser: JupyterLab + headless Chromium (Debian package) + playwright.

For each notebook in notebooks/ (whatever is there when the tests are collected):

1. open it in JupyterLab (fresh workspace), wait for its kernel, Run > Run All Cells;
2. wait until every code cell has run and the kernel is idle;
3. assert: no error output, every widget rendered (no "Error displaying widget", no widget shown as
   plain text such as ``IntSlider(...)``, no "Loading widget..." left);
4. for every slider with class ``lessons-slider-d_k`` or ``lessons-slider-seq_len``: focus its handle,
   press an arrow key a few times and assert that the nearest ``.lessons-heatmap`` image changed each
   time; the key press -> new image shown latency is measured in the browser and recorded, not asserted;
5. the environment check's slider (``lessons-slider-check``, notebook 00): its echo line follows it;
6. save a full-notebook screenshot.

Screenshots and ``browser_timings.json`` go to ``$LESSONS_SCREENSHOTS`` (make test sets it to
test-artifacts/screenshots). The server serves a temporary copy of the repository with autosave off,
and every page is closed without saving, so the committed notebooks are never written.

Developer option: ``LESSONS_BROWSER_NOTEBOOKS=/some/folder`` runs the test over the notebooks of
another folder (served from a copy, under notebooks/).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from conftest import NOTEBOOKS, QUIET_LAB_SETTINGS, REPO, in_ci, makefile_lab_args, require, running_lab

pytestmark = pytest.mark.browser

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
VIEWPORT = {"width": 1280, "height": 900}
SLIDER_CLASSES = ("lessons-slider-d_k", "lessons-slider-seq_len")
PRESSES_PER_SLIDER = 4

KERNEL_START_S = 120
RUN_ALL_S = float(os.environ.get("LESSONS_BROWSER_RUN_TIMEOUT", "900"))
IMAGE_CHANGE_S = 15

SOURCE_DIR = Path(os.environ.get("LESSONS_BROWSER_NOTEBOOKS", NOTEBOOKS))
SCREENSHOTS = Path(os.environ.get("LESSONS_SCREENSHOTS", REPO / "test-artifacts" / "screenshots"))

WIDGET_ERROR_TEXTS = re.compile(
    r"Error displaying widget|Error creating widget|Could not create model|Failed to load model class"
)


def _widget_class_names() -> list[str]:
    import ipywidgets

    return sorted(
        name for name, obj in vars(ipywidgets).items()
        if isinstance(obj, type) and issubclass(obj, ipywidgets.DOMWidget)
    )


# A widget shown as text: the front end could not render it (e.g. no widget extension).
WIDGET_AS_TEXT = re.compile(
    r"^\s*(?:(?:" + "|".join(_widget_class_names()) + r")\(|<lessons_lib\.widgets\.\w+ object at 0x)"
)
# An exception in an output: a traceback, or a line such as "ValueError: ..." (SyntaxError has no traceback).
ERROR_TEXT = re.compile(r"Traceback \(most recent call last\)|^\w*(?:Error|Exception|Interrupt)\b.*:", re.M)

# Records key press -> image changes in the page: the time the src changed and the time the new
# image was decoded and painted (next animation frame).
LATENCY_PROBE = """
() => {
  if (window.__lessonsProbe) { return; }
  const probe = window.__lessonsProbe = { keyAt: null, changes: [] };
  document.addEventListener('keydown', () => { probe.keyAt = performance.now(); }, true);
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      const img = m.target;
      const isHeatmap = img.tagName === 'IMG' && img.closest('.lessons-heatmap');
      if (m.attributeName !== 'src' || !isHeatmap) { continue; }
      const entry = { keyAt: probe.keyAt, srcAt: performance.now(), shownAt: null };
      probe.changes.push(entry);
      img.decode().catch(() => null).then(() => requestAnimationFrame(() => {
        entry.shownAt = performance.now();
      }));
    }
  }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['src'] });
}
"""

# The heatmap images that belong to a slider: those in the nearest ancestor that holds any,
# not looking beyond the slider's cell.
HEATMAP_SRCS = """
(slider) => {
  const cell = slider.closest('.jp-Cell');
  let box = slider.parentElement;
  while (box && !box.querySelector('.lessons-heatmap')) {
    if (box === cell) { return null; }
    box = box.parentElement;
  }
  if (!box) { return null; }
  return [...box.querySelectorAll('.lessons-heatmap')]
    .map((el) => (el.tagName === 'IMG' ? el : el.querySelector('img')))
    .filter((img) => img)
    .map((img) => img.getAttribute('src'));
}
"""

PROMPTS = """
() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
  .map((el) => el.textContent.trim())
"""


# ------------------------------------------------------------------ fixtures

def _course_copy() -> Path:
    """A throw-away copy of the repository (notebooks from SOURCE_DIR) for the server to serve."""
    root = Path(tempfile.mkdtemp(prefix="lessons-browser-root-"))
    ignore = shutil.ignore_patterns(
        ".git", ".venv", "test-artifacts", "__pycache__", ".ipynb_checkpoints", ".pytest_cache",
        ".ruff_cache", ".hypothesis", "*.egg-info", "build", "notebooks",
    )
    shutil.copytree(REPO, root, ignore=ignore, dirs_exist_ok=True)
    shutil.copytree(SOURCE_DIR, root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return root


@pytest.fixture(scope="session")
def lab_for_browser():
    root = _course_copy()
    # The flags of `make lab`, without the notebook to open (the browser opens each one itself).
    args = [arg for arg in makefile_lab_args() if arg.startswith("--")]
    try:
        with running_lab(root, args, settings=QUIET_LAB_SETTINGS) as server:
            yield server
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def browser_context():
    require(CHROMIUM.exists(), f"Chromium is not installed at {CHROMIUM} (Debian package 'chromium')")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "the Python package 'playwright' is not installed (requirements-dev.txt)")
    user_data = tempfile.mkdtemp(prefix="lessons-chromium-")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            user_data,
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
        )
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(user_data, ignore_errors=True)


@pytest.fixture(scope="session")
def timings():
    """Per-notebook timings, written to browser_timings.json after every notebook."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    record: dict = {"notebooks": {}}
    yield record


def _write_timings(record: dict) -> None:
    latencies = [
        ms for nb in record["notebooks"].values() for slider in nb.get("sliders", [])
        for ms in slider["shown_ms"]
    ]
    record["all_sliders_median_shown_ms"] = round(statistics.median(latencies), 1) if latencies else None
    (SCREENSHOTS / "browser_timings.json").write_text(json.dumps(record, indent=2), encoding="utf-8")


# ------------------------------------------------------------------- helpers

def _kernel_state(server, path: str) -> str | None:
    """Execution state of the kernel of the notebook at ``path`` (server side), or None if none yet."""
    for session in server.api("sessions"):
        if session.get("path") == path and session.get("kernel"):
            return server.api(f"kernels/{session['kernel']['id']}").get("execution_state")
    return None


def _wait_for_kernel_idle(server, path: str, timeout: float, settle: float = 1.0) -> None:
    """Wait until the notebook's kernel has been idle for ``settle`` seconds in a row."""
    deadline = time.monotonic() + timeout
    idle_since = None
    while time.monotonic() < deadline:
        if _kernel_state(server, path) == "idle":
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= settle:
                return
        else:
            idle_since = None
        time.sleep(0.2)
    raise AssertionError(f"the kernel of {path} did not become idle within {timeout:.0f} s")


def _cells_with_tag(path: Path, tag: str) -> set[int]:
    nb = nbformat.read(path, as_version=4)
    return {i for i, cell in enumerate(nb.cells) if tag in cell.get("metadata", {}).get("tags", [])}


def _menu(page, menu: str, item: str) -> None:
    """Click ``menu`` > ``item`` in JupyterLab's main menu bar."""
    page.locator("#jp-MainMenu").get_by_text(menu, exact=True).click()
    page.locator(".lm-Menu:visible .lm-Menu-item", has_text=re.compile(rf"^{re.escape(item)}")).first.click()


def _run_all_and_wait(page, server, path: str, timeout: float, settle: float = 1.5) -> dict:
    """Clear the committed outputs, Run > Run All Cells, and wait until execution has finished.

    Finished means: no cell waiting ("[*]") and the kernel idle for ``settle`` s in a row. JupyterLab
    stops a run at the first error, so cells may stay unrun ("[ ]"); the caller reports them.
    """
    _menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function(f"() => ({PROMPTS.strip()})().every((p) => !/\\d/.test(p))", timeout=10_000)
    _menu(page, "Run", "Run All Cells")
    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    idle_since = None
    while time.monotonic() < deadline:
        prompts = page.evaluate(PROMPTS)
        if prompts and all(re.fullmatch(r"\[\d+\]:?", p) for p in prompts):
            return {"prompts": prompts, "seconds": time.perf_counter() - start}
        waiting = any("*" in p for p in prompts)
        if not waiting and _kernel_state(server, path) == "idle":
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= settle:
                return {"prompts": prompts, "seconds": time.perf_counter() - start - settle}
        else:
            idle_since = None
        time.sleep(0.1)
    raise AssertionError(f"{path}: Run All Cells had not finished after {timeout:.0f} s")


def _output_problems(page, allowed_error_cells: set[int]) -> list[str]:
    """Every error output and every widget that did not render, as readable lines."""
    outputs = page.evaluate(
        """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].flatMap((cell, index) =>
            [...cell.querySelectorAll('.jp-OutputArea-output')].map((el) => ({
              cell: index,
              mime: el.getAttribute('data-mime-type'),
              text: el.innerText.slice(0, 600),
              widget: !!el.querySelector('.jupyter-widgets'),
            })))"""
    )
    problems = []
    for out in outputs:
        where = f"cell {out['cell']}"
        text = out["text"]
        if WIDGET_ERROR_TEXTS.search(text):
            problems.append(f"{where}: widget failed to render: {text[:200]!r}")
        elif out["mime"] in ("text/plain", None) and WIDGET_AS_TEXT.search(text) and not out["widget"]:
            problems.append(f"{where}: a widget is shown as plain text (not rendered): {text[:200]!r}")
        elif "Loading widget..." in text:
            problems.append(f"{where}: widget still 'Loading widget...'")
        elif (
            out["mime"] == "application/vnd.jupyter.stderr"
            and ERROR_TEXT.search(text)
            and out["cell"] not in allowed_error_cells
        ):
            problems.append(f"{where}: error output:\n{text}")
    return problems


def _wait_widgets_loaded(page, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        loading = page.evaluate(
            """() => [...document.querySelectorAll('.jp-OutputArea-output')]
                 .some((el) => el.textContent.trim() === 'Loading widget...')"""
        )
        if not loading:
            return
        time.sleep(0.25)


def _exercise_sliders(page, notebook: str) -> tuple[list[dict], list[str]]:
    """Move every d_k / seq_len slider with the keyboard; return per-slider timings and problems."""
    page.evaluate(LATENCY_PROBE)
    results, problems = [], []
    selector = ", ".join(f".{cls}" for cls in SLIDER_CLASSES)
    sliders = page.locator(selector)
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        cls = next(c for c in SLIDER_CLASSES if c in (slider.get_attribute("class") or "").split())
        label = f"{notebook}: slider #{i} ({cls})"
        handle = slider.locator(".noUi-handle").first
        if handle.count() == 0:
            problems.append(f"{label}: no slider handle (.noUi-handle) rendered")
            continue
        if slider.evaluate(HEATMAP_SRCS) is None:
            problems.append(f"{label}: no .lessons-heatmap image next to it in the same cell")
            continue
        handle.scroll_into_view_if_needed()
        key = "ArrowRight"
        src_ms, shown_ms = [], []
        for press in range(PRESSES_PER_SLIDER):
            value, low, high = (float(handle.get_attribute(a) or 0)
                                for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))
            if value >= high:  # at an end: go back the other way
                key = "ArrowLeft"
            elif value <= low:
                key = "ArrowRight"
            before = slider.evaluate(HEATMAP_SRCS)
            n_changes = page.evaluate("() => window.__lessonsProbe.changes.length")
            handle.focus()
            page.keyboard.press(key)
            try:
                page.wait_for_function(
                    """([slider, before, n]) => {
                        const probe = window.__lessonsProbe;
                        if (probe.changes.length <= n) { return false; }
                        const last = probe.changes[probe.changes.length - 1];
                        return last.shownAt !== null
                          && JSON.stringify((%s)(slider)) !== JSON.stringify(before);
                    }""" % HEATMAP_SRCS.strip(),
                    arg=[slider.element_handle(), before, n_changes],
                    timeout=IMAGE_CHANGE_S * 1000,
                )
            except Exception:
                after = handle.get_attribute("aria-valuenow")
                moved = f"moved the slider from {value:g} to {after}" if float(after or 0) != value else (
                    f"did not move the slider (still {after})"
                )
                problems.append(
                    f"{label}: press {press + 1} ({key}) {moved}, but the heatmap did not change "
                    f"within {IMAGE_CHANGE_S} s"
                )
                break
            change = page.evaluate(f"() => window.__lessonsProbe.changes[{n_changes}]")
            src_ms.append(change["srcAt"] - change["keyAt"])
            shown_ms.append(change["shownAt"] - change["keyAt"])
            page.wait_for_timeout(150)  # let the kernel settle before the next press
        results.append({
            "slider": cls,
            "index": i,
            "src_ms": [round(x, 1) for x in src_ms],
            "shown_ms": [round(x, 1) for x in shown_ms],
            "median_shown_ms": round(statistics.median(shown_ms), 1) if shown_ms else None,
        })
    return results, problems


def _check_widget_echo(page, notebook: str) -> list[str]:
    """The environment check of notebook 00: moving its slider must update the echo line from Python."""
    problems = []
    checks = page.locator(".lessons-widget-check")
    for i in range(checks.count()):
        box = checks.nth(i)
        handle = box.locator(".lessons-slider-check .noUi-handle").first
        echo = box.locator(".lessons-widget-echo").first
        if handle.count() == 0 or echo.count() == 0:
            problems.append(f"{notebook}: widget check #{i} has no slider handle or no echo line")
            continue
        handle.scroll_into_view_if_needed()
        handle.focus()
        page.keyboard.press("ArrowRight")
        value = handle.get_attribute("aria-valuetext") or handle.get_attribute("aria-valuenow")
        try:
            page.wait_for_function(
                "([el, v]) => el.textContent.includes('received') && el.textContent.includes(v)",
                arg=[echo.element_handle(), str(int(float(value)))],
                timeout=IMAGE_CHANGE_S * 1000,
            )
        except Exception:
            problems.append(
                f"{notebook}: widget check #{i}: the slider moved to {value} but the echo line still says "
                f"{echo.inner_text()!r}"
            )
    return problems


def _full_screenshot(page, path: Path) -> None:
    """The whole notebook in one image: grow the viewport to the notebook's height, then restore it."""
    height = page.evaluate(
        """() => {
            const panel = '.jp-NotebookPanel:not(.lm-mod-hidden)';
            const outer = document.querySelector(`${panel} .jp-WindowedPanel-outer`)
              || document.querySelector('.jp-Notebook');
            return outer ? outer.scrollHeight : document.body.scrollHeight;
        }"""
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": int(min(max(height + 160, 900), 15000))})
    page.evaluate(
        """() => document.querySelectorAll('.jp-WindowedPanel-outer, .jp-Notebook')
                   .forEach((el) => { el.scrollTop = 0; })"""
    )
    page.wait_for_timeout(500)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)


# --------------------------------------------------------------------- tests

def _notebooks() -> list[Path]:
    return sorted(SOURCE_DIR.glob("*.ipynb"))


def test_there_are_notebooks_to_check():
    if not _notebooks():
        message = f"no notebooks in {SOURCE_DIR}: the browser test has nothing to run"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.parametrize("source", _notebooks(), ids=lambda p: p.stem)
def test_notebook_runs_in_browser(source: Path, lab_for_browser, browser_context, timings):
    server = lab_for_browser
    rel = f"notebooks/{source.name}"
    allowed_error_cells = _cells_with_tag(source, "raises-exception")
    page = browser_context.new_page()
    console_errors: list[str] = []
    page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: console_errors.append(f"pageerror: {exc}"))
    record: dict = {}
    try:
        t0 = time.perf_counter()
        page.goto(f"{server.url}/lab/tree/{rel}?reset&token={server.token}")
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=KERNEL_START_S * 1000)
        _wait_for_kernel_idle(server, rel, KERNEL_START_S)
        record["open_s"] = round(time.perf_counter() - t0, 2)
        # Collapse the file browser: the screenshots then show the notebook at full width.
        open_tab = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        if open_tab.count():
            open_tab.first.click()

        run = _run_all_and_wait(page, server, rel, RUN_ALL_S)
        record["run_all_s"] = round(run["seconds"], 2)
        _wait_for_kernel_idle(server, rel, RUN_ALL_S)
        _wait_widgets_loaded(page)

        problems = _output_problems(page, allowed_error_cells)
        unrun = [i for i, p in enumerate(run["prompts"]) if not re.fullmatch(r"\[\d+\]:?", p)]
        if unrun:
            problems.append(
                f"Run All stopped early: {len(unrun)} of {len(run['prompts'])} code cells did not run "
                f"(the first is code cell #{unrun[0]}); see the error above"
            )
        sliders, slider_problems = _exercise_sliders(page, source.name)
        record["sliders"] = sliders
        problems += slider_problems
        problems += _check_widget_echo(page, source.name)

        _full_screenshot(page, SCREENSHOTS / f"{source.stem}.png")
        record["console_errors"] = console_errors[:20]
        console = "\n".join(console_errors[:10])
        assert not problems, (
            f"{source.name} in JupyterLab:\n" + "\n".join(problems)
            + (f"\n--- browser console errors ---\n{console}" if console else "")
        )
    except Exception:
        # A screenshot of the state at the failure helps more than the traceback.
        try:
            page.screenshot(path=str(SCREENSHOTS / f"{source.stem}-FAILED.png"))
        except Exception:
            pass
        raise
    finally:
        timings["notebooks"][source.name] = record
        _write_timings(timings)
        server.shutdown_kernels()
        page.close()  # never saves: autosave is off and beforeunload is not run
