"""``tools/hub_grading.py teacher`` gives the teacher a secret that grading accepts and a config that grades
with the course's judge: ``make_secret`` makes the file when it is missing and refills one that is empty,
blank or too short (grading refused it, so nothing was graded with it), keeps a real secret (a term's
secret never changes behind the teacher's back) and makes it the teacher's alone; the config names the
judge and the secret's file, never the secret, and does nothing that could fail while nbgrader loads it.
``new-secret`` makes a fresh secret where the old one may have been seen, keeping the old one aside."""

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


def test_an_exposed_secret_is_refused_naming_the_command_that_makes_a_fresh_one_which_keeps_the_old_aside(
        tmp_path, capsys):
    path = tmp_path / "lessons-secret"
    path.write_text("this term's secret, chosen by the teacher\n")
    path.chmod(0o644)
    with pytest.raises(grading.SecretError) as refused:
        grading.read_secret(path)
    command = f"python tools/hub_grading.py new-secret --secret-file {path}"
    assert command in str(refused.value) and "unseen cases change" in str(refused.value)
    assert hub_grading.main(command.split()[2:]) == 0
    said = capsys.readouterr().out
    fresh = grading.read_secret(path)  # accepted: the owner's alone, long enough
    old = next(tmp_path.glob("lessons-secret.old-*"))
    assert old.read_text() == "this term's secret, chosen by the teacher\n" and fresh not in old.read_text()
    assert stat.S_IMODE(old.stat().st_mode) == 0o600
    assert str(old) in said and "unseen cases change with it" in said
    seeds = {grading.course_seed(secret, "my_softmax") for secret in (fresh, old.read_text().strip())}
    assert len(seeds) == 2, "the unseen cases change with the secret"
