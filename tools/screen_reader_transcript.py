"""What a real screen reader says: Orca reading the course in Chromium, word for word.

    .venv/bin/python tools/screen_reader_transcript.py            print the transcripts
    .venv/bin/python tools/screen_reader_transcript.py --write    and put them in docs/accessibility.md
    make transcripts                                              the same as --write

Orca (Debian's ``orca``) runs on a virtual X display (Xvfb) with its own D-Bus session bus and AT-SPI bus,
and reads Debian's Chromium, started not headless with its accessibility on (tests/helpers/screen_reader.py
starts them all and ends them after). JupyterLab serves a copy of the course; playwright opens a lesson over
Chromium's DevTools port and runs it (Run All); then the keys a learner presses go through the X server
(``xdotool``), so Orca hears them as it hears a keyboard. What Orca spoke is read from its debug file
(``SPEECH OUTPUT:``), one utterance a line, between the moment the scene starts and the moment Orca fell
quiet. The scenes: lesson 04's d_k slider, lesson 06's head lock, lesson 07's drawn mask (JupyterLab), and a
formula of lesson 04's static page (``make html``), served over HTTP.

``--write`` replaces the text between the two markers of ``docs/accessibility.md``
(``<!-- transcripts: begin -->`` and ``<!-- transcripts: end -->``); nothing else of it changes.
Needs: apt-get install orca xvfb xdotool at-spi2-core dbus libglib2.0-bin (.ci/run installs them).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.helpers.browser import NOTEBOOKS, LessonPage, serving_course  # noqa: E402
from tests.helpers.screen_reader import Desktop, desktop, missing  # noqa: E402

STATEMENT = ROOT / "docs" / "accessibility.md"
BEGIN, END = "<!-- transcripts: begin -->", "<!-- transcripts: end -->"
LESSON_04 = NOTEBOOKS / "04_step3_scale_softmax.ipynb"
LESSON_06 = NOTEBOOKS / "06_multi_head.ipynb"
LESSON_07 = NOTEBOOKS / "07_causal_masking.ipynb"


@dataclass
class Scene:
    """One thing a learner does, and what Orca said for it: ``steps`` pairs each key (or "focus") with
    what Orca spoke after it."""

    title: str
    where: str
    steps: list[tuple[str, list[str]]]


def _step(desk: Desktop, what: str, act, wanted) -> tuple[str, list[str]]:
    mark = desk.speech.mark()
    act()
    return what, desk.speech.wait_for(mark, wanted)


def _tab_onto(desk: Desktop, target, wanted) -> tuple[str, list[str]]:
    """Tab onto ``target`` as a learner does: focus it, Shift+Tab off it, then Tab (a key of the keyboard,
    so Orca switches to its focus mode, as it does for a control reached with Tab)."""
    target.focus()
    desk.speech.wait_idle()
    mark = desk.speech.mark()
    desk.key("shift+Tab")
    target.page.wait_for_function("(el) => document.activeElement !== el", arg=target.element_handle())
    desk.speech.wait_for(mark, bool)   # what Orca says for the stop before it, said before the Tab
    return _step(desk, "Tab", lambda: desk.key("Tab"), wanted)


def d_k_slider(desk: Desktop, page) -> Scene:
    """Lesson 04: Tab onto the d_k slider, then the right arrow key."""
    slider = page.locator(".lessons-explorer .lessons-slider-d_k").first
    slider.scroll_into_view_if_needed()
    handle = slider.locator('[role="slider"]').first
    before = handle.get_attribute("aria-valuetext") or ""
    steps = [_tab_onto(desk, handle, lambda said: before in said)]
    steps.append(_step(desk, "Right arrow", lambda: desk.key("Right"),
                       lambda said: re.search(r"d_k = \d+:", said)))
    return Scene("Lesson 04: the d_k slider, one step with the arrow key", "JupyterLab", steps)


def head_lock(desk: Desktop, page) -> Scene:
    """Lesson 06: focus the grid of heads, move the cursor with the arrow keys, lock a head with Enter."""
    canvas = page.locator(".lessons-explorer canvas.lessons-figure-canvas[aria-label*='head']").first
    canvas.scroll_into_view_if_needed()
    steps = [_tab_onto(desk, canvas, "head")]
    steps.append(_step(desk, "Orca+A (focus mode: the arrow keys go to the figure)",
                       lambda: desk.key("Insert+a"), "Focus mode"))
    steps.append(_step(desk, "Right arrow", lambda: desk.key("Right"), "→"))
    steps.append(_step(desk, "Enter", lambda: desk.key("Return"), "locked"))
    return Scene("Lesson 06: locking a head with the keyboard", "JupyterLab", steps)


def drawn_mask(desk: Desktop, page) -> Scene:
    """Lesson 07: focus the mask's first cell, toggle it with Space, then the next cell with Space."""
    cell = page.locator(".lessons-explorer .lessons-toggle-cell").first
    cell.scroll_into_view_if_needed()
    steps = [_tab_onto(desk, cell, "toggle")]
    steps.append(_step(desk, "Space", lambda: desk.key("space"), "now blocked"))
    steps.append(_step(desk, "Tab, then Space", lambda: desk.key("Tab", "space"), "now"))
    return Scene("Lesson 07: drawing a mask with the keyboard", "JupyterLab", steps)


