"""pytest --nbval over the lessons (make test-notebooks and test-other-cpu, on every core with pytest-xdist):
each notebook's kernel starts knowing which notebook it runs, so that the course's offline kernel files its
peak memory under that name (tools/offline_kernel.py), whichever worker ran the notebook, in whatever
order."""

import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before nbval's own setup of a notebook's first cell, which starts the kernel with this environment."""
    os.environ["LESSONS_NOTEBOOK"] = item.path.name
