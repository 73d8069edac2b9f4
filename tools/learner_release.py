"""Make the learner copy of the course from the teacher's source notebooks (``make learner``).

Each notebook's learner version (solutions replaced, the outputs a learner should predict or
earn cleared, captions of what is not run yet folded) is :func:`learner_copy.learner_notebook`'s.

The checks in ``lessons_lib`` compare a learner's function with the library's own reference
functions, never with a solutions file, so the learner copy needs nothing that it lacks.

The learner copy is the course as a learner needs it (``git ls-files`` of this repository, without
the teacher's files in ``TEACHER_ONLY``: no guides, tests, benchmarks or maintainers' tools; of
``tools/`` only what ``make lab`` runs, ``LEARNER_TOOLS``; kept too, in ``LEARNER_KEEPS``, the
benchmark lesson 08 asks a learner with an NVIDIA GPU to run and the accessibility statement), with
the notebooks stripped as above, its own README (:func:`learner_readme`: what to open, Windows, how
to hand work in, where to ask) and its own Makefile (``make lab`` only). It is what learners clone,
and what the Binder badge, the Colab links and the hub's nbgitpuller link open: ``--branch learner``
commits it to the branch ``learner``.

``--release VERSION`` (``make release VERSION=…``) is the release in one command
(:func:`make_release`): in a clean working tree, with a git identity to commit as, it writes VERSION
wherever the course names its version (:data:`VERSIONED`: pyproject.toml, CITATION.cff, the classroom
guide's image tags, the accessibility statement), re-stamps the notebooks and the README (the launch
links name the tag ``learner-vVERSION``) and re-runs only the notebooks whose code changed since their
last run (``tools/run_notebooks.py --stamp --stale``), turns CHANGELOG.md's *Unreleased* notes into the
release's entry and commits all that as "Release VERSION" on the current branch; then it commits the
learner copy to the branch ``learner``, creates the tag (a release tag never moves: an existing one is
refused before anything changes) and prints the push commands (:func:`push_commands`): the learner
branch and the tag to the learners' repository, the teacher's branch, which holds the solutions, only
to another remote. A step that fails before the commit (git's own message shown) leaves the working tree
as it was: nothing bumped.

Usage: python tools/learner_release.py [--out build/learner] [--branch learner] [--release VERSION]
       | [--workspace workspace]
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import nbformat
from conventions import ROOT
from course import required_python
from learner_copy import SolutionMarkerError, learner_notebook

# Files a learner's copy leaves out: the teacher's guides, the maintainers' tests, benchmarks, CI, tools
# and their instructions ...
TEACHER_ONLY = ("docs/", "tests/", "benchmarks/", ".ci/", "tools/", "CONTRIBUTING.md", "requirements-dev.txt")
# ... but for the tools that make lab runs in the learner copy: the set-up (tools/course.py), which builds
# the learner's workspace/ with this file and learner_copy.py (they read the registry through conventions.py);
# and the one binder/postBuild runs when Binder or a hub builds its image from the learner copy
# (tools/hub_grading.py) ...
LEARNER_TOOLS = ("tools/course.py", "tools/conventions.py", "tools/learner_release.py",
                 "tools/learner_copy.py", "tools/hub_grading.py")
# ... and for the benchmark lesson 08 asks a learner with an NVIDIA GPU to run, and the accessibility
# statement (what was tested, how to report a barrier)
LEARNER_KEEPS = (*LEARNER_TOOLS, "benchmarks/gpu_sdpa.py", "docs/accessibility.md")


def release(out: Path, root: Path = ROOT) -> dict[str, int]:
    """Write the learner copy of the course under ``out``; return solution regions removed per notebook."""
    if out.exists():
        shutil.rmtree(out)
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    counts = {}
    for name in sorted(files.decode().split("\0")):
        teachers = name.startswith(TEACHER_ONLY) and name not in LEARNER_KEEPS
        if not name or teachers or not (root / name).is_file():
            continue
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name.startswith("notebooks/") and name.endswith(".ipynb"):
            nb = nbformat.read(root / name, as_version=4)
            learner, counts[Path(name).name] = learner_notebook(nb, name)
            nbformat.write(learner, target)
        else:
            shutil.copy2(root / name, target)
    (out / "README.md").write_text(learner_readme(root))
    (out / "Makefile").write_text(LEARNER_MAKEFILE)
    return counts


LEARNER_README = """\
# {title}: the learner copy

