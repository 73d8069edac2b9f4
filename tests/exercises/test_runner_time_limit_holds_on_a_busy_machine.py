"""The time limit of a check is the learner's function's own time: the time since its process started,
less the time it waited for a processor. On a busy classroom server (here: more processes burning cores
than there are cores) a correct function is never "late", and an endless one is still stopped, at the case
it hangs on, by the same limit.

The cause of the old failure: the limit was wall-clock time from before the fork, so the seconds a child
spent queued behind other processes counted against the learner, and with a 0.5 s limit even the 2×3 case
timed out on a loaded machine.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time

import pytest

from lessons_lib import exercises
from lessons_lib.exercises import runner
from tests.helpers import solutions
from tests.helpers.load import busy_neighbours

pytestmark = [pytest.mark.skipif(runner.ISOLATION != "process" or not sys.platform.startswith("linux"),
                                 reason="a forked child's run delay (/proc/PID/schedstat, Linux)"),
              pytest.mark.forked]

TIGHT = dataclasses.replace(exercises.SOFTMAX, time_limit=0.5)


def _hangs_on_the_4x6_case(x):
    if x.shape[1] == 6:
        while True:
            pass
    return solutions.my_softmax(x)


@pytest.mark.subprocess
def test_a_correct_function_is_never_late_on_a_busy_machine():
    """About 24 busy processes per core (at most 96): with the wall clock, every run failed here, on the 2×3
    case. The child's own time is a millisecond a case, however long it waits for a core."""
    cores = os.cpu_count() or 1
    with busy_neighbours(min(24 * cores, 96), seconds=600):
        feedback = TIGHT.check(solutions.my_softmax)
    assert feedback.passed, feedback.message


@pytest.mark.subprocess
def test_a_hanging_function_is_still_stopped_at_its_case_on_a_busy_machine():
    """Its own time grows more slowly while it waits for a core, and still reaches the limit."""
    cores = os.cpu_count() or 1
    with busy_neighbours(2 * cores + 2, seconds=600):
        feedback = TIGHT.check(_hangs_on_the_4x6_case)
    assert feedback.mistake == "timed_out", feedback.message
    assert "random 4×6 scores" in feedback.message and "still running after 0.5 s" in feedback.message


def _stops_itself(x):
    os.kill(os.getpid(), signal.SIGSTOP)  # neither running nor waiting for a processor: its own doing
    return solutions.my_softmax(x)


def _sleeps(x):
    time.sleep(600)
    return solutions.my_softmax(x)


@pytest.mark.parametrize("fn", [_stops_itself, _sleeps])
def test_time_a_function_spends_stopped_or_asleep_is_its_own_and_stops_it(fn):
    feedback = TIGHT.check(fn)
    assert feedback.mistake == "timed_out" and "hand-made 2×3 scores" in feedback.message, feedback.message
