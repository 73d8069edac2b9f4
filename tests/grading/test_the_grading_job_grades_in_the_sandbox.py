"""The Zero to JupyterHub grading Job the guide gives (docs/grading-job.yaml) asks Kubernetes for what the
course's sandbox needs and nothing more, and its own command, run here as its container would run it,
grades a course in the sandbox: an honest submission to full points, an attack to 0.

There is no Kubernetes here: the manifest is parsed, and its container's command (with Kubernetes'
``$(VAR)`` expansion of its ``env``) runs on this machine as an ordinary account the test creates (the
Job's ``runAsUser``), with no capability even in its bounding set (``drop: ["ALL"]``) and
``no_new_privs`` (``allowPrivilegeEscalation: false``), in the course folder of a home that stands for the
Job's volume. What a cluster adds, its seccomp and AppArmor defaults and its masked ``/proc``, and the
image that repo2docker builds from ``binder/`` (``apt.txt``'s bubblewrap), are not tested: docs/classroom.md
says so.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import nbformat
import pytest
import yaml

from tests.helpers import REPO
from tests.helpers.grading import (
    LIBRARY_CALLS,
    POINTS,
    gaming_source,
    guide_course,
    scores,
    submit_gaming,
    worked_solution,
)
from tests.helpers.teacher_account import environment, nbgrader_as, own

MANIFEST = REPO / "docs" / "grading-job.yaml"
GUIDE = (REPO / "docs" / "classroom.md").read_text(encoding="utf-8")
#: the image's user, as repo2docker makes it (--user-name jovyan; its uid and gid by default 1000)
JOVYAN = 1000


def _job() -> dict:
    return yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))


def _pod(job: dict) -> dict:
    return job["spec"]["template"]["spec"]


def _container(job: dict) -> dict:
    (container,) = _pod(job)["containers"]
    return container


def _security(job: dict, field: str):
    """A securityContext field as it applies to the container: its own, else the pod's."""
    container, pod = _container(job).get("securityContext", {}), _pod(job).get("securityContext", {})
    return container.get(field, pod.get(field))


def _env(job: dict) -> dict[str, str]:
    return {entry["name"]: entry["value"] for entry in _container(job).get("env", [])}


def _expanded(words: list[str], env: dict[str, str]) -> list[str]:
    """Kubernetes' expansion of a container's command: ``$(NAME)`` of its env, ``$$`` for one ``$``."""
    def one(match: re.Match) -> str:
        return "$" if match.group(0) == "$$" else env.get(match.group(1), match.group(0))

    return [re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", one, word) for word in words]


def _command(job: dict) -> list[str]:
    container = _container(job)
    return _expanded([*container.get("command", []), *container.get("args", [])], _env(job))


def _course_mount(job: dict) -> tuple[str, str]:
    """(the mount path of the volume that holds the working folder, the working folder within it)."""
    folder = _container(job)["workingDir"]
    volumes = {v["name"]: v for v in _pod(job)["volumes"]}
    for mount in _container(job)["volumeMounts"]:
        if Path(folder).is_relative_to(mount["mountPath"]):
            assert "persistentVolumeClaim" in volumes[mount["name"]], "the course is on a volume of its own"
            return mount["mountPath"], os.path.relpath(folder, mount["mountPath"])
    raise AssertionError(f"no volume is mounted over the Job's working folder {folder}")


@pytest.mark.grading
def test_the_grading_job_runs_one_autograde_as_jovyan_unprivileged_with_its_profiles_unconfined():
    job = _job()
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert job["spec"]["backoffLimit"] == 0 and _pod(job)["restartPolicy"] == "Never"
    nbgrader, step, lesson = _command(job)
    assert (nbgrader, step) == ("nbgrader", "autograde") and lesson in POINTS  # a lesson with exercises
    # what bubblewrap needs: seccomp and AppArmor that let it unshare and mount
    assert _security(job, "seccompProfile") == {"type": "Unconfined"}
    assert _security(job, "appArmorProfile") == {"type": "Unconfined"}
    # and nothing more: the image's user, no privilege, no capability
    assert "--user-name jovyan" in GUIDE and "--user-id" not in GUIDE
    assert _security(job, "runAsUser") == JOVYAN and _security(job, "runAsGroup") == JOVYAN
    assert _security(job, "runAsNonRoot") is True
    assert not _security(job, "privileged") and _security(job, "allowPrivilegeEscalation") is False
    assert _security(job, "capabilities") == {"drop": ["ALL"]}
    # the course where the teacher's pod has it: ~/course on the home volume, the image's home
    assert _course_mount(job) == ("/home/jovyan", "course")
    assert "hub_grading.py teacher --course ~/course" in GUIDE
    marked = [line for line in MANIFEST.read_text(encoding="utf-8").splitlines() if "CHANGE-ME:" in line]
    assert [re.match(r"\s*-?\s*(\w+):", line).group(1) for line in marked] == ["image", "value", "claimName"]
    assert "docs/grading-job.yaml" in GUIDE
    assert "bubblewrap" in (REPO / "binder" / "apt.txt").read_text(encoding="utf-8").split()  # in the image


def _as_the_jobs_container(account, argv: list[str], cwd: Path, env: dict[str, str]):
    """``argv`` run as the Job's container runs its command: the account's uid and gid (its runAsUser), no
    other group, no capability even in the bounding set (drop ALL), no_new_privs (allowPrivilegeEscalation:
    false)."""
    return subprocess.run(["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}",
                           "--clear-groups", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--",
                           *argv],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=1800)


@pytest.mark.grading
def test_the_grading_jobs_own_command_grades_honest_work_fully_and_an_attack_to_zero(teacher_account):
    job = _job()
    lesson = _env(job)["LESSON"]
    home = Path(teacher_account.pw_dir)  # stands for the Job's volume
    mount, folder = _course_mount(job)
    course = home / folder
    secret_file = guide_course(course)
    (course / "source" / lesson).mkdir(parents=True)
    nbformat.write(gaming_source([lesson]), course / "source" / lesson / f"{lesson}.ipynb")
    own(teacher_account, course, secret_file)
    nbgrader_as(teacher_account, course, "generate_assignment", lesson)
    teacher = nbformat.read(course / "source" / lesson / f"{lesson}.ipynb", as_version=4)
    right = {name: worked_solution(teacher, name) for name in POINTS[lesson]}
    planted = [course / "planted-by-a-submission", home / "planted-by-a-submission"]
    attack = "".join(f"try:\n    open({str(p)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
                     for p in planted)
    attack += f"def my_scale(scores, d_k):\n    return {LIBRARY_CALLS['my_scale']}\n"
    submit_gaming(course, "honest", right.get, lesson)
    submit_gaming(course, "attacker", lambda name: attack if name == "my_scale" else right[name], lesson)
    own(teacher_account, course)

    env = {**environment(teacher_account), **_env(job)}
    done = _as_the_jobs_container(teacher_account, _command(job), cwd=course, env=env)
    assert done.returncode == 0 and "[ERROR]" not in done.stderr, done.stderr
    assert scores(course, "honest", lesson) == POINTS[lesson]
    assert scores(course, "attacker", lesson) == {**POINTS[lesson], "my_scale": 0}
    assert [p for p in planted if p.exists()] == [], "the answer cell wrote outside the sandbox's scratch"
