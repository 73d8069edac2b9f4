"""How pytest-xdist shares the suite between its workers (``--dist loadscope``, with the scope below:
``pytest_xdist_make_scheduler`` in tests/conftest.py).

A unit of work goes to one worker whole, and a free worker takes the next unit, the largest first:

* a browser check's unit is its page ("<front end>-<notebook>"): the checks of one page run on one worker,
  one after another, on the one Run All they share (tests/browser/conftest.py); the static pages' checks are
  one unit (one Chromium and one axe tally per module);
* each case of the tests in :data:`SPREAD` is a unit of its own: long, independent cases that share no
  fixture but their module's imports (every exercise through its check, twelve secrets each), which as one
  file's unit would keep one worker busy for minutes while the other had finished;
* every other test's unit is its file, so that a module's fixture is built once.

Not xdist's ``--dist loadgroup`` with an ``xdist_group`` mark: with pytest 9.2 it silently groups nothing
(it renames each test's ``_nodeid``, which pytest no longer reads: pytest-xdist issue #1386).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.browser import FRONT_ENDS

#: the static pages' browser modules, one unit together
STATIC_PAGES = ("test_offline_pages.py", "test_static_pages_reflow.py")
#: tests whose cases are units of their own: "<file>::<test>", each holding only module-level state
SPREAD = (
    "tests/exercises/test_unseen_cases.py::"
    "test_every_solution_passes_and_every_listed_mistake_fails_on_unseen_cases_of_any_secret",
    "tests/exercises/test_hints_name_no_operation.py::test_no_feedback_of_a_check_names_an_operation_of_the_solution",
    "tests/tools/test_learner_copy.py::test_learner_copy_runs_top_to_bottom_without_solutions",
)

# A page check's id ends in its parameters, "[<notebook>-<front end>]" (the order of pytest's ids)
PAGE_ID = re.compile(r"\[(?P<source>\d\d_\w+)-(?P<front>" + "|".join(FRONT_ENDS) + r")\]$")


def unit_of(nodeid: str) -> str:
    """The unit of work of the test ``nodeid`` (see the module's docstring)."""
    path, _, name = nodeid.partition("::")
    if Path(path).name in STATIC_PAGES:
        return "static-pages"
    page = PAGE_ID.search(name)
    if page and path.startswith("tests/browser/"):
        return f"{page['front']}-{page['source']}"
    if nodeid.partition("[")[0] in SPREAD:
        return nodeid
    return path


def scheduler(config, log):
    """xdist's LoadScopeScheduling with :func:`unit_of` as the scope."""
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return UnitScheduling(config, log)
