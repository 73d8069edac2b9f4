"""nbgrader's autograde with the course's judge: a graded cell scores only when the learner's kernel and a
judge outside it both pass it, and no learner's process ever holds the course's secret.

In the course's ``nbgrader_config.py`` (docs/classroom.md; ``tools/hub_grading.py teacher`` writes it)::

    from lessons_lib.exercises.autograde import autograde_preprocessors

    c.Autograde.autograde_preprocessors = autograde_preprocessors()
    c.JudgedExecute.secret_file = "~/.lessons-secret"

:class:`JudgedExecute` takes the place of nbgrader's ``Execute`` step (the rest of nbgrader's steps stay as
they are) and, for each submission:

1. reads the course's secret from the teacher's file (:func:`~.grading.read_secret`); a file that is
   missing, empty, blank, too short or readable by others stops grading with what to do, and so does a
   secret found in the environment, which every learner's kernel would inherit and could print;
2. runs the notebook in a fresh kernel, as nbgrader does, with :data:`~.grading.JUDGE_VARIABLE` set (a
   graded cell that runs under autograde without it says the judge is missing, instead of grading);
3. sends the submission's answer cells and graded cells, and for each exercise with unseen cases only its
   seed (:func:`~.grading.course_seed`, derived here from the secret), to the judge
   (:mod:`.judge`: a fresh Python that never runs the learner's code itself);
4. puts each graded cell the judge does not pass in the form nbgrader scores as 0: its error, the judge's
   one-line verdict (``my_scale: NOT YET (tampered): …``), which the feedback page and the class report read;
   where the learner's own kernel had shown that cell passing, or no verdict at all, while the judge
   finds a mistake or the exercise not attempted (its check switched off in the kernel: ``ll`` rebound,
   the cell blanked, its error swallowed), the cell's metadata says so
   (:data:`~.grading.KERNEL_DISAGREES`, read by the class report: such a "mistake" is most likely the
   placeholder of no work, for the teacher, not a misconception of the class), and so it does for a
   submission that hands in a ``lessons_lib`` of its own (:data:`~.grading.OWN_LIBRARY`);
5. removes the secret from every output (:func:`redact`), and says so in the log.

The kernel and the judge both run in a sandbox (:mod:`.sandbox`: read-only files, the secret file, the
grader's home and the course folder hidden, a scratch of their own, no network, nothing left running, not
the grader's identity, ``python -I``): a submission's code can touch nothing but its own run. Where no
sandbox can be made, grading stops and says what to do; ``c.JudgedExecute.sandbox = False`` (a teacher's
own test of their set-up, never a class's work) grades without it, with a warning in the log.

A graded cell the kernel failed keeps its own error: the grade is the kernel's *and* the judge's.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys

from jupyter_client import AsyncKernelManager
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode

from .grading import (
    JUDGE_NOTE,
    JUDGE_VARIABLE,
    KERNEL_DISAGREES,
    LEAKED_VARIABLE,
    NOT_THE_LEARNERS,
    OWN_LIBRARY,
    SECRET_FILE,
    SecretError,
    course_seed,
    graded_calls,
    read_secret,
    read_verdict,
)
from .sandbox import Scratch, command, environment, require

__all__ = ["JudgedExecute", "SandboxedKernelManager", "autograde_preprocessors", "JudgeError", "run_judge",
           "apply_verdicts", "redact", "REDACTED", "safe_outputs", "SAFE_DATA"]


class JudgeError(RuntimeError):
    """The judge itself could not give its verdicts (not the learner's doing): grading stops, saying why."""


class JudgedExecute(Execute):
    """nbgrader's ``Execute``, then the course's judge; the secret read here, never passed to a kernel."""

    secret_file = Unicode(SECRET_FILE, help="The teacher's file holding the course's secret for the "
                                            "exercises' unseen cases (readable by its owner only)."
                          ).tag(config=True)
    judge_timeout = Integer(900, help="Seconds the judge may take for one notebook (each case of each "
                                      "exercise has its own time limit besides).").tag(config=True)
    sandbox = Bool(True, help="Run the kernel and the judge in the course's sandbox (lessons_lib/exercises/"
                              "sandbox.py). Off only to try a set-up on one's own work: a submission's "
                              "code then runs as you.").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        secret = read_secret(self.secret_file)
        _refuse_secret_in_environment(secret)
        hide, course = [os.path.expanduser(self.secret_file)], self._course()
        if self.sandbox:
            require()
            self.kernel_manager_class = type("CourseKernelManager", (SandboxedKernelManager,),
                                             {"hide": hide, "course": course})
        else:
            self.log.warning("c.JudgedExecute.sandbox is off: this submission's code runs as you, and can "
                             "change your files and the gradebook (docs/classroom.md)")
        os.environ[JUDGE_VARIABLE] = "on"
        self._unshown: set[str] = set()
        try:
            nb, resources = super().preprocess(nb, resources, km=km)
        finally:
            os.environ.pop(JUDGE_VARIABLE, None)
        folder = ((resources or {}).get("metadata") or {}).get("path") or None
        seeds = _seeds(nb, secret)
        verdicts = run_judge(_judged_cells(nb), seeds, folder, self.judge_timeout,
                             sandbox=self.sandbox, hide=hide, course=course)
        failed = apply_verdicts(nb, verdicts, seeds.values(), self._unshown,
                                _own_library(self._submitted(resources)))
        self.log.info("the course's judge: %d graded cell(s), %d not passed", len(verdicts), failed)
        if safe_outputs(nb):
            self.log.info("outputs kept as text and pictures only (no HTML, SVG or script)")
        if redact(nb, secret):
            self.log.warning("this submission's outputs held the course's secret: removed from its outputs "
                             "and feedback; make a new secret before the next lesson is graded "
                             "(python tools/hub_grading.py new-secret: the unseen cases change with it)")
        return nb, resources

    def on_cell_executed(self, **kw):
        """nbgrader's step (a failed cell whose error the kernel did not show gets the error of the kernel's
        reply), noting first each graded cell whose check failed in the kernel without showing it (its
        error swallowed in the kernel: ``set_custom_exc``)."""
        cell, reply = kw["cell"], kw["execute_reply"]["content"]
        shown = any(output.get("output_type") == "error" for output in cell.get("outputs", []))
        if reply.get("status") == "error" and not shown and read_verdict(str(reply.get("evalue", ""))):
            self._unshown.add(_nbgrader(cell).get("grade_id"))
        return super().on_cell_executed(**kw)

    def _submitted(self, resources) -> str | None:
        """The submission's folder as handed in (``submitted/<student>/<assignment>``: autograde's copy
        leaves out the files the course ignores, a ``lessons_lib`` of the learner's own among them)."""
        from nbgrader.coursedir import CourseDirectory

        found = (resources or {}).get("nbgrader") or {}
        if not (found.get("student") and found.get("assignment")):
            return None
        course = CourseDirectory(config=self.config)
        return course.format_path(course.submitted_directory, found["student"], found["assignment"])

    def _course(self) -> str:
        """The course folder (hidden from the sandbox: its gradebook, sources and other learners' work)."""
        root = self.config.get("CourseDirectory", {}).get("root")
        return os.path.abspath(os.path.expanduser(root)) if root else os.getcwd()


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel started in the course's sandbox (:func:`~.sandbox.command`), in a scratch of its own: a copy
    of the submission's folder as its working folder, its Unix sockets and connection file (nbgrader talks
    to it over them: it has no network). ``hide`` and ``course`` are set by :class:`JudgedExecute`."""

    hide: list[str] = []
    course: str | None = None
    scratch: Scratch | None = None

    async def _async_pre_start_kernel(self, **kw):
        if self.scratch is not None:  # a restart: the dead kernel's scratch goes with it
            self.scratch.close()
        self.scratch = Scratch(kw.get("cwd"))
        self.transport, self.ip = "ipc", str(self.scratch.root / "kernel")
        self.connection_file = str(self.scratch.root / "kernel.json")
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        self.scratch.give(self.connection_file)
        kw["env"] = environment(self.scratch, kw.get("env"))
        kw["cwd"] = str(self.scratch.root)
        return command(kernel_cmd, self.scratch, self.hide, self.course), kw

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self.scratch is not None and not restart:
            self.scratch.close()


def autograde_preprocessors() -> list:
    """nbgrader's own autograde steps, with :class:`JudgedExecute` in the place of ``Execute``."""
    from nbgrader.converters.autograde import Autograde

    steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
    if Execute not in steps:
        raise JudgeError("this nbgrader's autograde has no Execute step for the course's judge to take the "
                         "place of: use the nbgrader of binder/requirements.txt")
    return [JudgedExecute if step is Execute else step for step in steps]


