"""The Zero to JupyterHub grading Job the guide gives (docs/grading-job.yaml) asks Kubernetes for what the
course's sandbox needs and nothing more, and its own command, run here as its container would run it,
grades a course in the sandbox: an honest submission to full points, an attack to 0.

There is no Kubernetes here: the manifest is parsed, and its container's command (with Kubernetes'
``$(VAR)`` expansion of its ``env``) runs on this machine as an ordinary account the test creates (the
Job's ``runAsUser``), with no capability even in its bounding set (``drop: ["ALL"]``) and
``no_new_privs`` (``allowPrivilegeEscalation: false``), in the course folder of a home that stands for the
Job's volume. Run in a mount namespace whose ``/proc`` is hidden in part as a container runtime hides it
by default (what ``procMount: Default`` gives), the same command grades nothing and says why: the manifest
asks for ``procMount: Unmasked``. What a cluster adds (whether it accepts those settings, its seccomp and
AppArmor), and the image that repo2docker builds from ``binder/`` (``apt.txt``'s bubblewrap), are not
tested: docs/classroom.md says so.
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
    # a /proc the sandbox may mount its own over (the next tests), which Kubernetes gives in a user namespace
    assert _security(job, "procMount") == "Unmasked" and _pod(job)["hostUsers"] is False
    # the course where the teacher's pod has it: ~/course on the home volume, the image's home
    assert _course_mount(job) == ("/home/jovyan", "course")
    assert "hub_grading.py teacher --course ~/course" in GUIDE
    marked = [line for line in MANIFEST.read_text(encoding="utf-8").splitlines() if "CHANGE-ME:" in line]
    assert [re.match(r"\s*-?\s*(\w+):", line).group(1) for line in marked] == ["image", "value", "claimName"]
    assert "docs/grading-job.yaml" in GUIDE
    assert "bubblewrap" in (REPO / "binder" / "apt.txt").read_text(encoding="utf-8").split()  # in the image


#: the parts of /proc a container runtime hides by default (runc's readonlyPaths, then its maskedPaths)
READ_ONLY = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger")
MASKED = ("/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
          "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi")


def _in_a_masked_proc(argv: list[str]) -> list[str]:
    """``argv`` in a mount namespace of its own whose /proc is hidden as a container's is by default."""
    steps = [f"mount --bind {p} {p} && mount -o remount,bind,ro {p}" for p in READ_ONLY if os.path.exists(p)]
    steps += [f"mount --bind /dev/null {p}" if os.path.isfile(p) else f"mount -t tmpfs -o ro tmpfs {p}"
              for p in MASKED if os.path.exists(p)]
    return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", "\n".join([*steps, 'exec "$@"']),
            "masked-proc", *argv]


def _as_the_jobs_container(account, argv: list[str], cwd: Path, env: dict[str, str], proc: str = "Unmasked"):
    """``argv`` run as the Job's container runs its command: the account's uid and gid (its runAsUser), no
    other group, no capability even in the bounding set (drop ALL), no_new_privs (allowPrivilegeEscalation:
    false), with this machine's whole /proc (``proc="Unmasked"``) or one hidden in part (``"Default"``)."""
    argv = ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--clear-groups",
            "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--", *argv]
    return subprocess.run(argv if proc == "Unmasked" else _in_a_masked_proc(argv), capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=1800)


def _hand_in(account, job: dict) -> tuple[Path, str, list[Path]]:
    """The Job's lesson, released in ~/course of the account's home (the Job's volume), handed in by an
    honest student and by one whose my_scale returns the library's answer and writes into the course folder
    and the home; (the course, the lesson, where that student's files would be)."""
    lesson = _env(job)["LESSON"]
    home = Path(account.pw_dir)
    course = home / _course_mount(job)[1]
    secret_file = guide_course(course)
    (course / "source" / lesson).mkdir(parents=True)
    nbformat.write(gaming_source([lesson]), course / "source" / lesson / f"{lesson}.ipynb")
    own(account, course, secret_file)
    nbgrader_as(account, course, "generate_assignment", lesson)
    teacher = nbformat.read(course / "source" / lesson / f"{lesson}.ipynb", as_version=4)
    right = {name: worked_solution(teacher, name) for name in POINTS[lesson]}
    planted = [course / "planted-by-a-submission", home / "planted-by-a-submission"]
    attack = "".join(f"try:\n    open({str(p)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
                     for p in planted)
    attack += f"def my_scale(scores, d_k):\n    return {LIBRARY_CALLS['my_scale']}\n"
    submit_gaming(course, "honest", right.get, lesson)
    submit_gaming(course, "attacker", lambda name: attack if name == "my_scale" else right[name], lesson)
    own(account, course)
    return course, lesson, planted


@pytest.mark.grading
def test_the_grading_jobs_own_command_grades_honest_work_fully_and_an_attack_to_zero(teacher_account):
    job = _job()
    course, lesson, planted = _hand_in(teacher_account, job)
    env = {**environment(teacher_account), **_env(job)}
    done = _as_the_jobs_container(teacher_account, _command(job), cwd=course, env=env)
    assert done.returncode == 0 and "[ERROR]" not in done.stderr, done.stderr
    assert scores(course, "honest", lesson) == POINTS[lesson]
    assert scores(course, "attacker", lesson) == {**POINTS[lesson], "my_scale": 0}
    assert [p for p in planted if p.exists()] == [], "the answer cell wrote outside the sandbox's scratch"


@pytest.mark.grading
def test_with_the_runtimes_default_proc_the_jobs_command_grades_nothing_and_names_procmount(teacher_account):
    job = _job()
    course, lesson, planted = _hand_in(teacher_account, job)
    env = {**environment(teacher_account), **_env(job)}
    done = _as_the_jobs_container(teacher_account, _command(job), cwd=course, env=env, proc="Default")
    said = re.sub(r"\s+", " ", done.stderr)
    assert done.returncode != 0, said
    assert "hides parts of /proc" in said and "`procMount: Unmasked` with `hostUsers: false`" in said, said
    assert not list((course / "autograded").glob("*/*/*.ipynb"))
    assert [p for p in planted if p.exists()] == []
