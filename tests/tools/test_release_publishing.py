"""How a release is published (``make release VERSION=…``): the push commands, git's own errors, every
versioned document and the changelog.

* The printed push commands send the learner branch and its tag to the learners' repository (the remote
  named by ``[project.urls] Repository``) and the teacher's branch, which holds the solutions, only to its
  own remote: run as printed, the learners' repository ends up with nothing else.
* When git cannot commit (no identity; a hook that refuses), the release stops with git's own message,
  and the working tree is as it was: nothing bumped.
* Every tracked file that names the course's version is one the release rewrites (the accessibility
  statement too), and CHANGELOG.md's *Unreleased* notes become the release's entry.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, load_tool

lr = load_tool("learner_release")
stamp = load_tool("stamp_notebooks")
NEXT = "0.9.0"  # newer than any version this repository has released


def git(*args: str, cwd: Path, env: dict | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def clone(tmp_path: Path, name: str = "teacher", identity: bool = True) -> Path:
    """This repository at its current commit, on a branch ``term``, without release tags."""
    work = tmp_path / name
    git("clone", "-q", "--no-hardlinks", str(REPO), str(work), cwd=tmp_path)
    git("checkout", "-q", "-b", "term", git("rev-parse", "HEAD", cwd=REPO), cwd=work)
    git("remote", "remove", "origin", cwd=work)
    if identity:
        git("config", "user.name", "Teacher", cwd=work)
        git("config", "user.email", "teacher@example.edu", cwd=work)
    for tag in git("tag", "--list", "learner-v*", cwd=work).split():
        git("tag", "-d", tag, cwd=work)
    return work


def release(work: Path, out: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``make release``, with the flag a trial needs: this repository's accessibility contact is the
    placeholder (tests/tools/test_release.py: refused without it)."""
    return subprocess.run([sys.executable, "tools/learner_release.py", "--release", NEXT, "--out", str(out),
                           "--keep-placeholder-contact"], cwd=work, capture_output=True, text=True, env=env)


def bare(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.git"
    git("init", "-q", "--bare", str(path), cwd=tmp_path)
    return path


def refs(repository: Path) -> set[str]:
    return set(git("for-each-ref", "--format=%(refname)", cwd=repository).split())


@pytest.mark.subprocess
def test_the_printed_push_commands_never_send_the_teachers_branch_to_the_learners_repository(tmp_path):
    work, out = clone(tmp_path), tmp_path / "learner"
    private, learners = bare(tmp_path, "private"), bare(tmp_path, "learners")
    public = f"https://github.com/{stamp.repository(work)}"
    git("remote", "add", "origin", str(private), cwd=work)
    git("push", "-q", "-u", "origin", "term", cwd=work)
    git("remote", "add", "learners", public, cwd=work)
    # the learners' repository is the public address; here a local one stands in for it
    git("config", f"url.{learners}.insteadOf", public, cwd=work)
    note = "- A line a teacher wrote about this release."
    changelog = work / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace(lr.UNRELEASED + "\n\n",
                                                      f"{lr.UNRELEASED}\n\n{note}\n", 1))
    git("commit", "-q", "-am", "A note for the release", cwd=work)

    done = release(work, out)
    assert done.returncode == 0, done.stdout + done.stderr
    pushes = [line.split("#")[0].split() for line in done.stdout.splitlines()
              if line.strip().startswith("git push")]
    assert [p[:3] for p in pushes] == [["git", "push", "learners"], ["git", "push", "origin"]], done.stdout
    assert pushes[0][3:] == ["learner", f"learner-v{NEXT}"] and pushes[1][3:] == ["term"]
    for command in pushes:
        git(*command[1:], cwd=work)
    assert refs(learners) == {"refs/heads/learner", f"refs/tags/learner-v{NEXT}"}
    assert "refs/heads/term" in refs(private)

    # the teacher's note is the release's entry now, under a fresh Unreleased section
    text = changelog.read_text()
    assert text.index(lr.UNRELEASED) < text.index(f"## learner-v{NEXT} (") < text.index(note)
    assert lr.unreleased_notes(text) == ""


