"""Headings a screen reader can walk (the *Notebooks for All* checklist): every lesson and every static page
(lesson page, handout, index) has exactly one H1, first, and no skipped level (an H2 never jumps to an H4);
every lesson opens with a contents list, right after its objectives, that links each of its H2 sections in
order; every in-page link of a static page reaches an element of that page.

A notebook's headings are its markdown cells' and those of its markdown and HTML outputs (a quiz, a table);
a page's are those of the HTML that ``tools/export_html.py`` writes (nbconvert's lab template, in this
process). Lesson 00's course map is a table under ``###`` part headings, so it holds the rule too.
"""

from __future__ import annotations

import re
import urllib.parse
from html import unescape
from html.parser import HTMLParser

import nbformat
import pytest

from tests.helpers import NOTEBOOKS, load_tool

conventions = load_tool("conventions")
export_html = load_tool("export_html")
stamp_notebooks = load_tool("stamp_notebooks")

PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.I | re.S)


def notebook_headings(nb) -> list[tuple[int, str]]:
    """Every heading a reader of the notebook meets, in order: markdown cells, then the outputs' HTML and
    markdown (``(level, text)``)."""
    found = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            source = re.sub(r"<!--.*?-->", "", cell.source, flags=re.S)
            found += conventions.markdown_headings(source)
            found += [(int(level), text) for level, text in HTML_HEADING.findall(source)]
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/html" in data:
                html = "".join(data["text/html"])
                found += [(int(level), text) for level, text in HTML_HEADING.findall(html)]
            elif "text/markdown" in data:
                found += conventions.markdown_headings("".join(data["text/markdown"]))
    return found


def outline_problems(headings: list[tuple[int, str]]) -> list[str]:
    """What is wrong with an outline: not exactly one H1, the H1 not first, a level skipped."""
    problems = []
    ones = [text for level, text in headings if level == 1]
    if len(ones) != 1:
        problems.append(f"{len(ones)} H1 headings, not one: {ones}")
    if headings and headings[0][0] != 1:
        problems.append(f"the first heading is an H{headings[0][0]}, not the H1: {headings[0][1]!r}")
    for (before, _), (level, text) in zip(headings, headings[1:]):
        if level > before + 1:
            problems.append(f"H{before} then H{level} (a level skipped) at {text!r}")
    return problems


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_a_lesson_has_one_h1_and_skips_no_heading_level(path):
    problems = outline_problems(notebook_headings(nbformat.read(path, as_version=4)))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_a_lesson_opens_with_a_contents_list_of_its_sections(path):
    cells = nbformat.read(path, as_version=4).cells
    contents = [i for i, c in enumerate(cells) if conventions.CONTENTS_TAG in c.metadata.get("tags", [])]
    objectives = next(i for i, c in enumerate(cells) if c.cell_type == "markdown"
                      and re.search(r"^\*\*By the end of this", c.source, re.M))
    assert len(contents) == 1, f"{path.name}: {len(contents)} contents lists (make notebooks stamps one)"
    after_objectives = [i for i in range(objectives + 1, len(cells))
                        if conventions.COLAB_TAG not in cells[i].metadata.get("tags", [])][0]
    assert contents[0] == after_objectives, f"{path.name}: the contents list is not after the objectives"
    sections = [text for c in cells[contents[0] + 1:] if c.cell_type == "markdown"
                for level, text in conventions.markdown_headings(c.source) if level == 2]
    links = re.findall(r"^- \[(.+)\]\(#(.+)\)$", cells[contents[0]].source, re.M)
    assert [text for text, _ in links] == sections, f"{path.name}: the contents list and the H2s differ"
    assert [anchor for _, anchor in links] == [conventions.heading_anchor(s) for s in sections]
    assert sections[-1] == "Takeaways" and len(sections) >= 5, sections


