"""``tools/hub_grading.py teacher`` gives the teacher a secret that grading accepts and a config that grades
with the course's judge: ``make_secret`` makes the file when it is missing and refills one that is empty,
blank or too short (grading refused it, so nothing was graded with it), keeps a real secret (a term's
secret never changes behind the teacher's back) and makes it the teacher's alone; the config names the
judge and the secret's file, never the secret, and does nothing that could fail while nbgrader loads it."""

from __future__ import annotations

import ast
import os
import stat

import pytest

from lessons_lib.exercises import grading
from tests.helpers import load_tool

hub_grading = load_tool("hub_grading")


@pytest.mark.parametrize("kept", [None, "", " \n\t\n", "attention26\n"],
                         ids=["missing", "empty", "blank", "short"])
def test_make_secret_makes_or_refills_a_secret_that_grading_accepts(tmp_path, kept):
    path = tmp_path / "lessons-secret"
    if kept is not None:
        path.write_text(kept)
        os.chmod(path, 0o644)
    hub_grading.make_secret(path)
    assert len(grading.read_secret(path)) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_make_secret_keeps_a_real_secret_and_makes_it_the_teachers_alone(tmp_path):
    path = tmp_path / "lessons-secret"
    path.write_text("this term's secret, chosen by the teacher\n")
    os.chmod(path, 0o644)
    hub_grading.make_secret(path)
    assert grading.read_secret(path) == "this term's secret, chosen by the teacher"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_teachers_config_grades_with_the_judge_and_names_the_secrets_file_not_the_secret(tmp_path):
    text = hub_grading.config_text("attention", "/srv/nbgrader/exchange", tmp_path / "course")
    assert "c.Autograde.autograde_preprocessors = autograde_preprocessors()" in text
    assert "c.JudgedExecute.secret_file = '~/.lessons-secret'" in text
    assert "LESSONS_HIDDEN_SECRET" not in text and "os.environ" not in text
    calls = [node.func for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Call)]
    names = {getattr(f, "id", getattr(f, "attr", "")) for f in calls}
    assert names == {"get_config", "autograde_preprocessors"}, "no file read, nothing that could fail loading"
