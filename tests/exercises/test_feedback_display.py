"""The feedback box as a notebook shows it: words, not only colour, and every text escaped."""

from __future__ import annotations

from lessons_lib.exercises import Feedback, check_softmax
from tests.helpers import solutions
from tests.helpers.wrong_answers import softmax_axis0


def test_feedback_renders_html_with_words_not_only_colour():
    passed, failed = check_softmax(solutions.my_softmax), check_softmax(softmax_axis0)
    assert "✓ PASSED" in passed._repr_html_() and "#1a7f37" in passed._repr_html_()
    assert "✗ NOT YET" in failed._repr_html_() and "Hint:" in failed._repr_html_()
    assert "<details" in failed._repr_html_() and "<details" not in passed._repr_html_()
    assert str(failed).startswith("✗ NOT YET: my_softmax")


def test_feedback_html_is_escaped():
    feedback = Feedback("my_softmax", "failed", "x < y & <script>", hint="a<b")
    page = feedback._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page and "a&lt;b" in page