def test_a_contents_link_is_the_id_jupyterlab_gives_the_heading():
    anchor = conventions.heading_anchor
    assert anchor("1 · Where we start: the *raw* scores") == "1-·-Where-we-start:-the-raw-scores"
    assert anchor("3 · One big $W_Q$ is a separate $W_Q^i$") == "3-·-One-big-$W_Q$-is-a-separate-$W_Q^i$"
    assert anchor("5 · Our `flash_attention`, [checked](x.md)") == "5-·-Our-flash_attention,-checked"
    assert conventions.markdown_headings("# A\n```\n# not a heading\n```\n## B ##") == [(1, "A"), (2, "B")]


def test_an_outline_that_skips_a_level_or_has_two_h1s_is_refused():
    assert outline_problems([(1, "a"), (2, "b"), (3, "c"), (2, "d")]) == []
    assert "a level skipped" in outline_problems([(1, "a"), (2, "b"), (4, "c")])[0]
    assert "2 H1" in outline_problems([(1, "a"), (1, "b")])[0]
    assert "not the H1" in outline_problems([(2, "a"), (1, "b")])[-1]


# ------------------------------------------------------------------ the static pages

class Outline(HTMLParser):
    """A page's headings, in order, and its ids and in-page links."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str]] = []
        self.ids: set[str] = set()
        self.fragments: list[str] = []
        self._open: list | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and (attrs.get("href") or "").startswith("#") and len(attrs["href"]) > 1:
            self.fragments.append(attrs["href"][1:])
        if re.fullmatch(r"h[1-6]", tag):
            self._open = [int(tag[1]), ""]

    def handle_data(self, data):
        if self._open is not None:
            self._open[1] += data

    def handle_endtag(self, tag):
        if self._open is not None and tag == f"h{self._open[0]}":
            self.headings.append((self._open[0], self._open[1].strip()))
            self._open = None


def landing(fragment: str, ids: set[str]) -> str | None:
    """The id a link ``#fragment`` scrolls to, as the HTML standard finds it: the fragment as written, else
    percent-decoded (nbconvert's ids keep ``'`` where its links write ``%27``); None if neither is an id."""
    decoded = urllib.parse.unquote(fragment)
    return fragment if fragment in ids else decoded if decoded in ids else None


def outline(html: str) -> Outline:
    parser = Outline()
    parser.feed(html)
    return parser


@pytest.fixture(scope="module")
def static_pages() -> dict[str, str]:
    """Every page ``make html`` writes (the learner's copy), made in this process: name -> HTML."""
    exp, pages, titles = export_html.exporter(), {}, {}
    for path in PATHS:
        title, page, handout = export_html.lesson_pages(exp, path)
        pages[f"{path.stem}.html"], pages[f"{path.stem}.handout.html"] = page, handout
        titles[path.stem] = title
    pages["index.html"] = export_html.index_page(titles)
    return pages


def test_every_static_page_has_one_h1_skips_no_level_and_its_in_page_links_land(static_pages):
    problems = []
    for name, html in static_pages.items():
        page = outline(html)
        problems += [f"{name}: {p}" for p in outline_problems(page.headings)]
        problems += [f"{name}: the link #{f} reaches nothing" for f in page.fragments
                     if landing(f, page.ids) is None]
        if name.endswith(".html") and not name.endswith("handout.html") and name != "index.html":
            h1 = page.headings[0][1].rstrip("¶").strip()
            if not h1.startswith(name[:2] + " ·"):
                problems.append(f"{name}: its H1 is {h1!r}, not the lesson's title")
    assert len(static_pages) == 2 * len(PATHS) + 1
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_a_lesson_pages_contents_list_links_each_h2_in_order(static_pages, path):
    html = static_pages[f"{path.stem}.html"]
    listed = re.search(r"<strong>In this lesson</strong></p>\s*<ul>(.*?)</ul>", html, re.S)
    assert listed, f"{path.stem}.html has no contents list"
    h2_ids = [unescape(i) for i in re.findall(r'<h2 id="([^"]+)"', html)]
    links = [unescape(f) for f in re.findall(r'<a href="#([^"]+)"', listed.group(1))]
    assert [landing(f, set(h2_ids)) for f in links] == h2_ids and h2_ids
