"""Every relative link in every notebook (and the README) leads to a file that exists, and to its anchor.

Links are read from markdown cells and from the markdown/HTML outputs of code cells: ``[text](target)``,
``![alt](target)`` and ``href="target"`` / ``src="target"``. Web links (``http:``, ``https:``, ``mailto:``)
are not followed (the tests run offline). A target ``file#anchor`` must name an existing file, and the
anchor must exist in it: an explicit ``<a id=...>``/``<a name=...>``, or a heading, written as JupyterLab
makes heading ids (spaces → ``-``) or as GitHub does (lower case, punctuation dropped).
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import nbformat
import pytest

from tests.helpers import NOTEBOOKS, REPO, notebook_paths
from tests.helpers.links import broken_links, links

FILES = [*notebook_paths(), REPO / "README.md"]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_relative_link_resolves(path):
    problems = broken_links(path)
    assert not problems, f"{path.name} has broken links:\n  " + "\n  ".join(problems)


def test_every_notebook_links_onward():
    """Each lesson links to the next one (the last one back to the start)."""
    paths = notebook_paths()
    for here, onward in zip(paths, [*paths[1:], paths[0]]):
        assert onward.name in {Path(urllib.parse.urlsplit(t).path).name for t in links(here)}, (
            f"{here.name} does not link to {onward.name}")


# ------------------------------------------------------------------ the checker itself
def test_the_checker_finds_what_is_broken(tmp_path):
    (tmp_path / "a.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## 1 · Start here\n[ok](b.md#a-title) [ok too](#1-·-Start-here) "
                                      "[web](https://example.org/x) `[code](nowhere.ipynb)`"),
        nbformat.v4.new_markdown_cell("[missing](gone.ipynb) [bad anchor](b.md#nope) ![img](pic%20one.png) "
                                      '<a href="sub/c.txt">c</a>'),
    ])), encoding="utf-8")
    (tmp_path / "b.md").write_text("# A *Title*\n", encoding="utf-8")
    (tmp_path / "pic one.png").write_bytes(b"")
    problems = broken_links(tmp_path / "a.ipynb")
    assert [p.split(":")[0] for p in problems] == ["gone.ipynb", "b.md#nope", "sub/c.txt"], problems


def test_notebooks_folder_is_checked():
    assert NOTEBOOKS / "09_attention_in_action.ipynb" in FILES
    assert NOTEBOOKS / "10_review_and_paper.ipynb" in FILES
