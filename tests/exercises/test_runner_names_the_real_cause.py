"""A learner's function that fails in an ordinary way is told the real cause, never accused and never left
running: recursion too deep, a process started and left, a process in a new session or a double fork
(stopped too), a child killed by the system (said as memory), a MemoryError, input() / breakpoint() / a
debugger / a read of standard input (said at once as waiting for input, not after the time limit as an
endless loop), and an answer far larger than its inputs (the check keeps its shape, not its numbers).

The same in a real kernel, where ipykernel's own input and debugger are in play:
tests/exercises/test_runner_in_a_real_kernel.py.
"""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from lessons_lib import exercises
from lessons_lib.exercises import check_softmax, runner
from tests.helpers import solutions

LINUX = sys.platform.startswith("linux")
ACCUSATIONS = ("library", "tell your teacher", "switched off", "did not finish in time", "replaced")
#: long enough that a function which waited for input, or for a process, could only end as "timed out"
PATIENT = dataclasses.replace(exercises.SOFTMAX, time_limit=60.0)


def _accuses(feedback) -> list[str]:
    text = f"{feedback.message} {feedback.hint}"
    return [word for word in ACCUSATIONS if word in text]


# ------------------------------------------------------------------ recursion
def _recurses(x):
    return _recurses(x)


def _recurses_and_catches(x):
    def down(n):
        return down(n + 1)

    try:
        down(0)
    except RecursionError:
        pass
    return solutions.my_softmax(x)


def test_a_function_that_recurses_too_deep_is_told_so_not_accused_of_calling_the_library():
    feedback = check_softmax(_recurses)
    assert feedback.mistake == "raised" and "RecursionError" in feedback.message
    assert "calls itself again and again" in feedback.message
    assert not _accuses(feedback), feedback.message


def test_a_recursion_caught_at_the_limit_fails_as_too_deep_without_an_accusation():
    """At Python's recursion limit the watch on the library cannot follow the calls: the check cannot pass
    what it could not watch, and says why in the learner's terms."""
    feedback = check_softmax(_recurses_and_catches)
    assert feedback.passed is False and feedback.mistake == "too_deep", feedback.message
    assert "calls itself" in feedback.message and not _accuses(feedback)


# ------------------------------------------------------------------ processes it starts
def _marker() -> str:
    """A sleep of a duration no other process on the machine has: how a test finds the one it started."""
    return f"{60 + random.random():.6f}"


def _running(argv: list[str]) -> list[int]:
    """Live processes whose command line is ``argv`` (zombies, which hold nothing, are not running)."""
    wanted, found = ("\0".join(argv) + "\0").encode(), []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes() == wanted:
                state = (proc / "stat").read_text().rpartition(") ")[2].split()[0]
                if state not in "ZX":
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2].split()[0]
    except OSError:
        return True
    return state in "ZX"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text()[:60]
    except OSError:
        return f"{pid} gone"