This is the course as learners get it (release `{tag}`): every lesson, with the exercises for you
to solve. Each lesson says how long it takes, and the check under each exercise tells you at once
whether your code works.

## Where to start

- **With the link your teacher gave you** (a class hub): click it. It opens lesson 00 in JupyterLab,
  with the course in your own folder. Clicking it again later brings your teacher's updates.
- **On Binder or Colab**, with no install: the badge or a lesson's Colab link below.
- **On your computer** (Python {python} or newer, and git):

  ```bash
  git clone --branch learner https://github.com/{repository}
  cd {name}
  make lab
  ```

  The first `make lab` installs the course's pinned packages into `.venv` (a few minutes, once), then
  copies every lesson into your own folder **`workspace/`** and opens lesson 00 there: work in
  `workspace/`, not in `notebooks/`. Later runs add new lessons and never overwrite yours.
- **On Windows** (no `make`): in PowerShell, in the same folder, `py tools\\course.py lab`.

{launch}

## Handing in your work

- **If your class grades with nbgrader** (your teacher says so): on the hub, open JupyterLab's
  **Assignments** tab, *Fetch* the lesson, work in the copy it makes, save, and *Submit*. You may
  submit as often as you like before the deadline; the last one counts. Your feedback comes back in
  the same tab.
- **Otherwise**, hand in the way your teacher asks: for example *File → Download* the notebook from
  `workspace/` and upload it to your course's page.
- Lessons 00 and 10 open and close with the same short concept quiz. It is not graded: your answers
  are saved next to the notebook in `concept-quiz.json`, so that your teacher can see what the class
  learned.

## Getting the updates your teacher makes

- **On a hub**: click the link your teacher gave you again. It merges the teacher's changes into
  your copy and keeps your own edits; where you and the teacher changed the same line, your line
  stays. A notebook you deleted comes back fresh.
- **On your computer**: `git pull` in this folder, then `make lab`: your `workspace/` is yours and
  is never overwritten; a lesson you delete from it comes back in its new version.

## Getting help

- Ask your teacher or your class's forum first: someone has likely met the same message.
- Something wrong in the course itself (a lesson that fails to run, a wrong number, a figure you
  cannot read)? Open an issue at {issues}: name the lesson and the cell, and paste the message.
- Using a keyboard only, a screen reader or a large zoom: `docs/accessibility.md` says what works and
  how; tell us of any barrier the same way.

The course runs offline after the first set-up. Code: MIT; lesson text and figures: see LICENSE-CONTENT.
"""

LEARNER_MAKEFILE = """\
# Attention, step by step (the learner copy). make lab: set up .venv (the first time only), copy the
# lessons into your own workspace/ and open JupyterLab there. Windows, without make: py tools\\course.py lab
PYTHON ?= python3
TORCH  ?= auto

.PHONY: lab
lab:
\t$(PYTHON) tools/course.py --torch $(TORCH) lab
"""


class ReleaseError(RuntimeError):
    """A release that must not be made (a tag that would move, a version that is not new, a dirty tree)."""


def learner_readme(root: Path = ROOT) -> str:
    """The learner copy's README: where to start (a link, Binder or Colab, a computer, Windows), the
    launch block (Binder, lessons, Colab links), how to hand work in, updates, where to ask; nothing of
    the teacher's."""
    import stamp_notebooks as stamp

    title = (root / "README.md").read_text().splitlines()[0].lstrip("# ").strip()
    block = f"{stamp.README_BEGIN}\n{stamp.readme_block(root)}\n{stamp.README_END}"
    repository = stamp.repository(root)
    python = "{}.{}".format(*required_python(root))
    return LEARNER_README.format(title=title, tag=stamp.launch_ref(root), launch=block, python=python,
                                 repository=repository, name=repository.split("/")[1],
                                 issues=f"https://github.com/{repository}/issues")


def update_workspace(workspace: Path, root: Path = ROOT) -> tuple[list[str], list[str]]:
    """Give ``workspace`` the learner version of every lesson it lacks; never touch one it has.

    This is the learner's own folder (``make lab``): their edits survive ``git pull`` and later runs.
    Returns the names added and the names kept. A ``workspace`` that is a file, or cannot be made a
    folder, raises :class:`ReleaseError` saying so.
    """
    if workspace.exists() and not workspace.is_dir():
        raise ReleaseError(f"the workspace {workspace} is a file, not a folder: give a folder (it is made "
                           f"when missing), e.g. --workspace workspace")
    try:
        workspace.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReleaseError(f"the workspace folder {workspace} cannot be made: {exc.strerror} "
                           f"({exc.filename}); give a folder you can write in") from None
    added, kept = [], []
    for source in sorted((root / "notebooks").glob("*.ipynb")):
        target = workspace / source.name
        if target.exists():
            kept.append(source.name)
            continue
        learner, _ = learner_notebook(nbformat.read(source, as_version=4), f"notebooks/{source.name}")
        nbformat.write(learner, target)
        added.append(source.name)
    return added, kept


