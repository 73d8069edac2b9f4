"""`make lab` really serves the course: JupyterLab starts with the Makefile's arguments and answers.

The server runs from the repository root with exactly ``LAB_ARGS`` (plus --no-browser, a free loopback
port and a random token), as `make lab` starts it; the fixture always shuts it down.
"""

from __future__ import annotations

import json

import pytest
from conftest import NOTEBOOKS, REPO, makefile_lab_args, running_lab

pytestmark = pytest.mark.lab

START = "notebooks/00_start_here.ipynb"


@pytest.fixture(scope="module")
def lab():
    assert (REPO / START).exists(), f"{START} is missing: `make lab` opens it, so the course cannot start"
    with running_lab(REPO, makefile_lab_args()) as server:
        yield server


def test_make_lab_opens_the_start_notebook():
    args = makefile_lab_args()
    assert START in args, f"`make lab` should open {START}; LAB_ARGS is {args}"
    assert "--ServerApp.root_dir=." in args, "`make lab` should serve the whole repository (file browser)"


def test_lab_page_is_jupyterlab(lab):
    status, body = lab.request(f"/lab?token={lab.token}")
    assert status == 200
    html = body.decode("utf-8", errors="replace")
    assert "<title>JupyterLab</title>" in html
    assert "jupyter-config-data" in html, "the page lacks JupyterLab's config block"


def test_start_notebook_is_served_with_its_kernel(lab):
    model = lab.api(f"contents/{START}")
    assert model["type"] == "notebook"
    assert model["content"]["nbformat"] == 4
    kernel = model["content"]["metadata"].get("kernelspec", {}).get("name")
    assert kernel == "python3", f"{START} should use the python3 kernel, not {kernel!r}"


def test_course_folder_is_browsable(lab):
    listing = lab.api("contents/notebooks")
    served = {item["name"] for item in listing["content"]}
    on_disk = {p.name for p in NOTEBOOKS.glob("*.ipynb")}
    assert on_disk <= served


def test_python3_kernel_is_available(lab):
    specs = lab.api("kernelspecs")
    assert "python3" in specs["kernelspecs"], json.dumps(specs)[:500]
