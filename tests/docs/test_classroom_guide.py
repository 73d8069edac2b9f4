"""The classroom guide (docs/classroom.md): configuration a teacher can paste, and sizing that adds up.

Every YAML block parses, with no key written twice in any mapping (YAML keeps the last of two equal
keys silently: a second ``singleuser:`` pasted below the first would replace it), and so do all of
them pasted into one ``config.yaml``. The sizing rules are recomputed here from the measured figures
the guide gives (the memory table, the server, lesson 00's second Python, a node's allocatable CPU),
and every result the guide states must be the one they give. Its table of points per exercise is the
registry's.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO, load_tool
from tests.helpers.grading import POINTS

GUIDE = (REPO / "docs" / "classroom.md").read_text(encoding="utf-8")
#: the memory each learner gets (guarantee = limit), in the spawners' ByteSpecification; GiB
LIMIT, GIB = "1.25G", 1.25
YAML_BLOCKS = re.findall(r"```yaml\n(.*?)```", GUIDE, re.S)


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that names one key twice."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} is written twice",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def test_the_loader_refuses_a_key_written_twice():
    with pytest.raises(yaml.constructor.ConstructorError, match="singleuser"):
        yaml.load("singleuser:\n  a: 1\nsingleuser:\n  b: 2\n", Loader=UniqueKeyLoader)
    with pytest.raises(yaml.constructor.ConstructorError, match="limit"):
        yaml.load("memory:\n  limit: 1G\n  limit: 2G\n", Loader=UniqueKeyLoader)


def test_every_yaml_block_parses_with_each_key_once_and_all_of_them_paste_into_one_file():
    assert YAML_BLOCKS, "the guide gives Zero to JupyterHub's config.yaml"
    for block in YAML_BLOCKS:
        assert isinstance(yaml.load(block, Loader=UniqueKeyLoader), dict)
    yaml.load("\n".join(YAML_BLOCKS), Loader=UniqueKeyLoader)


def test_the_config_sets_the_guarantees_and_limits_the_sizing_derives():
    config = yaml.load("\n".join(YAML_BLOCKS), Loader=UniqueKeyLoader)["singleuser"]
    assert config["memory"] == {"guarantee": LIMIT, "limit": LIMIT}, "no overcommit: guarantee = limit"
    assert config["cpu"] == {"guarantee": 0.2, "limit": 1}
    hub_grading = load_tool("hub_grading")
    assert hub_grading.SERVER_ENV.items() <= config["extraEnv"].items(), \
        "the teacher's own config outranks the image's"


def _mb(text: str) -> int:
    return int(re.search(r"(\d+) MB", text).group(1))


def test_the_memory_rules_add_up_from_the_measured_figures_every_process_counted():
    rows = dict(re.findall(r"^\| (\d\d)[^|]* \| (\d+) MB \|", GUIDE, re.M))
    peaks = {lesson: int(mb) for lesson, mb in rows.items()}
    assert sorted(peaks) == [f"{n:02d}" for n in range(13)], "every lesson of the registry measured"
    measured = _mb(GUIDE.split("The single-user server", 1)[1])
    grading = _mb(GUIDE.split("nbgrader's learner extensions", 1)[1])
    server = measured + grading
    assert f"a server counts {measured} + {grading} = **{server} MB**" in GUIDE
    check = _mb(GUIDE.split("lesson 00's environment check asks a second", 1)[1])
    heaviest = max(peaks, key=peaks.get)
    assert f"({server} + {peaks[heaviest]} = **{server + peaks[heaviest]} MB**)" in GUIDE
    assert f"({server} + {peaks['00']} + {check} =\n  **{server + peaks['00'] + check} MB**)" in GUIDE
    two = sorted((mb for lesson, mb in peaks.items() if mb > 250), reverse=True)[:2]
    assert f"{server} + {two[0]} + {two[1]} = **{sum(two) + server} MB**" in GUIDE
    memory = yaml.load("\n".join(YAML_BLOCKS), Loader=UniqueKeyLoader)["singleuser"]["memory"]
    assert max(server + peaks[heaviest], server + peaks["00"] + check) * 2**20 <= _bytes(memory["guarantee"])
    assert (server + sum(two)) * 2**20 <= _bytes(memory["limit"]), f"{LIMIT} holds two PyTorch lessons"


def _bytes(quantity: str) -> int:
    """A memory setting in bytes as JupyterHub's spawners read it (Zero to JupyterHub's memory values go to
    KubeSpawner's mem_guarantee and mem_limit): its ByteSpecification, where 1G is 1024³ bytes, as in TLJH."""
    from jupyterhub.traitlets import ByteSpecification

    return ByteSpecification().validate(None, quantity)


