"""Grading with the real nbgrader pipeline, in a temporary course directory (``make test-grading``).

One assignment per lesson with exercises (``source/<lesson>/<lesson>.ipynb``, the stamped source
notebook as the teacher has it). ``nbgrader generate_assignment`` makes the learner version; three
students hand it in:

* ``right``: every solution cell filled with the worked solution -> full points in every lesson;
* ``mistaken``: one planted mistake in every exercise -> each exercise loses exactly its points,
  and ``nbgrader generate_feedback``'s HTML names each mistake. Handed in as the assignment of every
  exercise of the course in one short notebook (each lesson's graded cells as its notebook has them:
  ``EVERY_EXERCISE``, made as the gaming assignment is), and as the whole lesson where the lesson's
  own cells call the learner's function (lesson 07): a mistake there must not break the lesson around it;
  its answer to ``my_scale`` also prints and displays markup a browser would run (``LEARNER_MARKUP``), which
  its feedback page, opened in Chromium offline and checked by axe-core, shows as text and never runs;
* ``partial`` (lessons 04 and 06, the lessons with several exercises): some exercises right, one
  with a planted mistake, one untouched -> the right ones score, the others get zero, and nothing
  errors.

The ways of getting points without the work are handed in as an assignment of their own:
tests/grading/test_gaming_scores_zero.py.

``nbgrader autograde`` re-runs each submission in a fresh kernel, the graded cells restored from the
gradebook, and takes each graded cell's verdict from the course's judge as well (the course's
``nbgrader_config.py``, as ``tools/hub_grading.py teacher`` writes it and docs/classroom.md shows it:
the judge, the file of the course's secret, the files a learner hands in beside the notebook kept out
of the autograded folder, and the grading policy: the late penalty and the light feedback page).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.a11y import blocking, format_violations, run_axe
from tests.helpers.browser import offline_page, started_playwright
from tests.helpers.grading import (
    LESSONS,
    PARTIAL,
    PLANTED,
    POINTS,
    feedback_text,
    gaming_source,
    guide_course,
    lessons_that_call_the_learners_functions,
    named_mistake,
    nbgrader,
    planted_mistake,
    scores,
    submit,
    submit_gaming,
    worked_solution,
)

#: the assignment of every exercise of the course, the mistaken student's
EVERY_EXERCISE = "every_exercise"
#: the lessons the mistaken student also hands in whole
MISTAKEN_LESSONS = lessons_that_call_the_learners_functions()
#: what the mistaken student hands in: assignment -> its exercises
MISTAKEN = {EVERY_EXERCISE: [name for lesson in LESSONS for name in POINTS[lesson]],
            **{lesson: list(POINTS[lesson]) for lesson in MISTAKEN_LESSONS}}
#: what the mistaken student's answer to my_scale prints and displays before its mistake: markup that a
#: browser would run, were it put on the feedback page as markup (each alert(n) is recorded: RAN)
LEARNER_MARKUP = ("from IPython.display import HTML, display\n"
                  "print('<script>alert(1)</script><img src=x onerror=alert(2)>')\n"
                  "display(HTML('<script>alert(3)</script><img src=x onerror=alert(4)>'))\n")
#: before the page's own code: every alert(...) is recorded instead of shown
RAN = "window.ran = []; window.alert = (what) => window.ran.push(String(what));"
#: what of the learner's markup is in the page's DOM: elements that run code or show a picture (the page
#: has none of its own), handlers, and the printed markup as text in the answer's output
LEARNER_ELEMENTS = """() => ({
  ran: window.ran,
  elements: [...document.querySelectorAll('script, iframe, object, embed, svg, img, a[href^="javascript:"]')]
    .map((e) => e.outerHTML.slice(0, 80)),
  handlers: [...document.querySelectorAll('*')]
    .filter((e) => [...e.attributes].some((a) => a.name.startsWith('on')))
    .map((e) => e.outerHTML.slice(0, 80)),
  printed: [...document.querySelectorAll('.output_stdout')].some(
    (e) => e.textContent.includes('<script>alert(1)</script><img src=x onerror=alert(2)>')),
  mistake: document.body.innerText.includes('my_scale: NOT YET ('),
})"""
#: axe-core's best-practice rules the page's structure holds to: every part in a landmark, one main, one h1
STRUCTURE = ("region", "landmark-one-main", "landmark-no-duplicate-main", "landmark-unique",
             "page-has-heading-one")


class Course:
    """The course folder, and the log of every student's autograde."""

    def __init__(self, root: Path):
        self.root, self.logs = root, {}

    def __truediv__(self, other):
        return self.root / other

    def __fspath__(self):
        return str(self.root)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = Course(tmp_path_factory.mktemp("course"))
    guide_course(course.root)  # its config (the judge, the grading policy) and its secret, as a teacher's
    # the teacher's way in: stamp_notebooks.py --nbgrader-source (Predict answers folded as for learners):
    # every lesson, those with exercises among them
    written = load_tool("stamp_notebooks").write_nbgrader_source(course / "source")
    assert set(LESSONS) < set(written)
    (course / "source" / EVERY_EXERCISE).mkdir()
    nbformat.write(gaming_source(), course / "source" / EVERY_EXERCISE / f"{EVERY_EXERCISE}.ipynb")
    nbgrader(course.root, "generate_assignment", "*", "--force")  # one assignment per lesson, and one more
    for lesson in LESSONS:
        submit(course.root, "right", lesson, {n: "right" for n in POINTS[lesson]})
    every = nbformat.read(course / "source" / EVERY_EXERCISE / f"{EVERY_EXERCISE}.ipynb", as_version=4)
    submit_gaming(course.root, "mistaken", lambda name: (LEARNER_MARKUP if name == "my_scale" else "")
                  + planted_mistake(name, worked_solution(every, name)), EVERY_EXERCISE)
    for lesson in MISTAKEN_LESSONS:
        submit(course.root, "mistaken", lesson, {n: "mistake" for n in POINTS[lesson]})
    for lesson, wanted in PARTIAL.items():
        submit(course.root, "partial", lesson, wanted)
    for student in ("right", "mistaken", "partial"):
        course.logs[student] = nbgrader(course.root, "autograde", "*", f"--student={student}", "--create")
        nbgrader(course.root, "generate_feedback", "*", f"--student={student}")
    return course


