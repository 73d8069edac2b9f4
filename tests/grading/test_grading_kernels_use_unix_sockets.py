"""The kernel ``nbgrader autograde`` starts in this stage talks over Unix sockets under its worker's own
folder (tests/grading/conftest.py), so the stage's two workers can never pick the same TCP port."""

from __future__ import annotations

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
    assert ip == str(kernels_on_unix_sockets / "kernel"), said