def _refuse_secret_in_environment(secret: str) -> None:
    """Every kernel autograde starts inherits this process's environment: the secret must not be in it."""
    named = [name for name, value in os.environ.items() if name == LEAKED_VARIABLE or secret in value]
    if named:
        raise SecretError(f"the environment holds the course's secret ({', '.join(sorted(named))}), where "
                          "every learner's kernel inherits it and a submission can print it: remove the "
                          "lines of nbgrader_config.py (or of your shell) that set it; the course's judge "
                          "reads the secret file itself (docs/classroom.md, Grading with nbgrader).")


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) if cell.get("cell_type") == "code" else {}


def _judged_cells(nb) -> list[dict]:
    """The answer cells (nbgrader's solution cells) and the graded cells, in order, for the judge."""
    cells = []
    for cell in nb.cells:
        meta = _nbgrader(cell)
        if meta.get("solution") and not meta.get("grade"):
            cells.append({"source": cell.source, "answer": True})
        elif meta.get("grade") and meta.get("grade_id") and graded_calls(cell.source):
            cells.append({"source": cell.source, "grade_id": meta["grade_id"]})
    return cells


def _seeds(nb, secret: str) -> dict[str, int]:
    """The seed of the unseen cases of each exercise a graded cell checks on them (the secret stays here)."""
    names = {unseen for cell in nb.cells if _nbgrader(cell).get("grade")
             for _, unseen, _ in graded_calls(cell.source) if unseen}
    return {name: course_seed(secret, name) for name in sorted(names)}


