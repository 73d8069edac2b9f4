"""The class report: which mistakes a class made, exercise by exercise, and what the concept quiz says.

nbgrader's formgrader shows a score per cell; the checks of this course say more: every failed graded cell
names the mistake (``my_softmax: NOT YET (wrong_axis): …``, written by ``lessons_lib``'s ``assert_passes``
and read back by its ``read_verdict``). This tool reads a course folder after ``nbgrader autograde``:

* ``autograded/<learner>/<assignment>/*.ipynb``: for every graded test cell (``test_my_…``), whether it
  passed, and if not, the mistake it named, or that the exercise was not attempted, or that the cell
  failed without naming one (an error before the check could run, such as a function deleted);
* ``submitted/<learner>/<assignment>/concept-quiz.json``: the concept quiz's first answers, before the
  course (lesson 00) and after it (lesson 10), merged per learner.

A file it cannot read (a notebook that is not JSON or not UTF-8, a quiz record of the wrong shape) is
skipped with one line naming the learner and the file, on the terminal and in the teacher's copy (the
class's report gives how many); the others are counted as usual.

The class's files count what learners understood. Kept out of them, for the teacher alone: **integrity**
verdicts (:data:`INTEGRITY`: the check's own tools replaced, the library's answer called; and the notes
autograde leaves in a graded cell's metadata, :func:`~lessons_lib.exercises.grading.integrity_note`:
``kernel_disagrees``, the learner's own kernel showed the cell passing, or no verdict, where the judge
found a mistake, its check switched off there and the "mistake" most likely the placeholder of no work;
``own_library``, the notebook came with a ``lessons_lib`` of its own. Ways of getting the points without
the work, a matter for a word with the learner, not for the class), and every other verdict of a
notebook that holds one (a pass beside tampering may be the tampering's, a "mistake" beside it the
placeholder of no work); and verdicts that say nothing of the learner (:data:`NOT_THE_LEARNERS`: the
check itself failed, or the judge was stopped).

The concept quiz's record is the learner's own file: each answer's ``correct`` is worked out again from
its letter against the quiz's key (:func:`rescored`), whatever the file says.

It writes to ``--out`` (default ``build/class-report``), for the class (no names, no one's file named):

* ``mistakes.csv``: one row per exercise and outcome (passed, each named mistake, not attempted, …) with its
  kind (passed, misconception, not attempted, unnamed), how many learners, and what share of those who
  handed the exercise in (the one denominator of each exercise's rows); the mistake's words are the ones
  the learner read, its key the one the teacher's guide lists;
* ``mistakes.png``: the misconceptions as bars, most frequent first, with its alt text;
* ``concept-quiz.csv``: each question's share of right answers before and after, and the class's
  normalised gain ⟨g⟩ = (post − pre) / (1 − pre), all over one group of learners: those who took the quiz
  both before and after (while nobody has, the learners who took it before); the file says which, and how
  many;
* ``report.md``: all of that as text tables, the chart with its alt text, and how many graded cells and
  files were left out for the teacher (not whose);

and, for the teacher alone, ``teacher-only/`` (a folder only its owner can open): ``who.csv`` and
``who.md``, which learner had which outcome in which exercise, integrity verdicts first, and the files
skipped.

Usage: python tools/class_report.py COURSE_DIR [--out build/class-report]   (make class-report COURSE=…)
"""

from __future__ import annotations

import csv
import json
import os
import stat
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from conventions import LESSONS, ROOT, ToolParser

from lessons_lib.exercises import EXERCISES
from lessons_lib.exercises.catalogue import LIBRARY_ANSWER, TAMPERED
from lessons_lib.exercises.grading import NOT_THE_LEARNERS, integrity_note, read_verdict
from lessons_lib.quizzes import concepts

PASSED, NOT_ATTEMPTED, UNNAMED, ERROR = "passed", "not attempted", "failed, no mistake named", "error"
#: verdicts about how the points were sought, not about what the learner understood
INTEGRITY = (TAMPERED.key, LIBRARY_ANSWER.key)
#: the kind of each outcome (mistakes.csv's "kind"): every other outcome is a misconception
KIND = {PASSED: "passed", NOT_ATTEMPTED: "not attempted", UNNAMED: "unnamed", ERROR: "unnamed",
        **dict.fromkeys(INTEGRITY, "integrity"), **dict.fromkeys(NOT_THE_LEARNERS, "not the learner's")}
