"""The runner of a learner's function (lessons_lib/exercises/runner.py), through the real fork: a function
that never returns is stopped at the time limit and the case named, nothing it started keeps running, its
prints are shown, an ``os._exit`` ends only the check's process, and the cases are never changed by the
call. Without fork (Windows) a worker thread runs it, and the check says truthfully whether it stopped it."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from lessons_lib import exercises
from tests.helpers import solutions
from tests.helpers.wrong_answers import softmax_in_place

pytestmark = [pytest.mark.usefixtures("warnings_are_errors"), pytest.mark.forked]  # the real fork


def _endless(x):
    while True:
        pass


def _endless_swallowing(x):
    while True:
        try:
            while True:
                pass
        except:  # noqa: E722 - a learner's bare except, which must not keep the check waiting
            pass


def _sleeps(x):
    time.sleep(60)


def _quick(time_limit=0.5):
    """The softmax exercise with a short time limit per case."""
    return dataclasses.replace(exercises.SOFTMAX, time_limit=time_limit)


# ------------------------------------------------------------------ a function that never returns
@pytest.mark.parametrize("fn", [_endless, _endless_swallowing, _sleeps])
def test_a_function_that_never_returns_is_stopped_and_the_case_named(fn):
    start = time.perf_counter()
    feedback = _quick().check(fn)
    assert time.perf_counter() - start < 5
    assert feedback.mistake == "timed_out", str(feedback)
    assert "hand-made 2×3 scores" in feedback.message and "0.5 s" in feedback.message


def test_only_the_hanging_case_is_reported():
    def hangs_on_big(x):
        if x.shape[1] == 6:
            while True:
                pass
        return solutions.my_softmax(x)

    feedback = _quick().check(hangs_on_big)
    assert feedback.mistake == "timed_out" and "random 4×6 scores" in feedback.message


@pytest.mark.slow
@pytest.mark.kernel
def test_the_time_limit_works_inside_a_real_ipykernel():
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    out = []

    def collect(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])

    try:
        code = ("import time, dataclasses\nfrom lessons_lib import exercises\n"
                "def my_softmax(x):\n    while True:\n        pass\n"
                "t = time.perf_counter()\n"
                "fb = dataclasses.replace(exercises.SOFTMAX, time_limit=1.0).check(my_softmax)\n"
                "print(fb.mistake, round(time.perf_counter() - t, 1))\n"
                "print(exercises.check_softmax(lambda x: x).mistake)\n")
        reply = kc.execute_interactive(code, timeout=60, output_hook=collect)
        assert reply["content"]["status"] == "ok", out
        mistake, seconds, after = "".join(out).split()
        assert mistake == "timed_out" and float(seconds) < 5
        assert after != "timed_out", "the kernel works normally after a stopped check"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# ------------------------------------------------------------------ nothing of it keeps running
def _spawns_and_loops(x):
    import subprocess

    subprocess.Popen(["sleep", "60"], start_new_session=False)
    _endless_swallowing(x)


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text() if (task / "children").exists() else ""
        found |= {int(p) for p in text.split()}
    return found


def _sleepers() -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes() == b"sleep\x0060\x00":
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("fn", [_endless, _endless_swallowing, _sleeps,
                                pytest.param(_spawns_and_loops, marks=pytest.mark.subprocess)])
def test_an_endless_function_leaves_no_thread_or_process_running_after_its_check(fn):
    assert exercises.runner.ISOLATION == "process"
    before = _children(os.getpid())
    feedback = _quick().check(fn)
    assert feedback.mistake == "timed_out" and "so the check stopped it" in feedback.message
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (_children(os.getpid()) - before or _sleepers()):
        time.sleep(0.05)
    assert not _children(os.getpid()) - before, "a process of the check is still running"
    assert not _sleepers(), "a process the learner's function started is still running"
    assert not [t for t in threading.enumerate() if t.name == "lessons-exercise-check"]


def test_without_fork_the_check_says_truthfully_whether_it_stopped_the_function(monkeypatch):
    monkeypatch.setattr(exercises.runner, "ISOLATION", "thread")
    monkeypatch.setattr(exercises.runner, "_STOP_TRIES", 2)

    def sleeps_a_while(x):
        time.sleep(1.5)  # one C call: an exception raised in the thread waits until it returns

    feedback = _quick(0.2).check(sleeps_a_while)
    assert feedback.mistake == "timed_out"
    assert "could not stop it" in feedback.message and "so the check stopped it" not in feedback.message
    for thread in [t for t in threading.enumerate() if t.name == "lessons-exercise-check"]:
        thread.join(10)  # it ends when the sleep returns and meets the pending exception
    feedback = _quick(0.2).check(_endless)
    assert feedback.mistake == "timed_out" and "so the check stopped it" in feedback.message


# ------------------------------------------------------------------ what comes back
def test_a_functions_prints_are_shown_and_an_os_exit_ends_only_the_checks_process(capsys):
    def prints(x):
        print("shape", x.shape)
        return solutions.my_softmax(x)

    assert exercises.check_softmax(prints).passed
    assert "shape (2, 3)" in capsys.readouterr().out
    assert exercises.runner.ISOLATION == "process"
    feedback = exercises.check_softmax(lambda x: os._exit(3))
    assert feedback.mistake == "raised" and "ended the Python process" in feedback.message


def test_a_function_that_changes_its_inputs_in_place_is_told_so_and_the_case_stays_as_it_was():
    case = exercises.SOFTMAX.cases()[0]
    x = case.args["x"].copy()
    outcome = exercises.runner.run(softmax_in_place, case, time_limit=3.0)
    assert outcome.mutated == ("x",) and (case.args["x"] == x).all()
    assert exercises.check_softmax(softmax_in_place).mistake == "mutates_input"
    assert exercises.check_softmax(solutions.my_softmax).passed  # the check's cases are unchanged