def _wait_for(condition, seconds: float = 10.0) -> bool:
    """Polls ``condition`` until it holds (a killed process takes a moment to be reaped)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.forked
@pytest.mark.skipif(not LINUX, reason="reads /proc (Linux)")
def test_a_multiprocessing_process_started_and_left_is_named_and_stopped_not_a_timeout(tmp_path):
    pids = tmp_path / "pids"

    def starts_a_process(x):
        import multiprocessing

        worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(120,))
        worker.start()
        with open(pids, "a") as out:
            out.write(f"{worker.pid}\n")
        return solutions.my_softmax(x)

    feedback = PATIENT.check(starts_a_process)
    assert feedback.mistake == "left_running" and "process" in feedback.message, feedback.message
    assert not _accuses(feedback)
    started = [int(line) for line in pids.read_text().split()]
    assert started and _wait_for(lambda: all(_gone(pid) for pid in started)), "a process it started survived"


@pytest.mark.forked
@pytest.mark.skipif(not LINUX, reason="reads /proc (Linux)")
def test_a_double_forked_daemon_in_a_new_session_is_found_and_stopped(tmp_path):
    pids = tmp_path / "pids"

    def daemonises(x):
        told, tell = os.pipe()
        if os.fork() == 0:  # the classic daemon: fork, a new session, fork again, the middle one exits
            os.setsid()
            if os.fork() == 0:
                os.write(tell, f"{os.getpid()}\n".encode())
                time.sleep(120)
            os._exit(0)
        os.close(tell)
        with open(pids, "a") as out:
            out.write(os.read(told, 64).decode())  # it runs, in a session of its own, when this returns
        return solutions.my_softmax(x)

    feedback = PATIENT.check(daemonises)
    assert feedback.mistake == "left_running", feedback.message
    started = [int(line) for line in pids.read_text().split()]
    assert started and _wait_for(lambda: all(_gone(pid) for pid in started)), \
        f"the daemon survived its check: {[_state(pid) for pid in started]}"


@pytest.mark.subprocess
@pytest.mark.skipif(not LINUX, reason="reads /proc (Linux)")
@pytest.mark.parametrize("endless", [False, True], ids=["returns", "never_returns"])
def test_a_process_in_a_new_session_never_outlives_its_check(endless):
    argv = ["sleep", _marker()]

    def starts_a_session(x):
        import subprocess

        subprocess.Popen(argv, start_new_session=True)
        while endless:
            pass
        return solutions.my_softmax(x)

    check = dataclasses.replace(exercises.SOFTMAX, time_limit=1.0 if endless else 60.0)
    feedback = check.check(starts_a_session)
    assert feedback.mistake == ("timed_out" if endless else "left_running"), feedback.message
    assert "sleep" in feedback.message or endless
    assert _wait_for(lambda: not _running(argv)), f"{' '.join(argv)} outlived the check"


def test_a_process_started_and_waited_for_is_no_mistake():
    def waits_for_its_process(x):
        import multiprocessing

        worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(0.01,))
        worker.start()
        worker.join()
        return solutions.my_softmax(x)

    assert check_softmax(waits_for_its_process).passed


# ------------------------------------------------------------------ memory
@pytest.mark.forked
@pytest.mark.skipif(runner.ISOLATION != "process", reason="a child process to be killed")
def test_a_child_killed_by_the_system_is_said_as_memory_not_as_an_exit():
    """SIGKILL from outside, before the function returned, is how a server's out-of-memory killer stops a
    process: the verdict names memory (with the kernel's count of such kills, where it keeps one)."""
    def killed(x):
        os.kill(os.getpid(), signal.SIGKILL)

    feedback = check_softmax(killed)
    assert feedback.mistake == "out_of_memory" and "memory" in feedback.message, feedback.message
    assert "os._exit" not in feedback.message and not _accuses(feedback)


def test_a_memory_error_is_said_as_memory_naming_the_allocation():
    feedback = check_softmax(lambda x: np.ones((10**7, 10**7)))
    assert feedback.mistake == "out_of_memory" and "Unable to allocate" in feedback.message


@pytest.mark.parametrize("isolation", ["process", "thread"])
def test_a_huge_wrong_answer_does_not_grow_the_kernel(isolation, monkeypatch):
    """100 MB returned per case used to come back whole, case after case, and stay: the kernel grew by
    about 850 MB. What a verdict needs of an answer that size is its shape and dtype."""
    if isolation == "process" and not hasattr(os, "fork"):
        pytest.skip("no fork on this system")
    monkeypatch.setattr(runner, "ISOLATION", isolation)

    def huge(x):
        return np.ones(13_000_000)  # 104 MB of float64

    tracemalloc.start()
    try:
        feedback = check_softmax(huge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert feedback.mistake == "wrong_shape" and "(13000000,)" in feedback.message, feedback.message
    limit = 20e6 if isolation == "process" else 120e6  # a thread's answer is made here, once
    assert peak < limit, f"the check held {peak / 1e6:.0f} MB at its peak"


# ------------------------------------------------------------------ asking for input
def _asks(x):
    input("a value, please: ")
    return solutions.my_softmax(x)


def _breaks(x):
    breakpoint()
    return solutions.my_softmax(x)


def _debugs(x):
    import pdb

    pdb.Pdb().set_trace()  # pdb.set_trace() itself, which pytest replaces by its own debugger here
    return solutions.my_softmax(x)


def _reads_stdin(x):
    sys.stdin.readline()
    return solutions.my_softmax(x)


def _reads_descriptor_0(x):
    os.read(0, 1)  # the end of file at once, not a wait: the check's standard input is empty
    return solutions.my_softmax(x)


@pytest.mark.parametrize("isolation", ["process", "thread"])
@pytest.mark.parametrize(("fn", "words"), [(_asks, "input()"), (_breaks, "breakpoint()"),
                                           (_debugs, "input()"), (_reads_stdin, "standard input")])
def test_a_function_left_asking_for_input_is_told_so_at_once(fn, words, isolation, monkeypatch):
    if isolation == "process" and not hasattr(os, "fork"):
        pytest.skip("no fork on this system")
    monkeypatch.setattr(runner, "ISOLATION", isolation)
    feedback = PATIENT.check(fn)
    assert feedback.mistake == "waits_for_input", feedback.message
    assert words in feedback.message and not _accuses(feedback)


@pytest.mark.forked
@pytest.mark.skipif(runner.ISOLATION != "process", reason="file descriptor 0 is the child's own")
def test_a_read_of_the_input_descriptor_ends_at_once_instead_of_waiting():
    assert PATIENT.check(_reads_descriptor_0).passed


def test_after_a_check_the_kernels_own_input_and_stdin_are_back(monkeypatch):
    import builtins

    monkeypatch.setattr(runner, "ISOLATION", "thread")
    before = builtins.input, sys.stdin, sys.breakpointhook
    PATIENT.check(_asks)
    assert (builtins.input, sys.stdin, sys.breakpointhook) == before
