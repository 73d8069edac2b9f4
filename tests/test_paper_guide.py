"""The reading guide to Vaswani et al. §3.2 (notebook 10): every equation points at a line that exists."""

from __future__ import annotations

import pytest
from conftest import NOTEBOOKS

from lessons_lib.course import paper_guide as pg


@pytest.mark.parametrize("eq", pg.EQUATIONS, ids=[f"{e.section}-{e.marker[:20]}" for e in pg.EQUATIONS])
def test_each_equation_has_its_line(eq):
    path, number, code = pg.code_line(eq)
    source = (NOTEBOOKS.parent / path).read_text(encoding="utf-8").splitlines()
    assert eq.marker in source[number - 1], f"{path}:{number} is {source[number - 1]!r}"
    assert code == source[number - 1].split("#", 1)[0].strip()


def test_the_guide_covers_section_3_2_and_the_lessons():
    assert {e.section for e in pg.EQUATIONS} == {"3.2.1", "3.2.2", "3.2.3"}
    assert {e.notebook[:2] for e in pg.EQUATIONS} == {"03", "04", "05", "06", "07"}
    table = pg.equation_table()
    assert table.count("\n") == len(pg.EQUATIONS) + 1
    for eq in pg.EQUATIONS:
        assert f"]({eq.notebook})" in table


def test_a_renamed_line_is_reported():
    moved = pg.Equation("3.2.1", "x", "y", "core.attention.scaled_dot_product_attention", "no such code",
                        "03_x.ipynb")
    with pytest.raises(LookupError, match="no line containing 'no such code'"):
        pg.code_line(moved)


def test_paper_sizes():
    assert pg.paper_sizes() == {"d_model": 512, "h": 8, "d_k": 64, "d_v": 64, "sqrt_d_k": 8.0,
                                "score_std_unscaled": 8.0}
    assert pg.paper_sizes(32, 2)["d_k"] == 16


def test_the_guide_as_a_list_in_parts_holds_every_equation():
    first, rest = pg.equation_list(sections=("3.2.1",)), pg.equation_list(sections=("3.2.2", "3.2.3"))
    entries = first.split("\n") + rest.split("\n")
    assert len(entries) == len(pg.EQUATIONS)
    for entry, eq in zip(entries, pg.EQUATIONS):
        path, number, code = pg.code_line(eq)
        assert entry.startswith(f"* **§{eq.section}** ${eq.formula}$")
        assert f"`{path}:{number}`" in entry and f"`{code}`" in entry and f"]({eq.notebook})" in entry
    assert pg.equation_list() == "\n".join(entries)


@pytest.mark.parametrize("bad, error", [("3.2.1", TypeError), (("3.9",), ValueError), ((3.2,), TypeError)])
def test_a_wrong_section_is_explained(bad, error):
    for guide in (pg.equation_table, pg.equation_list):
        with pytest.raises(error, match="section"):
            guide(sections=bad)
