"""Every way of getting an exercise's points without the work, handed in through the real ``nbgrader
autograde`` (``make test-grading``): each scores 0 on every exercise it applies to, and the feedback names
the verdict; a student who solved everything gets full points on the same assignment.

The ``gaming`` assignment holds every exercise of the course in one short notebook (each lesson's graded
cells as its notebook has them, without the rest of the lesson, so that a submission autogrades in
seconds). One student per strategy of ``tests/helpers/grading.py``'s :data:`STRATEGIES` hands it in: the
library's answer or the exercise's own reference called, numpy's comparisons patched in a cell or during
the call, the judge's class patched, a lookup table of the shown answers, a ``lessons_lib`` of one's own
beside the notebook; and (issues 38 and 39) the grading cell's own names rebound (``ll.assert_passes =
lambda *a, **k: None`` with an identity ``my_scale``, every ``ll.check_*``, ``ll`` itself), the judge's
module, a builtin, a numpy function, the reference, a verdict constant and the tolerance bound to
what is not a function of the learner's, the graded cells blanked before they run or their errors
swallowed by IPython, and the check's watch on the library cleared or switched off inside the function.

Some of these win in any learner's kernel: nothing there can stop a notebook from rewriting the cell
that grades it. The course's judge (lessons_lib/exercises/judge.py, autograde's step in the course's
``nbgrader_config.py``) runs the answer cells again where the notebook cannot reach; the last test shows
those strategies getting the points from the kernel alone, which is why the judge is there.
"""

from __future__ import annotations

import nbformat
import pytest

from tests.helpers.grading import (
    EXERCISES_OF,
    FAKE_LIBRARY,
    GAMING,
    LESSONS,
    POINTS,
    STRATEGIES,
    feedback_text,
    gaming_source,
    make_course,
    nbgrader,
    scores,
    submit_gaming,
    worked_solution,
)

#: Strategies that beat every check inside the learner's kernel (they rewrite or replace the grading
#: cell itself): graded by the kernel alone, they get the points.
KERNEL_LOSES = ("assert_passes", "rebind_ll", "blank_graded_cells")
#: Exercises whose table of the shown answers is built from the exercise's reference (every one the table
#: applies to): in the judge's child each of an exercise's answers, its reference field included, is its own
#: stand-in (lessons_lib/exercises/judge.py), so the table finds the answer absent there.
TABLE_OF_ABSENT_ANSWERS = ("my_projection", "my_scores", "my_scale", "my_softmax", "my_weighted_sum",
                           "my_split_heads", "my_merge_heads", "my_causal_weights", "my_online_update",
                           "my_softmax_off", "my_rope", "my_decode_step", "my_rope_step", "my_repeat_kv",
                           "my_linear_attention_step", "my_causal_linear_attention",
                           "my_delta_step", "my_absorbed_scores", "my_topk_keys")


def _assignment(root) -> nbformat.NotebookNode:
    """The gaming assignment, generated; the teacher's notebook (its worked solutions)."""
    (root / "source" / GAMING).mkdir(parents=True)
    nbformat.write(gaming_source(), root / "source" / GAMING / f"{GAMING}.ipynb")
    nbgrader(root, "generate_assignment", GAMING, "--force")
    return nbformat.read(root / "source" / GAMING / f"{GAMING}.ipynb", as_version=4)


@pytest.fixture(scope="module")
def gaming_course(tmp_path_factory):
    root = tmp_path_factory.mktemp("gaming")
    make_course(root)
    teacher = _assignment(root)
    submit_gaming(root, "gaming_right", lambda name: worked_solution(teacher, name))
    for strategy, (code_of, _, _) in STRATEGIES.items():
        submit_gaming(root, strategy, code_of)
    fake = root / "submitted" / "fake_library" / GAMING / "lessons_lib"
    fake.mkdir()
    (fake / "__init__.py").write_text(FAKE_LIBRARY)
    log = nbgrader(root, "autograde", GAMING, "--create")
    nbgrader(root, "generate_feedback", GAMING)
    return root, log


@pytest.mark.grading
def test_the_student_who_solved_everything_gets_full_points_on_the_gaming_assignment(gaming_course):
    root, log = gaming_course
    everything = {name: points for lesson in LESSONS for name, points in POINTS[lesson].items()}
    assert scores(root, "gaming_right", GAMING) == everything
    assert "has changed" not in log, "a submission's locked cell differed from the gradebook's"


@pytest.mark.grading
@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_way_of_getting_points_without_the_work_scores_zero_and_the_feedback_says_why(gaming_course,
                                                                                           strategy):
    root, _ = gaming_course
    code_of, mistake, words = STRATEGIES[strategy]
    got = scores(root, strategy, GAMING)
    applies = [name for name in EXERCISES_OF if code_of(name) is not None]
    assert applies and {name: got[name] for name in applies} == {name: 0 for name in applies}, got
    text = feedback_text(root, strategy, GAMING)
    for name in applies:
        line = next((line for line in text.splitlines() if f"{name}: NOT YET (" in line), "")
        assert line, (strategy, name)
        assert mistake is None or f"{name}: NOT YET ({mistake})" in line, (strategy, line)
        if strategy == "table" and name in TABLE_OF_ABSENT_ANSWERS:
            # its table calls the exercise's reference: absent in the judge's child, so the verdict names
            # the library's answer
            assert f"{name}: NOT YET (library_answer)" in line, line
            continue
        assert words in line, (strategy, line)
    if strategy == "fake_library":
        assert not (root / "autograded" / strategy / GAMING / "lessons_lib").exists()


@pytest.mark.grading
def test_the_strategies_that_beat_any_kernel_get_the_points_from_the_kernel_alone(tmp_path, monkeypatch):
    """The same submissions, graded by the learner's kernel alone (nbgrader's own Execute step, the
    judge's environment variable set by hand as a course before the judge would have had it): full
    points where the judge gives 0. And without that variable, autograde without the judge grades
    nothing at all: every graded cell says the judge is missing."""
    root = tmp_path / "course"
    make_course(root)
    config = root / "nbgrader_config.py"
    kernel_only = [line for line in config.read_text().splitlines()
                   if "autograde_preprocessors" not in line and "JudgedExecute" not in line]
    config.write_text("\n".join(kernel_only) + "\n")
    teacher = _assignment(root)
    for strategy in KERNEL_LOSES:
        submit_gaming(root, strategy, STRATEGIES[strategy][0])
    submit_gaming(root, "honest", lambda name: worked_solution(teacher, name))
    with monkeypatch.context() as patch:
        patch.setenv("LESSONS_JUDGE", "on")   # what the kernel checks for: as if the judge were there
        for strategy in KERNEL_LOSES:
            nbgrader(root, "autograde", GAMING, "--create", f"--student={strategy}")
    for strategy in KERNEL_LOSES:
        got = scores(root, strategy, GAMING)
        applies = [name for name in EXERCISES_OF if STRATEGIES[strategy][0](name) is not None]
        assert all(got[name] > 0 for name in applies), (strategy, got)
    nbgrader(root, "autograde", GAMING, "--create", "--student=honest")
    assert set(scores(root, "honest", GAMING).values()) == {0}
    nbgrader(root, "generate_feedback", GAMING, "--student=honest")
    text = feedback_text(root, "honest", GAMING)
    assert "NOT GRADED: this autograde runs without the course's judge" in text
