"""Stamp every lesson with what lets it launch anywhere and present as slides (part of ``make notebooks``).

One source of truth: the repository's public address is ``[project.urls] Repository`` in
``pyproject.toml`` and the launch ref is the learner release tag ``learner-vVERSION`` (made by
``tools/learner_release.py --branch learner``; Binder rebuilds its image for every new commit of
a branch, so a fixed tag keeps launches fast). From them this tool writes, idempotently:

* in each notebook, an **Open in Colab** link at the end of the first (title) cell, and a first
  code cell that, only inside Google Colab, installs the course library at that tag and turns on
  Colab's widget manager for the explorers; anywhere else the cell does nothing;
* a contents list right after the lesson's objectives (a cell tagged ``lesson-contents``): each ``##``
  section a link to the id JupyterLab gives its heading (:func:`with_contents`);
* slide metadata (``slideshow.slide_type``, read by jupyterlab-slideshow, nbconvert and RISE): a
  ``#``/``##`` heading starts a slide, a ``###`` heading or a cell tagged ``own-subslide`` a sub-slide,
  the Colab cell is skipped, long prose goes to the speaker notes (see :func:`slide_types`), and every
  other cell carries none, so it continues its slide;
* nbgrader's metadata for every exercise (see :func:`stamp_grading`): the solution cell, the
  interactive check cell locked, and after it a graded test cell worth the exercise's points in the
  registry of lessons (``lessons_lib/course/lessons.py``) that raises exactly when the check fails (the
  visible cases, then unseen ones drawn when it runs, ``check_hidden``: see
  ``lessons_lib/exercises/grading.py``); graded cells are skipped in slides;
* the course version the lesson belongs to, in the notebook's metadata (``lessons_version``): lesson 00's
  environment check warns when the course library it runs with is older (a hub's, from its image);
* the course maps, from the registry: the README's launch block (between ``<!-- launch:begin -->`` and
  ``<!-- launch:end -->``: the Binder badge, JupyterLab on lesson 00, and a row per lesson with its Colab
  link), and lesson 00's map (between ``<!-- map:begin -->`` and ``<!-- map:end -->``: each lesson's
  title, what a learner does in it and its stated minutes).

``tests/tools/test_launch_links.py`` fails when a notebook or the README is not stamped as this tool would.

``--nbgrader-source course/source`` writes instead what a graded class's ``nbgrader generate_assignment``
starts from: every lesson in nbgrader's source layout, the answers to its Predict prompts folded as in the
learner copy (:func:`nbgrader_source_notebook`): the lessons with exercises, and lessons 00 and 10 too,
which have no points but travel the same way so that each learner's concept quiz (``concept-quiz.json``)
reaches the class report.

Usage: python tools/stamp_notebooks.py [--check] [notebooks/*.ipynb] | --nbgrader-source FOLDER
"""

from __future__ import annotations

import argparse
import base64
import re
import struct
import sys
import tomllib
from pathlib import Path
from urllib.parse import quote

import nbformat
from conventions import (
    COLAB_TAG,
    CONTENTS_TAG,
    GRADED_TAG,
    LESSONS,
    ROOT,
    SOLUTION_BEGIN,
    SUBSLIDE_TAG,
    check_cell,
    heading_anchor,
    lesson_of,
    lessons_by_part,
    markdown_headings,
    replace_block,
    stated_minutes,
)
from learner_copy import learner_notebook

from lessons_lib.course.environment import VERSION_KEY
from lessons_lib.figures.base import read_still, still_numbers

BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
README_BEGIN, README_END = "<!-- launch:begin -->", "<!-- launch:end -->"
MAP_BEGIN, MAP_END = "<!-- map:begin -->", "<!-- map:end -->"
#: Exercises whose answer is a value, not a function: their check has no unseen cases.
NO_HIDDEN_CASES = {"my_query"}
LINE_LENGTH = 110    # ruff's, pyproject.toml: a graded cell's first comment line breaks before it
_DEFINED = re.compile(r"^\s*(?:def\s+(my_\w+)\s*\(|(my_\w+)\s*=)", re.M)