@pytest.mark.grading
def test_release_hides_solutions_and_locks_the_graded_cells_which_hide_no_code(course):
    for lesson in LESSONS:
        nb = nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
        tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
        assert {c.metadata["nbgrader"]["grade_id"] for c in tests} == {f"test_{n}" for n in POINTS[lesson]}
        source = nbformat.read(course / "source" / lesson / f"{lesson}.ipynb", as_version=4)
        graded = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
                  if c.metadata.get("nbgrader", {}).get("grade")}
        for cell in tests:
            assert cell.metadata["editable"] is False and cell.metadata["deletable"] is False
            assert cell.source == graded[cell.metadata["nbgrader"]["grade_id"]], "learners see the whole test"


@pytest.mark.grading
def test_the_release_folds_the_answers_to_predict_prompts_as_the_learner_copy_does(course):
    learner_copy = load_tool("learner_copy")
    folds = 0
    for lesson in LESSONS:
        release = nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        learner, _ = learner_copy.learner_notebook(nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb",
                                                                 as_version=4))
        prose = [c.source for c in release.cells if c.cell_type == "markdown"]
        assert prose == [c.source for c in learner.cells if c.cell_type == "markdown"], lesson
        folds += sum(learner_copy.REVEAL in text for text in prose)
    assert folds > 0


