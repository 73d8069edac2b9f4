"""The learner copy (``make learner``): solutions out, answers cleared, and it still runs.

The source notebooks hold each exercise's solution between ``### BEGIN SOLUTION`` and
``### END SOLUTION``; tools/learner_release.py replaces them. The checks compare a learner's code
with lessons_lib's reference functions, so the learner copy runs top to bottom without them.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool

lr = load_tool("learner_release")
copy_rules = load_tool("learner_copy")
conventions = load_tool("conventions")
CHECK_CALL, GRADED_TAG = conventions.CHECK_CALL, conventions.GRADED_TAG

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_strip_solutions_keeps_indentation_and_the_code_around():
    source = ("def f(x):\n    # a comment the learner keeps\n    ### BEGIN SOLUTION\n    y = x + 1\n"
              "    return y\n    ### END SOLUTION\n\nprint('after')")
    text, count = copy_rules.strip_solutions(source)
    assert count == 1
    assert text == ("def f(x):\n    # a comment the learner keeps\n"
                    '    raise NotImplementedError("your code here")\n\nprint(\'after\')')


def test_a_region_may_name_the_line_the_learner_starts_from():
    source = ("### BEGIN SOLUTION; learner starts from: q = np.zeros(4)  # edit me\n"
              "q = np.array([0, 8, 0, 0])\n### END SOLUTION\nshow(q)")
    assert copy_rules.strip_solutions(source) == ("q = np.zeros(4)  # edit me\nshow(q)", 1)
    with pytest.raises(copy_rules.SolutionMarkerError, match="learner starts from"):
        copy_rules.strip_solutions("### BEGIN SOLUTION here\n### END SOLUTION\n")


def test_strip_solutions_handles_several_regions_and_none():
    two = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = 2\n### BEGIN SOLUTION\nc = 3\n### END SOLUTION\n"
    text, count = copy_rules.strip_solutions(two)
    assert count == 2 and text.count("NotImplementedError") == 2 and "b = 2" in text and "c = 3" not in text
    assert copy_rules.strip_solutions("x = 1") == ("x = 1", 0)


@pytest.mark.parametrize("broken", [
    "### BEGIN SOLUTION\nx = 1\n",
    "x = 1\n### END SOLUTION\n",
    "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n",
])
def test_unbalanced_markers_are_refused_with_the_place(broken):
    with pytest.raises(copy_rules.SolutionMarkerError, match="line|never closed"):
        copy_rules.strip_solutions(broken, "03_x.ipynb, cell 7")


ANSWER = "<details><summary>Check your answer</summary>\n\nIt is 0.28.\n</details>"


def test_learner_notebook_clears_answers_and_feedback_only():
    nb = nbformat.v4.new_notebook()
    out = [nbformat.v4.new_output("stream", text="shown\n")]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("print('figure')", outputs=list(out)),
        nbformat.v4.new_markdown_cell("> **Predict.** what comes out?"),
        nbformat.v4.new_code_cell("print('the answer')", outputs=list(out)),
        nbformat.v4.new_markdown_cell("The story goes on: now the whole matrix."),
        nbformat.v4.new_code_cell("print('the answer, again')", outputs=list(out)),
        nbformat.v4.new_markdown_cell(ANSWER + "\n\nAnd the story goes on."),
        nbformat.v4.new_code_cell("def my_softmax():\n    ### BEGIN SOLUTION\n    return 1\n"
                                  "    ### END SOLUTION",
                                  outputs=list(out)),
        nbformat.v4.new_code_cell("ll.check_softmax(my_softmax)", outputs=list(out)),
        nbformat.v4.new_code_cell("print('later')", outputs=list(out)),
    ]
    learner, removed = copy_rules.learner_notebook(nb)
    assert removed == 1
    kept = [bool(c.get("outputs")) for c in learner.cells if c.cell_type == "code"]
    assert kept == [True, False, False, False, False, True]
    assert learner.cells[4].source == nb.cells[4].source, "the story between prompt and answer is not folded"
    assert nb.cells[7].outputs, "the source notebook itself is not changed"


def test_a_prediction_without_an_answer_is_refused_with_its_place():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("**Predict:** which word wins?"),
                nbformat.v4.new_code_cell("print(1)"),
                nbformat.v4.new_markdown_cell("**Predict:** and now?\n\n" + ANSWER)]
    with pytest.raises(copy_rules.PredictionError, match="03_x.ipynb, cell 0: .*Check your answer"):
        copy_rules.learner_notebook(nb, "03_x.ipynb")


def test_a_prompt_is_a_line_that_opens_with_predict_not_a_mention_of_it():
    cells = [nbformat.v4.new_markdown_cell("| **Predict:** (in bold) | stop and guess |\n\n"
                                           "* each lesson: **predict** first"),
             nbformat.v4.new_markdown_cell("> **Predict.** this one\n\n" + ANSWER)]
    assert copy_rules.prediction_spans(cells) == [(1, 1)]


def test_a_caption_of_a_cleared_output_is_folded_and_the_story_after_it_is_not():
    nb = nbformat.v4.new_notebook()
    out = [nbformat.v4.new_output("stream", text="0.28\n")]
    nb.cells = [
        nbformat.v4.new_markdown_cell("**Predict:** which word gets the most weight?"),
        nbformat.v4.new_code_cell("plot(weights)", outputs=list(out)),
        nbformat.v4.new_markdown_cell("*Figure: 'animal' gets 0.28, the most.*\n\n"
                                      "How to read it: pick a row."),
        nbformat.v4.new_code_cell("print(louder)", outputs=list(out)),
        nbformat.v4.new_markdown_cell(ANSWER),
        nbformat.v4.new_code_cell("print(check)", outputs=list(out)),
        nbformat.v4.new_markdown_cell("*Figure: right under the answer, on the screen with it.*"),
        nbformat.v4.new_code_cell("print(after)", outputs=list(out)),
        nbformat.v4.new_markdown_cell("*Figure: after the answer: stays as it is.*"),
    ]
    learner, _ = copy_rules.learner_notebook(nb)
    caption, rest = learner.cells[2].source.split("</details>")
    assert caption.startswith(f"<details><summary>{copy_rules.REVEAL}</summary>") and "0.28" in caption
    assert rest.strip() == "How to read it: pick a row."
    assert not learner.cells[5].outputs and learner.cells[6].source.startswith("<details><summary>")
    assert learner.cells[8].source == nb.cells[8].source and learner.cells[7].outputs
    assert nb.cells[2].source.startswith("*Figure"), "the source notebook itself is not changed"


# ------------------------------------------------------------ the lessons, as the learner copy holds them
def _learner(path: Path):
    source = nbformat.read(path, as_version=4)
    kept = [c for c in source.cells if GRADED_TAG not in c.metadata.get("tags", [])]
    return kept, copy_rules.learner_notebook(source, path.name)[0]


def _text_of_outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append("".join(out.get("text", "")))
        parts += ["".join(v) for k, v in out.get("data", {}).items() if k.startswith("text/")]
    return "\n".join(parts)


def _visible(markdown: str) -> str:
    """What a reader sees of a markdown cell before opening any fold."""
    return re.sub(r"<details>.*?</details>", " ", markdown, flags=re.S)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem[:2])
def test_no_output_stands_between_a_prediction_and_its_answer_in_the_learner_copy(path):
    source, learner = _learner(path)
    spans = copy_rules.prediction_spans(learner.cells, path.name)
    for prompt, answer in spans:
        assert conventions.ANSWER_FOLD.search(learner.cells[answer].source), (path.name, answer)
        shown = [i for i in range(prompt + 1, answer) if learner.cells[i].get("outputs")]
        assert not shown, f"{path.name}: the answer to the prompt of cell {prompt} is shown in cells {shown}"
    if path.stem[:2] != "10":
        assert spans, f"{path.name} asks the learner to predict nothing"


def _first_code_after(cells, index):
    return next((i for i in range(index + 1, len(cells)) if cells[i].cell_type == "code"), None)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem[:2])
def test_the_cell_right_under_an_answer_holds_no_output_in_the_learner_copy(path):
    """The answer fold is closed, but the code cell under it is on the screen with it: its saved output
    (05's check of the hand computation, 11's PE(10)·PE(15) = PE(40)·PE(45), 12's published caches, 09's
    quiz) would be read while the learner still predicts."""
    _, learner = _learner(path)
    shown = []
    for _, answer in copy_rules.prediction_spans(learner.cells, path.name):
        after = _first_code_after(learner.cells, answer)
        if after is not None and learner.cells[after].get("outputs"):
            shown.append(after)
    assert not shown, f"{path.name}: the cells right under an answer keep their outputs: {shown}"


def test_the_cell_under_an_answer_is_cleared_and_the_one_after_it_kept():
    out = [nbformat.v4.new_output("stream", text="shown\n")]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("**Predict.** what comes out?"),
                nbformat.v4.new_code_cell("print(1)", outputs=out),
                nbformat.v4.new_markdown_cell(ANSWER + "\n\nThe check:"),
                nbformat.v4.new_markdown_cell("## 2 · Next"),
                nbformat.v4.new_code_cell("print(2)", outputs=out),
                nbformat.v4.new_code_cell("print(3)", outputs=out)]
    assert copy_rules.predicted_cells(nb.cells) == {1, 4}
    learner, _ = copy_rules.learner_notebook(nb)
    assert [len(c.get("outputs", [])) for c in learner.cells] == [0, 0, 0, 0, 0, 1]
    page, _ = copy_rules.learner_notebook(nb, page=True)
    assert [copy_rules.PREDICTED_TAG in c.metadata.get("tags", []) for c in page.cells] == [
        False, True, False, False, True, False]


def test_the_lessons_ask_predictions_whose_answers_the_source_shows():
    """The test above can fail: between prompt and answer the teacher's copy does hold outputs."""
    hidden = 0
    for path in NOTEBOOKS:
        source, learner = _learner(path)
        for prompt, answer in copy_rules.prediction_spans(learner.cells, path.name):
            hidden += sum(bool(source[i].get("outputs")) for i in range(prompt + 1, answer))
    assert hidden >= 20, hidden


NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?!\d)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem[:2])
def test_the_prose_a_learner_sees_before_an_answer_quotes_none_of_the_outputs_it_hides(path):
    """A caption or a sentence between a prompt and its answer that quotes a hidden output gives the answer
    away."""
    source, learner = _learner(path)
    leaks = []
    for prompt, answer in copy_rules.prediction_spans(learner.cells, path.name):
        seen = {n for cell in source[:prompt + 1] for n in NUMBER.findall(_text_of_outputs(cell))}
        # a measurement's numbers (cells tagged nbval-ignore-output) change from run to run: no prose quotes
        # them, and one that matches a sentence's number does so by chance
        between = [c for c in source[prompt + 1:answer]
                   if "nbval-ignore-output" not in c.metadata.get("tags", [])]
        hidden = {n for cell in between for n in NUMBER.findall(_text_of_outputs(cell))} - seen
        for index in range(prompt + 1, answer + 1):
            if learner.cells[index].cell_type == "markdown":
                visible = NUMBER.findall(_visible(learner.cells[index].source))
                leaks += [(index, n) for n in visible if n in hidden]
    assert not leaks, f"{path.name}: visible before their answer (cell, number): {leaks}"


FOLDS = re.compile(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", re.S)
#: what a fold may hide: a prediction's answer, an exercise's hint or solution, the caption of a cleared
#: output
FOLD_KINDS = (conventions.ANSWER_SUMMARY, "Hint", "A solution", copy_rules.REVEAL)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem[:2])
def test_folds_hide_answers_hints_and_captions_only_never_the_story(path):
    _, learner = _learner(path)
    for index, cell in enumerate(learner.cells):
        if cell.cell_type != "markdown":
            continue
        for summary, body in FOLDS.findall(cell.source):
            where = f"{path.name}, cell {index}, fold {summary[:30]!r}"
            assert summary.startswith(FOLD_KINDS), f"{where}: a fold of no known kind"
            assert not re.search(r"^#", body, re.M) and not conventions.PREDICT.search(body), (
                f"{where}: a heading or a prompt is folded away")
            if summary == copy_rules.REVEAL:
                paragraphs = re.split(r"\n\s*\n", body.strip())
                assert all(copy_rules.is_caption(p) for p in paragraphs), f"{where}: not a caption"
        last = cell.source.rstrip()
        follows = learner.cells[index + 1].cell_type if index + 1 < len(learner.cells) else None
        if last.endswith("</details>") and follows == "code":
            body = FOLDS.findall(cell.source)[-1][1].rstrip()
            assert not body.endswith(":"), (
                f"{path.name}, cell {index}: the fold hides the lead-in to the next cell")


