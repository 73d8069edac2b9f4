"""The files docs/classroom.md mounts into every Zero to JupyterHub pod (``singleuser.extraFiles``) do what
its comments say, in a real JupyterLab: the learners' *Assignments* tab is off when they hand work in by
upload. (Kubernetes itself is not here: the file is put where the pod would have it, a folder on Jupyter's
config path, as ``/etc/jupyter`` is in the image.)"""

from __future__ import annotations

import json
import os
import re

import pytest
import yaml

from tests.helpers import REPO
from tests.helpers.lab_server import running_lab

GUIDE = (REPO / "docs" / "classroom.md").read_text(encoding="utf-8")


def extra_files() -> dict:
    config = yaml.safe_load("\n".join(re.findall(r"```yaml\n(.*?)```", GUIDE, re.S)))
    return config["singleuser"]["extraFiles"]


@pytest.mark.lab
def test_the_mounted_page_config_turns_the_assignments_tab_off(tmp_path):
    entry = extra_files()["lab-page-config"]
    assert entry["mountPath"] == "/etc/jupyter/labconfig/page_config.json"
    system = tmp_path / "etc-jupyter"  # stands in for /etc/jupyter
    (system / "labconfig").mkdir(parents=True)
    (system / "labconfig" / "page_config.json").write_text(entry["stringData"])
    (tmp_path / "root").mkdir()
    args = ["--ServerApp.root_dir=.", *(["--ServerApp.allow_root=True"] if os.geteuid() == 0 else [])]
    with running_lab(tmp_path / "root", args, extra_env={"JUPYTER_CONFIG_PATH": str(system)}) as lab:
        status, page = lab.request("/lab")
    assert status == 200
    data = re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
    disabled = json.loads(data.group(1))["disabledExtensions"]
    assert "@jupyter/nbgrader:assignment-list" in disabled