@pytest.mark.grading
def test_autograde_finds_no_changed_graded_cell_in_an_honest_submission(course):
    """nbgrader warns "Attribute 'checksum' for cell ... has changed!" when a locked cell differs from the
    gradebook: with hidden-test code in a graded cell it did so for every untouched notebook. The graded
    cells hold no hidden code, so the warning now means a learner really changed a locked cell."""
    for student in ("right", "mistaken", "partial"):
        assert "has changed" not in course.logs[student], course.logs[student]


@pytest.mark.grading
def test_every_exercise_right_gets_full_points(course):
    for lesson in LESSONS:
        assert scores(course, "right", lesson) == POINTS[lesson], lesson


@pytest.mark.grading
def test_each_planted_mistake_loses_exactly_its_points_and_the_feedback_names_it(course):
    from lessons_lib.exercises import EXERCISES

    for assignment, names in MISTAKEN.items():
        assert scores(course, "mistaken", assignment) == {n: 0 for n in names}, assignment
        text = feedback_text(course, "mistaken", assignment)
        for name in names:
            mistake = PLANTED[name][2] or named_mistake(name, EXERCISES)
            assert f"{name}: NOT YET ({mistake})" in text, (assignment, name, mistake)


@pytest.mark.grading
def test_the_feedback_shows_the_mistake_its_nudge_and_the_case_never_a_traceback_or_a_server_path(course):
    for assignment in MISTAKEN:
        text = feedback_text(course, "mistaken", assignment)
        lines = [line for line in text.splitlines() if "NOT YET (" in line]
        assert lines, assignment
        for line in lines:
            assert line.lstrip().startswith("AssertionError: my_")
            assert "Hint: " in line and "Failing case: " in line
        # every cell of the learner's runs: any traceback would be a graded cell's
        assert "most recent call last" not in text and "Cell In[" not in text, assignment
        assert "lessons_lib/" not in text and "site-packages" not in text, assignment
        assert str(course.root) not in text and ".py\"" not in text


@pytest.mark.grading
def test_untouched_exercises_score_zero_without_an_error(course):
    for lesson, wanted in PARTIAL.items():
        got = scores(course, "partial", lesson)
        assert got == {n: (POINTS[lesson][n] if how == "right" else 0) for n, how in wanted.items()}
        text = feedback_text(course, "partial", lesson)
        for name, how in wanted.items():
            if how == "untouched":
                assert f"{name}: NOT ATTEMPTED YET" in text or "NotImplementedError" in text, name


@pytest.mark.grading
def test_the_feedback_page_passes_axe_offline_and_shows_the_learners_markup_as_text_never_run(course):
    """The mistaken student's page (a planted mistake in every exercise, and LEARNER_MARKUP), in Debian's
    Chromium with the network cut off: nothing requested, no script run, none of the learner's elements in the
    DOM (the printed markup is text in the answer's output); axe-core finds no critical or serious WCAG 2.1
    AA violation, and the page is in landmarks with one level-one heading."""
    page_file = course / "feedback" / "mistaken" / EVERY_EXERCISE / f"{EVERY_EXERCISE}.html"
    with started_playwright() as playwright, offline_page(playwright) as page:
        page.add_init_script(RAN)
        page.goto(page_file.as_uri(), wait_until="load")
        found = page.evaluate(LEARNER_ELEMENTS)  # before axe adds its own script
        title, lang = page.title(), page.evaluate("() => document.documentElement.lang")
        violations = run_axe(page)
        structure = [v for v in run_axe(page, tags=("best-practice",)) if v["id"] in STRUCTURE]
        blocked = list(page.blocked)
    assert not blocked, f"the feedback page asked the network for {blocked}"
    assert found == {"ran": [], "elements": [], "handlers": [], "printed": True, "mistake": True}, found
    assert lang == "en" and title == f"Feedback: {EVERY_EXERCISE}"
    assert not blocking(violations), f"axe-core found\n{format_violations(blocking(violations))}"
    assert not structure, f"axe-core found\n{format_violations(structure)}"
