"""`make lab` really serves the course: JupyterLab starts with the arguments of `make lab` and answers.

`make lab` opens the learner's own workspace (``workspace/``, the learner release's lessons, built by
``tools/course.py``); `make teach` the source notebooks. The server runs from the repository root with
exactly those arguments (plus --no-browser, a free loopback port and a random token); the fixture always
shuts it down.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import NOTEBOOKS, REPO, load_tool
from tests.helpers.lab_server import lab_args, running_lab

START = "workspace/00_start_here.ipynb"
SOURCE_START = "notebooks/00_start_here.ipynb"


@pytest.fixture(scope="module")
def lab():
    assert (REPO / SOURCE_START).exists(), f"{SOURCE_START} is missing, so the course cannot start"
    load_tool("learner_release").update_workspace(REPO / "workspace")  # what `make lab` does first
    with running_lab(REPO, lab_args("workspace")) as server:
        yield server


@pytest.mark.lab
def test_make_lab_opens_the_start_notebook_of_the_workspace():
    args = lab_args("workspace")
    assert START in args, f"`make lab` should open {START}; it passes {args}"
    assert "--ServerApp.root_dir=." in args, "`make lab` should serve the whole repository (file browser)"
    assert SOURCE_START in lab_args("notebooks"), "`make teach` should open the source notebooks"


@pytest.mark.lab
def test_the_workspace_lesson_served_has_no_solutions(lab):
    source = lab.api(f"contents/{START}")["content"]
    code = "\n".join("".join(c["source"]) for c in source["cells"] if c["cell_type"] == "code")
    assert "### BEGIN SOLUTION" not in code


@pytest.mark.lab
def test_lab_page_is_jupyterlab(lab):
    status, body = lab.request(f"/lab?token={lab.token}")
    assert status == 200
    html = body.decode("utf-8", errors="replace")
    assert "<title>JupyterLab</title>" in html
    assert "jupyter-config-data" in html, "the page lacks JupyterLab's config block"


@pytest.mark.lab
def test_start_notebook_is_served_with_its_kernel(lab):
    model = lab.api(f"contents/{START}")
    assert model["type"] == "notebook"
    assert model["content"]["nbformat"] == 4
    kernel = model["content"]["metadata"].get("kernelspec", {}).get("name")
    assert kernel == "python3", f"{START} should use the python3 kernel, not {kernel!r}"


@pytest.mark.lab
def test_course_folder_is_browsable(lab):
    listing = lab.api("contents/notebooks")
    served = {item["name"] for item in listing["content"]}
    on_disk = {p.name for p in NOTEBOOKS.glob("*.ipynb")}
    assert on_disk <= served


@pytest.mark.lab
def test_python3_kernel_is_available(lab):
    specs = lab.api("kernelspecs")
    assert "python3" in specs["kernelspecs"], json.dumps(specs)[:500]


@pytest.mark.lab
def test_a_server_whose_port_was_taken_meanwhile_starts_on_another(tmp_path, monkeypatch):
    """Two pytest-xdist workers each start a server (the browser stage): a port found free may be taken by
    the other before the server binds it; the server then stops at once and starts on another port."""
    import socket

    from tests.helpers import free_port, lab_server

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        ports = iter([busy, free_port()])
        monkeypatch.setattr(lab_server, "free_port", lambda: next(ports))
        with running_lab(tmp_path, [arg for arg in lab_args("notebooks") if arg.startswith("--")]) as server:
            assert server.request("/api/status")[0] == 200
            assert not server.url.endswith(f":{busy}")
            assert b"already in use" in server.log_path.read_bytes(), "the first start did not meet the port"