def version(root: Path = ROOT) -> str:
    with open(root / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]["version"]


#: Where the course names its own version, beside the launch links that tools/stamp_notebooks.py writes
#: from pyproject.toml (README, notebooks): file -> (pattern, replacement) with {old}, {new} and {today}.
#: tests/tools/test_release.py checks that no other file names a release tag.
VERSIONED = {
    "pyproject.toml": ((r'^version = "{old}"$', 'version = "{new}"'),),
    "CITATION.cff": ((r'^version: "{old}"$', 'version: "{new}"'),
                     (r'^date-released: "[0-9-]+"$', 'date-released: "{today}"')),
    "docs/classroom.md": ((r"learner-v{old}(?![\w.])", "learner-v{new}"),),
    "docs/accessibility.md": ((r"course version {old}(?![\w.])", "course version {new}"),
                              (r"last updated on [0-9-]+", "last updated on {today}")),
}
#: the files where each pattern must be found (the classroom guide names the version only in examples)
_MUST_NAME = ("pyproject.toml", "CITATION.cff", "docs/accessibility.md")


def bump_version(new: str, root: Path = ROOT, today: str | None = None) -> list[str]:
    """Write version ``new`` into every file of :data:`VERSIONED`; return the files changed."""
    old, today = version(root), today or datetime.date.today().isoformat()
    changed = []
    for name, rules in VERSIONED.items():
        path = root / name
        text = new_text = path.read_text(encoding="utf-8")
        for pattern, replacement in rules:
            new_text, found = re.subn(pattern.format(old=re.escape(old)),
                                      replacement.format(new=new, today=today), new_text, flags=re.M)
            if not found and name in _MUST_NAME:
                raise ReleaseError(f"{name} has no line matching {pattern.format(old=old)!r}")
        if new_text != text:
            path.write_text(new_text, encoding="utf-8")
            changed.append(name)
    return changed


STATEMENT = "docs/accessibility.md"
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_PLACEHOLDER_DOMAIN = re.compile(r"\.example$|@example\.(org|com|net)$", re.I)


def accessibility_contact(root: Path = ROOT) -> str:
    """The private address for accessibility reports: ``[tool.lessons.accessibility] contact`` of
    pyproject.toml, the one place it is set ("" when it is not)."""
    with open(root / "pyproject.toml", "rb") as fh:
        tool = tomllib.load(fh).get("tool", {})
    return str(tool.get("lessons", {}).get("accessibility", {}).get("contact", ""))


def check_accessibility_contact(root: Path = ROOT, keep_placeholder: bool = False) -> None:
    """Refuse a release whose accessibility statement has no private contact: the address unset, not an
    address, not the one the statement names, or a reserved placeholder (``.example``, which no one reads)
    unless ``keep_placeholder`` (``--keep-placeholder-contact``: a trial release), then only warn."""
    contact = accessibility_contact(root)
    if not _EMAIL.match(contact):
        raise ReleaseError(f"pyproject.toml's [tool.lessons.accessibility] contact is {contact!r}, not an "
                           f"e-mail address: set the address where the course team reads accessibility "
                           f"reports ({STATEMENT} names it)")
    if contact not in (root / STATEMENT).read_text(encoding="utf-8"):
        raise ReleaseError(f"{STATEMENT} does not name the accessibility contact {contact} of "
                           "pyproject.toml")
    if _PLACEHOLDER_DOMAIN.search(contact):
        words = (f"the accessibility contact {contact} is a placeholder (a reserved domain, which receives "
                 f"no mail): set the address where your course team reads accessibility reports in "
                 f"pyproject.toml's [tool.lessons.accessibility] contact and in {STATEMENT}")
        if not keep_placeholder:
            raise ReleaseError(words + " (or, for a trial release, --keep-placeholder-contact)")
        print(f"warning: {words} before learners rely on it")


