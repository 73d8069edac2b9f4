"""The accessibility statement (docs/accessibility.md) in the form public bodies use, kept true: its course
version is pyproject.toml's, its date a date, its private contact the one pyproject.toml sets, its parts all
there, and the release rewrites its version and date and refuses a release without a contact."""

from __future__ import annotations

import datetime
import re
import shutil

import pytest

from tests.helpers import REPO, load_tool

release = load_tool("learner_release")
STATEMENT = REPO / "docs" / "accessibility.md"
TEXT = STATEMENT.read_text(encoding="utf-8")

# the parts of the EU model statement and the UK sample, as this statement names them
PARTS = (
    "## How accessible the course is",
    "**Conformance status: partially conformant**",
    "## Feedback and contact",
    "**Response time.**",
    "**Other formats.**",
    "**Accommodations in a graded class.**",
    "## Enforcement procedure",
    "### What was tested, and how",
    "### Known exceptions and their alternatives",
    "## What this statement does not cover",
)


def test_the_statement_names_the_version_of_pyproject_toml():
    current = release.version(REPO)
    named = set(re.findall(r"course version (\d+(?:\.\d+)*(?:[a-z]+\d*)?)", TEXT))
    assert named == {current}, (
        f"docs/accessibility.md names course version {sorted(named)}, pyproject.toml {current}: make release "
        "writes it")


def test_the_statement_says_when_it_was_last_updated():
    dates = re.findall(r"last updated on ([0-9-]+)", TEXT)
    assert len(dates) == 1, "the statement says once when it was last updated"
    datetime.date.fromisoformat(dates[0])


def test_the_statement_has_every_part_of_a_public_statement():
    missing = [part for part in PARTS if part not in TEXT]
    assert not missing, f"docs/accessibility.md lacks {missing}"


def test_the_private_contact_is_pyprojects_and_the_statement_names_it():
    contact = release.accessibility_contact(REPO)
    assert re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s.]+", contact), contact
    assert f"**{contact}**" in TEXT


def test_the_screen_reader_transcripts_are_written_in():
    body = TEXT.split("<!-- transcripts: begin -->", 1)[1].split("<!-- transcripts: end -->", 1)[0]
    assert "make transcripts" not in body and "Lesson 04" in body and "d_k = " in body, (
        "the transcripts section is empty: run make transcripts")


def test_the_measurement_log_lives_in_the_developers_document():
    assert "No slower for it" not in TEXT and "benchmarks/key_press.py" not in TEXT
    measurements = (REPO / "docs" / "measurements.md").read_text(encoding="utf-8")
    assert "explorers against a bare slider" in measurements


@pytest.fixture
def versioned_copy(tmp_path):
    """The files the release rewrites, copied."""
    for name in release.VERSIONED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tmp_path / name)
    return tmp_path


def test_the_release_writes_the_new_version_and_todays_date_into_the_statement(versioned_copy):
    release.bump_version("99.0.0", versioned_copy, today="2031-02-03")
    text = (versioned_copy / "docs" / "accessibility.md").read_text(encoding="utf-8")
    assert "course version 99.0.0" in text and f"course version {release.version(REPO)}" not in text
    assert "last updated on 2031-02-03" in text


@pytest.mark.parametrize("contact", ["", "nobody", "someone@elsewhere.org"])
def test_the_release_refuses_a_statement_without_its_private_contact(versioned_copy, contact):
    pyproject = versioned_copy / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace(release.accessibility_contact(REPO), contact), encoding="utf-8")
    with pytest.raises(release.ReleaseError, match="contact"):
        release.check_accessibility_contact(versioned_copy)


def test_the_release_refuses_the_placeholder_contact_and_warns_when_told_to_keep_it(versioned_copy, capsys):
    pyproject = versioned_copy / "pyproject.toml"
    for name in ("pyproject.toml", "docs/accessibility.md"):  # the placeholder, whatever this repository sets
        path = versioned_copy / name
        path.write_text(path.read_text(encoding="utf-8").replace(release.accessibility_contact(REPO),
                                                                 "accessibility@course.example"))
    assert release.accessibility_contact(versioned_copy) == "accessibility@course.example", pyproject
    with pytest.raises(release.ReleaseError, match="placeholder .* --keep-placeholder-contact"):
        release.check_accessibility_contact(versioned_copy)
    release.check_accessibility_contact(versioned_copy, keep_placeholder=True)
    assert "placeholder" in capsys.readouterr().out
