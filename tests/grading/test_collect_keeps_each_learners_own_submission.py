"""On a hub where every learner has a Unix account of their own (The Littlest JupyterHub), the course's
collect (``tools/hub_grading.py teacher --per-learner-accounts``: ``OwnedCollect`` of
lessons_lib/course/grading_policy.py) keeps only the submissions owned by the account they name.

Two real Unix users, made here with ``useradd`` (so the test runs as root, as CI does), hand in lesson 03
through nbgrader's exchange, each process writing as its own account (``runuser``), as ``nbgrader submit``
does; then ben files a later submission under ada's name. nbgrader's own collect would only warn ("claims
to be submitted by ada but is owned by ben; cheating attempt?") and take it, and ``--update`` would put it
in place of ada's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.grading import make_course, nbgrader

hub_grading = load_tool("hub_grading")
stamp = load_tool("stamp_notebooks")
LESSON = "03_step2_scores"


def as_user(user: str, folder: Path, text: str) -> None:
    """``user``'s own process makes ``folder`` in the exchange and writes the lesson's notebook in it."""
    script = 'umask 022 && mkdir "$1" && cat > "$1/$2"'
    subprocess.run(["runuser", "-u", user, "--", "sh", "-c", script, "sh", str(folder), f"{LESSON}.ipynb"],
                   input=text, text=True, check=True, timeout=60)


def handed_in(marker: str) -> str:
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"# {marker}")]))


@pytest.fixture(scope="module")
def accounts():
    if os.geteuid() != 0 or not shutil.which("useradd"):
        pytest.skip("needs root to make two Unix users with useradd (CI runs as root)")
    suffix = uuid.uuid4().hex[:6]
    names = [f"ada{suffix}", f"ben{suffix}"]
    try:
        for name in names:
            subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
        yield names
    finally:
        for name in names:
            subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture(scope="module")
def collected(accounts, tmp_path_factory):
    ada, ben = accounts
    course = tmp_path_factory.mktemp("owned") / "course"
    make_course(course)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as fh:
        fh.write(hub_grading.OWNED)
    (course / "source" / LESSON).mkdir(parents=True)
    nb = stamp.nbgrader_source_notebook(nbformat.read(REPO / "notebooks" / f"{LESSON}.ipynb", as_version=4))
    nbformat.write(nb, course / "source" / LESSON / f"{LESSON}.ipynb")
    shared = Path(tempfile.mkdtemp(prefix="exchange-"))  # where every account can reach it, as /srv/nbgrader
    shared.chmod(0o755)
    exchange = shared / "exchange"
    hub_grading.make_exchange(exchange)
    where = f"--Exchange.root={exchange}"
    nbgrader(course, "generate_assignment", LESSON, "--force")
    nbgrader(course, "release_assignment", LESSON, where)
    inbound = exchange / "attention" / "inbound"
    as_user(ada, inbound / f"{ada}+{LESSON}+2026-12-07 09:00:00.000000 UTC+a1", handed_in("ada's own"))
    as_user(ben, inbound / f"{ben}+{LESSON}+2026-12-07 09:05:00.000000 UTC+b1", handed_in("ben's own"))
    as_user(ben, inbound / f"cleo+{LESSON}+2026-12-07 09:06:00.000000 UTC+b0", handed_in("ben as cleo"))
    first = nbgrader(course, "collect", LESSON, where)
    as_user(ben, inbound / f"{ada}+{LESSON}+2026-12-07 10:00:00.000000 UTC+b2", handed_in("ben as ada"))
    update = nbgrader(course, "collect", "--update", LESSON, where)
    yield course, (ada, ben), first + update
    shutil.rmtree(shared, ignore_errors=True)


def marker(course: Path, learner: str) -> str:
    path = course / "submitted" / learner / LESSON / f"{LESSON}.ipynb"
    return nbformat.read(path, as_version=4).cells[0].source


@pytest.mark.grading
def test_the_submission_each_account_made_is_collected_for_it(collected):
    course, (ada, ben), _ = collected
    assert marker(course, ada) == "# ada's own" and marker(course, ben) == "# ben's own"


@pytest.mark.grading
def test_a_later_submission_filed_under_another_learners_name_is_left_out_even_with_update(collected):
    course, (ada, ben), log = collected
    assert marker(course, ada) == "# ada's own", "ben's forgery replaced ada's work"
    assert f"it is filed as {ada}'s submission but the account {ben} made it" in log
    assert "cheating attempt" not in log, "nbgrader's own collect took it"


@pytest.mark.grading
def test_a_name_with_no_submission_of_its_own_account_gets_none(collected):
    course, (_, ben), log = collected
    assert not (course / "submitted" / "cleo").exists()
    assert f"it is filed as cleo's submission but the account {ben} made it" in log
