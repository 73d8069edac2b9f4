"""Submissions collected by upload through a learning platform (``tools/lms.py collect``), the route for
Zero to JupyterHub, where every learner's server runs as one user: the platform's download of every
upload names each file after the account that uploaded it, and the roster turns that account into the
learner's hub user, for the real ``nbgrader zip_collect``.

Canvas's names (instructure/canvas-lms, ``lib/content_zipper.rb``): ``<sortable name>[_LATE]_<user id>_
<file id>_<uploaded name>``. Moodle's (``mod/assign``): ``<Full Name>_<participant number>_
assignsubmission_file[/ or _]<uploaded name>``, the participant number being the assignment's own, which
its grading worksheet maps to the learner's e-mail address or ID number.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

from tests.helpers import REPO, load_tool
from tests.helpers.grading import nbgrader

lms = load_tool("lms")
stamp = load_tool("stamp_notebooks")
LESSON = "03_step2_scores"
ROSTER = ("hub user,lms id,first name,last name,email\n"
          "jupyter-ada,4001,Ada,Lovelace,ada@uni.example\nben,4002,Ben,Okafor,ben@uni.example\n"
          "cleo,4003,Cleo,Ng,cleo@uni.example\ndan,4004,Dan,Ruiz,dan@uni.example\n")


@pytest.fixture(scope="module")
def generated_once(tmp_path_factory):
    course = tmp_path_factory.mktemp("upload-course")
    (course / "nbgrader_config.py").write_text("c = get_config()\n"
                                               "c.CourseDirectory.course_id = 'attention'\n")
    (course / "source" / LESSON).mkdir(parents=True)
    nb = stamp.nbgrader_source_notebook(nbformat.read(REPO / "notebooks" / f"{LESSON}.ipynb", as_version=4))
    nbformat.write(nb, course / "source" / LESSON / f"{LESSON}.ipynb")
    nbgrader(course, "generate_assignment", LESSON, "--force")
    return course


@pytest.fixture
def generated(generated_once, tmp_path):
    """A course folder of its own for each test, lesson 03 generated (nbgrader's release/ and gradebook)."""
    return Path(shutil.copytree(generated_once, tmp_path / "course"))


def notebook(marker: str) -> bytes:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"# {marker}")])
    return nbformat.writes(nb).encode()


def submitted(course: Path) -> dict[str, set[str]]:
    folders = sorted((course / "submitted").iterdir())
    return {p.name: {f.name for f in (p / LESSON).iterdir()} for p in folders}


def marker(course: Path, learner: str) -> str:
    path = course / "submitted" / learner / LESSON / f"{LESSON}.ipynb"
    return nbformat.read(path, as_version=4).cells[0].source


@pytest.mark.grading
def test_a_canvas_download_is_filed_under_each_uploaders_hub_user(generated, tmp_path):
    course = generated
    (tmp_path / "roster.csv").write_text(ROSTER)
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"lovelaceada_4001_71_{LESSON}.ipynb", notebook("ada's"))
        zf.writestr("okafor_ben_4002_72_Untitled (1).ipynb", notebook("ben's"))  # any name of her own
        zf.writestr("okafor_ben_4002_73_concept-quiz.json", '{"quiz": "concepts"}')
        zf.writestr(f"ngcleo_LATE_4003_74_jupyter-ada_{LESSON}.ipynb", notebook("cleo's"))  # claims ada
        zf.writestr(f"ruizdan_4004_75_{LESSON}.ipynb", notebook("dan's"))
        zf.writestr("ruizdan_4004_76_draft.ipynb", notebook("dan's draft"))  # a second notebook
        zf.writestr("ruizdan_4004_77_notes.pdf", b"%PDF-1.4")
        zf.writestr(f"strangerx_9999_78_{LESSON}.ipynb", notebook("not on the roster"))
    done = lms.collect(course, LESSON, archive, tmp_path / "roster.csv")
    assert done["collected"] == ["ben", "cleo", "dan", "jupyter-ada"]
    notebook_only = {f"{LESSON}.ipynb"}
    assert submitted(course) == {"jupyter-ada": notebook_only, "cleo": notebook_only, "dan": notebook_only,
                                 "ben": {f"{LESSON}.ipynb", "concept-quiz.json"}}
    assert marker(course, "cleo") == "# cleo's" and marker(course, "jupyter-ada") == "# ada's"
    assert marker(course, "dan") == "# dan's", "the notebook named for the lesson counts"
    left = "\n".join(done["left out"])
    assert "account 9999 (strangerx) is not on the roster" in left and "notes.pdf" in left
    assert "ruizdan_4004_76_draft.ipynb: a second" in left


@pytest.mark.grading
def test_a_moodle_download_is_filed_through_the_assignments_grading_worksheet(generated, tmp_path):
    course = generated
    (tmp_path / "roster.csv").write_text(ROSTER)
    (tmp_path / "worksheet.csv").write_text(
        "Identifier,Full name,Email address,Status,Grade\n"
        "Participant 312,Ada Lovelace,ada@uni.example,Submitted,\nParticipant 313,Ben Okafor,,Submitted,\n"
        "Participant 314,Cleo Ng,cleo@uni.example,Submitted,\n")
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"Ada Lovelace_312_assignsubmission_file/{LESSON}.ipynb", notebook("ada's"))
        zf.writestr("Cleo Ng_314_assignsubmission_file_my work.ipynb", notebook("cleo's"))
        zf.writestr(f"Ben Okafor_313_assignsubmission_file/{LESSON}.ipynb", notebook("ben's"))  # no e-mail
    with pytest.raises(lms.RosterError, match="grading worksheet"):
        lms.collect(course, LESSON, archive, tmp_path / "roster.csv", lms="moodle")
    done = lms.collect(course, LESSON, archive, tmp_path / "roster.csv", lms="moodle",
                       worksheet=tmp_path / "worksheet.csv")
    assert done["collected"] == ["cleo", "jupyter-ada"]
    assert marker(course, "cleo") == "# cleo's" and marker(course, "jupyter-ada") == "# ada's"
    assert "account 313 (Ben Okafor) is not on the roster" in "\n".join(done["left out"])
