"""The maintainer's two loops: `make check` while editing (under 90 s), `make test` for everything.

`make check` runs ``pytest --edit-loop`` (tests/conftest.py): the tests marked with one of ``NOT_IN_CHECK``
are left out, and a test left in that starts a process or a server fails at once, naming the mark it
needs, so a slow test cannot sneak into the edit loop unmarked. These tests hold that guard, the marks
and the Makefile's list of targets and stages.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import socket
import subprocess
import tomllib

import pytest

from tests.helpers import REPO, examples
from tests.helpers.loops import NOT_IN_CHECK, ProcessInEditLoop, no_processes

MAKEFILE = (REPO / "Makefile").read_text(encoding="utf-8")


def _serves():
    """A server on a free port, its socket closed whatever happens: ``socket.create_server`` leaves it open
    when ``listen`` raises anything but an OSError, as the guard does, and the leaked socket's
    ResourceWarning then failed whichever test the garbage collector ran in."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()


@pytest.mark.parametrize("start", [
    lambda: subprocess.run(["true"]),
    lambda: os.system("true"),
    lambda: multiprocessing.get_context("spawn").Process(target=print).start(),
    _serves,
], ids=["subprocess", "os.system", "multiprocessing-spawn", "server"])
def test_the_edit_loop_refuses_a_test_that_starts_a_process_or_a_server(start):
    with no_processes("tests/test_x.py::test_y"), pytest.raises(ProcessInEditLoop) as refused:
        start()
    assert "tests/test_x.py::test_y" in str(refused.value) and "@pytest.mark.subprocess" in str(refused.value)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here (Windows)")
def test_the_edit_loop_allows_a_bare_fork_as_the_exercise_checks_make():
    """A fork copies this process and starts no program: the exercise runner's child, a millisecond."""
    with no_processes():
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7


def test_the_guard_puts_everything_back():
    before = (subprocess.Popen._execute_child, os.forkpty, os.system, socket.socket.listen)
    with no_processes():
        assert subprocess.Popen._execute_child is not before[0]
    assert (subprocess.Popen._execute_child, os.forkpty, os.system, socket.socket.listen) == before


def test_every_mark_the_edit_loop_leaves_out_is_registered_and_said_in_the_makefile():
    with open(REPO / "pyproject.toml", "rb") as fh:
        registered = {m.split(":")[0] for m in tomllib.load(fh)["tool"]["pytest"]["ini_options"]["markers"]}
    assert set(NOT_IN_CHECK) <= registered
    comment = MAKEFILE.split("\ncheck:", 1)[0].rsplit("\n\n", 1)[1]
    assert all(mark in comment for mark in NOT_IN_CHECK), comment


def test_make_check_is_ruff_the_edit_loop_and_the_doctests_in_one_pytest():
    recipe = re.search(r"^check: lint\n((?:\t.*\n)+)", MAKEFILE, re.M).group(1)
    assert "HYPOTHESIS_PROFILE=dev" in recipe and "--edit-loop tests" in recipe
    assert "--doctest-modules lessons_lib tools/course.py" in recipe


def test_make_help_names_every_target_and_every_stage():
    stages = re.search(r"^TEST_STAGES := (.*)$", MAKEFILE, re.M).group(1).split()
    phony = re.search(r"^\.PHONY: (.*)$", MAKEFILE, re.M).group(1).replace("$(TEST_STAGES)", " ".join(stages))
    helped = set(re.findall(r'^\t@echo "make ([\w-]+)', MAKEFILE, re.M))
    missing = set(phony.split()) - {"help"} - helped
    assert not missing and set(stages) <= helped, f"make help does not name {sorted(missing)}"


def test_the_stages_are_listed_once():
    """The stages of make test are TEST_STAGES in the Makefile; the docs point there, never list them."""
    stages = re.search(r"^TEST_STAGES := (.*)$", MAKEFILE, re.M).group(1).split()
    listing = re.compile(r"test-notebooks.{0,80}test-other-cpu.{0,80}test-browser", re.S)
    for name in ("Makefile", "pyproject.toml", "CONTRIBUTING.md", ".ci/run", "README.md"):
        text = (REPO / name).read_text(encoding="utf-8")
        if name == "Makefile":
            text = text.replace(" ".join(stages), "", 1)
        assert not listing.search(text), f"{name} lists the stages of make test again; point at TEST_STAGES"


def test_every_run_prints_its_slowest_tests():
    with open(REPO / "pyproject.toml", "rb") as fh:
        addopts = tomllib.load(fh)["tool"]["pytest"]["ini_options"]["addopts"]
    assert any(option.startswith("--durations=") for option in addopts)


def test_a_property_tests_examples_follow_the_profile():
    from hypothesis import settings

    assert settings().deadline is None, "no deadline: a loaded machine must not fail a slow example"
    assert examples(150) == round(150 * settings().max_examples / 100) or examples(150) == 5


@pytest.mark.subprocess
@pytest.mark.parametrize("arguments", [[], ["COURSE=build/nbgrader-course"]], ids=["nothing", "COURSE="])
def test_make_class_report_without_its_course_folder_prints_the_usage_and_fails(arguments):
    """The folder is NBGRADER_COURSE; COURSE is the set-up command, and never taken for a folder."""
    done = subprocess.run(["make", "--no-print-directory", "class-report", *arguments], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "usage: make class-report NBGRADER_COURSE=path/to/nbgrader/course" in done.stderr
    assert "tools/course.py" not in done.stdout + done.stderr, "set-up ran before the usage was said"
    assert ("COURSE is the set-up command" in done.stderr) == bool(arguments)   # said to one who gave COURSE


@pytest.mark.subprocess
def test_make_class_report_reads_the_folder_of_nbgrader_course():
    done = subprocess.run(["make", "--no-print-directory", "-n", "class-report", "NBGRADER_COURSE=my course"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert 'tools/class_report.py "my course" --out build/class-report' in done.stdout