def check_new_version(new: str, current: str) -> None:
    """Refuse a VERSION that is not a version written as pyproject.toml writes one (0.4.0: no leading v,
    which the tag adds, no spaces, no other spelling of the same number), or older than the current one."""
    from packaging.version import InvalidVersion, Version

    if not isinstance(new, str) or not new:
        raise ReleaseError(f"VERSION={new!r} is not a version number (such as 0.3.0)")
    if new[:1] in "vV" and new[1:2].isdigit():
        raise ReleaseError(f"VERSION={new} starts with a v: give the number alone, VERSION={new[1:]} (the "
                           f"tag adds the v: learner-v{new[1:]})")
    try:
        if str(Version(new)) != new:
            raise ReleaseError(f"VERSION={new!r} is not written as a version is written here: "
                               f"VERSION={Version(new)} (as in pyproject.toml)")
        if Version(new) < Version(current):
            raise ReleaseError(f"VERSION={new} is older than pyproject.toml's {current}: a release goes "
                               "forward")
    except InvalidVersion:
        raise ReleaseError(f"VERSION={new!r} is not a version number (such as 0.3.0)") from None


def tag_exists(tag: str, root: Path = ROOT) -> bool:
    return subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/tags/{tag}"], cwd=root,
                          capture_output=True).returncode == 0


def _git(root: Path, *args: str, env: dict | None = None) -> str:
    """``git ARGS`` in ``root``; its output. A failing git raises :class:`ReleaseError` with git's own
    message (``Author identity unknown … Please tell me who you are``), not a bare exit status."""
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}")
        raise ReleaseError(f"git {' '.join(args[:2])} failed:\n{said}")
    return done.stdout.strip()


def check_identity(root: Path = ROOT) -> None:
    """Refuse, with git's own words, a release that git could not commit: no user name or e-mail set."""
    try:
        _git(root, "var", "GIT_COMMITTER_IDENT")
        _git(root, "var", "GIT_AUTHOR_IDENT")
    except ReleaseError as exc:
        raise ReleaseError(f"{exc}\nNothing was changed. Set who commits, then release again: git config "
                           "user.name \"Your Name\"; git config user.email you@example.edu") from None


def changelog_entry(tag: str, counts: dict[str, int], rerun: list[str], today: str) -> str:
    removed = sum(counts.values())
    ran = (f"re-run because their code changed: {', '.join(rerun)}" if rerun
           else "no lesson's code changed since its last run, none re-run")
    return (f"## {tag} ({today})\n\nLearner release: {len(counts)} lessons, {removed} exercise solutions "
            f"removed; {ran}.\n")


#: CHANGELOG.md's section of what changed since the last release; a release turns it into its own entry
UNRELEASED = "## Unreleased"
NOTHING_YET = "Nothing yet: add a line here with each change learners or teachers will notice."
CHANGELOG_TITLE = ("# Changelog\n\nWhat changed for learners and teachers, newest first. Each change adds "
                   "a line under *Unreleased*; `make release VERSION=…` makes those lines the release's "
                   "entry.\n")


def unreleased_notes(text: str) -> str:
    """The lines of CHANGELOG.md's *Unreleased* section ("" when it holds none, or only the placeholder)."""
    if UNRELEASED not in text:
        return ""
    body = text.split(UNRELEASED, 1)[1].split("\n## ", 1)[0].strip()
    return "" if body == NOTHING_YET else body


def write_changelog(entry: str, root: Path = ROOT) -> Path:
    """Make CHANGELOG.md's *Unreleased* notes the entry of this release (``entry`` is its first lines), and
    open a new, empty *Unreleased* section above it (the file is created when missing)."""
    path = root / "CHANGELOG.md"
    text = path.read_text(encoding="utf-8") if path.exists() else CHANGELOG_TITLE
    notes = unreleased_notes(text)
    if UNRELEASED in text:  # drop the section: its notes move into the entry
        head, rest = text.split(UNRELEASED, 1)
        after = rest.split("\n## ", 1)
        text = head.rstrip("\n") + ("\n\n## " + after[1] if len(after) > 1 else "\n")
    entry = entry.rstrip("\n") + ("\n\n" + notes if notes else "") + "\n"
    head, sep, rest = text.partition("\n## ")
    path.write_text(f"{head.rstrip(chr(10))}\n\n{UNRELEASED}\n\n{NOTHING_YET}\n\n{entry}"
                    + (("\n## " + rest) if sep else ""), encoding="utf-8")
    return path


