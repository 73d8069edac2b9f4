"""The learner copy (``make learner``): solutions out, answers cleared, and it still runs.

The source notebooks hold each exercise's solution between ``### BEGIN SOLUTION`` and
``### END SOLUTION``; tools/learner_release.py replaces them. The checks compare a learner's code
with lessons_lib's reference functions, so the learner copy runs top to bottom without them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest
from conftest import load_tool

ROOT = Path(__file__).resolve().parents[1]
lr = load_tool("learner_release")
conventions = load_tool("conventions")
CHECK_CALL, GRADED_TAG = conventions.CHECK_CALL, conventions.GRADED_TAG

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_strip_solutions_keeps_indentation_and_the_code_around():
    source = ("def f(x):\n    # a comment the learner keeps\n    ### BEGIN SOLUTION\n    y = x + 1\n"
              "    return y\n    ### END SOLUTION\n\nprint('after')")
    text, count = lr.strip_solutions(source)
    assert count == 1
    assert text == ("def f(x):\n    # a comment the learner keeps\n"
                    '    raise NotImplementedError("your code here")\n\nprint(\'after\')')


def test_a_region_may_name_the_line_the_learner_starts_from():
    source = ("### BEGIN SOLUTION; learner starts from: q = np.zeros(4)  # edit me\n"
              "q = np.array([0, 8, 0, 0])\n### END SOLUTION\nshow(q)")
    assert lr.strip_solutions(source) == ("q = np.zeros(4)  # edit me\nshow(q)", 1)
    with pytest.raises(lr.SolutionMarkerError, match="learner starts from"):
        lr.strip_solutions("### BEGIN SOLUTION here\n### END SOLUTION\n")


def test_strip_solutions_handles_several_regions_and_none():
    two = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = 2\n### BEGIN SOLUTION\nc = 3\n### END SOLUTION\n"
    text, count = lr.strip_solutions(two)
    assert count == 2 and text.count("NotImplementedError") == 2 and "b = 2" in text and "c = 3" not in text
    assert lr.strip_solutions("x = 1") == ("x = 1", 0)


@pytest.mark.parametrize("broken", [
    "### BEGIN SOLUTION\nx = 1\n",
    "x = 1\n### END SOLUTION\n",
    "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n",
])
def test_unbalanced_markers_are_refused_with_the_place(broken):
    with pytest.raises(lr.SolutionMarkerError, match="line|never closed"):
        lr.strip_solutions(broken, "03_x.ipynb, cell 7")


def test_learner_notebook_clears_answers_and_feedback_only():
    nb = nbformat.v4.new_notebook()
    out = [nbformat.v4.new_output("stream", text="shown\n")]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("print('figure')", outputs=list(out)),
        nbformat.v4.new_markdown_cell("> **Predict.** what comes out?"),
        nbformat.v4.new_code_cell("print('the answer')", outputs=list(out)),
        nbformat.v4.new_code_cell("def my_softmax():\n    ### BEGIN SOLUTION\n    return 1\n"
                                  "    ### END SOLUTION",
                                  outputs=list(out)),
        nbformat.v4.new_code_cell("ll.check_softmax(my_softmax)", outputs=list(out)),
        nbformat.v4.new_code_cell("print('later')", outputs=list(out)),
    ]
    learner, removed = lr.learner_notebook(nb)
    assert removed == 1
    kept = [bool(c.get("outputs")) for c in learner.cells if c.cell_type == "code"]
    assert kept == [True, False, False, False, True]
    assert nb.cells[4].outputs, "the source notebook itself is not changed"


def test_source_notebooks_hold_a_solution_for_every_exercise():
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = [c.source for c in nb.cells
                if c.cell_type == "code" and GRADED_TAG not in c.metadata.get("tags", [])]
        checks = sum(bool(CHECK_CALL.search(s)) for s in code)
        regions = sum(s.count(lr.BEGIN) for s in code)
        assert regions >= checks, f"{path.name}: {checks} checks but only {regions} solution regions"
        assert not any(lr.PLACEHOLDER in s for s in code), (
            f"{path.name}: the source notebook keeps solutions; the learner copy gets the placeholder")


def test_the_package_ships_no_solutions():
    assert importlib.util.find_spec("lessons_lib.solutions") is None


@pytest.mark.kernel
@pytest.mark.slow
def test_learner_copy_runs_top_to_bottom_without_solutions(tmp_path):
    from nbclient import NotebookClient

    lr.release(tmp_path)
    assert not (tmp_path / "tests").exists() and not (tmp_path / "docs/teaching.md").exists()
    for path in sorted((tmp_path / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        text = "".join(c.source for c in nb.cells)
        assert lr.BEGIN not in text and lr.END not in text
        if not CHECK_CALL.search(text):
            continue  # no exercise: nothing differs from the source notebook, which nbval runs
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        feedback = "".join(str(o.get("data", {}).get("text/html", o.get("text", "")))
                           for c in nb.cells if CHECK_CALL.search(c.source) for o in c.outputs)
        assert feedback and "Traceback" not in feedback, path.name
        assert "not attempted" in feedback.lower(), f"{path.name}: {feedback[:300]}"


def test_the_prose_that_answers_a_prediction_is_folded_until_opened():
    nb = nbformat.v4.new_notebook()
    out = [nbformat.v4.new_output("stream", text="0.28\n")]
    nb.cells = [
        nbformat.v4.new_markdown_cell("**Predict:** which word gets the most weight?"),
        nbformat.v4.new_code_cell("print(weights)", outputs=list(out)),
        nbformat.v4.new_markdown_cell("*Figure: 'animal' gets 0.28, the most.*\n\n**Predict:** and at ×3?\n"),
        nbformat.v4.new_code_cell("print(louder)", outputs=list(out)),
        nbformat.v4.new_markdown_cell("It concentrates.\n## 2 · Next section\nText."),
        nbformat.v4.new_markdown_cell("Not an answer: stays as it is."),
    ]
    learner, _ = lr.learner_notebook(nb)
    first, second, last = learner.cells[2].source, learner.cells[4].source, learner.cells[5].source
    assert first.startswith("<details><summary>") and "0.28" in first.split("</details>")[0]
    assert "**Predict:** and at ×3?" in first.split("</details>")[1], "the next prompt stays visible"
    assert not learner.cells[3].outputs, "the second prompt is found after the fold"
    assert "It concentrates." in second.split("</details>")[0] and "## 2 · Next section" in second.split(
        "</details>")[1]
    assert last == "Not an answer: stays as it is."
    assert nb.cells[2].source.startswith("*Figure"), "the source notebook itself is not changed"


def test_in_every_learner_notebook_the_prose_after_a_prediction_cell_is_folded():
    for path in NOTEBOOKS:
        source = nbformat.read(path, as_version=4)
        learner, _ = lr.learner_notebook(source, path.name)
        kept = [c for c in source.cells if GRADED_TAG not in c.metadata.get("tags", [])]
        for i, (src, cell) in enumerate(zip(kept[:-1], learner.cells)):
            answered = (cell.cell_type == "code" and src.outputs and not cell.outputs
                        and not CHECK_CALL.search(src.source) and lr.BEGIN not in src.source)
            following = learner.cells[i + 1]
            if answered and following.cell_type == "markdown":
                head = following.source.lstrip()
                assert head.startswith(("<details>", "#")) or lr._PREDICT.search(head.splitlines()[0]), (
                    f"{path.name}, cell {i + 1}: the answer is visible: {head[:80]!r}")


def test_learner_copy_drops_the_graded_test_cells():
    """nbgrader's graded cells raise until an exercise is solved; the self-study copy has the checks."""
    for path in NOTEBOOKS:
        learner, _ = lr.learner_notebook(nbformat.read(path, as_version=4), path.name)
        assert not [c for c in learner.cells if GRADED_TAG in c.metadata.get("tags", [])], path.name
        assert not any("HIDDEN TESTS" in c.source for c in learner.cells), path.name
