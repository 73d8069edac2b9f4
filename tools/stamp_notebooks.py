"""Stamp every lesson with what lets it launch anywhere and present as slides (part of ``make notebooks``).

One source of truth: the repository's public address is ``[project.urls] Repository`` in
``pyproject.toml`` and the launch ref is the learner release tag ``learner-vVERSION`` (made by
``tools/learner_release.py --branch learner``; Binder rebuilds its image for every new commit of
a branch, so a fixed tag keeps launches fast). From them this tool writes, idempotently:

* in each notebook, an **Open in Colab** link at the end of the first (title) cell, and a first
  code cell that, only inside Google Colab, installs the course library at that tag and turns on
  Colab's widget manager for the explorers; anywhere else the cell does nothing;
* slide metadata (``slideshow.slide_type``, read by jupyterlab-slideshow, nbconvert and RISE): a
  ``#``/``##`` heading starts a slide, a ``###`` heading a sub-slide, the Colab cell is skipped, and every
  other cell carries none, so it continues its slide;
* the README's launch block (between ``<!-- launch:begin -->`` and ``<!-- launch:end -->``): the
  Binder badge (JupyterLab on lesson 00) and the course map with a Colab link per lesson.

``tests/test_launch.py`` fails when a notebook or the README is not stamped as this tool would.

Usage: python tools/stamp_notebooks.py [--check] [notebooks/*.ipynb]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import quote

import nbformat
import tomllib

ROOT = Path(__file__).resolve().parents[1]
COLAB_TAG = "colab-setup"
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
README_BEGIN, README_END = "<!-- launch:begin -->", "<!-- launch:end -->"


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
    if COLAB_TAG in cell.metadata.get("tags", []):
        return "skip"
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
    nb.cells = [cells[0], setup, *cells[1:]]
    for cell in nb.cells:
        kind = slide_type(cell)
        if kind is None:
            cell.metadata.pop("slideshow", None)
        else:
            cell.metadata["slideshow"] = {"slide_type": kind}
    nb.metadata.pop("rise", None)  # no RISE settings: the course presents with jupyterlab-slideshow
    return nb


# ------------------------------------------------------------------------------------ README
def lesson_title(nb: nbformat.NotebookNode) -> str:
    first = nb.cells[0].source.lstrip().split("\n", 1)[0]
    return re.sub(r"^#+\s*", "", first).strip()


def readme_block(notebooks: list[Path], root: Path = ROOT) -> str:
    rows = [
        README_BEGIN,
        f"[![Binder]({BINDER_BADGE})]({binder_url(root=root)}) "
        "opens lesson 00 in JupyterLab on Binder, no install (the learner copy, at the release tag "
        f"`{launch_ref(root)}`: Binder builds an image once per tag, so launches stay fast).",
        "",
        "| lesson | open it here | or in Colab |",
        "|---|---|---|",
    ]
    for path in sorted(notebooks):
        rel = path.resolve().relative_to(root).as_posix()
        title = lesson_title(nbformat.read(path, as_version=4)).replace("|", "\\|")
        rows.append(f"| {path.stem[:2]} | [{title}]({rel}) | [Colab]({colab_url(rel, root)}) |")
    rows.append(README_END)
    return "\n".join(rows)


def stamp_readme(text: str, block: str) -> str:
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"README.md needs the markers {README_BEGIN} and {README_END}")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    return head + block + tail


# ------------------------------------------------------------------------------------ command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if anything is unstamped")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
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
    new_text = stamp_readme(text, readme_block(sorted((ROOT / "notebooks").glob("*.ipynb"))))
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