def restamp(root: Path = ROOT) -> list[str]:
    """Stamp the notebooks and the README (the new launch links), then re-run only the lessons whose code
    changed since their last run (``tools/run_notebooks.py``); return the lessons re-run ("07", ...)."""
    tool = [sys.executable, str(root / "tools" / "run_notebooks.py")]
    try:
        subprocess.run([*tool, "--stamp"], cwd=root, check=True)
        notebooks = sorted((root / "notebooks").glob("*.ipynb"))
        listed = subprocess.run([*tool, "--list-stale", *map(str, notebooks)], cwd=root, check=True,
                                capture_output=True, text=True).stdout.split()
        if listed:  # stamped again after the run: a slide is cut by what its cells show
            subprocess.run([*tool, "--stamp", *listed], cwd=root, check=True)
    except subprocess.CalledProcessError as exc:
        raise ReleaseError(f"{' '.join(map(str, exc.cmd[1:]))} failed (see above); nothing is committed: "
                           "'git checkout .' undoes the version change") from None
    return [Path(name).stem[:2] for name in listed]


def make_release(new: str, out: Path, branch: str = "learner", root: Path = ROOT,
                 today: str | None = None, keep_placeholder: bool = False) -> str:
    """The release ``learner-vNEW`` in one step; return the learner commit.

    Refused before anything changes when the tag exists, NEW is older than the current version or the
    working tree has uncommitted changes. Then: NEW written everywhere (:func:`bump_version`), the
    notebooks re-stamped and the changed ones re-run (:func:`restamp`), the learner copy made, the entry
    of CHANGELOG.md written, "Release NEW" committed on the current branch, the copy committed to
    ``branch`` and tagged.
    """
    tag, today = f"learner-v{new}", today or datetime.date.today().isoformat()
    check_new_version(new, version(root))
    if tag_exists(tag, root):
        raise ReleaseError(f"tag {tag} exists already and a release tag never moves: choose a new VERSION")
    if _git(root, "status", "--porcelain", "--untracked-files=no"):
        raise ReleaseError("the working tree has uncommitted changes: commit or stash them first (a release "
                           "is made from commits)")
    check_identity(root)
    check_accessibility_contact(root, keep_placeholder)
    try:
        bumped = bump_version(new, root, today)
        rerun = restamp(root)
        counts = release(out, root)
        changelog = write_changelog(changelog_entry(tag, counts, rerun, today), root)
        shutil.copy2(changelog, out / "CHANGELOG.md")
        _git(root, "add", "--update")
        _git(root, "add", changelog.name)
        ran = f"; re-run: {', '.join(rerun)}" if rerun else ""
        _git(root, "commit", "-q", "-m", f"Release {new}: the version in {', '.join(bumped) or 'place'}, "
             f"notebooks re-stamped{ran} (make release)")
    except (ReleaseError, OSError) as exc:
        undo_uncommitted(root)
        raise ReleaseError(f"{exc}\nThe release stopped before its commit; the working tree is as it was "
                           "(nothing bumped).") from None
    commit = commit_to_branch(out, branch, root, tag=tag)
    here = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
    print(f"released {tag}: \"Release {new}\" committed on {here}, the learner copy as {commit[:12]} on "
          f"branch {branch}")
    print("push them (the Binder badge, the Colab links and the nbgitpuller link name the tag):")
    for line in push_commands(here, branch, tag, root):
        print(f"  {line}")
    return commit


def undo_uncommitted(root: Path) -> None:
    """Put every tracked file back as the last commit has it (a release starts from a clean tree, so this
    undoes only what the release itself changed); files git does not track are left alone."""
    subprocess.run(["git", "reset", "-q"], cwd=root, capture_output=True)
    subprocess.run(["git", "checkout", "-q", "HEAD", "--", "."], cwd=root, capture_output=True)


def _repository_of(url: str) -> str:
    """``owner/name`` of a GitHub-style remote URL (https, ssh or scp form, with or without ``.git``)."""
    path = re.sub(r"^(?:[a-z+]+://)?(?:[^@/]+@)?[^/:]+[/:]", "", url.strip())
    return path.removesuffix("/").removesuffix(".git").lower()


def learners_remote(root: Path = ROOT) -> str | None:
    """The git remote whose URL is the learners' repository, ``[project.urls] Repository`` (the one every
    launch link names), read as configured (a ``url.…insteadOf`` rewrite does not hide it); None if none."""
    import stamp_notebooks as stamp

    wanted = stamp.repository(root).lower()
    for name in _git(root, "remote").split():
        url = subprocess.run(["git", "config", "--get", f"remote.{name}.url"], cwd=root, capture_output=True,
                             text=True).stdout.strip()
        if _repository_of(url) == wanted:
            return name
    return None


