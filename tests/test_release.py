"""A learner release that exists (``make release VERSION=…``), checked against a local bare remote.

The release runs in a clone of this repository (its tags and branches never touch the working
copy): it commits the learner copy to ``learner``, creates ``learner-vVERSION`` and refuses to move
it, writes CHANGELOG.md's entry and gives the copy its own README. After pushing to a bare remote,
every ref that a launch link names (the README's Binder badge and Colab links, the notebooks'
Colab links and install cell, the classroom guide's nbgitpuller link) exists there, with the file
it opens, and every relative link of the learner copy resolves.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import load_tool
from test_links import broken_links

pytestmark = pytest.mark.subprocess  # a release is made with git, in repositories of its own

ROOT = Path(__file__).resolve().parents[1]
lr = load_tool("learner_release")

# Each launch link and the ref (and file) it names.
REF_PATTERNS = {
    "Binder": re.compile(r"mybinder\.org/v2/gh/[\w.-]+/[\w.-]+/([\w.-]+)\?urlpath=lab%2Ftree%2F([\w%.-]+)"),
    "Colab": re.compile(r"colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/"
                        r"([\w.-]+)/([\w/.-]+\.ipynb)"),
    "Colab install": re.compile(r"git\+https://github\.com/[\w.-]+/[\w.-]+@([\w.-]+)()"),
    "nbgitpuller": re.compile(r"git-pull\?repo=[\w%.-]+&branch=([\w.-]+)"
                              r"&urlpath=lab%2Ftree%2F[\w.-]+%2F([\w%.-]+)"),
}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=Teacher", "-c", "user.email=t@example.edu", *args],
                          cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def teacher(tmp_path) -> Path:
    """A clone of this repository at its current commit, without release tags."""
    clone = tmp_path / "teacher"
    git("clone", "-q", "--no-hardlinks", str(ROOT), str(clone), cwd=tmp_path)
    git("checkout", "-q", git("rev-parse", "HEAD", cwd=ROOT), cwd=clone)
    for tag in git("tag", "--list", "learner-v*", cwd=clone).split():
        git("tag", "-d", tag, cwd=clone)
    return clone


def _launch_refs(copy: Path) -> list[tuple[str, str, str]]:
    """(link kind, ref, file) for every launch link in the learner copy's README, notebooks and guide."""
    found = []
    notebooks = sorted((copy / "notebooks").glob("*.ipynb"))
    for path in [copy / "README.md", copy / "docs/classroom.md", *notebooks]:
        text = path.read_text()
        for kind, pattern in REF_PATTERNS.items():
            found += [(kind, ref, target.replace("%2F", "/")) for ref, target in pattern.findall(text)]
    return found


def test_release_creates_branch_tag_changelog_and_learner_readme_and_every_link_resolves(teacher, tmp_path):
    version = lr.version(teacher)
    tag, out = f"learner-v{version}", tmp_path / "learner"
    commit = lr.make_release(version, out, root=teacher)
    assert git("rev-parse", f"{tag}^{{commit}}", cwd=teacher) == commit
    assert git("rev-parse", "learner", cwd=teacher) == commit
    assert f"## {tag} (" in (teacher / "CHANGELOG.md").read_text()

    readme = (out / "README.md").read_text()
    assert "00_start_here.ipynb" in readme and "link your teacher gave you" in readme
    for teacher_only in ("make test", "teaching.md", "SOLUTION", "solutions"):
        assert teacher_only not in readme, teacher_only
    for path in [out / "README.md", *sorted((out / "notebooks").glob("*.ipynb"))]:
        assert not broken_links(path), (path.name, broken_links(path))

    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    git("push", "-q", str(remote), "learner", tag, cwd=teacher)
    refs = _launch_refs(out)
    kinds = {kind for kind, _, _ in refs}
    assert kinds == set(REF_PATTERNS), f"launch links not found: {set(REF_PATTERNS) - kinds}"
    for kind, ref, target in refs:
        assert git("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", cwd=remote), (kind, ref)
        if target:
            git("cat-file", "-e", f"{ref}:{target}", cwd=remote)  # raises when the link opens nothing


def test_release_never_moves_a_tag_and_names_the_links_version(teacher, tmp_path):
    version = lr.version(teacher)
    first = lr.make_release(version, tmp_path / "one", root=teacher)
    with pytest.raises(lr.ReleaseError, match="never moves"):
        lr.make_release(version, tmp_path / "two", root=teacher)
    assert git("rev-parse", f"learner-v{version}^{{commit}}", cwd=teacher) == first
    with pytest.raises(lr.ReleaseError, match="pyproject.toml"):
        lr.make_release("99.0.0", tmp_path / "three", root=teacher)
