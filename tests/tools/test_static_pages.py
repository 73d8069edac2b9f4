"""``make html``: every lesson exports to a static page with all its figures, each with alt text in
words; the default export is the learner's copy (no solutions, no PASSED feedback), the teacher's
copy is ``make html-teacher``; progress bars show their final state; each lesson has a handout."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool

export_html = load_tool("export_html")
handout = export_html.handout
stills = export_html.stills
static_notebook = export_html.static_notebook
conventions = load_tool("conventions")
SUBSLIDE_TAG, GRADED_TAG = conventions.SUBSLIDE_TAG, conventions.GRADED_TAG
CHECK_CALL, SOLUTION_BEGIN = conventions.CHECK_CALL, conventions.SOLUTION_BEGIN
predicted_cells = load_tool("learner_copy").predicted_cells

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
FALLBACK = "figure without a description"


class Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))


@pytest.fixture(scope="module")
def pages(exported_site):
    return exported_site


@pytest.fixture(scope="module")
def teacher_pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("html-teacher")
    subprocess.run([sys.executable, str(REPO / "tools/export_html.py"), "--teacher", "--out", str(out),
                    str(REPO / "notebooks/04_step3_scale_softmax.ipynb")], check=True)
    return out


def still_outputs(path: Path) -> int:
    return len(stills(static_notebook(nbformat.read(path, as_version=4))))  # the learner's copy, as exported


@pytest.mark.subprocess  # the pages come from tools/export_html.py, run as make html runs it
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_lesson_page_has_its_figures_with_alt_text(pages, notebook):
    page = pages / f"{notebook.stem}.html"
    assert page.exists(), f"make html wrote no page for {notebook.name}"
    parser = Images()
    parser.feed(page.read_text(encoding="utf-8"))
    figures = [img for img in parser.images if img.get("src", "").startswith("data:image/png")]
    assert len(figures) == still_outputs(notebook), f"{notebook.name}: figures missing from its page"
    for img in parser.images:
        alt = (img.get("alt") or "").strip()
        assert "$" not in alt and "\\" not in alt, f"{notebook.name}: raw LaTeX in alt text {alt!r}"
        assert alt and alt != FALLBACK and len(alt) >= 15, (
            f"{notebook.name}: an image has no real alt text ({alt!r}); figures from lessons_lib carry "
            f"their title and caption as the alt text of the <img> they store")


@pytest.mark.subprocess
def test_index_links_every_lesson(pages):
    index = (pages / "index.html").read_text(encoding="utf-8")
    for notebook in NOTEBOOKS:
        assert f'href="{notebook.stem}.html"' in index


@pytest.mark.subprocess
def test_index_links_every_handout(pages):
    index = (pages / "index.html").read_text(encoding="utf-8")
    for notebook in NOTEBOOKS:
        assert f'href="{notebook.stem}.handout.html"' in index
        handout = (pages / f"{notebook.stem}.handout.html").read_text(encoding="utf-8")
        assert "<h2>Takeaways</h2>" in handout and "<li>" in handout, notebook.name


@pytest.mark.subprocess
def test_a_handout_keeps_the_takeaways_split_over_several_slides():
    """tools/split_tall_cells.py splits a long Takeaways cell to fit the projector; the handout joins it."""
    split = 0
    for notebook in NOTEBOOKS:
        nb = nbformat.read(notebook, as_version=4)
        start = next(i for i, c in enumerate(nb.cells) if re.match(r"##\s+.*Takeaways", c.source.lstrip()))
        follower = (nb.cells[start + 1:] or [nb.cells[start]])[0]
        if SUBSLIDE_TAG not in follower.metadata.get("tags", []):
            continue
        split += 1
        words = re.findall(r"[A-Za-z]{4,}", re.sub(r"<[^>]+>", "", handout(nb, notebook.stem)))
        shown = re.sub(r"\]\([^)]*\)", "]", follower.source)  # a link's words, not its address
        tail = re.findall(r"[A-Za-z]{4,}", shown)[-4:]
        assert any(words[i:i + 4] == tail for i in range(len(words))), (notebook.name, tail)
    assert split, "no lesson splits its Takeaways any more: this test has nothing to hold"


def text_of(page: Path) -> str:
    """The page's text, tags removed (code is split into highlighted spans)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