#: kinds the class's files leave out: for the teacher's copy alone (teacher-only/who.md)
TEACHERS = ("integrity", "not the learner's")
TEACHER_ONLY = "teacher-only"
#: exercise name (my_softmax) -> its lesson number, from the registry's points (and its place in the lesson)
LESSON_OF = {name: number for number, lesson in LESSONS.items() for name in lesson.points}
_ORDER = {name: (number, i) for number, lesson in LESSONS.items() for i, name in enumerate(lesson.points)}


class ReportError(ValueError):
    """A course folder the report cannot be made from; the message says what to do."""


@dataclass(frozen=True)
class Result:
    """One learner's graded cell: the exercise, and ``passed``, a mistake key or another outcome."""

    learner: str
    exercise: str
    outcome: str
    #: the integrity verdicts of its notebook, when this is not one itself: another graded cell's, or the
    #: judge's note on this or another cell (``kernel_disagrees``: the learner's kernel passed what the
    #: judge failed, its check switched off there; ``own_library``): none of its verdicts says what the
    #: learner understood (a pass there may be the tampering's, a mistake the placeholder of no work)
    beside: str = ""

    @property
    def kind(self) -> str:
        """passed, misconception, not attempted, unnamed; integrity or not the learner's (teacher only)."""
        own = KIND.get(self.outcome, "misconception")
        return "integrity" if self.beside and own != "not the learner's" else own


def graded_results(nb, learner: str) -> list[Result]:
    """The results of every graded test cell (``test_my_…``) of one autograded notebook."""
    results = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not (meta.get("grade") and str(meta.get("grade_id", "")).startswith("test_my_")):
            continue
        name = meta["grade_id"].removeprefix("test_")
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if not errors:
            results.append(Result(learner, name, PASSED))
            continue
        verdict = read_verdict(str(errors[0].get("evalue", "")))
        if verdict is None:
            outcome = ERROR
        elif not verdict.attempted:
            outcome = NOT_ATTEMPTED
        else:
            outcome = verdict.mistake or UNNAMED
        results.append(Result(learner, name, outcome, integrity_note(cell) or ""))
    found = sorted({r.outcome for r in results if r.outcome in INTEGRITY}
                   | {r.beside for r in results if r.beside})
    if found:
        results = [r if r.outcome in INTEGRITY else Result(r.learner, r.exercise, r.outcome, "/".join(found))
                   for r in results]
    return results


@dataclass
class Course:
    """What the report reads from a course folder: every graded result, per exercise the learners who
    handed it in, each learner's concept-quiz record, and the files it had to skip (with why)."""

    results: list[Result] = field(default_factory=list)
    handed_in: dict[str, set[str]] = field(default_factory=dict)
    quizzes: dict[str, dict] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def skip_line(course: Path, path: Path, why: str) -> str:
    """One line naming the learner and the file the report could not read, and why."""
    learner = path.relative_to(course).parts[1]
    return f"skipped {learner}'s {path.relative_to(course).as_posix()}: {why}"


