"""How long nbgrader's autograde takes per submission, lesson by lesson: what sizes a grading server.

    python benchmarks/autograde.py [--runs 2] [LESSON ...]

For each lesson with exercises (or those named), a temporary course folder: the lesson generated as a
teacher does (``nbgrader generate_assignment``, the course's grading policy and a secret in its config),
``--runs`` learners handing in the worked solution (tests/helpers/grading.py's ``submit``), and each
submission autograded alone (``nbgrader autograde LESSON --student=…``), which re-runs the whole lesson in a
fresh kernel. Printed per lesson: the median wall time of one submission, the CPU seconds it cost (nbgrader
and its kernel, from ``getrusage`` of the children) and the largest resident memory of those processes;
then the load average the run met (the numbers grow with it). docs/classroom.md sizes the grading server
from these figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

import nbformat  # noqa: E402
from conventions import LESSONS  # noqa: E402

from tests.helpers.grading import NBGRADER, POINTS, submit  # noqa: E402

CONFIG = """\
import os
c = get_config()
c.CourseDirectory.course_id = "attention"
c.Execute.timeout = 300
os.environ["LESSONS_HIDDEN_SECRET"] = "the autograde benchmark's secret"
from lessons_lib.course import grading_policy
grading_policy.configure(c)
"""


def nbgrader(course: Path, *args: str) -> tuple[float, float, float]:
    """Run nbgrader in ``course``: (wall seconds, CPU seconds of it and its kernel, their peak RSS in MB)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("LESSONS_HIDDEN_SECRET", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*NBGRADER, *args, f"--CourseDirectory.root={course}"], cwd=course, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"nbgrader {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024  # Linux: kB


def measure(lesson: str, runs: int) -> list[tuple[float, float, float]]:
    with tempfile.TemporaryDirectory(prefix="autograde-bench-") as tmp:
        course = Path(tmp)
        (course / "nbgrader_config.py").write_text(CONFIG)
        (course / "source" / lesson).mkdir(parents=True)
        import stamp_notebooks

        nb = stamp_notebooks.nbgrader_source_notebook(nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb",
                                                                    as_version=4))
        nbformat.write(nb, course / "source" / lesson / f"{lesson}.ipynb")
        nbgrader(course, "generate_assignment", lesson, "--force")
        found = []
        for run in range(runs):
            student = f"learner{run}"
            submit(course, student, lesson, dict.fromkeys(POINTS[lesson], "right"))
            found.append(nbgrader(course, "autograde", lesson, f"--student={student}", "--create"))
        return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lessons' notebook names (default: those with exercises)")
    parser.add_argument("--runs", type=int, default=2, help="submissions autograded per lesson (default 2)")
    args = parser.parse_args(argv)
    lessons = args.lessons or [lesson.slug for lesson in LESSONS.values() if lesson.points]
    print(f"{os.cpu_count()} cores; nbgrader autograde, one submission at a time, {args.runs} per lesson")
    print(f"{'lesson':<28} {'wall s (median)':>16} {'CPU s':>7} {'peak MB':>8}", flush=True)
    loads = []
    for lesson in lessons:
        found = measure(lesson, args.runs)
        loads.append(os.getloadavg()[0])
        wall = statistics.median(f[0] for f in found)
        cpu = statistics.median(f[1] for f in found)
        print(f"{lesson:<28} {wall:>16.1f} {cpu:>7.1f} {max(f[2] for f in found):>8.0f}", flush=True)
    print(f"load average met (1 min): {min(loads):.1f} to {max(loads):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
