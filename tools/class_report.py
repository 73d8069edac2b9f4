"""The class report: which mistakes a class made, exercise by exercise, and what the concept quiz says.

nbgrader's formgrader shows a score per cell; the checks of this course say more: every failed graded cell
names the mistake (``my_softmax: NOT YET (wrong_axis): …``, written by ``lessons_lib``'s ``assert_passes``
and read back by its ``read_verdict``). This tool reads a course folder after ``nbgrader autograde``:

* ``autograded/<learner>/<assignment>/*.ipynb``: for every graded test cell (``test_my_…``), whether it
  passed, and if not, the mistake it named, or that the exercise was not attempted, or that the cell
  failed without naming one (an error before the check could run, such as a function deleted);
* ``submitted/<learner>/<assignment>/concept-quiz.json``: the concept quiz's first answers, before the
  course (lesson 00) and after it (lesson 10), merged per learner.

It writes to ``--out`` (default ``build/class-report``):

* ``mistakes.csv``: one row per exercise and outcome (passed, each named mistake, not attempted, …) with
  how many learners and what share of those who handed the lesson in; the mistake's words are the ones
  the learner read, its key the one the teacher's guide lists;
* ``mistakes.png``: the named mistakes as bars, most frequent first, with its alt text;
* ``concept-quiz.csv``: each question's share of right answers before and after, and the class's
  normalised gain ⟨g⟩ = (post − pre) / (1 − pre) over the learners who took both;
* ``report.md``: all of that as text tables, the chart with its alt text, for the teacher to read.

Usage: python tools/class_report.py COURSE_DIR [--out build/class-report]   (make class-report COURSE=…)
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import nbformat
from conventions import LESSONS, ROOT

from lessons_lib.exercises import EXERCISES
from lessons_lib.exercises.grading import read_verdict
from lessons_lib.quizzes import concepts

PASSED, NOT_ATTEMPTED, UNNAMED, ERROR = "passed", "not attempted", "failed, no mistake named", "error"
#: exercise name (my_softmax) -> its lesson number, from the registry's points (and its place in the lesson)
LESSON_OF = {name: number for number, lesson in LESSONS.items() for name in lesson.points}
_ORDER = {name: (number, i) for number, lesson in LESSONS.items() for i, name in enumerate(lesson.points)}


@dataclass(frozen=True)
class Result:
    """One learner's graded cell: the exercise, and ``passed``, a mistake key or another outcome."""

    learner: str
    exercise: str
    outcome: str


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
        results.append(Result(learner, name, outcome))
    return results


def read_course(course: Path) -> tuple[list[Result], dict[str, set[str]]]:
    """Every graded result of ``course/autograded``, and per exercise the learners who handed it in."""
    results: list[Result] = []
    handed_in: dict[str, set[str]] = defaultdict(set)
    for path in sorted((course / "autograded").glob("*/*/*.ipynb")):
        learner = path.parts[-3]
        for result in graded_results(nbformat.read(path, as_version=4), learner):
            results.append(result)
            handed_in[result.exercise].add(learner)
    return results, dict(handed_in)


def read_quizzes(course: Path) -> dict[str, dict]:
    """learner -> their concept-quiz record, merged over the assignments they handed in (lessons 00, 10)."""
    records: dict[str, dict] = defaultdict(dict)
    for path in sorted((course / "submitted").glob(f"*/*/{concepts.RECORD}")):
        learner = path.parts[-3]
        for phase, answers in concepts.read_record(path).items():
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
    counts = Counter((r.exercise, r.outcome) for r in results)
    order = sorted(handed_in, key=lambda name: (*_ORDER.get(name, ("99", 0)), name))
    rows = []
    for exercise in order:
        outcomes = sorted({o for (e, o) in counts if e == exercise},
                          key=lambda o: (o == PASSED, -counts[(exercise, o)], o))
        for outcome in outcomes:
            n = counts[(exercise, outcome)]
            rows.append({"lesson": LESSON_OF.get(exercise, ""), "exercise": exercise, "outcome": outcome,
                         "what the learner read": title(exercise, outcome), "learners": n,
                         "share": f"{n / len(handed_in[exercise]):.2f}"})
    return rows