# ------------------------------------------------------------ the learner copy read as a learner reads it
#: a path the lessons may name that the learner copy need not hold: make lab makes workspace/
MADE_BY_MAKE_LAB = ("workspace/",)
PATH = re.compile(r"(?<![\w/.])((?:\.ci|benchmarks|binder|docs|lessons_lib|notebooks|tests|tools|workspace)"
                  r"/[\w./-]*)")
LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)\s#]+)")
#: sentences that point at the teacher's material: a worked solution in the code, the folder the lesson is in
#: (in make lab's copy it is workspace/, on a hub a clone's notebooks/)
TEACHERS_MATERIAL = re.compile(r"worked solution|solution (?:above|below|cell)|"
                               r"(?:holds|contains|is in) this notebook|this notebook's folder|"
                               r"folder (?:that|which) holds this", re.I)


@pytest.fixture(scope="module")
def learner_copy(tmp_path_factory) -> Path:
    """The learner copy as ``make learner`` writes it, once per module (once per pytest-xdist worker that
    runs a case of a test spread over the workers)."""
    out = tmp_path_factory.mktemp("learner")
    lr.release(out)
    return out


@pytest.mark.subprocess
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem[:2])
def test_every_sentence_of_the_learner_copy_points_at_material_it_holds(learner_copy, path):
    nb = nbformat.read(learner_copy / "notebooks" / path.name, as_version=4)
    wrong = []
    for index, cell in enumerate(nb.cells):
        text = cell.source if cell.cell_type == "markdown" else ""
        for name in PATH.findall(text):
            if not name.startswith(MADE_BY_MAKE_LAB) and not (learner_copy / name.rstrip(".")).exists():
                wrong.append(f"cell {index}: {name} is not in the learner copy")
        for target in LINK.findall(text):
            if not (learner_copy / "notebooks" / target).exists():
                wrong.append(f"cell {index}: the link {target} leads nowhere in the learner copy")
        for phrase in TEACHERS_MATERIAL.findall(text):
            wrong.append(f"cell {index}: {phrase!r} points at the teacher's copy")
    assert not wrong, f"{path.name}: " + "; ".join(wrong)


