"""Split every heading cell too tall for one projector slide into cells that fit (then stamp the notebooks).

Slide metadata cannot cut a cell: a title cell with a long list of objectives, or a long Takeaways
list, would scroll on the projector however the slides are cut. This tool cuts such a heading cell
(one estimated above :data:`SPLIT_ABOVE_PX`; long prose without a heading goes to the speaker notes
anyway) at its
paragraph boundaries (a blank line), or between the items of a list when one list alone is too
tall, filling each piece up to :data:`BUDGET_PX` of the projector's height (estimated as
``stamp_notebooks.estimated_height`` does). Every piece after the first is tagged ``own-subslide``,
so it opens a sub-slide of the same section and stays on screen (never speaker notes). The words are
moved, never changed; code cells and outputs are left alone. A lesson's first cell keeps its title,
its ⏱ line and the formula (the Colab link, which ``stamp_notebooks.py`` appends, is left to it).

A code cell cannot be split (nbval compares its source and outputs): one too tall for the screen
carries a presenting zoom instead (75% at the least), set as jupyterlab-slideshow's design tools
set it, in the cell's ``@deathbeds/jupyterlab-fonts`` metadata (jupyterlab-fonts applies it).

Re-runnable: a cell that fits is left as it is. Usage: python tools/split_tall_cells.py [notebooks/*.ipynb]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conventions import SUBSLIDE_TAG
from stamp_notebooks import SLIDE_SIZE, estimated_height

ROOT = Path(__file__).resolve().parents[1]
#: A heading cell estimated taller than the screen is split (the estimate runs a little above what
#: JupyterLab lays out presenting at the projector font: title cells estimated at 806-840 px stood
#: 741-791 px there, one estimated at 704 px fit; tests/browser/test_slides.py presents every lesson) ...
SPLIT_ABOVE_PX = SLIDE_SIZE[1]
#: ... into pieces estimated within this.
BUDGET_PX = 0.85 * SLIDE_SIZE[1]
_ITEM = re.compile(r"^(?:[-*]|\d+\.) ")
_LEAD = re.compile(r"[^\n]*(?:\*\*|:)")


def _height(text: str) -> float:
    return estimated_height(nbformat.v4.new_markdown_cell(text))


def paragraphs(text: str) -> list[str]:
    """``text`` split at blank lines, but never inside a ``<details>`` block: a hint or a Predict answer
    stays folded in one piece (cut in two, its text would show unfolded under a stray ``</details>``)."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text.strip("\n")):
        if out and out[-1].count("<details") > out[-1].count("</details>"):
            out[-1] += "\n\n" + para
        else:
            out.append(para)
    return out


def blocks(text: str) -> list[str]:
    """The cell's paragraphs, each too-tall list (outside a ``<details>`` block) split between its items."""
    out = []
    for para in paragraphs(text):
        if _height(para) <= BUDGET_PX or "<details" in para:
            out.append(para)
            continue
        piece: list[str] = []
        for line in para.split("\n"):
            if _ITEM.match(line) and piece and any(_ITEM.match(ln) for ln in piece):
                out.append("\n".join(piece))
                piece = []
            piece.append(line)
        out.append("\n".join(piece))
    return out


def pieces(text: str) -> list[str]:
    """``text`` cut into runs of whole blocks, each estimated within :data:`BUDGET_PX` where it can be.

    Blocks that were one paragraph (a list cut between its items) are joined again by a newline,
    so the list renders as before; blocks that were paragraphs keep their blank line."""
    runs: list[list[str]] = [[]]
    for block in blocks(text):
        if runs[-1] and _height("\n\n".join(runs[-1] + [block])) > BUDGET_PX:
            lead = runs[-1][-1]  # a one-line lead-in ("**By the end ... you can**") goes with what it leads
            runs.append([runs[-1].pop()] if len(runs[-1]) > 1 and _LEAD.fullmatch(lead) else [])
        runs[-1].append(block)
    return [_join(run, text) for run in runs]


def _join(run: list[str], text: str) -> str:
    joined = run[0]
    for block in run[1:]:
        joined += ("\n\n" if "\n\n" + block in text or "\n \n" + block in text else "\n") + block
    return joined


def split_tall(nb: nbformat.NotebookNode) -> int:
    """Split ``nb``'s too-tall markdown cells in place; return how many cells were added."""
    cells, added = [], 0
    for index, cell in enumerate(nb.cells):
        if (cell.cell_type != "markdown" or not cell.source.lstrip().startswith("#")
                or _height(cell.source) <= SPLIT_ABOVE_PX):
            cells.append(cell)
            continue
        text = cell.source
        if index == 0:  # the Colab link is stamp_notebooks.py's: it re-appends it to the first piece
            text = "\n".join(ln for ln in text.split("\n") if not ln.startswith("[Open in Colab]("))
        parts = pieces(text)
        cell.source = parts[0]
        cells.append(cell)
        for part in parts[1:]:
            cells.append(nbformat.v4.new_markdown_cell(part, metadata={"tags": [SUBSLIDE_TAG]}))
            added += 1
    nb.cells = cells
    return added


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or sorted(
        (ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if added := split_tall(nb):
            nbformat.write(nb, path)
            print(f"{path.name}: {added} cell(s) split off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
