"""The runner's verdicts in a real ipykernel, where the kernel's own ways to ask for input (its
``raw_input``, which ``input`` and ``getpass`` are there; the debugger) and its memory are in play: a
function left asking for input is told so at once, and the kernel never sends the notebook an input
request from the check's process; a recursion is named as one; a huge wrong answer leaves the kernel's
memory where it was.

The same outside a kernel, and the processes a function leaves:
tests/exercises/test_runner_names_the_real_cause.py.
"""

from __future__ import annotations

import sys

import pytest

from lessons_lib.exercises import runner
from tests.helpers.kernel import python_kernel

pytestmark = [pytest.mark.skipif(runner.ISOLATION != "process", reason="the forked child of a kernel"),
              pytest.mark.forked]

#: the first cells of a lesson, and a check with a patient limit: a wait for input could only time out
PREAMBLE = """\
import dataclasses, sys, time
import numpy as np
import lessons_lib as ll
from lessons_lib import exercises
PATIENT = dataclasses.replace(exercises.SOFTMAX, time_limit=60.0)

def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

def verdict(fn):
    feedback = PATIENT.check(fn)
    print(feedback.mistake, "|", feedback.message)
"""

ASKING = {
    "input": "def my_softmax(x):\n    input('a value? ')\n    return softmax(x)\n",
    "a name kept for the kernel's input": "ask = input\ndef my_softmax(x):\n    ask('a value? ')\n"
                                          "    return softmax(x)\n",
    "getpass": "import getpass\ndef my_softmax(x):\n    getpass.getpass()\n    return softmax(x)\n",
    "breakpoint": "def my_softmax(x):\n    breakpoint()\n    return softmax(x)\n",
    "pdb": "import pdb\ndef my_softmax(x):\n    pdb.set_trace()\n    return softmax(x)\n",
}


@pytest.mark.kernel
@pytest.mark.parametrize("how", list(ASKING))
def test_a_function_asking_for_input_in_a_kernel_is_told_so_at_once_and_the_kernel_answers_after(how):
    with python_kernel() as kernel:
        kernel.run(PREAMBLE)
        mistake, _, message = kernel.run(ASKING[how] + "verdict(my_softmax)\n").strip().rpartition("\n")[2] \
            .partition(" | ")
        assert mistake == "waits_for_input", message
        assert "did not finish in time" not in message
        assert kernel.run("print(exercises.check_softmax(softmax).status)").strip() == "passed"


@pytest.mark.kernel
def test_a_recursion_in_a_kernel_is_named_as_one_never_as_the_librarys_answer():
    with python_kernel() as kernel:
        kernel.run(PREAMBLE)
        printed = kernel.run("def my_softmax(x):\n    return my_softmax(x)\nverdict(my_softmax)\n"
                             "def down(n):\n    return down(n + 1)\n"
                             "def my_softmax(x):\n    try:\n        down(0)\n    except RecursionError:\n"
                             "        pass\n    return softmax(x)\nverdict(my_softmax)\n")
        first, second = printed.strip().splitlines()[-2:]
        assert first.startswith("raised |") and "calls itself again and again" in first, first
        assert second.startswith("too_deep |"), second
        assert "library" not in printed and "teacher" not in printed


@pytest.mark.kernel
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in kB (Linux)")
def test_a_huge_wrong_answer_leaves_the_kernels_memory_where_it_was():
    """Each of the seven cases returns 104 MB: the kernel's peak memory grows by a few MB, not by the
    ~850 MB it took when every answer came back whole and stayed."""
    with python_kernel() as kernel:
        kernel.run(PREAMBLE + "import resource\n"
                   "peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
                   "exercises.check_softmax(softmax)\n")
        printed = kernel.run("before = peak()\nverdict(lambda x: np.ones(13_000_000))\n"
                             "print(round(peak() - before))\n")
        *_, line, grown = printed.strip().splitlines()
        assert line.startswith("wrong_shape |") and "(13000000,)" in line, line
        assert int(grown) < 40, f"the kernel grew by {grown} MB"
