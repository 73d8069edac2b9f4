"""Lesson 11's claims of agreement are shown by cells of the lesson, and say what they compare.

The cell of section 5 that compares ``ll.rope`` with transformers' ``apply_rotary_pos_emb`` of Llama runs in
the course's nbval kernels with its output ignored (a learner's environment, Binder's included, has no
transformers): here it runs both ways, with transformers (the agreement, below 1e-12, as the committed
output says) and with its import failing (a sentence that it compares nothing, and no error).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.util
import io

import nbformat
import numpy as np
import pytest

import lessons_lib as ll
from tests.helpers import NOTEBOOKS

LESSON = NOTEBOOKS / "11_position.ipynb"


def _cell(marker: str):
    cells = [c for c in nbformat.read(LESSON, as_version=4).cells
             if c.cell_type == "code" and marker in c.source]
    assert len(cells) == 1, marker
    return cells[0]


def _run(source: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, str(LESSON), "exec"), {"np": np, "ll": ll, "SEED": 0})
    return out.getvalue()


def test_the_comparison_with_llamas_code_runs_and_agrees_below_1e_12():
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed (requirements-dev.txt pins it)")
    cell = _cell("apply_rotary_pos_emb")
    printed = _run(cell.source)
    assert printed.strip() == ("Llama's apply_rotary_pos_emb against ll.rope, queries and keys: largest "
                               "difference below 1e-12")
    assert printed.strip() == "".join(o.get("text", "") for o in cell.outputs).strip()   # what is committed


def test_without_transformers_the_cell_says_it_compares_nothing(monkeypatch):
    real_import = builtins.__import__

    def no_transformers(name, *args, **kwargs):
        if name.split(".")[0] == "transformers":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_transformers)
    printed = _run(_cell("apply_rotary_pos_emb").source)
    assert printed.strip() == ("transformers is not installed here: ll.rope is not compared with Llama's "
                               "code in this run.")


def test_the_long_term_decay_is_what_the_lesson_says():
    """Section 4: for a query and a key pointing the same way the score falls from 64 to almost nothing, and
    rises from 16 to 32 and from 512 to 1024; the committed output is that run's."""
    same = np.ones(64)
    score = {d: float(ll.rope(same[None], positions=[d])[0] @ same) for d in (0, 16, 32, 512, 1024, 4096)}
    assert score[0] == 64 and abs(score[4096]) < 1
    assert score[32] > score[16] and score[1024] > score[512]
    printed = "".join(o.get("text", "") for o in _cell("positions=[distance]").outputs)
    for d, s in score.items():
        assert f"distance {d:>5}: score {s:5.1f}" in printed, d
    prose = " ".join(c.source for c in nbformat.read(LESSON, as_version=4).cells if c.cell_type == "markdown")
    assert "from 16 to 32, and from 512 to 1024, it rises" in " ".join(prose.split())