def push_commands(here: str, branch: str, tag: str, root: Path = ROOT) -> list[str]:
    """The commands that publish a release: the learner branch and its tag to the learners' repository,
    and the teacher's branch ``here`` (solutions included) to its own remote, never to the learners'.

    The learners' remote is the one named by ``[project.urls] Repository`` (:func:`learners_remote`); the
    teacher's is ``here``'s upstream, else ``origin``. When the two are the same remote, the teacher's branch
    is not pushed there: a line says to push it to a private remote of its own.
    """
    learners = learners_remote(root)
    upstream = subprocess.run(["git", "config", "--get", f"branch.{here}.remote"], cwd=root,
                              capture_output=True, text=True).stdout.strip() or "origin"
    lines = []
    if learners is None:
        import stamp_notebooks as stamp

        lines.append(f"git remote add learners https://github.com/{stamp.repository(root)}   # once: the "
                     "learners' repository ([project.urls] Repository)")
        learners = "learners"
    lines.append(f"git push {learners} {branch} {tag}   # the learner copy and its tag, for learners")
    if here == "HEAD":
        return lines
    if upstream == learners:
        lines.append(f"# {here} holds the solutions: push it to a private remote of your own, never to "
                     f"{learners} (the learners' repository)")
    else:
        lines.append(f"git push {upstream} {here}   # your branch, solutions included: your private remote")
    return lines


def commit_to_branch(tree: Path, branch: str, root: Path = ROOT, tag: str | None = None) -> str:
    """Commit the folder ``tree`` as the next commit of ``branch``, tag it ``tag`` (never moving an
    existing tag; default ``learner-vVERSION``); return the commit id."""
    def git(*args: str, env: dict | None = None) -> str:
        return _git(root, *args, env=env)

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        git("--work-tree", str(tree), "add", "-A", ".", env=env)
        tree_id = git("write-tree", env=env)
    parent = subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/heads/{branch}"], cwd=root,
                            capture_output=True, text=True).stdout.strip()
    source = git("rev-parse", "--short", "HEAD")
    message = f"Learner release {version(root)} of {source} (tools/learner_release.py)"
    commit = git("commit-tree", tree_id, *(["-p", parent] if parent else []), "-m", message)
    tag = tag or f"learner-v{version(root)}"
    if tag_exists(tag, root):
        raise ReleaseError(f"tag {tag} exists already and a release tag never moves: choose a new VERSION")
    git("update-ref", f"refs/heads/{branch}", commit)
    git("tag", tag, commit)
    return commit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "learner")
    parser.add_argument("--branch", help="also commit the copy to this branch and tag it learner-vVERSION")
    parser.add_argument("--release", metavar="VERSION",
                        help="make the learner release VERSION (on branch learner unless --branch says)")
    parser.add_argument("--keep-placeholder-contact", action="store_true",
                        help="release with the placeholder accessibility contact (a trial release only)")
    parser.add_argument("--workspace", type=Path,
                        help="instead: add the lessons this folder lacks (learner versions), keep the rest")
    args = parser.parse_args(argv)
    if args.workspace:
        try:
            added, kept = update_workspace(args.workspace)
        except ReleaseError as exc:
            print(f"workspace not updated: {exc}", file=sys.stderr)
            return 2
        print(f"workspace {args.workspace}: {len(added)} lesson(s) added, {len(kept)} kept as you left them")
        for name in added:
            print(f"  + {name}")
        return 0
    try:
        if args.release:
            make_release(args.release, args.out, args.branch or "learner",
                         keep_placeholder=args.keep_placeholder_contact)
            return 0
        counts = release(args.out)
    except (SolutionMarkerError, ReleaseError) as exc:
        print(f"learner release failed: {exc}", file=sys.stderr)
        return 1
    for name, count in counts.items():
        print(f"  {name:40s} {count} solution region{'s' if count != 1 else ''} removed")
    print(f"learner copy written to {args.out}")
    if args.branch:
        try:
            commit = commit_to_branch(args.out, args.branch)
        except ReleaseError as exc:
            print(f"learner release failed: {exc}", file=sys.stderr)
            return 1
        print(f"committed as {commit[:12]} on branch {args.branch}, tagged learner-v{version()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
