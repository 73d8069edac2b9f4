"""``make release VERSION=…`` takes the number as pyproject.toml writes it (0.4.0): a leading v (the tag
adds one: learner-v0.4.0, never learner-vv0.4.0), spaces or another spelling of the number are refused with
the version to write instead, before anything is bumped, committed or asked of git."""

from __future__ import annotations

import pytest

from tests.helpers import REPO, load_tool

lr = load_tool("learner_release")


@pytest.mark.parametrize(("given", "words"), [
    ("v0.9.0", "starts with a v: give the number alone, VERSION=0.9.0 (the tag adds the v: learner-v0.9.0)"),
    ("V0.9.0", "VERSION=0.9.0"),
    (" 0.9.0", "VERSION=0.9.0"),
    ("0.9.0\n", "VERSION=0.9.0"),
    ("00.9.0", "VERSION=0.9.0"),
    ("0.9.0-rc1", "VERSION=0.9.0rc1"),
    ("vnext", "not a version number"),
    ("", "not a version number"),
])
def test_a_version_not_written_as_pyproject_writes_it_is_refused_with_what_to_write(given, words):
    with pytest.raises(lr.ReleaseError, match="VERSION=") as error:
        lr.check_new_version(given, lr.version(REPO))
    assert words in str(error.value)


@pytest.mark.parametrize("given", ["0.9.0", "0.9", "1.0.0rc1", "0.9.0.post1"])
def test_a_newer_version_written_as_pyproject_writes_it_is_accepted(given):
    lr.check_new_version(given, "0.3.0")


def test_make_release_refuses_a_leading_v_before_it_asks_git_or_bumps_anything(tmp_path):
    """Runs in `make check`, where any git command would fail the test: the refusal comes first."""
    before = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    with pytest.raises(lr.ReleaseError, match="starts with a v"):
        lr.make_release("v0.9.0", tmp_path / "learner", root=REPO)
    assert (REPO / "pyproject.toml").read_text(encoding="utf-8") == before
    assert not (tmp_path / "learner").exists()