def quiz_rows(records: dict[str, dict]) -> tuple[list[dict], dict]:
    """Per question, the share right before and after; and the class summary (learners, averages, ⟨g⟩)."""
    both = {learner: r for learner, r in records.items() if r.get("pre") and r.get("post")}
    rows = []
    for concept in concepts.CONCEPTS:
        row = {"question": concept.key, "outcome": concept.outcome}
        for phase in concepts.PHASES:
            took = [r for r in records.values() if r.get(phase)]
            right = sum(bool(r[phase].get(concept.key, {}).get("correct")) for r in took)
            row[f"{phase} right"] = f"{right / len(took):.2f}" if took else ""
        rows.append(row)
    summary = {"learners with both": len(both)}
    if both:
        pre = sum(concepts.phase_score(r, "pre") for r in both.values()) / len(both)
        post = sum(concepts.phase_score(r, "post") for r in both.values()) / len(both)
        gain = concepts.normalised_gain(pre, post)
        summary.update({"class average before": f"{pre:.2f}", "class average after": f"{post:.2f}",
                        "normalised gain": "" if gain is None else f"{gain:.2f}"})
    return rows, summary


def chart(rows: list[dict], path: Path, most: int = 12) -> str:
    """Bars of the named mistakes (most frequent first, at most ``most``); return its alt text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    named = [r for r in rows if r["outcome"] not in (PASSED, NOT_ATTEMPTED, UNNAMED, ERROR)]
    named = sorted(named, key=lambda r: (-r["learners"], r["lesson"], r["exercise"]))[:most]
    if not named:
        alt = "No learner made a mistake that a check names."
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
        ax.set_title("The mistakes the class made, most frequent first", fontsize=13)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=11)
        ax.set_xlim(0, max(values) * 1.15 + 0.5)
        alt = ("Bar chart of the mistakes the checks named, most frequent first: " + "; ".join(
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


def report(course: Path, out: Path) -> dict:
    """Read ``course``, write the report's files under ``out``; return what was written, for a summary."""
    results, handed_in = read_course(course)
    if not results:
        raise SystemExit(f"class_report: {course}/autograded holds no graded notebooks: run nbgrader "
                         "autograde first (docs/classroom.md, 'Grading with nbgrader')")
    out.mkdir(parents=True, exist_ok=True)
    rows = mistake_rows(results, handed_in)
    _csv(out / "mistakes.csv", rows)
    alt = chart(rows, out / "mistakes.png")
    questions, summary = quiz_rows(read_quizzes(course))
    _csv(out / "concept-quiz.csv", [*questions, *({"question": k, "outcome": v} for k, v in summary.items())])
    learners = sorted({r.learner for r in results})
    text = [f"# Class report: {course.name}", "",
            f"{len(learners)} learners; {len(handed_in)} exercises graded. Each row counts the learners "
            "whose graded cell ended that way (the mistake keys are those of the teacher's guide).", "",
            f"![{alt}](mistakes.png)", "", *_table(rows), "", "## Concept quiz, before and after", ""]
    if summary["learners with both"]:
        text += [f"{summary['learners with both']} learners took it before and after: class average "
                 f"{summary['class average before']} before, {summary['class average after']} after, "
                 f"normalised gain ⟨g⟩ = {summary['normalised gain'] or 'not defined (all right before)'}.",
                 ""]
    else:
        text += ["No learner handed in the concept quiz both before (lesson 00) and after (lesson 10).", ""]
    text += _table(questions)
    (out / "report.md").write_text("\n".join(text) + "\n", encoding="utf-8")
    return {"learners": len(learners), "exercises": len(handed_in), "quiz": summary, "out": str(out)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("course", type=Path, help="the nbgrader course folder (after nbgrader autograde)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "class-report")
    args = parser.parse_args(argv)
    done = report(args.course, args.out)
    print(f"class report of {done['learners']} learners, {done['exercises']} exercises: "
          f"{done['out']}/report.md (mistakes.csv, mistakes.png, concept-quiz.csv)")
    print(json.dumps(done["quiz"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
