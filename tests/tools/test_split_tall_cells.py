"""tools/split_tall_cells.py cuts a heading cell too tall for a slide without changing a word or
unfolding a hint; every lesson's hints and Predict answers stay folded."""

from __future__ import annotations

import nbformat
import pytest

from tests.helpers import REPO, load_tool

split_tall_cells = load_tool("split_tall_cells")

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
LONG_LIST = "\n".join(f"{n}. objective number {n}, with enough words to fill most of a line on the projector"
                      for n in range(1, 13))
FOLDED = ("<details><summary>Check your answer</summary>\n\nThe answer, which must stay folded until the "
          "learner opens it.\n\nA second paragraph of the answer.\n\n</details>")


def _words(cells) -> list[str]:
    return " ".join(c.source for c in cells).split()


def test_a_tall_heading_cell_is_cut_into_subslides_with_every_word_kept():
    text = f"## A section\n\nIntroduction.\n\n{LONG_LIST}\n\nMore prose after the list.\n\n{LONG_LIST}"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    assert split_tall_cells.split_tall(nb) >= 1
    assert _words(nb.cells) == text.split()
    assert all(split_tall_cells.SUBSLIDE_TAG in c.metadata.get("tags", []) for c in nb.cells[1:])


def test_a_details_block_is_never_cut():
    text = f"## A section\n\n{LONG_LIST}\n\n{FOLDED}\n\n{LONG_LIST}"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    split_tall_cells.split_tall(nb)
    assert len(nb.cells) > 1
    for cell in nb.cells:
        assert cell.source.count("<details") == cell.source.count("</details>"), (
            f"a piece cuts the folded answer: {cell.source!r}")
    assert _words(nb.cells) == text.split()


def test_a_cell_that_fits_is_left_alone():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"## Short\n\n{FOLDED}")])
    assert split_tall_cells.split_tall(nb) == 0


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_hint_and_answer_of_a_lesson_stays_folded(notebook):
    nb = nbformat.read(notebook, as_version=4)
    broken = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
              and c.source.count("<details") != c.source.count("</details>")]
    assert not broken, f"{notebook.name}: cells {broken} open or close a <details> block the other half of " \
                       "which is in another cell (its text shows unfolded)"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_lessons_are_already_split(notebook):
    nb = nbformat.read(notebook, as_version=4)
    assert split_tall_cells.split_tall(nb) == 0, f"{notebook.name}: run tools/split_tall_cells.py"
