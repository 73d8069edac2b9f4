"""Grading on a real JupyterHub through nbgrader's exchange (``make test-hub``).

The hub of tests/helpers/hub_classroom.py, every server the Binder environment (tools/binder_env.py, which ran
``binder/postBuild``: nbgrader's teacher views off for everyone). Set up as docs/classroom.md says:
``tools/hub_grading.py hub`` makes the exchange and every user's nbgrader config (here in a folder the
servers find on ``JUPYTER_CONFIG_PATH``, as they find the environment's own on a hub), and the teacher runs
``tools/hub_grading.py teacher`` as themselves (their views on, their course folder and config). Then a
term in miniature:

1. the teacher, in a kernel of their own server, generates and releases lesson 03 and lesson 00
   (whose concept quiz is not graded but handed in);
2. two learners find both in the *Assignments* tab's API, fetch them, answer lesson 00's concept quiz
   in a kernel (as the widget records it, beside the notebook), solve lesson 03 (one right, one with the
   grading test's planted mistake), save it as JupyterLab does and submit both;
3. the teacher collects and autogrades; the gradebook gives the right learner full points and the
   other none, and the class report, run on the teacher's course folder, names that learner's mistake
   and reads both quizzes;
4. the learners' pages disable the teacher's views and their servers serve no formgrader; the
   teacher's page enables them and their server serves it.

Then the two routes of docs/classroom.md for Zero to JupyterHub, where every learner's server runs as the
same user (uid 1000) and nbgrader takes the learner's name from ``JUPYTERHUB_USER``, as every server of
this test hub does (one account, :data:`ONE_ACCOUNT`):

5. the shared exchange volume, labelled unsafe: a learner's kernel lists the exchange's ``inbound``, deletes
   another learner's submission and submits in that learner's name, and the teacher collects the forgery;
6. collecting by upload, the recommended route: each learner downloads the notebook from their own server
   (*File → Download*) and uploads it to the learning platform, whose download of every upload names each
   file after the account that uploaded it; ``tools/lms.py collect`` files it under the hub user the
   roster gives that account, whatever the learner named it or set in their server, and autograde grades it.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

import nbformat
import pytest

from tests.helpers import REPO, load_tool, require
from tests.helpers.hub_classroom import Learner, chp_available, running_hub

binder_env = load_tool("binder_env")
hub_grading = load_tool("hub_grading")


COURSE_ID = "attention"
GRADED, QUIZ = "03_step2_scores", "00_start_here"
#: nbgrader names a submission after the account that runs the server (or JUPYTERHUB_USER when that
#: account is Zero to JupyterHub's jovyan). One account runs every server of this test hub, so the
#: learners' config names them as a real hub would; the teacher keeps nbgrader's default, everyone.
ONE_ACCOUNT = ("import os  # tests/hub/test_hub_grading.py: one account runs every server of this hub\n"
               "if os.environ.get('JUPYTERHUB_USER', 'teacher') != 'teacher':\n"
               "    c.CourseDirectory.student_id = os.environ['JUPYTERHUB_USER']  # noqa: F821\n")


@pytest.fixture(scope="module")
def graded_hub(tmp_path_factory):
    """The hub, set up for grading: the exchange, the learners' config, the teacher's config and views."""
    require(chp_available(), "configurable-http-proxy is not installed (make test-hub installs it with npm)")
    python = binder_env.build()
    tmp = tmp_path_factory.mktemp("graded-hub")
    exchange, shared = tmp / "srv" / "exchange", tmp / "etc-jupyter"
    env = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    tool = str(REPO / "tools" / "hub_grading.py")
    hub_config = tmp / "jupyterhub_config.d"
    subprocess.run([str(python), tool, "hub", "--exchange", str(exchange), "--course-id", COURSE_ID,
                    "--config-dir", str(shared), "--jupyterhub-config-dir", str(hub_config)],
                   check=True, env=env)
    with open(shared / hub_grading.CONFIG, "a", encoding="utf-8") as config:
        config.write(ONE_ACCOUNT)
    teacher_home = tmp / "hub" / "home" / "teacher"
    teacher_home.mkdir(parents=True)
    course = teacher_home / "course"
    # as the teacher: their home, and the platform folders every server of this hub uses
    subprocess.run([str(python), tool, "teacher", "--course", str(course), "--exchange", str(exchange),
                    "--course-id", COURSE_ID], check=True, cwd=teacher_home,
                   env={**env, "HOME": str(teacher_home), "JUPYTER_PLATFORM_DIRS": "1"})
    for lesson in (GRADED, QUIZ):
        (course / "source" / lesson).mkdir(parents=True)
        shutil.copy(REPO / "notebooks" / f"{lesson}.ipynb", course / "source" / lesson)
    # what TLJH's hub reads from its jupyterhub_config.d, and where the environment's config would be
    extra = "\n" + (hub_config / "nbgrader.py").read_text() + \
        f'c.Spawner.environment["JUPYTER_CONFIG_PATH"] = {str(shared)!r}\n'
    with running_hub(tmp / "hub", python.parent / "jupyterhub-singleuser", extra_config=extra) as hub:
        yield hub, course, exchange


def start_server(learner: Learner, timeout: float = 300) -> None:
    """Log in and open JupyterLab, waiting while the hub starts the server.

    The learner lands on their JupyterLab, whatever the query: a request that reaches the hub while the
    proxy has not yet added the new server's route is sent back with ``?redirects=1`` (JupyterHub's guard
    against a redirect loop), and the hub's own load, beside the class of forty, makes that happen."""
    learner.log_in()
    status, url, page = learner.get("/hub/user-redirect/lab")
    deadline = time.monotonic() + timeout
    while "/hub/spawn-pending/" in url and time.monotonic() < deadline:
        time.sleep(1)
        status, url, page = learner.get(f"/user/{learner.name}/lab")
    landed = urllib.parse.urlsplit(url).path.endswith(f"/user/{learner.name}/lab")
    assert status == 200 and landed and b'"appName": "JupyterLab"' in page, (status, url, page[:300])


