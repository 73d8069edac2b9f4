"""A submission's code, graded by the real ``nbgrader autograde`` with the course's config, touches nothing
but its own run (issue 53): the kernel and the judge's children run in the course's sandbox
(lessons_lib/exercises/sandbox.py).

One course, one assignment (lessons 04 and 11's exercises), one student per attack; each attack is an
answer cell that tries, in the kernel and again in every child where the judge runs it, to: rewrite the
judge's own file; start a process in a new session that outlives grading to rewrite the gradebook; write
``usercustomize.py`` into the user's and the environment's site-packages and a file into the course folder;
return the library's answer computed in a ``_thread`` thread; rebind ``dataclasses.replace``; reach a
listener on 127.0.0.1; print the secret (two flushes, escaped) and a ``<script>``; raise an error quoting
the seeds the judge's process holds. Each scores 0 for the
exercise it games, changes no file, leaves no process, reaches no listener, and its feedback page holds no
secret, seed or script; an honest student gets full points and one planted mistake loses exactly its points.

It runs as root (as in CI: the code runs as ``nobody``) and as an ordinary account the test creates with
``useradd`` (a teacher on The Littlest JupyterHub grading as themselves: bubblewrap in a user namespace).
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import tempfile
import textwrap
from functools import partial
from pathlib import Path

import nbformat
import pytest

import lessons_lib
from lessons_lib.exercises import EXERCISES
from lessons_lib.exercises.grading import course_seed
from tests.helpers.grading import (
    LIBRARY_CALLS,
    POINTS,
    SECRET,
    feedback_text,
    gaming_source,
    guide_course,
    nbgrader,
    planted_mistake,
    scores,
    submit_gaming,
    worked_solution,
)
from tests.helpers.teacher_account import nbgrader_as, own


def answer_def(name: str, body: str) -> str:
    """Exercise ``name``'s ``def`` (its parameters) with ``body``."""
    return f"def {name}({', '.join(EXERCISES[name].params)}):\n" + textwrap.indent(body, "    ")


ASSIGNMENT = "isolated"
LESSONS = ["04_step3_scale_softmax", "11_position"]
FULL = {name: points for lesson in LESSONS for name, points in POINTS[lesson].items()}
JUDGE_FILE = Path(lessons_lib.__file__).parent / "exercises" / "judge.py"
MARK = "lessons-sandbox-test-detached"
#: a wrong my_scale (the scores unchanged), after each attack
WRONG = answer_def("my_scale", "return scores")
#: a tag a browser would run, on a feedback page (escaped text, as the answer cell's source, is no tag)
MARKUP = re.compile(r"<\s*script|<[^>]*\son[a-z]+\s*=", re.I)
#: my_rope's body: the library's answer, computed in a thread started with _thread (not threading)
THREADED = ("import _thread\nbox, lock = [], _thread.allocate_lock()\nlock.acquire()\ndef work():\n    try:\n"
            f"        box.append(({LIBRARY_CALLS['my_rope']}))\n    finally:\n        lock.release()\n"
            "_thread.start_new_thread(work, ())\nlock.acquire()\nreturn box[0]")


def _attacks(course: Path, secret_file: Path, port: int) -> dict[str, tuple[str, str]]:
    """student -> (the exercise they game, its answer cell's code)."""
    site = "import site, sysconfig\n"
    return {
        "rewrites_judge": ("my_scale", f"try:\n    open({str(JUDGE_FILE)!r}, 'a').write('\\n# gamed\\n')\n"
                                       "except OSError:\n    pass\n" + WRONG),
        "detached": ("my_scale", "import subprocess, sys\n"
                     "subprocess.Popen([sys.executable, '-c', 'import sqlite3, time; time.sleep(30); "
                     f"sqlite3.connect({str(course / 'gradebook.db')!r}).execute("
                     f"\"update grade set manual_score = 2\").connection.commit()', {MARK!r}],\n"
                     "                 start_new_session=True, stdin=subprocess.DEVNULL,\n"
                     "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n" + WRONG),
        "plants_files": ("my_scale", site + "import os\n"
                         "for _folder in (site.getusersitepackages(), sysconfig.get_paths()['purelib'],\n"
                         f"                {str(course)!r}, os.path.join(os.getcwd(), '..', '..', '..')):\n"
                         "    try:\n        os.makedirs(_folder, exist_ok=True)\n"
                         "        open(os.path.join(_folder, 'usercustomize.py'), 'w').write('print(1)')\n"
                         "    except OSError:\n        pass\n" + WRONG),
        "thread_library": ("my_rope", answer_def("my_rope", THREADED)),
        "rebinds_replace": ("my_scale", "import dataclasses\n"
                            "dataclasses.replace = lambda obj, **changes: obj\n" + WRONG),
        "loopback": ("my_scale", "import socket\ntry:\n"
                     f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'hello')\n"
                     "except OSError as exc:\n    print('no network:', type(exc).__name__)\n" + WRONG),
        "prints_secret": ("my_scale", "import html, json\ntry:\n"
                          f"    _s = open({str(secret_file)!r}).read().strip()\n"
                          "except OSError:\n    _s = ''\n"
                          "print(_s[:12], end='', flush=True)\nprint(_s[12:], flush=True)\n"
                          "print(json.dumps(_s), repr(_s), html.escape(_s), _s.encode('unicode_escape'))\n"
                          + WRONG),
        # the judge's own process holds the seeds of the unseen cases: an error that quotes them
        "raises_seeds": ("my_scale", answer_def("my_scale", "import gc\n"
                                                "held = [o for o in gc.get_objects() if isinstance(o, dict) "
                                                "and 'seeds' in o]\nraise ValueError(repr(held)[-1500:])")),
        "markup": ("my_scale", "from IPython.display import HTML, display\n"
                   "print('<script>alert(1)</script>')\n"
                   "display(HTML('<script>alert(2)</script><img src=x onerror=alert(3)>'))\n" + WRONG),
    }