def _notebook(path: Path) -> nbformat.NotebookNode:
    """An autograded notebook; ``ValueError`` saying why when it cannot be read as one."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ValueError(f"cannot be read ({exc.strerror})") from None
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises NotJSONError, ValidationError, KeyError, ... on bad input
        raise ValueError(f"not a notebook ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})") from None
    if not isinstance(nb.get("cells"), list):
        raise ValueError("not a notebook (it has no list of cells)")
    return nb


def read_course(course: Path) -> tuple[list[Result], dict[str, set[str]]]:
    """Every graded result of ``course/autograded``, and per exercise the learners who handed it in."""
    found = read_all(course)
    return found.results, found.handed_in


def read_all(course: Path) -> Course:
    """The graded results and the quiz records of ``course``; a file that cannot be read is skipped, its
    line in ``skipped``."""
    found = Course()
    handed_in: dict[str, set[str]] = defaultdict(set)
    for path in sorted((course / "autograded").glob("*/*/*.ipynb")):
        learner = path.parts[-3]
        try:
            results = graded_results(_notebook(path), learner)
        except ValueError as exc:
            found.skipped.append(skip_line(course, path, str(exc)))
            continue
        for result in results:
            found.results.append(result)
            handed_in[result.exercise].add(learner)
    found.handed_in = dict(handed_in)
    found.quizzes = read_quizzes(course, found.skipped)
    return found


def _check_record(record: dict) -> dict:
    """``record`` if each phase maps question keys to ``{"answer", "correct"}``; else ``ValueError``."""
    for phase, answers in record.items():
        if not isinstance(answers, dict):
            raise ValueError(f"its {phase!r} answers are {type(answers).__name__}, not a table of questions")
        for key, answer in answers.items():
            if not (isinstance(answer, dict) and isinstance(answer.get("correct"), bool)):
                raise ValueError(f"its {phase!r} answer to {key!r} is {answer!r:.60}, not an answer record")
    return record


def rescored(record: dict) -> dict:
    """``record`` with each answer's ``correct`` worked out from its letter against the quiz's key (the
    record is the learner's own file: its ``correct`` flags prove nothing); an answer to no question of the
    quiz, or a letter it does not offer, is dropped."""
    from lessons_lib.quizzes.model import LETTERS

    key = {concept.key: concept.question.options for concept in concepts.CONCEPTS}
    found = {}
    for phase, answers in record.items():
        found[phase] = {}
        for question, answer in answers.items():
            letter = answer.get("answer")
            options = key.get(question, ())
            if isinstance(letter, str) and letter in LETTERS[:len(options)]:
                found[phase][question] = {"answer": letter, "correct": options[LETTERS.index(letter)].correct}
    return found


def read_quizzes(course: Path, skipped: list[str] | None = None) -> dict[str, dict]:
    """learner -> their concept-quiz record, merged over the assignments they handed in (lessons 00, 10).
    A record that is not one is skipped (its line added to ``skipped``)."""
    records: dict[str, dict] = defaultdict(dict)
    for path in sorted((course / "submitted").glob(f"*/*/{concepts.RECORD}")):
        learner = path.parts[-3]
        try:
            record = rescored(_check_record(concepts.read_record(path)))
        except ValueError as exc:
            why = str(exc).replace(f"{path} ", "").replace(str(path), "it")
            if skipped is not None:
                skipped.append(skip_line(course, path, why))
            continue
        for phase, answers in record.items():
            records[learner].setdefault(phase, {}).update(answers)
    return dict(records)


def title(exercise: str, outcome: str) -> str:
    """The words a learner read for ``outcome`` of ``exercise`` (a mistake's title), or the outcome itself."""
    if exercise in EXERCISES:
        for mistake in EXERCISES[exercise].mistakes:
            if mistake.key == outcome:
                return mistake.title
    return {PASSED: "passed", NOT_ATTEMPTED: "not attempted", UNNAMED: "failed without a named mistake",
            ERROR: "the graded cell failed before the check ran"}.get(outcome, outcome.replace("_", " "))


def mistake_rows(results: list[Result], handed_in: dict[str, set[str]]) -> list[dict]:
    """A row per exercise and outcome: learners, and their share of those who handed the exercise in."""
    counts = Counter((r.exercise, r.outcome) for r in results if r.kind not in TEACHERS)
    order = sorted(handed_in, key=lambda name: (*_ORDER.get(name, ("99", 0)), name))
    rows = []
    for exercise in order:
        outcomes = sorted({o for (e, o) in counts if e == exercise},
                          key=lambda o: (o == PASSED, -counts[(exercise, o)], o))
        for outcome in outcomes:
            n = counts[(exercise, outcome)]
            rows.append({"lesson": LESSON_OF.get(exercise, ""), "exercise": exercise, "outcome": outcome,
                         "kind": KIND.get(outcome, "misconception"),
                         "what the learner read": title(exercise, outcome), "learners": n,
                         "share": f"{n / len(handed_in[exercise]):.2f}"})
    return rows


def who_rows(results: list[Result]) -> list[dict]:
    """The teacher's copy: one row per learner and exercise, integrity verdicts first, then misconceptions,
    then the rest; each with the words the learner read."""
    rank = {"integrity": 0, "not the learner's": 1, "misconception": 2, "unnamed": 3, "not attempted": 4,
            "passed": 5}
    rows = [{"learner": r.learner, "lesson": LESSON_OF.get(r.exercise, ""), "exercise": r.exercise,
             "outcome": r.outcome + (f" (its notebook: {r.beside})" if r.beside else ""), "kind": r.kind,
             "what the learner read": title(r.exercise, r.outcome)} for r in results]
    return sorted(rows, key=lambda r: (rank[r["kind"]], r["lesson"], r["exercise"], r["outcome"],
                                       r["learner"]))


def quiz_group(records: dict[str, dict]) -> tuple[dict[str, dict], str]:
    """The one group of learners every figure of the concept quiz counts: those who took it both before and
    after; while nobody has, those who took it before (or, failing that, after). Returns the group and
    its description."""
    both = {learner: r for learner, r in records.items() if r.get("pre") and r.get("post")}
    if both:
        return both, "before and after"
    for phase, words in (("pre", "before only"), ("post", "after only")):
        took = {learner: r for learner, r in records.items() if r.get(phase)}
        if took:
            return took, words
    return {}, "nobody"


def quiz_rows(records: dict[str, dict]) -> tuple[list[dict], dict]:
    """Per question, the share right before and after, over one group of learners (:func:`quiz_group`),
    and the class summary over the same group (learners, averages, ⟨g⟩)."""
    group, counted = quiz_group(records)
    rows = []
    for concept in concepts.CONCEPTS:
        row = {"question": concept.key, "outcome": concept.outcome}
        for phase in concepts.PHASES:
            took = [r for r in group.values() if r.get(phase)]
            right = sum(bool(r[phase].get(concept.key, {}).get("correct")) for r in took)
            row[f"{phase} right"] = f"{right / len(took):.2f}" if took else ""
        row.update({"learners": len(group), "counted": counted})
        rows.append(row)
    both = group if counted == "before and after" else {}
    summary = {"learners with both": len(both)}
    if both:
        pre = sum(concepts.phase_score(r, "pre") for r in both.values()) / len(both)
        post = sum(concepts.phase_score(r, "post") for r in both.values()) / len(both)
        gain = concepts.normalised_gain(pre, post)
        summary.update({"class average before": f"{pre:.2f}", "class average after": f"{post:.2f}",
                        "normalised gain": "" if gain is None else f"{gain:.2f}"})
    return rows, summary


def quiz_others(records: dict[str, dict]) -> dict[str, int]:
    """How many learners the quiz's figures leave out, by what they took (when a group took both)."""
    group, counted = quiz_group(records)
    if counted != "before and after":
        return {}
    left = [r for learner, r in records.items() if learner not in group]
    return {"took it before only": sum(bool(r.get("pre")) for r in left),
            "took it after only": sum(bool(r.get("post")) for r in left)}


def chart(rows: list[dict], path: Path, most: int = 12) -> str:
    """Bars of the named mistakes (most frequent first, at most ``most``); return its alt text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    named = [r for r in rows if r["kind"] == "misconception"]
    named = sorted(named, key=lambda r: (-r["learners"], r["lesson"], r["exercise"]))[:most]
    if not named:
        alt = "No learner made a misconception that a check names."
        fig, ax = plt.subplots(figsize=(7, 1.6))
        ax.axis("off")
        ax.text(0.5, 0.5, alt, ha="center", va="center", fontsize=12)
    else:
        labels = [f"{r['lesson']} {r['exercise']}: {r['outcome']}" for r in named][::-1]
        values = [r["learners"] for r in named][::-1]
        fig, ax = plt.subplots(figsize=(8, 0.45 * len(named) + 1.4))
        bars = ax.barh(labels, values, color="#31688e")
        ax.bar_label(bars, padding=3, fontsize=11)
        ax.set_xlabel("learners who made it", fontsize=12)
        ax.set_title("The misconceptions the class showed, most frequent first", fontsize=13)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=11)
        ax.set_xlim(0, max(values) * 1.15 + 0.5)
        alt = ("Bar chart of the misconceptions the checks named, most frequent first: " + "; ".join(
            f"{r['exercise']} {r['outcome']} ({r['what the learner read']}): {r['learners']} learner"
            f"{'s' if r['learners'] != 1 else ''}" for r in named) + ".")
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Description": alt})
    plt.close(fig)
    return alt


def _csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        if rows:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def _table(rows: list[dict]) -> list[str]:
    if not rows:
        return ["(none)"]
    head = list(rows[0])
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *("| " + " | ".join(str(r[h]).replace("|", "/") for h in head) + " |" for r in rows)]


def _private_folder(path: Path) -> Path:
    """A folder only its owner can open (the teacher's copy names learners)."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, stat.S_IRWXU)
    return path


def report(course: Path, out: Path) -> dict:
    """Read ``course``, write the report's files under ``out``; return what was written, for a summary."""
    found = read_all(course)
    results, handed_in = found.results, found.handed_in
    for line in found.skipped:
        print(f"class_report: {line}", file=sys.stderr)
    if not results:
        raise ReportError(f"{course}/autograded holds no graded notebooks it can read: run nbgrader "
                          "autograde first (docs/classroom.md, 'Grading with nbgrader')")
    out.mkdir(parents=True, exist_ok=True)
    rows = mistake_rows(results, handed_in)
    _csv(out / "mistakes.csv", rows)
    alt = chart(rows, out / "mistakes.png")
    questions, summary = quiz_rows(found.quizzes)
    _csv(out / "concept-quiz.csv", [*questions, *({"question": k, "outcome": v} for k, v in summary.items())])
    learners = sorted({r.learner for r in results})
    columns = ("lesson", "exercise", "outcome", "what the learner read", "learners", "share")
    misconceptions = [{k: r[k] for k in columns} for r in rows]
    apart = Counter(r.kind for r in results if r.kind in TEACHERS)
    text = [f"# Class report: {course.name}", "",
            f"{len(learners)} learners; {len(handed_in)} exercises graded. Each row counts the learners "
            "whose graded cell ended that way, and their share of those who handed the exercise in (the "
            "mistake keys are those of the teacher's guide).", ""]
    if found.skipped:
        text += [f"**{len(found.skipped)} file(s) skipped**, unreadable (the report counts everyone else; "
                 "which, in the teacher's copy: `teacher-only/who.md`).", ""]
    if apart:
        text += [f"**{sum(apart.values())} graded cell(s) left out** of these counts, for the teacher alone "
                 "(`teacher-only/who.md`): points sought without the work (the check's tools replaced, the "
                 "library's answer called, a graded cell switched off in the learner's kernel or a library "
                 "of their own, and every other verdict of such a notebook), and verdicts that say nothing "
                 "of the learner (the check failed, or the judge was stopped).", ""]
    text += [f"![{alt}](mistakes.png)", "", "## What the class got right and wrong", "",
             *_table(misconceptions), "", "## Concept quiz, before and after", ""]
    if summary["learners with both"]:
        others = quiz_others(found.quizzes)
        text += [f"{summary['learners with both']} learners took it before and after; every figure below "
                 f"counts them: class average {summary['class average before']} before, "
                 f"{summary['class average after']} after, normalised gain ⟨g⟩ = "
                 f"{summary['normalised gain'] or 'not defined (all right before)'}."
                 + (" Not counted: " + ", ".join(f"{n} {what}" for what, n in others.items()) + "."
                    if any(others.values()) else ""), ""]
    else:
        counted = questions[0]["counted"] if questions else "nobody"
        text += ["No learner handed in the concept quiz both before (lesson 00) and after (lesson 10)"
                 + (f"; the shares below count the {questions[0]['learners']} who took it {counted}." if
                    counted != "nobody" else "."), ""]
    text += _table(questions)
    (out / "report.md").write_text("\n".join(text) + "\n", encoding="utf-8")
    private = _private_folder(out / TEACHER_ONLY)
    who = who_rows(results)
    _csv(private / "who.csv", who)
    (private / "who.md").write_text("\n".join([
        f"# Who made which mistake: {course.name} (the teacher's copy: it names learners, do not share it)",
        "", "Integrity verdicts first, then misconceptions, then the rest.", "", *_table(who),
        *(["", "Files skipped:", "", *(f"- {line}" for line in found.skipped)] if found.skipped else [])])
        + "\n", encoding="utf-8")
    return {"learners": len(learners), "exercises": len(handed_in), "quiz": summary, "out": str(out),
            "skipped": found.skipped}


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="tools/class_report.py", description=__doc__.splitlines()[0])
    parser.add_argument("course", type=Path, help="the nbgrader course folder (after nbgrader autograde)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "class-report")
    args = parser.parse_args(argv)
    if not args.course.is_dir():
        parser.error(f"no course folder at {args.course} (the nbgrader course: source/, autograded/, ...)")
    try:
        done = report(args.course, args.out)
    except ReportError as exc:
        parser.error(str(exc))
    print(f"class report of {done['learners']} learners, {done['exercises']} exercises: "
          f"{done['out']}/report.md (mistakes.csv, mistakes.png, concept-quiz.csv); who made which mistake, "
          f"for you alone: {done['out']}/{TEACHER_ONLY}/who.md"
          + (f"; {len(done['skipped'])} file(s) skipped (above)" if done["skipped"] else ""))
    print(json.dumps(done["quiz"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