def run(kernel, code: str) -> str:
    return "".join(o.get("text", "") for o in kernel.execute(code, timeout=900) if "text" in o)


def nbgrader(kernel, *args: str) -> str:
    """``nbgrader ARGS`` in the teacher's course folder, from a kernel of their server (a terminal there)."""
    return run(kernel, (
        "import os, subprocess, sys\n"
        "env = {**os.environ, 'PATH': os.path.dirname(sys.executable) + os.pathsep + os.environ['PATH']}\n"
        f"done = subprocess.run([sys.executable, '-m', 'nbgrader', *{list(args)!r}], cwd=os.path.expanduser("
        "'~/course'), capture_output=True, text=True, env=env)\n"
        "print(done.stdout + done.stderr)\n"
        "assert done.returncode == 0, done.stdout + done.stderr\n"))


def page_config(learner: Learner) -> dict:
    status, _, page = learner.get(f"/user/{learner.name}/lab")
    assert status == 200
    data = re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(data.group(1))


def assignments(learner: Learner) -> list[dict]:
    """What the Assignments tab lists: the released assignments (released or fetched), then the submitted."""
    status, _, body = learner.get(f"/user/{learner.name}/assignments?course_id={COURSE_ID}")
    listed = json.loads(body)
    assert status == 200 and listed["success"], listed
    return listed["value"]


def statuses(learner: Learner) -> dict[str, str]:
    return {a["assignment_id"]: a["status"] for a in assignments(learner) if a["status"] != "submitted"}


def act(learner: Learner, action: str, assignment: str) -> None:
    """What the Assignments tab's Fetch and Submit buttons send."""
    prefix = f"/user/{learner.name}"
    answer = learner.send(f"{prefix}/assignments/{action}", "POST",
                          {"course_id": COURSE_ID, "assignment_id": assignment}, xsrf_path=prefix)
    assert not (isinstance(answer, dict) and answer.get("success") is False), answer