def page_formula(desk: Desktop, context, url: str) -> Scene:
    """Lesson 04's static page: Orca put on the paragraph before the attention formula (focused), then Down
    (Orca's browse mode reads the next line: the formula, from its MathML)."""
    page = context.new_page()
    page.goto(url)
    page.wait_for_function("() => document.querySelector('mjx-assistive-mml, .MJX_Assistive_MathML')")
    page.bring_to_front()
    put_caret = """() => {
      const math = [...document.querySelectorAll('.MathJax_Display')]
        .find((m) => m.textContent.includes('Attention'));
      let before = math.closest('p') || math;
      before = before.previousElementSibling || before.parentElement.previousElementSibling;
      before.setAttribute('tabindex', '-1');
      before.scrollIntoView({ block: 'center' });
      before.focus();
    }"""
    desk.speech.wait_idle()
    mark = desk.speech.mark()
    page.evaluate(put_caret)
    desk.speech.wait_for(mark, bool)   # Orca reads the paragraph it was put on
    steps = [_step(desk, "Down, from the line above the formula", lambda: desk.key("Down"),
                   lambda said: len(said) > 0)]
    page.close()
    return Scene("Lesson 04's static page: a formula, read in browse mode", "the static page of make html",
                 steps)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder without a line per request."""

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def static_pages(notebook: Path) -> Iterator[str]:
    """The notebook's static page (tools/export_html.py, as make html builds it) served over HTTP on a
    free port: yields its URL."""
    out = Path(tempfile.mkdtemp(prefix="lessons-html-"))
    subprocess.run([sys.executable, str(ROOT / "tools" / "export_html.py"), str(notebook), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    handler = functools.partial(QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{notebook.stem}.html"
    finally:
        server.shutdown()
        server.server_close()


FOCUS_OF = """() => {
  const el = document.activeElement;
  if (!el) return 'nothing';
  const said = ['role', 'aria-label', 'aria-valuetext', 'class']
    .filter((a) => el.getAttribute(a)).map((a) => `${a}="${el.getAttribute(a)}"`);
  const page = document.hasFocus() ? 'has' : 'lacks';
  return `<${el.tagName.toLowerCase()} ${said.join(' ')}>, the page ${page} the focus`;
}"""


def _focus_of(page) -> str:
    """What holds the keyboard focus in ``page`` (shown when Orca did not say what a scene waited for)."""
    try:
        return page.evaluate(FOCUS_OF)
    except Exception as err:   # the page is gone or hung: say so rather than hide the first error
        return f"(could not ask the page: {err})"


def in_lesson(desk: Desktop, context, server, source: Path, scene) -> Scene:
    """Open the lesson in JupyterLab on the desktop's Chromium, Run All, wait until Orca has read what the
    run changed, then play the scene."""
    lesson = LessonPage.open(context, server, source, "lab")
    try:
        lesson.page.bring_to_front()
        desk.speech.wait_idle()
        try:
            return scene(desk, lesson.page)
        except TimeoutError as err:
            raise TimeoutError(f"{err}\nthe page's focus then: {_focus_of(lesson.page)}") from None
    finally:
        lesson.page.close()


LESSON_SCENES = ((LESSON_04, d_k_slider), (LESSON_06, head_lock), (LESSON_07, drawn_mask))


def transcripts(scenes=LESSON_SCENES, formula: bool = True) -> list[Scene]:
    """Run each scene with Orca reading: the lessons in JupyterLab (Run All first), then the formula."""
    from playwright.sync_api import sync_playwright

    lack = missing()
    if lack:
        raise SystemExit(f"a screen-reader run needs: apt-get install {' '.join(lack)}")
    done = []
    with sync_playwright() as pw, desktop() as desk, desk.chromium(pw) as context:
        if scenes:
            with serving_course() as server:
                done += [in_lesson(desk, context, server, source, scene) for source, scene in scenes]
        if formula:
            with static_pages(LESSON_04) as url:
                done.append(page_formula(desk, context, url))
    return done


def markdown(scenes: list[Scene]) -> str:
    """The transcripts as the statement shows them: per scene, each key and Orca's words after it."""
    lines = []
    for scene in scenes:
        lines += [f"**{scene.title}** ({scene.where}):", ""]
        for what, said in scene.steps:
            spoken = " / ".join(f"“{u.strip()}”" for u in said if u.strip())
            lines.append(f"- *{what}*: {spoken}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write(text: str, path: Path = STATEMENT) -> None:
    """Put ``text`` between the transcript markers of ``path``."""
    doc = path.read_text(encoding="utf-8")
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{path} has no {BEGIN} … {END} markers")
    head, rest = doc.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(f"{head}{BEGIN}\n{text}{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"put them in {STATEMENT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    text = markdown(transcripts())
    print(text)
    if args.write:
        write(text)
        print(f"written to {STATEMENT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
