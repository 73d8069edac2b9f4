"""tools/conventions.py: what the tools share, written once (marker blocks, the check call, lessons)."""

from __future__ import annotations

import pytest

from tests.helpers import load_tool

conventions = load_tool("conventions")


def test_a_marker_block_is_replaced_and_nothing_around_it():
    text = "head\n<!-- a:begin -->\nold\n<!-- a:end -->\ntail"
    assert conventions.replace_block(text, "<!-- a:begin -->", "<!-- a:end -->", "new") == (
        "head\n<!-- a:begin -->\nnew\n<!-- a:end -->\ntail")
    replaced = conventions.replace_block("x BEGIN old END y", "BEGIN", "END", "BEGIN new END",
                                         keep_markers=False)
    assert replaced == "x BEGIN new END y"


@pytest.mark.parametrize("text", ["no markers", "<!-- a:end --> <!-- a:begin -->",
                                  "<!-- a:begin --> <!-- a:begin --> <!-- a:end -->"])
def test_missing_doubled_or_swapped_markers_are_refused_naming_the_file(text):
    with pytest.raises(ValueError, match="README.md needs the markers <!-- a:begin --> and <!-- a:end -->"):
        conventions.replace_block(text, "<!-- a:begin -->", "<!-- a:end -->", "new", where="README.md")


@pytest.mark.parametrize(("source", "call"), [
    ("ll.check_softmax(my_softmax)", ("check_softmax", "my_softmax")),
    ("  check_scores(my_scores)\n", ("check_scores", "my_scores")),
    ('ll.check_fits("naive numpy", 100_000)', None),          # a check of the lab, not of an exercise
    ("ll.assert_passes(ll.check_scores(my_scores))", None),     # the graded cell, not the learner's check
])
def test_a_cell_that_is_only_an_exercise_check_is_recognised(source, call):
    assert conventions.check_cell(source) == call


def test_a_notebook_not_in_the_registry_is_refused_with_what_to_do():
    assert conventions.lesson_of("notebooks/07_causal_masking.ipynb").number == "07"
    with pytest.raises(ValueError, match="Adding a lesson"):
        conventions.lesson_of("notebooks/07_causal.ipynb")