# ------------------------------------------------------------------------------------ addresses
def project(root: Path = ROOT) -> dict:
    with open(root / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]


def repository(root: Path = ROOT) -> str:
    """``owner/name`` of the public repository, from pyproject.toml's project URLs."""
    url = project(root)["urls"]["Repository"].rstrip("/")
    match = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", url)
    if not match:
        raise ValueError(f"[project.urls] Repository must be https://github.com/OWNER/NAME; got {url!r}")
    return match.group(1)


def launch_ref(root: Path = ROOT) -> str:
    return f"learner-v{project(root)['version']}"


def binder_url(notebook: str = "notebooks/00_start_here.ipynb", root: Path = ROOT) -> str:
    return (f"https://mybinder.org/v2/gh/{repository(root)}/{launch_ref(root)}"
            f"?urlpath={quote('lab/tree/' + notebook, safe='')}")


def colab_url(notebook: str, root: Path = ROOT) -> str:
    return f"https://colab.research.google.com/github/{repository(root)}/blob/{launch_ref(root)}/{notebook}"


def nbgitpuller_url(hub: str, root: Path = ROOT) -> str:
    """The link that clones (then updates) the learner copy into a hub user's home and opens lesson 00."""
    name = repository(root).split("/")[1]
    return (f"{hub.rstrip('/')}/hub/user-redirect/git-pull"
            f"?repo={quote('https://github.com/' + repository(root), safe='')}&branch=learner"
            f"&urlpath={quote(f'lab/tree/{name}/notebooks/00_start_here.ipynb', safe='')}")


def colab_install_target(root: Path = ROOT) -> str:
    return f"lessons-lib @ git+https://github.com/{repository(root)}@{launch_ref(root)}"


# ------------------------------------------------------------------------------------ notebooks
def colab_cell_source(root: Path = ROOT) -> str:
    return (
        "# Runs only in Google Colab: installs the course library there and turns on Colab's widget\n"
        "# manager for the explorers. In JupyterLab, Binder or a hub it does nothing.\n"
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:\n'
        f'    get_ipython().run_line_magic("pip", "install -q \'{colab_install_target(root)}\'")\n'
        "    from google.colab import output\n"
        "\n"
        "    output.enable_custom_widget_manager()\n"
    )


def colab_badge_line(notebook: str, root: Path = ROOT) -> str:
    """A text link, not Colab's badge image: an image from another site would be fetched by every
    front end that shows the notebook, and the course fetches nothing at run time."""
    return f"[Open in Colab]({colab_url(notebook, root)}) (runs there with no install)"


def slide_type(cell) -> str | None:
    """The cell's ``slideshow.slide_type``; None for a cell that continues the slide before it.

    A continuing cell carries no slide type at all (nbconvert and RISE read a missing one as "-";
    jupyterlab-slideshow reads only a missing one so, and hides cells marked "-").
    """
    if {COLAB_TAG, GRADED_TAG} & set(cell.metadata.get("tags", [])):
        return "skip"
    if SUBSLIDE_TAG in cell.metadata.get("tags", []):
        return "subslide"
    if cell.cell_type == "markdown":
        first = cell.source.lstrip().split("\n", 1)[0]
        if re.match(r"#{1,2} ", first):
            return "slide"
        if first.startswith("### "):
            return "subslide"
    return None


