"""axe-core (tests/helpers/a11y.py: pinned, from npm, never fetched) over the course's own content after Run
All, in JupyterLab and Notebook 7: the cell outputs and the rendered Markdown (JupyterLab's menus and
editor are JupyterLab's), with the whole notebook in view, since axe computes the colours behind text only
on screen. No critical or serious violation, each listed by rule and element; the tallies of every impact
are recorded (test-artifacts/latency.json: ``axe``) and printed. The same view is saved as the lesson's
screenshot.
"""

from __future__ import annotations

import time

import pytest

from tests.helpers.a11y import blocking, format_violations, run_axe, tally
from tests.helpers.browser import FRONT_ENDS, SCREENSHOTS, whole_notebook_in_view

COURSE_CONTENT = ".jp-Notebook .jp-OutputArea-output, .jp-Notebook .jp-MarkdownOutput"


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_axe_finds_no_critical_or_serious_violation_in_the_course_content(lesson):
    with whole_notebook_in_view(lesson.page):
        started = time.perf_counter()
        violations = run_axe(lesson.page, COURSE_CONTENT)
        lesson.run["axe"] = {"tally": tally(violations), "seconds": round(time.perf_counter() - started, 2),
                             "rules": {f"{v['id']} ({v['impact']})": len(v["nodes"]) for v in violations}}
        lesson.page.screenshot(path=str(SCREENSHOTS / f"{lesson.shot}.png"))   # the window holds it all
    found = blocking(violations)
    lesson.assert_no_problems([f"axe, critical or serious:\n{format_violations(found)}"] if found else [])
