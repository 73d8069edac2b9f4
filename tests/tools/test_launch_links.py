"""Launch links and slide metadata, from one source of truth (tools/stamp_notebooks.py).

The repository's public address lives only in pyproject.toml; the README's Binder badge, the
Colab links and the Colab set-up cell of every lesson, and CITATION.cff are checked against it.
"""

from __future__ import annotations

import sys
import types

import nbformat
import pytest

from tests.helpers import REPO, load_tool

stamp = load_tool("stamp_notebooks")

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_every_notebook_and_the_readme_are_stamped(capsys):
    assert stamp.main(["--check"]) == 0, capsys.readouterr().out


def test_public_address_is_set_once_and_no_placeholder_remains():
    repo = stamp.repository()
    assert "OWNER" not in repo and "REPO" not in repo
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert stamp.binder_url() in readme
    assert "urlpath=lab%2Ftree%2Fnotebooks%2F00_start_here.ipynb" in stamp.binder_url()
    assert f"/{stamp.launch_ref()}?" in stamp.binder_url(), "the badge must point at the release tag"
    for path in [REPO / "README.md", *(REPO / "docs").glob("*.md"), REPO / "CITATION.cff"]:
        assert "OWNER/REPO" not in path.read_text(encoding="utf-8"), path
    citation = (REPO / "CITATION.cff").read_text(encoding="utf-8")
    assert f"https://github.com/{repo}" in citation
    assert f'version: "{stamp.project()["version"]}"' in citation


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_lesson_has_a_colab_link_and_slide_metadata(path):
    nb = nbformat.read(path, as_version=4)
    rel = path.relative_to(REPO).as_posix()
    assert stamp.colab_url(rel) in nb.cells[0].source
    setup = [c for c in nb.cells if stamp.COLAB_TAG in c.metadata.get("tags", [])]
    assert len(setup) == 1 and nb.cells[1] is setup[0]
    types_ = [c.metadata.get("slideshow", {}).get("slide_type") for c in nb.cells]
    assert types_[0] == "slide" and types_[1] == "skip"
    assert set(types_) <= {"slide", "subslide", "skip", "notes", None}, (
        "a continuing cell carries no slide type (jupyterlab-slideshow hides cells marked '-'); "
        "long prose goes to speaker notes")
    assert types_.count("slide") >= 3, "a lesson presents as several slides (its ## sections)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_lesson_shows_an_image_from_another_site(path):
    """Markdown images from the web would be fetched by every front end: the course runs offline."""
    import re

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            remote = re.findall(r"!\[[^\]]*\]\((https?://[^)]+)\)|<img[^>]+src=[\"'](https?://[^\"']+)",
                                cell.source)
            assert not remote, f"{path.name} shows an image from the web: {remote}"


class FakeIPython:
    def __init__(self):
        self.calls = []

    def run_line_magic(self, name, line):
        self.calls.append((name, line))


def run_colab_cell(in_colab: bool):
    """Run the Colab set-up cell with a stand-in for google.colab; return (pip calls, widget manager on?)."""
    ipython, enabled = FakeIPython(), []
    fake = {}
    if in_colab:
        output = types.SimpleNamespace(enable_custom_widget_manager=lambda: enabled.append(True))
        colab = types.ModuleType("google.colab")
        colab.output = output
        google = types.ModuleType("google")
        google.colab = colab
        fake = {"google": google, "google.colab": colab, "google.colab.output": output}
    saved = {k: sys.modules.get(k) for k in fake}
    sys.modules.update(fake)
    try:
        exec(stamp.colab_cell_source(), {"get_ipython": lambda: ipython})
    finally:
        for key, module in saved.items():
            if module is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = module
    return ipython.calls, bool(enabled)


def test_colab_cell_installs_the_course_at_the_release_tag_only_in_colab():
    calls, enabled = run_colab_cell(in_colab=True)
    assert enabled, "Colab needs its custom widget manager for the anywidget explorers"
    assert len(calls) == 1 and calls[0][0] == "pip"
    assert f"git+https://github.com/{stamp.repository()}@{stamp.launch_ref()}" in calls[0][1]
    assert run_colab_cell(in_colab=False) == ([], False)


def test_classroom_guide_gives_the_nbgitpuller_link_of_this_repository():
    guide = (REPO / "docs/classroom.md").read_text(encoding="utf-8")
    block = guide.split("<!-- nbgitpuller:begin -->")[1].split("<!-- nbgitpuller:end -->")[0]
    assert stamp.nbgitpuller_url("https://hub.example.edu") in block
    assert f"--ref {stamp.launch_ref()}" in guide and f"tag: {stamp.launch_ref()}" in guide


def test_every_relative_link_and_image_of_the_readme_and_docs_exists():
    import re

    for doc in [REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            path = (doc.parent / target.split("#")[0]).resolve()
            assert path.exists(), f"{doc.name} links to {target}, which does not exist"
