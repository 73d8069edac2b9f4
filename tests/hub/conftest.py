"""What the hub tests measured (learners at once, a slider move through the proxy, a server's memory), as
lines: recorded, never asserted (timing is ``make bench``'s). The hub's two files run on two pytest-xdist
workers (``make test-hub``), which keep a test's printed output to themselves, so each line goes to the
``hub_figures`` fixture instead; the controller prints them all at the end of the run and writes them to
test-artifacts/hub-figures.txt."""

from __future__ import annotations

import json

import pytest

from tests.helpers import REPO

FIGURES_TXT = REPO / "test-artifacts" / "hub-figures.txt"
FIGURES = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def hub_figures(request) -> list[str]:
    """The run's list of figure lines: a test appends one (a pytest-xdist worker hands its lines to the
    controller when it ends)."""
    lines = request.config.stash.setdefault(FIGURES, [])
    yield lines
    if hasattr(request.config, "workerinput"):
        request.config.workeroutput["hub_figures"] = json.dumps(lines)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the controller: a worker's lines join the run's."""
    lines = getattr(node, "workeroutput", {}).get("hub_figures")
    if lines:
        node.config.stash.setdefault(FIGURES, []).extend(json.loads(lines))


def pytest_terminal_summary(terminalreporter, config):
    lines = config.stash.get(FIGURES, [])
    if lines and not hasattr(config, "workerinput"):
        terminalreporter.section(f"what the hub tests measured ({FIGURES_TXT.relative_to(REPO)})")
        for line in lines:
            terminalreporter.write_line(line)
        FIGURES_TXT.parent.mkdir(exist_ok=True)
        FIGURES_TXT.write_text("\n".join(lines) + "\n", encoding="utf-8")
