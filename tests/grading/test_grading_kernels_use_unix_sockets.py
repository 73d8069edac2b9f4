"""The kernel ``nbgrader autograde`` starts talks over Unix sockets in a scratch folder of its own (the
course's sandbox, lessons_lib/exercises/sandbox.py: it has no network, not even loopback), so the stage's
two workers can never pick the same TCP port, and no kernel shares its folder with another; the folder is
gone when its notebook is graded. (The tests' own kernels use their worker's folder: tests/grading/
conftest.py.)"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tests.helpers.grading import (
    feedback_text,
    gaming_source,
    make_course,
    nbgrader,
    submit_gaming,
    worked_solution,
)

ASSIGNMENT, LESSON = "sockets", "03_step2_scores"
PRINTS = """\
from ipykernel.kernelapp import IPKernelApp
print("KERNEL", IPKernelApp.instance().transport, IPKernelApp.instance().ip)
"""


@pytest.mark.grading
def test_the_autograding_kernel_listens_on_unix_sockets_in_its_workers_folder(tmp_path,
                                                                               kernels_on_unix_sockets):
    course = tmp_path / "course"
    make_course(course)
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(gaming_source([LESSON]), course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    teacher = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    submit_gaming(course, "ada", lambda name: PRINTS + worked_solution(teacher, name), ASSIGNMENT)
    nbgrader(course, "autograde", ASSIGNMENT, "--create", "--student=ada")
    nbgrader(course, "generate_feedback", ASSIGNMENT, "--student=ada")
    lines = feedback_text(course, "ada", ASSIGNMENT).splitlines()
    said = next(line for line in lines if line.startswith("KERNEL "))
    _, transport, ip = said.split()
    assert transport == "ipc", said
    folder = Path(ip).parent
    assert folder.name.startswith("lessons-sandbox-") and Path(ip).name == "kernel", said
    assert folder != kernels_on_unix_sockets and not folder.exists(), said
