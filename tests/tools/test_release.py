"""A release in one command (``make release VERSION=…``), checked against a local bare remote.

The release runs in a clone of this repository (its commits, tags and branches never touch the working
copy): one command writes the new version everywhere the course names it, re-stamps the launch links,
re-runs no lesson whose code did not change, commits "Release VERSION", commits the learner copy to
``learner``, creates ``learner-vVERSION`` (and refuses to move it), and writes CHANGELOG.md's entry.
After pushing to a bare remote, every ref that a launch link names (the README's Binder badge and
Colab links, the notebooks' Colab links and install cell, the classroom guide's nbgitpuller link)
exists there, with the file it opens, and every relative link of the learner copy resolves. The
learner copy carries what ``make lab`` needs, and not the teacher's guides or tools.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.links import broken_links

lr = load_tool("learner_release")
conventions = load_tool("conventions")

# Each launch link and the ref (and file) it names.
REF_PATTERNS = {
    "Binder": re.compile(r"mybinder\.org/v2/gh/[\w.-]+/[\w.-]+/([\w.-]+)\?urlpath=lab%2Ftree%2F([\w%.-]+)"),
    "Colab": re.compile(r"colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/"
                        r"([\w.-]+)/([\w/.-]+\.ipynb)"),
    "Colab install": re.compile(r"git\+https://github\.com/[\w.-]+/[\w.-]+@([\w.-]+)()"),
    "nbgitpuller": re.compile(r"git-pull\?repo=[\w%.-]+&branch=([\w.-]+)"
                              r"&urlpath=lab%2Ftree%2F[\w.-]+%2F([\w%.-]+)"),
}
NEXT = "0.9.0"  # a version newer than any this repository has released


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def teacher(tmp_path) -> Path:
    """A clone of this repository at its current commit, without release tags, with a git identity."""
    clone = tmp_path / "teacher"
    git("clone", "-q", "--no-hardlinks", str(REPO), str(clone), cwd=tmp_path)
    git("checkout", "-q", "-b", "term", git("rev-parse", "HEAD", cwd=REPO), cwd=clone)
    git("config", "user.name", "Teacher", cwd=clone)
    git("config", "user.email", "teacher@example.edu", cwd=clone)
    for tag in git("tag", "--list", "learner-v*", cwd=clone).split():
        git("tag", "-d", tag, cwd=clone)
    return clone


def release(teacher: Path, version: str, out: Path) -> subprocess.CompletedProcess:
    """What ``make release VERSION=version`` runs (the Makefile's recipe, checked below), in ``teacher``."""
    # this repository's accessibility contact is the placeholder, which a release refuses without the flag
    command = [sys.executable, "tools/learner_release.py", "--release", version, "--out", str(out),
               "--keep-placeholder-contact"]
    return subprocess.run(command, cwd=teacher, capture_output=True, text=True)


def outputs(path: Path) -> list:
    """Every code cell's outputs and execution count: what a re-run would rewrite."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(c.get("execution_count"), c.get("outputs")) for c in nb["cells"] if c["cell_type"] == "code"]


def _launch_refs(copy: Path, guide: Path) -> list[tuple[str, str, str]]:
    """(link kind, ref, file) for every launch link in the learner copy's README and notebooks and in the
    teacher's classroom guide (which gives the nbgitpuller link)."""
    found = []
    for path in [copy / "README.md", guide, *sorted((copy / "notebooks").glob("*.ipynb"))]:
        text = path.read_text()
        for kind, pattern in REF_PATTERNS.items():
            found += [(kind, ref, target.replace("%2F", "/")) for ref, target in pattern.findall(text)]
    return found


@pytest.mark.subprocess  # a release is made with git, in repositories of its own
def test_make_release_is_one_command():
    """The Makefile's release recipe is the tool's --release, nothing before or after it."""
    dry = subprocess.run(["make", "--no-print-directory", "-n", "-o", ".venv/.installed-runtime", "release",
                          f"VERSION={NEXT}"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    commands = [line for line in dry.splitlines() if line.strip() and not line.startswith("test -n")]
    assert commands == [f".venv/bin/python tools/learner_release.py --release {NEXT} --out build/learner"]


@pytest.mark.subprocess
def test_one_command_bumps_the_version_everywhere_restamps_without_rerunning_and_releases(teacher, tmp_path):
    old, tag, out = lr.version(teacher), f"learner-v{NEXT}", tmp_path / "learner"
    before = {p.name: outputs(p) for p in sorted((teacher / "notebooks").glob("*.ipynb"))}
    done = release(teacher, NEXT, out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "none re-run" in (teacher / "CHANGELOG.md").read_text(), "a lesson was re-run"
    assert {p.name: outputs(p) for p in sorted((teacher / "notebooks").glob("*.ipynb"))} == before

    # the version, everywhere it is written, in one commit on the teacher's branch
    assert lr.version(teacher) == NEXT
    citation = (teacher / "CITATION.cff").read_text()
    assert f'version: "{NEXT}"' in citation and f'version: "{old}"' not in citation
    assert f"tag: {tag}" in (teacher / "docs/classroom.md").read_text()
    stamped = [teacher / "README.md", teacher / "docs/classroom.md", *(teacher / "notebooks").glob("*.ipynb")]
    for path in stamped:
        assert set(re.findall(r"learner-v(\d[\w.]*\d)", path.read_text())) <= {NEXT}, path.name
    assert git("status", "--porcelain", cwd=teacher) == "", "the release left changes uncommitted"
    assert git("log", "-1", "--format=%s", "term", cwd=teacher).startswith(f"Release {NEXT}")
    check = [sys.executable, "tools/stamp_notebooks.py", "--check"]
    assert subprocess.run(check, cwd=teacher).returncode == 0

    # the learner branch and its tag, the changelog, the learner README
    commit = git("rev-parse", "learner", cwd=teacher)
    assert git("rev-parse", f"{tag}^{{commit}}", cwd=teacher) == commit
    assert f"## {tag} (" in (teacher / "CHANGELOG.md").read_text()
    assert git("show", f"{tag}:CHANGELOG.md", cwd=teacher) == (teacher / "CHANGELOG.md").read_text().strip()
    readme = (out / "README.md").read_text()
    repository = load_tool("stamp_notebooks").repository(teacher)
    for needed in ("link your teacher gave you", "workspace/", r"py tools\course.py lab", "Assignments",
                   "Submit", f"https://github.com/{repository}/issues"):
        assert needed in readme, needed
    for teacher_only in ("make test", "teaching.md", "classroom.md", "SOLUTION", "solutions"):
        assert teacher_only not in readme, teacher_only
    for path in [out / "README.md", *sorted((out / "notebooks").glob("*.ipynb"))]:
        assert not broken_links(path), (path.name, broken_links(path))

    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    git("push", "-q", str(remote), "term", "learner", tag, cwd=teacher)
    refs = _launch_refs(out, teacher / "docs/classroom.md")
    kinds = {kind for kind, _, _ in refs}
    assert kinds == set(REF_PATTERNS), f"launch links not found: {set(REF_PATTERNS) - kinds}"
    for kind, ref, target in refs:
        assert git("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", cwd=remote), (kind, ref)
        if target:
            git("cat-file", "-e", f"{ref}:{target}", cwd=remote)  # raises when the link opens nothing


@pytest.mark.subprocess
def test_only_a_change_of_code_makes_a_lesson_stale(teacher):
    run_notebooks = load_tool("run_notebooks")
    lessons = sorted((teacher / "notebooks").glob("*.ipynb"))
    assert not [p.name for p in lessons if run_notebooks.is_stale(p)], "a committed lesson is not run"
    path = teacher / "notebooks/03_step2_scores.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += "\n\nMore prose."  # prose, and the Colab cell (it names the tag): no output
    colab = next(c for c in nb.cells if conventions.COLAB_TAG in c.metadata.get("tags", []))
    colab.source = colab.source.replace("learner-v", "learner-v1")
    nbformat.write(nb, path)
    assert not run_notebooks.is_stale(path)
    next(c for c in nb.cells if c.cell_type == "code" and "print(" in c.source).source += "\nprint(1)"
    nbformat.write(nb, path)
    assert [p.name for p in lessons if run_notebooks.is_stale(p)] == ["03_step2_scores.ipynb"]


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_release_reruns_the_lesson_whose_code_changed_and_only_it(teacher, tmp_path):
    path = teacher / "notebooks/03_step2_scores.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("print("))
    cell.source += "\nprint('changed since the last run')"
    nbformat.write(nb, path)
    git("commit", "-q", "-am", "An edit to lesson 03", cwd=teacher)
    before = {p.name: outputs(p) for p in sorted((teacher / "notebooks").glob("*.ipynb"))}
    done = release(teacher, NEXT, tmp_path / "learner")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "re-run because their code changed: 03." in (teacher / "CHANGELOG.md").read_text()
    after = {p.name: outputs(p) for p in sorted((teacher / "notebooks").glob("*.ipynb"))}
    assert [name for name in after if after[name] != before[name]] == ["03_step2_scores.ipynb"]
    assert "changed since the last run" in json.dumps(after["03_step2_scores.ipynb"])


@pytest.mark.subprocess
def test_a_release_never_moves_a_tag_never_goes_back_and_needs_a_clean_tree(teacher, tmp_path):
    current = lr.version(teacher)
    git("tag", f"learner-v{NEXT}", "HEAD", cwd=teacher)
    with pytest.raises(lr.ReleaseError, match="never moves"):
        lr.make_release(NEXT, tmp_path / "one", root=teacher)
    with pytest.raises(lr.ReleaseError, match="older"):
        lr.make_release("0.0.1", tmp_path / "two", root=teacher)
    (teacher / "README.md").write_text("edited\n")
    with pytest.raises(lr.ReleaseError, match="uncommitted"):
        lr.make_release("0.9.1", tmp_path / "three", root=teacher)
    assert lr.version(teacher) == current, "a refused release changed the version"
    assert git("status", "--porcelain", cwd=teacher) == "M README.md"


def test_a_release_refuses_the_placeholder_accessibility_contact_unless_told_to_keep_it(capsys):
    """The statement's private contact must reach the course team: a reserved ``.example`` address receives
    no mail, so a release stops before it changes anything, and says where to set the address; a trial
    release keeps it with --keep-placeholder-contact, and is warned."""
    assert lr.accessibility_contact(REPO).endswith(".example"), "this repository ships the placeholder"
    with pytest.raises(lr.ReleaseError, match=r"placeholder .* \[tool\.lessons\.accessibility\] contact .* "
                                              r"--keep-placeholder-contact"):
        lr.check_accessibility_contact(REPO)
    lr.check_accessibility_contact(REPO, keep_placeholder=True)
    assert "warning: the accessibility contact" in capsys.readouterr().out


@pytest.mark.subprocess
def test_make_release_passes_the_keep_flag_only_when_asked():
    dry = subprocess.run(["make", "--no-print-directory", "-n", "-o", ".venv/.installed-runtime", "release",
                          f"VERSION={NEXT}", "KEEP_PLACEHOLDER_CONTACT=1"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert f"--release {NEXT} --out build/learner --keep-placeholder-contact" in dry


@pytest.mark.subprocess
def test_every_place_that_names_a_release_names_this_version():
    """pyproject.toml's version is the one every launch link, image tag and the citation name."""
    version = lr.version()
    names = git("ls-files", cwd=REPO).splitlines()
    for name in names:
        if name.endswith((".png", ".js")) or name.startswith("tests/"):
            continue
        text = (REPO / name).read_text(encoding="utf-8", errors="replace")
        assert set(re.findall(r"learner-v(\d[\w.]*\d)", text)) <= {version}, name
    assert f'version: "{version}"' in (REPO / "CITATION.cff").read_text()


@pytest.mark.subprocess
def test_the_learner_copy_carries_what_make_lab_runs_and_not_the_teachers_files(tmp_path):
    out = tmp_path / "learner"
    lr.release(out)
    tools = sorted(p.relative_to(out).as_posix() for p in (out / "tools").iterdir())
    assert tools == sorted(lr.LEARNER_TOOLS)
    for teacher_only in ("docs", "tests", "benchmarks", ".ci", "CONTRIBUTING.md", "requirements-dev.txt"):
        kept = {p.relative_to(out).as_posix() for p in (out / teacher_only).rglob("*") if p.is_file()}
        assert kept <= set(lr.LEARNER_KEEPS), (teacher_only, sorted(kept - set(lr.LEARNER_KEEPS)))
    for needed in ("pyproject.toml", "requirements.txt", "binder/requirements.txt", "binder/postBuild",
                   "lessons_lib/__init__.py", "LICENSE", "LICENSE-CONTENT", "README.md"):
        assert (out / needed).is_file(), needed
    dry = subprocess.run(["make", "--no-print-directory", "-n", "lab"], cwd=out, capture_output=True,
                         text=True, check=True).stdout
    assert dry.strip() == "python3 tools/course.py --torch auto lab"
    # what make lab does after the set-up, in the copy: its own workspace/, every lesson in it
    made = subprocess.run([sys.executable, "tools/learner_release.py", "--workspace", "workspace"], cwd=out,
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    lessons = sorted(p.name for p in (out / "workspace").glob("*.ipynb"))
    assert lessons == sorted(p.name for p in (out / "notebooks").glob("*.ipynb"))
    assert len(lessons) == len(conventions.LESSONS)


@pytest.mark.subprocess
def test_a_version_bump_reinstalls_nothing_and_the_library_reads_the_new_version(tmp_path):
    """The install stamps of .venv hash pyproject.toml without its version line; lessons_lib, installed
    editable, reads its version from the file (so a release needs no pip install)."""
    course = load_tool("course")
    text = (REPO / "pyproject.toml").read_text()
    old = course.inputs_hash(["pyproject.toml"], root=REPO)
    bumped = tmp_path / "pyproject.toml"
    bumped.write_text(re.sub(r'(?m)^version = ".*"$', f'version = "{NEXT}"', text, count=1))
    assert course.inputs_hash(["pyproject.toml"], root=tmp_path) == old
    bumped.write_text(text.replace('"numpy>=1.26"', '"numpy>=2"'))
    assert course.inputs_hash(["pyproject.toml"], root=tmp_path) != old, "a dependency change reinstalls"
    shutil.copytree(REPO / "lessons_lib", tmp_path / "lessons_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    bumped.write_text(re.sub(r'(?m)^version = ".*"$', f'version = "{NEXT}"', text, count=1))
    code = "import lessons_lib; print(lessons_lib.__version__)"
    got = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert got.stdout.strip() == NEXT, got.stderr