def stamp(nb: nbformat.NotebookNode, notebook: str, root: Path = ROOT) -> nbformat.NotebookNode:
    """Return a stamped copy of ``nb`` (``notebook`` is its path relative to the repository)."""
    nb = nbformat.from_dict(nb)
    cells = [c for c in nb.cells if COLAB_TAG not in c.metadata.get("tags", [])]
    old = next((c for c in nb.cells if COLAB_TAG in c.metadata.get("tags", [])), None)
    setup = old or nbformat.v4.new_code_cell()
    setup.source = colab_cell_source(root)
    setup.metadata["tags"] = [COLAB_TAG]
    if old is None or old.source != setup.source:
        setup.outputs, setup.execution_count = [], None
    title = cells[0]
    if title.cell_type == "markdown":
        lines = [ln for ln in title.source.rstrip("\n").split("\n")
                 if "Open In Colab" not in ln and not ln.startswith("[Open in Colab](")]
        while lines and not lines[-1].strip():
            lines.pop()
        title.source = "\n".join(lines + ["", colab_badge_line(notebook, root)])
    cells = with_contents(cells)
    nb.cells = [cells[0], setup, *cells[1:]]
    for cell, kind in zip(nb.cells, slide_types(nb.cells)):
        if kind is None:
            cell.metadata.pop("slideshow", None)
        else:
            cell.metadata["slideshow"] = {"slide_type": kind}
    nb.metadata.pop("rise", None)  # no RISE settings: the course presents with jupyterlab-slideshow
    nb.metadata[FONTS_KEY] = projector_fonts()
    nb.metadata[VERSION_KEY] = project(root)["version"]  # lesson 00 warns when the library is older
    if Path(notebook).stem.startswith("00_"):
        stamp_course_map(nb)
    return stamp_grading(nb, lesson_of(notebook).slug)


# ------------------------------------------------------------------------------------ contents
CONTENTS_TITLE = "**In this lesson**"


def contents_source(cells) -> str:
    """The lesson's contents list: each ``##`` section a link to its heading (:func:`heading_anchor`)."""
    rows = [f"- [{text}](#{heading_anchor(text)})"
            for cell in cells if cell.cell_type == "markdown"
            for level, text in markdown_headings(cell.source) if level == 2]
    return "\n".join([CONTENTS_TITLE, "", *rows])


def with_contents(cells: list) -> list:
    """``cells`` with the contents list (a cell tagged :data:`CONTENTS_TAG`, a sub-slide of its own) right
    after the objectives ("**By the end of this ..."), written anew from the headings below it."""
    cells = [c for c in cells if CONTENTS_TAG not in c.metadata.get("tags", [])]
    objectives = next((i for i, c in enumerate(cells) if c.cell_type == "markdown"
                       and re.search(r"^\*\*By the end of this", c.source, re.M)), None)
    if objectives is None:
        raise ValueError("a lesson needs its objectives, a markdown line '**By the end of this lesson you "
                         "can**' (CONTRIBUTING.md, 'Adding a lesson')")
    contents = nbformat.v4.new_markdown_cell(contents_source(cells[objectives + 1:]))
    contents.id = CONTENTS_TAG
    contents.metadata["tags"] = [CONTENTS_TAG, SUBSLIDE_TAG]
    return [*cells[:objectives + 1], contents, *cells[objectives + 1:]]