def run_judge(cells: list[dict], seeds: dict[str, int], folder: str | None = None,
              timeout: float = 900, sandbox: bool = True, hide: list[str] | tuple[str, ...] = (),
              course: str | None = None) -> dict[str, dict]:
    """The judge's verdicts (:func:`~.judge.judge`) from a fresh Python (``python -I``) in a copy of
    ``folder`` (the submission's, as its kernel had), in the course's sandbox unless ``sandbox`` is False
    (``hide``: files it must not read; ``course``: the course folder): ``grade_id -> {"passed",
    "message"}``. A judge stopped by a signal (what a learner's code could do to it) fails every cell it
    was to judge; a judge that fails otherwise stops grading."""
    if not any("grade_id" in cell for cell in cells):
        return {}
    env = {name: value for name, value in os.environ.items() if name != JUDGE_VARIABLE}
    argv = [sys.executable, "-I", "-m", "lessons_lib.exercises.judge"]
    with Scratch(folder) as scratch:
        if sandbox:
            argv, env = command(argv, scratch, hide, course), environment(scratch, env)
        try:
            done = subprocess.run(argv, input=json.dumps({"cells": cells, "seeds": seeds}),
                                  capture_output=True, text=True, cwd=scratch.work, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise JudgeError(f"the course's judge took more than {timeout:g} s for one notebook "
                             "(c.JudgedExecute.judge_timeout)") from None
    if done.returncode < 0:
        return {cell["grade_id"]: {"passed": False, "message": _stopped(cell, -done.returncode)}
                for cell in cells if "grade_id" in cell}
    try:
        if done.returncode != 0:
            raise ValueError(done.stderr[-2000:])
        return json.loads(done.stdout)["verdicts"]
    except (ValueError, KeyError, TypeError) as exc:
        raise JudgeError(f"the course's judge failed ({exc})") from None


def _stopped(cell: dict, signal_number: int) -> str:
    name = next((answer for _, _, answer in graded_calls(cell["source"])), "the exercise")
    return (f"{name}: NOT YET (judge_stopped): the grade's judge was stopped (signal {signal_number}) while "
            "it ran this notebook's answer cells, so none of them could be graded: code in an answer cell "
            "must not stop other processes.")


#: What stands in a submission's outputs where the course's secret was.
REDACTED = "[the course's secret, removed by the judge]"
#: What a graded notebook's outputs keep (the formgrader and the feedback page show them): text and
#: pictures; never markup a browser would run (HTML, SVG, JavaScript, Markdown, widget views).
SAFE_DATA = ("text/plain", "image/png", "image/jpeg")


def safe_outputs(nb) -> int:
    """Keep only :data:`SAFE_DATA` in every output of ``nb`` that carries data; how many lost something."""
    changed = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and set(data) - set(SAFE_DATA):
                output["data"] = type(data)({k: v for k, v in data.items() if k in SAFE_DATA})
                changed += 1
    return changed


def _forms(secret: str) -> set[str]:
    """The secret as code may print it: as is, escaped for JSON, Python, HTML or ``unicode_escape``, without
    whitespace (the haystack loses its whitespace too: a secret printed in pieces is found whole)."""
    escaped = {secret, json.dumps(secret)[1:-1], repr(secret)[1:-1], html.escape(secret),
               secret.encode("unicode_escape").decode("ascii"), json.dumps(secret, ensure_ascii=False)[1:-1]}
    return {"".join(form.split()) for form in escaped if form.strip()}


def _holds(text: str, forms: set[str]) -> bool:
    flat = "".join(text.split())
    return any(form in flat for form in forms)


def redact(nb, secret: str) -> int:
    """Remove the course's secret from every output of ``nb`` however it was printed (whole or in pieces
    over a cell's outputs, escaped; text, data, tracebacks, the judge's verdicts); how many outputs held
    it. An output that held it says :data:`REDACTED` instead, whole."""
    forms, found = _forms(secret), 0
    for cell in nb.cells:
        outputs = cell.get("outputs", [])
        if not outputs or not _holds(json.dumps(outputs, ensure_ascii=False) + "".join(
                str(o.get("text", "")) for o in outputs), forms):
            continue
        streams = "".join(str(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
        kept = []
        for output in outputs:
            whole = json.dumps(output, ensure_ascii=False)
            if output.get("output_type") == "stream" and _holds(streams, forms):
                found += 1
                continue
            if _holds(whole, forms) or _holds(str(output.get("text", "")), forms):
                found += 1
                output = new_output("stream", name="stdout", text=REDACTED + "\n") \
                    if output.get("output_type") != "error" else new_output(
                        "error", ename=output.get("ename", "Error"), evalue=REDACTED, traceback=[REDACTED])
            kept.append(output)
        if _holds(streams, forms):
            kept.insert(0, new_output("stream", name="stdout", text=REDACTED + "\n"))
        cell.outputs = kept
    return found


#: A run of digits no verdict of the course's own ever holds (its sizes and counts are small): a seed, or a
#: number a learner's exception carried into the message.
_LONG_NUMBER = re.compile(r"\d{9,}|[0-9a-fA-F]{16,}")


def _kernel_disagrees(cell, message: str, unshown) -> bool:
    """Whether the learner's kernel showed graded ``cell`` passing, or no verdict at all (no error: a
    blanked cell shows nothing; or its verdict not shown, its grade_id in ``unshown``), where the judge's
    ``message`` names a mistake or the exercise not attempted. A kernel that showed the cell failing too
    (the same mistake, another, or an error of its own, such as a function deleted) agrees."""
    judged = read_verdict(message)
    if judged is None or judged.mistake in NOT_THE_LEARNERS:
        return False
    return _nbgrader(cell).get("grade_id") in unshown or not any(
        output.get("output_type") == "error" for output in cell.get("outputs", []))


def _own_library(folder: str | None) -> bool:
    """Whether a submission's ``folder`` holds a ``lessons_lib`` of its own (a package or a module)."""
    return folder is not None and any(os.path.exists(os.path.join(folder, name))
                                      for name in ("lessons_lib", "lessons_lib.py"))


def apply_verdicts(nb, verdicts: dict[str, dict], seeds=(), unshown=(), own_library: bool = False) -> int:
    """Give each graded cell the judge did not pass the judge's verdict as its error (nbgrader scores a
    graded cell with an error 0, and its feedback page shows the one line), without the unseen cases'
    ``seeds`` or any long number (a learner's exception can quote what its process held), and note where
    the learner's kernel disagreed (:func:`_kernel_disagrees`; ``unshown``: the grade_ids of cells whose
    failure the kernel did not show), or, with ``own_library``, that the learner's kernel ran a library
    of their own (a note the submission carried is removed: only the judge writes it); how many."""
    failed = 0
    for cell in nb.cells:
        cell.get("metadata", {}).pop(JUDGE_NOTE, None)
        verdict = verdicts.get(_nbgrader(cell).get("grade_id"))
        if verdict is None or verdict.get("passed"):
            continue
        message = " ".join(str(verdict.get("message", "")).split())
        for seed in seeds:
            message = message.replace(str(seed), "[removed]").replace(f"{seed:x}", "[removed]")
        message = _LONG_NUMBER.sub("[removed]", message)
        note = KERNEL_DISAGREES if _kernel_disagrees(cell, message, unshown) else (
            OWN_LIBRARY if own_library and read_verdict(message) else None)
        if note:
            cell.metadata[JUDGE_NOTE] = {"integrity": note}
        cell.outputs = [new_output("error", ename="AssertionError", evalue=message,
                                   traceback=[f"AssertionError: {message}"])]
        failed += 1
    return failed
