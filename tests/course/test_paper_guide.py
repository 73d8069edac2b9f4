"""The reading guide to Vaswani et al. §3.2 (notebook 10): every equation points at a line that exists."""

from __future__ import annotations

import pytest

from lessons_lib.course import paper_guide as pg
from tests.helpers import NOTEBOOKS


@pytest.mark.parametrize("eq", pg.EQUATIONS, ids=[f"{e.section}-{e.markers[0][:20]}" for e in pg.EQUATIONS])
def test_each_equation_has_its_lines(eq):
    path, found = pg.code_lines(eq)
    source = (NOTEBOOKS.parent / path).read_text(encoding="utf-8").splitlines()
    assert len(found) == len(eq.markers)
    for marker, (number, code) in zip(eq.markers, found):
        assert marker in source[number - 1], f"{path}:{number} is {source[number - 1]!r}"
        assert code == source[number - 1].split("#", 1)[0].strip()
    assert [n for n, _ in found] == sorted(n for n, _ in found), "the lines are shown in the order they run"
    assert pg.code_line(eq) == (path, *found[0])


#: the step functions the lessons taught by name: a line that calls one of them reads as the lesson did
TAUGHT = ("attention_scores", "attention_weights", "weighted_values", "project_qkv", "split_heads",
          "merge_heads", "scaled_dot_product_attention", "softmax(")


@pytest.mark.parametrize("eq", pg.EQUATIONS, ids=[f"{e.section}-{e.markers[0][:20]}" for e in pg.EQUATIONS])
def test_each_line_the_guide_shows_reads_as_the_formula(eq):
    """A learner reading the guide sees the arithmetic (numpy's operators and functions) or a step the lessons
    taught by name, never only a call of an internal helper such as softmax_in_place(out, axis)."""
    _, found = pg.code_lines(eq)
    for number, code in found:
        arithmetic = any(op in code for op in (" @ ", " / ", " * ", "-=", "/=", "np."))
        assert arithmetic or any(name in code for name in TAUGHT), (
            f"line {number} of {eq.function}, {code!r}, shows neither the arithmetic of {eq.formula!r} "
            "nor a step the lessons taught: point the guide at the lines that compute it")
        assert "_in_place(" not in code, f"{code!r} hides the formula in a helper"


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
        path, found = pg.code_lines(eq)
        assert entry.startswith(f"* **§{eq.section}** ${eq.formula}$")
        assert f"`{path}:{found[0][0]}" in entry and f"]({eq.notebook})" in entry
        assert all(f"`{code}`" in entry for _, code in found)
    assert pg.equation_list() == "\n".join(entries)


@pytest.mark.parametrize("bad, error", [("3.2.1", TypeError), (("3.9",), ValueError), ((3.2,), TypeError)])
def test_a_wrong_section_is_explained(bad, error):
    for guide in (pg.equation_table, pg.equation_list):
        with pytest.raises(error, match="section"):
            guide(sections=bad)


def test_the_guide_points_at_the_attention_steps_never_at_a_validator():
    """Issue 55: √d_k was shown in the argument checks (``_checks.check_scale``), not where attention
    divides by it."""
    for eq in pg.EQUATIONS:
        assert not any(part.startswith("_") for part in eq.function.split(".")), eq.function
        assert eq.function.split(".")[0] == "core", eq.function