@pytest.mark.subprocess
def test_learner_pages_hold_no_solution_and_no_passed_feedback(pages, teacher_pages):
    solution = "exps / exps.sum(axis=-1, keepdims=True)"  # a line of lesson 04's worked solution
    learner = text_of(pages / "04_step3_scale_softmax.html")
    teacher = text_of(teacher_pages / "04_step3_scale_softmax.html")
    assert solution not in learner and "PASSED" not in learner and "BEGIN SOLUTION" not in learner
    assert "your code here" in learner
    assert solution in teacher and "PASSED" in teacher
    for notebook in NOTEBOOKS:
        text = (pages / f"{notebook.stem}.html").read_text(encoding="utf-8")
        for secret in ("BEGIN SOLUTION", "PASSED", "HIDDEN TESTS"):
            assert secret not in text, (notebook.name, secret)


@pytest.mark.subprocess
def test_a_page_keeps_what_a_prompt_asks_to_predict_in_a_closed_fold(pages):
    """A page's reader cannot run the cells between a **Predict** prompt and its answer, nor the one right
    under the answer (:func:`predicted_cells`): their outputs are on the page (not cleared, as in the
    learner's notebook), each in a closed fold opened after predicting."""
    folds_in_course = 0
    for notebook in NOTEBOOKS:
        cells = [c for c in nbformat.read(notebook, as_version=4).cells
                 if GRADED_TAG not in c.metadata.get("tags", [])]  # as the learner copy drops them
        between = predicted_cells(cells, notebook.name)
        predicted = [i for i in between if cells[i].cell_type == "code" and cells[i].outputs
                     and not CHECK_CALL.search(cells[i].source) and SOLUTION_BEGIN not in cells[i].source]
        page = (pages / f"{notebook.stem}.html").read_text(encoding="utf-8")
        folds = re.findall(r'<details class="course-predicted">(.*?)</details>', page, flags=re.S)
        assert len(folds) == len(predicted), (notebook.name, len(folds), sorted(predicted))
        for fold in folds:
            assert "jp-OutputArea-output" in fold and "<details open" not in fold, (notebook.name, fold[:200])
        folds_in_course += len(folds)
    assert folds_in_course >= 10, f"only {folds_in_course} predicted outputs in the whole course"


@pytest.mark.subprocess
def test_page_titles_are_lesson_titles(pages):
    for notebook in NOTEBOOKS:
        first = nbformat.read(notebook, as_version=4).cells[0].source.split("\n", 1)[0].lstrip("# ").strip()
        assert f"<title>{first}</title>" in (pages / f"{notebook.stem}.html").read_text(encoding="utf-8")


@pytest.mark.subprocess
def test_progress_bars_show_their_final_state(pages):
    # lesson 08's first measurement answers its Predict prompt: the learner copy (its page) leaves it out
    assert "measuring 6 block sizes at N = 2,048: 100%" in text_of(pages / "08_cost_and_flashattention.html")
    assert "training: 100%" in text_of(pages / "09_attention_in_action.html")
    for notebook in NOTEBOOKS:
        assert not re.search(r"(?<!\d)0%\|", text_of(pages / f"{notebook.stem}.html")), notebook.name


@pytest.mark.subprocess
def test_each_handout_has_the_lessons_stills_with_their_alt_text(pages):
    for notebook in NOTEBOOKS:
        parser = Images()
        parser.feed((pages / f"{notebook.stem}.handout.html").read_text(encoding="utf-8"))
        assert len(parser.images) == still_outputs(notebook), notebook.name
        assert all(len(img.get("alt", "")) >= 15 and "$" not in img["alt"] for img in parser.images)