# ------------------------------------------------------------------------------------ nbgrader
def _nbgrader(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def graded_cell_source(check: str, name: str, points: int) -> str:
    """The graded test cell after ``check(name)``: the same check, raising when it does not pass.

    The unseen cases are not hidden *code* (an nbgrader ``### BEGIN HIDDEN TESTS`` block): the cell is
    the same in the learner's release and at autograde, so nbgrader reports no changed checksum for
    it, and its feedback shows no test the learner has not seen. What the learner cannot know are the
    cases ``check_hidden`` draws, from the course's secret (``lessons_lib/exercises/grading.py``).
    """
    unseen = name not in NO_HIDDEN_CASES
    head = f"# Graded test (nbgrader, {points} point{'s' if points != 1 else ''}): passes exactly when"
    said = f"{check}({name}) says PASSED" + ("," if unseen else ";")
    lines = [
        *([f"{head} {said}"] if len(head) + len(said) < LINE_LENGTH else [head, f"# {said}"]),  # long names
        "# on the cases shown above and on unseen ones drawn when it runs; otherwise it raises, naming the "
        "mistake." if unseen else
        "# otherwise it raises, naming the mistake. Run the check above for the full feedback.",
        f"ll.assert_passes(ll.{check}({name}))",
    ]
    if unseen:
        lines.append(f'll.assert_passes(ll.check_hidden("{name}", {name}))')
    return "\n".join(lines)


def stamp_grading(nb: nbformat.NotebookNode, lesson: str) -> nbformat.NotebookNode:
    """Give the lesson's exercises their nbgrader cells; every other cell carries no nbgrader metadata.

    The cell holding ``### BEGIN SOLUTION`` is the solution cell (its ``my_…`` names are the
    exercise); a cell that is only ``check_…(my_…)`` is the interactive check, locked; right after
    it comes the graded test cell (tag ``graded-test``), rewritten on every run.
    """
    points = LESSONS[lesson[:2]].points
    old = {c.metadata.get("nbgrader", {}).get("grade_id"): c
           for c in nb.cells if GRADED_TAG in c.metadata.get("tags", [])}
    cells = [c for c in nb.cells if GRADED_TAG not in c.metadata.get("tags", [])]
    out, graded = [], set()
    for cell in cells:
        cell.metadata.pop("nbgrader", None)
        out.append(cell)
        if cell.cell_type != "code":
            continue
        if SOLUTION_BEGIN in cell.source:
            names = [a or b for a, b in _DEFINED.findall(cell.source)]
            cell.metadata["nbgrader"] = _nbgrader("answer_" + "_".join(dict.fromkeys(names)), solution=True)
            continue
        call = check_cell(cell.source)
        if call is None:
            continue
        check, name = call
        if name not in points:
            raise ValueError(f"{lesson}: {check}({name}) has no points in its entry of "
                             f"lessons_lib/course/lessons.py")
        cell.metadata["nbgrader"] = _nbgrader(f"check_{name}", locked=True)
        test = old.get(f"test_{name}") or nbformat.v4.new_code_cell()
        if test.source != graded_cell_source(check, name, points[name]):
            test.source = graded_cell_source(check, name, points[name])
            test.outputs, test.execution_count = [], None
        test.metadata["tags"] = [GRADED_TAG]
        test.metadata["nbgrader"] = _nbgrader(f"test_{name}", grade=True, locked=True, points=points[name])
        test.metadata["slideshow"] = {"slide_type": "skip"}
        out.append(test)
        graded.add(name)
    if graded != set(points):
        raise ValueError(f"{lesson}: lessons_lib/course/lessons.py gives points to "
                         f"{sorted(set(points) - graded)}, which no check call grades")
    nb.cells = out
    return nb


def nbgrader_source_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The source notebook as nbgrader's ``source/`` folder should hold it: the teacher's notebook (solutions
    and graded cells, which ``nbgrader generate_assignment`` removes and locks) with the prose that answers
    a **Predict** prompt folded as in the learner copy (``learner_copy.learner_notebook``: the learner
    copy's own rule, reused, not written twice)."""
    learner, _ = learner_notebook(nb)
    folded = {cell.get("id"): cell.source for cell in learner.cells if cell.cell_type == "markdown"}
    nb = nbformat.from_dict(nb)  # a copy
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.get("id") in folded:
            cell.source = folded[cell.get("id")]
    return nb


def write_nbgrader_source(folder: Path) -> list[str]:
    """``folder/<lesson>/<lesson>.ipynb`` for every lesson of the registry (nbgrader's ``source/`` layout:
    one assignment per lesson; a lesson without exercises is an assignment of no points, released and
    handed in like the others); returns the assignment names."""
    written = []
    for lesson in LESSONS.values():
        nb = nbgrader_source_notebook(nbformat.read(ROOT / lesson.notebook, as_version=4))
        target = folder / lesson.slug / f"{lesson.slug}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append(lesson.slug)
    return written


# ------------------------------------------------------------------------------------ slides
#: Presenting, every cell's text is this large (jupyterlab-fonts' per-notebook styles, applied
#: only while jupyterlab-slideshow presents): readable from the back of a classroom.
PROJECTOR_FONT_PX = {"--jp-content-font-size1": 22, "--jp-code-font-size": 19, "--jp-ui-font-size1": 18}
FIGURE_MAX_PX = 400  # presenting, a figure is scaled down to this height (width follows)
#: presenting, the line under a still that opens its numbers as a table (figures/tables.py) is this tall
NUMBERS_LINE_PX = 20
FONTS_KEY = "@deathbeds/jupyterlab-fonts"
#: A prose cell longer than this (not a heading) is the teacher's to say: speaker notes.
NOTES_WORDS = 45
SLIDE_SIZE = (1280, 720)  # the projector every slide must fit, at PROJECTOR_FONT_PX
_CHARS_PER_LINE, _PROSE_LINE_PX, _CODE_LINE_PX, _CELL_PX = 95, 34, 27, 24
_FILL = 0.85  # pack a slide to this share of its height: the estimate is rough


def projector_css() -> dict:
    """The projector preset as CSS: selector -> declarations."""
    return {":root": {k: f"{v}px" for k, v in PROJECTOR_FONT_PX.items()},
            ".jp-OutputArea-output img": {"max-height": f"{FIGURE_MAX_PX}px", "width": "auto"},
            ".lessons-still-numbers > summary": {"font-size": "16px", "line-height": f"{NUMBERS_LINE_PX}px"}}


def projector_fonts() -> dict:
    """jupyterlab-fonts' notebook metadata: the preset, applied only while presenting."""
    presenting = "body[data-jp-deck-mode='presenting'] &"
    css = projector_css()
    # as jupyterlab-slideshow writes its own presenting styles: "" is the notebook itself
    return {"styles": {"": {presenting: {**css[":root"],
                                         "& .jp-OutputArea-output img": css[".jp-OutputArea-output img"],
                                         "& .lessons-still-numbers > summary":
                                             css[".lessons-still-numbers > summary"]}}}}


def shows_figure(cell) -> bool:
    """A code cell whose stored output is a figure or a live explorer/quiz (a widget)."""
    return cell.cell_type == "code" and any(
        read_still(o.get("data", {})) or "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        for o in cell.get("outputs", []))


def _png_height(data: str, width_px: int) -> float:
    raw = base64.b64decode(data[:64])
    w, h = struct.unpack(">II", raw[16:24])
    return min(h * min(1.0, width_px / w), FIGURE_MAX_PX)


def _prose_height(text: str) -> float:
    return sum(1 + len(line) // _CHARS_PER_LINE for line in text.split("\n")) * _PROSE_LINE_PX


def estimated_height(cell) -> float:
    """About how tall the cell stands on a projector slide (px): its text lines and figures."""
    width = SLIDE_SIZE[0] - 32
    if cell.cell_type == "markdown":
        return _CELL_PX + _prose_height(cell.source)
    height = _CELL_PX + (cell.source.count("\n") + 1) * _CODE_LINE_PX
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        still = read_still(data)
        if still:
            height += _png_height(still[0], width) + (NUMBERS_LINE_PX if still_numbers(data) else 0)
        elif "text/markdown" in data:
            height += _prose_height(data["text/markdown"])
        else:
            text = output.get("text", "") or data.get("text/plain", "")
            height += (text.count("\n") + 1) * _CODE_LINE_PX
    return height


def slide_types(cells) -> list[str | None]:
    """Every cell's slide type: headings start slides (``slide_type``); long prose that is not a
    heading goes to the speaker notes; each figure or explorer starts a sub-slide unless it directly
    follows its heading, and so does any cell that would push its slide past the projector's height."""
    kinds, used, previous_markdown_heading = [], 0.0, False
    for cell in cells:
        kind = slide_type(cell)
        height = estimated_height(cell)
        if kind is None and cell.cell_type == "markdown" and len(cell.source.split()) > NOTES_WORDS:
            kind = "notes"
        elif kind is None and (shows_figure(cell) and not previous_markdown_heading
                               or used + height > _FILL * SLIDE_SIZE[1]) and kinds:
            kind = "subslide"
        if kind in ("slide", "subslide"):
            used = 0.0
        if kind not in ("notes", "skip"):
            used += height
            previous_markdown_heading = kind in ("slide", "subslide") and cell.cell_type == "markdown"
        kinds.append(kind)
    return kinds


# ------------------------------------------------------------------------------------ course maps
def lesson_title(nb: nbformat.NotebookNode) -> str:
    """The notebook's first heading (``07 · Causal masking``): the page title of its static page."""
    first = nb.cells[0].source.lstrip().split("\n", 1)[0]
    return re.sub(r"^#+\s*", "", first).strip()


def readme_block(root: Path = ROOT) -> str:
    """The README's launch block: the Binder badge, then the lessons under their parts' headings, each with
    its Colab link."""
    rows = [
        f"[![Binder]({BINDER_BADGE})]({binder_url(root=root)}) "
        "opens lesson 00 in JupyterLab on Binder, no install (the learner copy, at the release tag "
        f"`{launch_ref(root)}`: Binder builds an image once per tag, so launches stay fast).",
    ]
    for part, lessons in lessons_by_part():
        rows += ["", f"### {part.heading}", "", "| lesson | open it here | or in Colab |", "|---|---|---|"]
        for lesson in lessons:
            title = f"{lesson.number} · {lesson.title}".replace("|", "\\|")
            colab = colab_url(lesson.notebook, root)
            rows.append(f"| {lesson.number} | [{title}]({lesson.notebook}) | [Colab]({colab}) |")
    return "\n".join(rows)


def course_map(minutes: dict[str, int] | None = None) -> str:
    """Lesson 00's map: under each part's heading, each lesson's short title (a link), what a learner does
    in it, its stated time (from the registry's minutes, or from ``minutes``, lesson -> measured minutes,
    when given)."""
    blocks = []
    for part, lessons in lessons_by_part():
        rows = [f"### {part.heading}", "", "| lesson | what you do | time |", "|---|---|---|"]
        for lesson in lessons:
            time = stated_minutes(minutes[lesson.number]) if minutes else lesson.stated_minutes
            rows.append(f"| [{lesson.number} · {lesson.short}]({lesson.slug}.ipynb) | {lesson.summary} | "
                        f"~{time} min |")
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks)


def stamp_course_map(nb: nbformat.NotebookNode, minutes: dict[str, int] | None = None) -> None:
    """Write :func:`course_map` between the map markers of lesson 00's cell that holds them."""
    cells = [c for c in nb.cells if c.cell_type == "markdown" and MAP_BEGIN in c.source]
    if len(cells) != 1:
        raise ValueError(f"lesson 00 needs one markdown cell with the markers {MAP_BEGIN} and {MAP_END}")
    # blank lines around the table: the markers are HTML blocks of their own, never a row of the table
    cells[0].source = replace_block(cells[0].source, MAP_BEGIN, MAP_END, f"\n{course_map(minutes)}\n",
                                    where="lesson 00's course map")


# ------------------------------------------------------------------------------------ command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if anything is unstamped")
    parser.add_argument("--nbgrader-source", type=Path, metavar="FOLDER",
                        help="instead: write every lesson into nbgrader's source FOLDER (course/source), the "
                             "answers to Predict prompts folded as in the learner copy")
    args = parser.parse_args(argv)
    if args.nbgrader_source:
        written = write_nbgrader_source(args.nbgrader_source)
        print(f"nbgrader source in {args.nbgrader_source}: " + ", ".join(written))
        return 0
    notebooks = args.notebooks or [ROOT / lesson.notebook for lesson in LESSONS.values()]
    stale = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        new = stamp(nb, path.resolve().relative_to(ROOT).as_posix())
        if new != nb:
            stale.append(path.name)
            if not args.check:
                nbformat.write(new, path)
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    new_text = replace_block(text, README_BEGIN, README_END, readme_block(), where="README.md")
    if new_text != text:
        stale.append("README.md")
        if not args.check:
            readme.write_text(new_text, encoding="utf-8")
    if args.check and stale:
        print("not stamped (run make notebooks): " + ", ".join(stale))
        return 1
    print(("stamped: " + ", ".join(stale)) if stale else "all stamped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