def test_one_memory_figure_throughout_per_learner():
    assert _bytes(LIMIT) == 1.25 * 2**30 and f"{LIMIT}, that is 1.25 GiB" in GUIDE
    assert f"sudo tljh-config set limits.memory {LIMIT}" in GUIDE
    assert "limits.memory 1G " not in GUIDE and "limit: 1G " not in GUIDE, "the old figure left behind"
    assert "600M" not in GUIDE and "0.5 GB;" not in GUIDE, "a second memory figure"


def test_the_shared_exchange_volume_is_not_in_the_config_and_is_labelled_for_what_it_allows():
    config = yaml.load("\n".join(YAML_BLOCKS), Loader=UniqueKeyLoader)["singleuser"]
    assert "extraVolumes" not in config["storage"] and "extraVolumeMounts" not in config["storage"]
    page = json.loads(config["extraFiles"]["lab-page-config"]["stringData"])
    assert page == {"disabledExtensions": {"@jupyter/nbgrader:assignment-list": True}}
    section = GUIDE.split("**Zero to JupyterHub** (Kubernetes)", 1)[1].split("### From release to grades")[0]
    assert "1. **Collect by upload**" in section and "tools/lms.py collect" in section
    label = " ".join(section.split())
    assert "**any learner can list every submission, read it, delete it, and submit in any other learner's " \
           "name**" in label
    assert "test_a_shared_exchange_volume_lets_a_learner_delete_and_forge_anothers_submission" in section
    assert "test_collected_by_upload_each_notebook_counts_for_the_account_that_uploaded_it" in section


def test_tljh_memory_is_sized_from_the_limit_and_zero_to_jupyterhub_from_allocatable_cpu():
    assert f"40 × {GIB:g} GB + 0.128 GB = {40 * GIB + 0.128:.1f} GB" in GUIDE and "take **56 GB**" in GUIDE
    assert 40 * GIB + 0.128 + 4 <= 56, "the system and its page cache fit beside the learners"
    assert "a class of 40 learners takes **56 GB and 8 cores**" in GUIDE
    allocatable = 8 - (0.06 + 0.01 + 2 * 0.005 + 4 * 0.0025)
    assert f"allocates **{allocatable:.2f}**" in GUIDE
    free = allocatable - 0.30
    per_node = math.floor(free / 0.2)
    assert f"**{free:.2f} CPU** is left" in GUIDE and f"**{per_node} learners per node**, not 40" in GUIDE
    nodes = math.ceil(120 / per_node)
    assert per_node < 40
    memory = 32 - (4 * 0.25 + 4 * 0.20 + 8 * 0.10 + 16 * 0.06) - 0.1
    assert f"so {memory:.1f} GiB is allocatable" in GUIDE
    by_memory = math.floor((round(memory, 1) - 1.0) / GIB)  # 1.0 GiB requested by the node's own pods
    assert by_memory < per_node and f"**{by_memory} learners per node: the memory decides**" in GUIDE
    assert f"**120 learners: ⌈120 / {by_memory}⌉ = {math.ceil(120 / by_memory)} nodes**" in GUIDE
    large = 64 - (4 * 0.25 + 4 * 0.20 + 8 * 0.10 + 48 * 0.06) - 0.1
    room = math.floor((large - 1) / GIB)
    said = (f"{large:.1f} GiB is allocatable, {large - 1:.1f} GiB left, room for "
            f"⌊{large - 1:.1f} / {GIB:g}⌋ = {room}")
    assert said in " ".join(GUIDE.split())
    assert room > per_node and f"**⌈120 / {per_node}⌉ = {nodes} nodes**" in GUIDE


def test_no_class_of_120_sits_under_a_heading_for_a_smaller_class():
    for section in re.split(r"^## ", GUIDE, flags=re.M)[1:]:
        heading = section.splitlines()[0]
        if "120 learners" in section:
            assert not re.search(r"up to (?:about )?\d+", heading), heading


def test_every_anchor_the_guides_link_to_is_a_heading():
    def anchors(text: str) -> set[str]:
        return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                for h in re.findall(r"^#+ (.+)$", text, re.M)}

    docs = {name: (REPO / "docs" / name).read_text(encoding="utf-8")
            for name in ("classroom.md", "teaching.md")}
    for name, text in docs.items():
        for target, anchor in re.findall(r"\]\(([\w./-]*)#([\w-]+)\)", text):
            assert anchor in anchors(docs[Path(target).name or name]), (name, target, anchor)


def test_the_classroom_guide_lists_the_points_of_the_table():
    for lesson, points in POINTS.items():
        items = ", ".join(f"`{name}` ({p})" for name, p in points.items())
        assert f"| {lesson[:2]} | {items} | {sum(points.values())} |" in GUIDE, lesson
    total = sum(sum(p.values()) for p in POINTS.values())
    assert f"| **course** | {sum(len(p) for p in POINTS.values())} exercises | **{total}** |" in GUIDE