@pytest.mark.subprocess
def test_when_the_teachers_remote_is_the_learners_repository_the_branch_is_not_pushed_there(tmp_path):
    work = clone(tmp_path)
    git("remote", "add", "origin", f"git@github.com:{stamp.repository(work)}.git", cwd=work)
    lines = lr.push_commands("term", "learner", f"learner-v{NEXT}", work)
    assert lines[0].startswith(f"git push origin learner learner-v{NEXT}")
    assert not any(re.match(r"git push \S+ .*\bterm\b", line) for line in lines), lines
    assert "private remote" in lines[-1] and lines[-1].startswith("#")


def no_identity_env(tmp_path: Path) -> dict:
    """git with no identity to find: an empty home, no system config, nothing in the environment."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))
           and k not in ("EMAIL",)}
    return {**env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.mark.subprocess
def test_without_a_git_identity_the_release_says_gits_words_and_bumps_nothing(tmp_path):
    work = clone(tmp_path, identity=False)
    git("config", "user.useConfigOnly", "true", cwd=work)  # git would otherwise guess one from the host
    before = lr.version(work)
    done = release(work, tmp_path / "learner", env=no_identity_env(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no email was given" in done.stderr or "Please tell me who you are" in done.stderr, done.stderr
    assert "git config user.name" in done.stderr and "Nothing was changed" in done.stderr
    assert "Traceback" not in done.stderr and "CalledProcessError" not in done.stderr
    assert lr.version(work) == before and git("status", "--porcelain", cwd=work) == ""


@pytest.mark.subprocess
def test_a_commit_git_refuses_after_the_bump_puts_every_file_back(tmp_path):
    work = clone(tmp_path)
    hook = work / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'the course hook refuses this commit' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = lr.version(work)
    done = release(work, tmp_path / "learner")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the course hook refuses this commit" in done.stderr and "nothing bumped" in done.stderr
    assert "Traceback" not in done.stderr
    assert lr.version(work) == before and git("status", "--porcelain", cwd=work) == ""
    assert not lr.tag_exists(f"learner-v{NEXT}", work)


def _names_the_version(text: str, version: str) -> bool:
    """The version as a version (``0.2.0``, ``version 0.2.0``), not inside a release tag (``learner-v0.2.0``:
    the stamp writes those) nor inside a longer number."""
    return bool(re.search(rf"(?<![\w.-]){re.escape(version)}(?![\w.])", text))


@pytest.mark.subprocess
def test_every_tracked_file_that_names_the_version_is_one_the_release_rewrites():
    version = lr.version()
    tracked = git("ls-files", cwd=REPO).splitlines()
    texts = {name: (REPO / name).read_text(encoding="utf-8", errors="replace") for name in tracked
             if not name.endswith((".png", ".js", ".ipynb")) and not name.startswith("tests/")
             and name != "CHANGELOG.md"}
    naming = sorted(name for name, text in texts.items() if _names_the_version(text, version))
    assert naming and set(naming) <= set(lr.VERSIONED), sorted(set(naming) - set(lr.VERSIONED))
    assert f"course version {version}" in (REPO / "docs" / "accessibility.md").read_text()


def test_the_repository_keeps_a_changelog_with_an_unreleased_section():
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog") and lr.UNRELEASED in text
    assert text.index(lr.UNRELEASED) < text.index(f"## {lr.version()}") or f"learner-v{lr.version()}" in text


def test_a_release_turns_the_unreleased_notes_into_its_entry(tmp_path):
    (tmp_path / "CHANGELOG.md").write_text(f"{lr.CHANGELOG_TITLE}\n{lr.UNRELEASED}\n\n- first\n- second\n\n"
                                           "## 0.2.0 (2026-11-29)\n\nOlder.\n")
    lr.write_changelog("## learner-v0.3.0 (2026-12-05)\n\nLearner release: 11 lessons.\n", tmp_path)
    text = (tmp_path / "CHANGELOG.md").read_text()
    order = [text.index(s) for s in (lr.UNRELEASED, lr.NOTHING_YET, "## learner-v0.3.0", "- first",
                                     "- second", "## 0.2.0", "Older.")]
    assert order == sorted(order), text
    assert text.count(lr.UNRELEASED) == 1 and lr.unreleased_notes(text) == ""
    lr.write_changelog("## learner-v0.4.0 (2026-12-06)\n\nLearner release.\n", tmp_path)  # nothing noted
    again = (tmp_path / "CHANGELOG.md").read_text()
    assert again.count(lr.NOTHING_YET) == 1
    assert again.index("## learner-v0.4.0") < again.index("## learner-v0.3.0")