@pytest.mark.subprocess
def test_the_learner_copy_holds_the_benchmark_lesson_08_asks_a_learner_to_run(learner_copy):
    assert (learner_copy / "benchmarks" / "gpu_sdpa.py").exists()
    assert not (learner_copy / "benchmarks" / "attention.py").exists()
    assert not (learner_copy / "tests").exists()


def test_the_check_of_teachers_material_finds_the_sentences_it_is_for():
    for sentence in ('With the worked solution above, "street" gets 0.83.',
                     "beside the folder `notebooks/`, which holds this notebook",
                     "(see the solution cell)"):
        assert TEACHERS_MATERIAL.search(sentence), sentence
    assert not TEACHERS_MATERIAL.search("the one in the fold below gives it 0.83")


def test_source_notebooks_hold_a_solution_for_every_exercise():
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = [c.source for c in nb.cells
                if c.cell_type == "code" and GRADED_TAG not in c.metadata.get("tags", [])]
        checks = sum(bool(CHECK_CALL.search(s)) for s in code)
        regions = sum(s.count(conventions.SOLUTION_BEGIN) for s in code)
        assert regions >= checks, f"{path.name}: {checks} checks but only {regions} solution regions"
        assert not any(copy_rules.PLACEHOLDER in s for s in code), (
            f"{path.name}: the source notebook keeps solutions; the learner copy gets the placeholder")


def test_the_package_ships_no_solutions():
    assert importlib.util.find_spec("lessons_lib.solutions") is None


@pytest.mark.subprocess
def test_the_learner_copy_holds_no_solution_marker_no_tests_and_no_teachers_guide(learner_copy):
    assert not (learner_copy / "tests").exists() and not (learner_copy / "docs/teaching.md").exists()
    for path in sorted((learner_copy / "notebooks").glob("*.ipynb")):
        text = "".join(c.source for c in nbformat.read(path, as_version=4).cells)
        assert conventions.SOLUTION_BEGIN not in text and conventions.SOLUTION_END not in text, path.name


#: the lessons with an exercise: in the others nothing differs from the source notebook, which nbval runs
WITH_EXERCISES = [path.name for path in NOTEBOOKS if CHECK_CALL.search(path.read_text(encoding="utf-8"))]


@pytest.mark.kernel
@pytest.mark.unix_sockets
@pytest.mark.slow
@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_learner_copy_runs_top_to_bottom_without_solutions(name, learner_copy, tmp_path_factory):
    """Each case a unit of work of its own (tests/helpers/work_units.py's SPREAD): a lesson runs for 4 to
    17 s here, and the eleven lessons with an exercise in one test made a unit of about 95 s."""
    from nbclient import NotebookClient
    from traitlets.config import Config

    # its kernel on Unix sockets in a folder of its own (a short path: a socket's is at most 107 bytes), so
    # that it may run beside other tests (make test-lib)
    prefix = tmp_path_factory.mktemp("k") / "kernel"
    sockets = Config({"KernelManager": {"transport": "ipc", "ip": str(prefix)}})
    path = learner_copy / "notebooks" / name
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", config=sockets,
                            resources={"metadata": {"path": str(path.parent)}})
    transports = []
    client.on_notebook_start = lambda **_: transports.append(client.km.transport)
    client.execute()
    feedback = "".join(str(o.get("data", {}).get("text/html", o.get("text", "")))
                       for c in nb.cells if CHECK_CALL.search(c.source) for o in c.outputs)
    assert feedback and "Traceback" not in feedback, name
    assert "not attempted" in feedback.lower(), f"{name}: {feedback[:300]}"
    assert transports == ["ipc"], transports


def test_learner_copy_drops_the_graded_test_cells():
    """nbgrader's graded cells raise until an exercise is solved; the self-study copy has the checks."""
    for path in NOTEBOOKS:
        learner, _ = copy_rules.learner_notebook(nbformat.read(path, as_version=4), path.name)
        assert not [c for c in learner.cells if GRADED_TAG in c.metadata.get("tags", [])], path.name
        assert not any("HIDDEN TESTS" in c.source for c in learner.cells), path.name