def _hand_in(course: Path, port: int, secret_file: Path, run, own) -> dict[str, str]:
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(gaming_source(LESSONS), course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    own()
    run(course, "generate_assignment", ASSIGNMENT, "--force")
    teacher = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    right = {name: worked_solution(teacher, name) for name in FULL}
    submit_gaming(course, "honest", right.get, ASSIGNMENT)
    submit_gaming(course, "mistaken", lambda name: planted_mistake(name, right[name]) if name == "my_scale"
                  else right[name], ASSIGNMENT)
    gamed = {}
    for student, (exercise, code) in _attacks(course, secret_file, port).items():
        submit_gaming(course, student, lambda name, e=exercise, c=code: c if name == e else right[name],
                      ASSIGNMENT)
        gamed[student] = exercise
    own()
    return gamed


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _planted(course: Path, home: Path) -> list[Path]:
    """Where the attacks would have left usercustomize.py."""
    import site
    import sysconfig

    user_site = Path(site.getusersitepackages().replace(os.path.expanduser("~"), str(home), 1))
    return [p / "usercustomize.py" for p in (user_site, Path(sysconfig.get_paths()["purelib"]), course)]


def _left_running() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and MARK.encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            continue
    return found


def _grade_and_check(course: Path, secret_file: Path, home: Path, run=nbgrader, own=lambda: None) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    judge_before = _digest(JUDGE_FILE)
    try:
        gamed = _hand_in(course, listener.getsockname()[1], secret_file, run, own)
        run(course, "autograde", ASSIGNMENT, "--create")
        run(course, "generate_feedback", ASSIGNMENT)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing connected: the sandbox has a loopback of its own
    finally:
        listener.close()
        planted = [p for p in _planted(course, home) if p.exists()]
        for path in planted:  # never left behind for the next Python, whatever the assertions say
            path.unlink()
    assert _digest(JUDGE_FILE) == judge_before
    assert not planted, planted
    assert _left_running() == []
    assert scores(course, "honest", ASSIGNMENT) == FULL
    assert scores(course, "mistaken", ASSIGNMENT) == {**FULL, "my_scale": 0}
    seeds = [str(course_seed(SECRET, name)) for name in FULL]
    for student, exercise in gamed.items():
        assert scores(course, student, ASSIGNMENT)[exercise] == 0, student
        page = (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
        flat = re.sub(r"\s", "", page)
        assert SECRET.replace(" ", "") not in flat and SECRET[12:] not in page, student
        assert not any(seed in page for seed in seeds), student
        assert not MARKUP.search(page), (student, MARKUP.search(page))  # (the source shows it, escaped)
    assert "my_rope: NOT YET (library_answer)" in feedback_text(course, "thread_library", ASSIGNMENT)
    raised = feedback_text(course, "raises_seeds", ASSIGNMENT)  # the verdict in the course's words only
    assert "my_scale: NOT YET (raised)" in raised and "its message is not quoted in the grade" in raised
    assert "grade_id" not in raised, "nothing of what the judge's process held"
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert all(grade.manual_score is None for student in gamed
                   for grade in gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).grades)


@pytest.mark.grading
def test_as_root_a_submissions_code_touches_nothing_but_its_own_run(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("this half runs as root (CI); the next test grades as an ordinary account")
    course = tmp_path / "course"
    secret_file = guide_course(course)
    _grade_and_check(course, secret_file, Path.home())


@pytest.mark.grading
def test_as_an_ordinary_account_a_submissions_code_touches_nothing_but_its_own_run(teacher_account):
    """The teacher's account needs nothing but user namespaces (bubblewrap makes its sandbox in one)."""
    home = Path(teacher_account.pw_dir)
    course = Path(tempfile.mkdtemp(prefix="course-", dir=home))
    secret_file = guide_course(course)
    _grade_and_check(course, secret_file, home, run=partial(nbgrader_as, teacher_account),
                     own=lambda: own(teacher_account, course, secret_file))
