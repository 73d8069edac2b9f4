"""How long nbgrader's autograde takes per submission, lesson by lesson: what sizes a grading server.

    python benchmarks/autograde.py [--runs 2] [--sandbox on|off|both] [LESSON ...]

For each lesson with exercises (or those named), a temporary course folder: the lesson generated as a
teacher does (``nbgrader generate_assignment``, the config ``tools/hub_grading.py teacher`` writes: the
course's judge, its secret's file and its grading policy),
``--runs`` learners handing in the worked solution (tests/helpers/grading.py's ``submit``), and each
submission autograded alone (``nbgrader autograde LESSON --student=…``), which re-runs the whole lesson in a
fresh kernel. Printed per lesson: the median wall time of one submission, the CPU seconds it cost (nbgrader
and its kernel, from ``getrusage`` of the children) and the largest resident memory of those processes;
then the load average the run met (the numbers grow with it). docs/classroom.md sizes the grading server
from these figures. ``--sandbox both`` grades each submission twice, with the course's sandbox
(lessons_lib/exercises/sandbox.py, the default) and without it (``c.JudgedExecute.sandbox = False``),
alternately, and prints what the sandbox costs as a ratio of wall times. (The CPU column is what reaches
nbgrader's ``getrusage``: with the sandbox it misses the kernel's time, so compare walls there.)
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

from tests.helpers import load_tool  # noqa: E402
from tests.helpers.grading import NBGRADER, POINTS, make_course, submit  # noqa: E402

SANDBOX_OFF = "c.JudgedExecute.sandbox = False\n"


def nbgrader(course: Path, *args: str) -> tuple[float, float, float]:
    """Run nbgrader in ``course``: (wall seconds, CPU seconds of it and its kernel, their peak RSS in MB)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
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


def measure(lesson: str, runs: int, modes: tuple[bool, ...] = (True,)) -> dict[bool, list]:
    """``sandboxed -> [(wall, CPU, peak MB) of each submission]`` for each mode of ``modes``."""
    with tempfile.TemporaryDirectory(prefix="autograde-bench-") as tmp:
        course = Path(tmp) / "course"
        make_course(course)
        config = course / "nbgrader_config.py"
        sandboxed = config.read_text() + load_tool("hub_grading").POLICY.format(percent=10)
        config.write_text(sandboxed)
        (course / "source" / lesson).mkdir(parents=True)
        import stamp_notebooks

        nb = stamp_notebooks.nbgrader_source_notebook(nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb",
                                                                    as_version=4))
        nbformat.write(nb, course / "source" / lesson / f"{lesson}.ipynb")
        nbgrader(course, "generate_assignment", lesson, "--force")
        found: dict[bool, list] = {mode: [] for mode in modes}
        for run in range(runs):
            for mode in modes:  # alternately: both meet the same load
                config.write_text(sandboxed + ("" if mode else SANDBOX_OFF))
                student = f"learner{run}{'s' if mode else 'u'}"
                submit(course, student, lesson, dict.fromkeys(POINTS[lesson], "right"))
                found[mode].append(nbgrader(course, "autograde", lesson, f"--student={student}", "--create"))
        return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lessons' notebook names (default: those with exercises)")
    parser.add_argument("--runs", type=int, default=2, help="submissions autograded per lesson (default 2)")
    parser.add_argument("--sandbox", choices=("on", "off", "both"), default="on",
                        help="grade in the course's sandbox (on, the default), without it, or both")
    args = parser.parse_args(argv)
    lessons = args.lessons or [lesson.slug for lesson in LESSONS.values() if lesson.points]
    modes = {"on": (True,), "off": (False,), "both": (False, True)}[args.sandbox]
    print(f"{os.cpu_count()} cores; nbgrader autograde, one submission at a time, {args.runs} per lesson")
    print(f"{'lesson':<28} {'sandbox':>7} {'wall s (median)':>16} {'CPU s':>7} {'peak MB':>8}", flush=True)
    loads = []
    for lesson in lessons:
        found = measure(lesson, args.runs, modes)
        loads.append(os.getloadavg()[0])
        medians = {}
        for mode, runs in found.items():
            medians[mode] = [statistics.median(f[i] for f in runs) for i in (0, 1)]
            wall, cpu = medians[mode]
            print(f"{lesson:<28} {'on' if mode else 'off':>7} {wall:>16.1f} {cpu:>7.1f} "
                  f"{max(f[2] for f in runs):>8.0f}", flush=True)
        if len(medians) == 2:
            print(f"{'':<28} sandboxed / not: wall {medians[True][0] / medians[False][0]:.2f}", flush=True)
    print(f"load average met (1 min): {min(loads):.1f} to {max(loads):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
