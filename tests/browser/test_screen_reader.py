"""A real screen reader: Orca on a virtual X display, reading Debian's Chromium (not headless), while
JupyterLab runs lesson 04 and a learner's keys reach it through the X server (tests/helpers/screen_reader.py,
the scenes of tools/screen_reader_transcript.py, which writes the transcripts of docs/accessibility.md).
The other browser tests check the accessibility tree Orca reads; this one checks what Orca makes of it."""

from __future__ import annotations

import re

import pytest

from tests.helpers import load_tool, require
from tests.helpers.screen_reader import desktop, missing

transcript = load_tool("screen_reader_transcript")


@pytest.mark.browser
@pytest.mark.slow
def test_orca_names_the_d_k_slider_and_says_its_new_value_after_an_arrow_key(playwright, served_course):
    """Tab onto lesson 04's d_k slider: Orca says its name, that it is a slider, and its value text
    ("d_k = 4"); the right arrow: Orca says the new value ("d_k = 8") and the explorer's live region, what
    the new value did to the weights ("d_k = 8: the row of … puts … on …")."""
    lack = missing()
    require(not lack, f"a screen-reader run needs: apt-get install {' '.join(lack)}")
    with desktop() as desk, desk.chromium(playwright) as context:
        scene = transcript.in_lesson(desk, context, served_course, transcript.LESSON_04,
                                     transcript.d_k_slider)
    (_, on_focus), (_, on_key) = scene.steps
    focus = " ".join(on_focus)
    assert "d_k: length of each query and key" in focus and "slider" in focus, on_focus
    before = re.search(r"d_k = (\d+)", focus)
    assert before, f"Orca did not say the slider's value text on focus: {on_focus}"
    said = " ".join(on_key)
    after = [int(v) for v in re.findall(r"d_k = (\d+)", said)]
    assert after and all(v == 2 * int(before.group(1)) for v in after), (
        f"after the right arrow from d_k = {before.group(1)}, Orca said {on_key}")
    assert re.search(r"d_k = \d+: the row of “[^”]+” puts [0-9.]+ on “[^”]+”", said), (
        f"Orca did not read the explorer's live region after the key: {on_key}")