def solve(learner: Learner, how: str, path: str = f"{GRADED}/{GRADED}.ipynb") -> None:
    """Fill lesson 03's exercise as the students of tests/grading/test_nbgrader_pipeline.py do, and save
    it through the server."""
    from tests.helpers import grading

    prefix = f"/user/{learner.name}"
    status, _, body = learner.get(f"{prefix}/api/contents/{path}?content=1")
    assert status == 200, body[:300]
    nb = nbformat.from_dict(json.loads(body)["content"])
    teacher = nbformat.read(REPO / "notebooks" / f"{GRADED}.ipynb", as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in teacher.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = grading.fill(cell.source, solutions[grade_id], {"my_scores": how})
    learner.send(f"{prefix}/api/contents/{path}", "PUT", {"type": "notebook", "format": "json",
                                                          "content": nb}, xsrf_path=prefix)


@pytest.mark.hub
@pytest.mark.slow
def test_a_learner_fetches_solves_and_submits_through_the_exchange_and_the_teacher_grades_it(graded_hub):
    from nbgrader.api import Gradebook

    from tests.helpers import grading

    hub, course, exchange = graded_hub
    teacher = Learner(hub, "teacher")
    start_server(teacher)
    kernel = teacher.start_kernel("course/source/03_step2_scores/03_step2_scores.ipynb")
    try:
        for lesson in (GRADED, QUIZ):
            nbgrader(kernel, "generate_assignment", lesson, "--force")
            nbgrader(kernel, "release_assignment", lesson)
    finally:
        kernel.close()
    assert (exchange / COURSE_ID / "outbound" / GRADED / f"{GRADED}.ipynb").is_file()

    plan = {"ada": ("right", "B"), "ben": ("mistake", "A")}
    for name, (how, pick) in plan.items():
        learner = Learner(hub, name)
        start_server(learner)
        assert statuses(learner) == {GRADED: "released", QUIZ: "released"}
        for lesson in (GRADED, QUIZ):
            act(learner, "fetch", lesson)
        assert statuses(learner) == {GRADED: "fetched", QUIZ: "fetched"}
        quiz = learner.start_kernel(f"{QUIZ}/{QUIZ}.ipynb")
        try:
            run(quiz, f"import lessons_lib as ll\nll.concept_quiz('pre').answer(0, {pick!r})")
        finally:
            quiz.close()
        assert (hub.home(name) / QUIZ / "concept-quiz.json").is_file(), "the quiz writes beside the notebook"
        solve(learner, how)
        for lesson in (GRADED, QUIZ):
            act(learner, "submit", lesson)
        submitted = {a["assignment_id"] for a in assignments(learner) if a["status"] == "submitted"}
        assert submitted == {GRADED, QUIZ}, submitted

    kernel = teacher.start_kernel("course/source/03_step2_scores/03_step2_scores.ipynb")
    try:
        for lesson in (GRADED, QUIZ):
            nbgrader(kernel, "collect", lesson)
        nbgrader(kernel, "autograde", GRADED, "--create")
    finally:
        kernel.close()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {name: gb.find_submission_notebook(GRADED, GRADED, name).score for name in plan}
    assert scores == {"ada": 3.0, "ben": 0.0}, scores

    out = course.parent / "report"
    done = subprocess.run([sys.executable, str(REPO / "tools" / "class_report.py"), str(course), "--out",
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(out / "mistakes.csv", encoding="utf-8") as fh:
        rows = {(r["exercise"], r["outcome"]): r["learners"] for r in csv.DictReader(fh)}
    from lessons_lib.exercises import EXERCISES

    mistake = grading.PLANTED["my_scores"][2] or grading.named_mistake("my_scores", EXERCISES)
    assert rows == {("my_scores", mistake): "1", ("my_scores", "passed"): "1"}, rows
    with open(out / "concept-quiz.csv", encoding="utf-8") as fh:
        quiz = {r["question"]: r for r in csv.DictReader(fh)}
    assert quiz["shapes"]["pre right"] == "0.50", quiz["shapes"]  # ada picked B, right; ben A


@pytest.mark.hub
@pytest.mark.slow
def test_the_teachers_views_are_off_for_learners_and_on_for_the_teacher(graded_hub, hub_figures):
    hub, _, _ = graded_hub
    learner, teacher = Learner(hub, "cleo"), Learner(hub, "teacher")
    for person in (learner, teacher):
        start_server(person)
    views = set(hub_grading.TEACHER_LAB)
    assert views <= set(page_config(learner)["disabledExtensions"])
    assert not views & set(page_config(teacher)["disabledExtensions"])
    assert "@jupyter/nbgrader:assignment-list" not in page_config(learner)["disabledExtensions"]
    status, _, _ = learner.get(f"/user/{learner.name}/formgrader")
    assert status == 404, status
    status, _, page = teacher.get(f"/user/{teacher.name}/formgrader")
    assert status == 200 and b"formgrader" in page.lower(), (status, page[:300])
    hub_figures.append(f"memory of a learner's server with nbgrader's learner extensions (no kernel): "
                       f"{learner.memory_mb():.0f} MB")


def release(teacher: Learner) -> None:
    """Lesson 03 generated (and put in the exchange) again, from a kernel of the teacher's server."""
    kernel = teacher.start_kernel("course/source/03_step2_scores/03_step2_scores.ipynb")
    try:
        nbgrader(kernel, "generate_assignment", GRADED, "--force")
        nbgrader(kernel, "release_assignment", GRADED, "--force")
    finally:
        kernel.close()


#: what a learner's kernel (or terminal) can do to a shared exchange volume when every server is one account
FORGERY = """
import glob, os, shutil, subprocess, sys
inbound = {inbound!r}
theirs = sorted(glob.glob(os.path.join(inbound, 'ivy+*')))
print('listed:', len(theirs))
for folder in theirs:
    shutil.rmtree(folder)
print('deleted:', len(theirs))
env = {{**os.environ, 'JUPYTERHUB_USER': 'ivy'}}
done = subprocess.run([sys.executable, '-m', 'nbgrader', 'submit', {lesson!r}, '--course', {course!r}],
                      cwd=os.path.expanduser('~'), env=env, capture_output=True, text=True)
print('submitted as ivy:', done.returncode)
"""


@pytest.mark.hub
@pytest.mark.slow
def test_a_shared_exchange_volume_lets_a_learner_delete_and_forge_anothers_submission(graded_hub):
    """The route docs/classroom.md labels unsafe on Zero to JupyterHub, shown doing what the label says."""
    hub, course, exchange = graded_hub
    teacher = Learner(hub, "teacher")
    start_server(teacher)
    release(teacher)
    ivy, mallory = Learner(hub, "ivy"), Learner(hub, "mallory")
    for learner, how in ((ivy, "right"), (mallory, "mistake")):
        start_server(learner)
        act(learner, "fetch", GRADED)
        solve(learner, how)
    act(ivy, "submit", GRADED)
    kernel = mallory.start_kernel(f"{GRADED}/{GRADED}.ipynb")
    try:
        said = run(kernel, FORGERY.format(inbound=str(exchange / COURSE_ID / "inbound"), lesson=GRADED,
                                          course=COURSE_ID))
    finally:
        kernel.close()
    assert "listed: 1" in said and "deleted: 1" in said and "submitted as ivy: 0" in said, said
    kernel = teacher.start_kernel("course/source/03_step2_scores/03_step2_scores.ipynb")
    try:
        nbgrader(kernel, "collect", "--update", GRADED)
    finally:
        kernel.close()
    from tests.helpers.grading import PLANTED

    old, new, _ = PLANTED["my_scores"]
    collected = (course / "submitted" / "ivy" / GRADED / f"{GRADED}.ipynb").read_text()
    assert new in collected and old not in collected, "ivy's collected notebook is mallory's mistake"


def canvas_download(uploads: dict[str, tuple[str, str, bytes]], path) -> None:
    """What Canvas's *Download Submissions* gives (instructure/canvas-lms, lib/content_zipper.rb): each
    upload named ``<sortable name>_<user id>_<file id>_<its own name>``, all from the platform's accounts."""
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        for number, (user_id, (sortable, filename, data)) in enumerate(sorted(uploads.items()), start=900):
            name = re.sub(r"[^\w]", "", sortable).lower()
            zf.writestr(f"{name}_{user_id}_{number}_{filename}", data)


@pytest.mark.hub
@pytest.mark.slow
def test_collected_by_upload_each_notebook_counts_for_the_account_that_uploaded_it(graded_hub, tmp_path):
    """The route docs/classroom.md recommends on Zero to JupyterHub: no exchange; the platform's login says
    whose upload is whose, and tools/lms.py collect files it under that learner's hub user."""
    from nbgrader.api import Gradebook

    hub, course, _ = graded_hub
    teacher = Learner(hub, "teacher")
    start_server(teacher)
    release(teacher)
    released = json.loads((course / "release" / GRADED / f"{GRADED}.ipynb").read_text())
    roster = tmp_path / "roster.csv"
    roster.write_text("hub user,lms id,first name,last name,email\n"
                      "uma,5001,Uma,Iyer,uma@uni.example\nmo,5002,Mo,Reyes,mo@uni.example\n")
    accounts = {"uma": ("5001", "Iyer, Uma"), "mo": ("5002", "Reyes, Mo")}
    uploads = {}
    for name, how, filename in (("uma", "right", f"{GRADED}.ipynb"),
                                ("mo", "mistake", f"uma_{GRADED}.ipynb")):  # mo names hers after uma
        learner = Learner(hub, name)
        start_server(learner)
        prefix = f"/user/{name}"
        # the learner uploads the notebook the platform gave out, into JupyterLab, and solves it there
        learner.send(f"{prefix}/api/contents/{GRADED}.ipynb", "PUT",
                     {"type": "notebook", "format": "json", "content": released}, xsrf_path=prefix)
        solve(learner, how, path=f"{GRADED}.ipynb")
        status, _, data = learner.get(f"{prefix}/files/{GRADED}.ipynb?download=1")  # File -> Download
        assert status == 200 and data.startswith(b"{"), (status, data[:200])
        user_id, sortable = accounts[name]  # the platform knows who logged in to upload
        uploads[user_id] = (sortable, filename, data)
    archive = tmp_path / "submissions.zip"
    canvas_download(uploads, archive)
    done = subprocess.run([sys.executable, str(REPO / "tools" / "lms.py"), "collect", str(course), GRADED,
                           str(archive), "--roster", str(roster)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    kernel = teacher.start_kernel("course/source/03_step2_scores/03_step2_scores.ipynb")
    try:
        nbgrader(kernel, "autograde", GRADED, "--create", "--student=uma")
        nbgrader(kernel, "autograde", GRADED, "--create", "--student=mo")
    finally:
        kernel.close()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {name: gb.find_submission_notebook(GRADED, GRADED, name).score for name in accounts}
    assert scores == {"uma": 3.0, "mo": 0.0}, scores
