"""`make notebooks` (tools/run_notebooks.py) regenerates notebooks byte-identically when nothing changed.

A cell's printed text arrives in one chunk or several depending on timing; the
runner merges a cell's consecutive stream outputs, drops timestamps and saved widget state, and makes
widget ids stable, so a second run writes the same bytes.
"""

from __future__ import annotations

import shutil

import nbformat
import pytest

from tests.helpers import load_tool


def _runner():
    return load_tool("run_notebooks")


def test_split_stream_outputs_are_merged():
    runner = _runner()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x")])
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="a\n"),
        nbformat.v4.new_output("stream", name="stdout", text="b\n"),
        nbformat.v4.new_output("stream", name="stderr", text="warn\n"),
        nbformat.v4.new_output("stream", name="stdout", text="c\n"),
    ]
    assert runner.merge_streams(nb) == 1
    assert [(o.name, o.text) for o in nb.cells[0].outputs] == [
        ("stdout", "a\nb\n"), ("stderr", "warn\n"), ("stdout", "c\n")]


@pytest.mark.kernel
@pytest.mark.slow
def test_a_rerun_writes_the_same_bytes(tmp_path):
    runner = _runner()
    source = ("import sys, time\n"
              "print('first'); sys.stdout.flush(); time.sleep(0.3)\n"
              "print('second')")   # two chunks on the wire
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "split.ipynb"
    nbformat.write(nb, path)
    runner.run(path, timeout=120)
    first = path.read_bytes()
    shutil.copy(path, tmp_path / "first.ipynb")
    runner.run(path, timeout=120)
    assert path.read_bytes() == first
    outputs = nbformat.read(path, as_version=4).cells[0].outputs
    assert len(outputs) == 1 and outputs[0].text == "first\nsecond\n"
