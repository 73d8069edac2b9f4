"""pytest-xdist's workers share the suite by the units of tests/helpers/work_units.py: a browser page's checks
together, each case of a long independent test alone, every other file whole."""

from __future__ import annotations

import ast

from tests.helpers import REPO
from tests.helpers.work_units import SPREAD, unit_of


def test_a_pages_checks_are_one_unit_whatever_their_file_and_the_static_pages_one_more():
    walk = unit_of("tests/browser/test_lesson_walk.py::test_every_widget_renders[03_step2_scores-lab]")
    axe = unit_of("tests/browser/test_axe.py::test_axe_finds_no_critical_or_serious_violation"
                  "_in_the_course_content[03_step2_scores-lab]")
    other_front = unit_of("tests/browser/test_axe.py::test_every_widget_renders[03_step2_scores-notebook7]")
    assert walk == axe == "lab-03_step2_scores" and other_front == "notebook7-03_step2_scores"
    assert unit_of("tests/browser/test_offline_pages.py::test_x[04]") == unit_of(
        "tests/browser/test_static_pages_reflow.py::test_y") == "static-pages"


def test_each_case_of_a_spread_test_is_a_unit_and_the_rest_of_its_file_one():
    spread = SPREAD[0]
    path = spread.partition("::")[0]
    assert unit_of(f"{spread}[my_scale]") != unit_of(f"{spread}[my_softmax]")
    assert unit_of(f"{path}::test_another_one") == unit_of(f"{path}::test_a_third[x]") == path
    assert unit_of("tests/core/test_attention.py::test_softmax[3-4]") == "tests/core/test_attention.py"


def test_every_spread_test_exists_and_is_parametrized():
    for entry in SPREAD:
        path, _, name = entry.partition("::")
        tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
        found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
        assert found, f"{entry}: no such test"
        assert any("parametrize" in ast.unparse(d) for d in found[0].decorator_list), f"{entry}: one case"
