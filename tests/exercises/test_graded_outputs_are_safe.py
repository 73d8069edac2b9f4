"""What autograde leaves in a graded notebook's outputs (lessons_lib/exercises/autograde.py), which the
feedback page and the formgrader show: text and pictures only, never markup a browser would run; and no
course secret, however the submission printed it (whole, in two flushes, escaped for JSON, Python or HTML,
with a non-ASCII letter)."""

from __future__ import annotations

import html
import json

import nbformat
import pytest

from lessons_lib.exercises.autograde import REDACTED, SAFE_DATA, redact, safe_outputs

SECRET = "l'été du cours, 3f9a1c0e7b"


def _notebook(*outputs) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("print(...)")
    cell.outputs = list(outputs)
    return nbformat.v4.new_notebook(cells=[cell])


def _stream(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


@pytest.mark.parametrize("printed", [
    [SECRET],
    [SECRET[:9], SECRET[9:] + "\n"],  # two flushes: two outputs
    [json.dumps(SECRET)], [json.dumps(SECRET, ensure_ascii=False)], [repr(SECRET)], [html.escape(SECRET)],
    [SECRET.encode("unicode_escape").decode("ascii")],
    [" ".join(SECRET)],  # a space between every letter
], ids=["whole", "two flushes", "json", "json unicode", "repr", "html", "unicode_escape", "spaced"])
def test_the_secret_is_removed_however_it_was_printed(printed):
    nb = _notebook(*(_stream(text) for text in printed))
    assert redact(nb, SECRET) >= 1
    shown = json.dumps(nb.cells[0].outputs, ensure_ascii=False)
    assert REDACTED in shown
    flat = "".join(shown.split())
    for piece in (SECRET[:9], SECRET[9:].strip(), "3f9a1c0e7b"):
        assert "".join(piece.split()) not in flat, piece


def test_outputs_without_the_secret_are_left_as_they_are():
    nb = _notebook(_stream("the scores: [[1. 2.]]\n"))
    assert redact(nb, SECRET) == 0
    assert nb.cells[0].outputs[0]["text"] == "the scores: [[1. 2.]]\n"


def test_a_graded_notebook_keeps_text_and_pictures_never_markup():
    markup = {"text/html": "<script>alert(1)</script>", "image/svg+xml": "<svg onload='alert(1)'/>",
              "application/javascript": "alert(1)", "text/markdown": "<img src=x onerror=alert(1)>",
              "application/vnd.jupyter.widget-view+json": {"model_id": "x"}}
    kept = {"text/plain": "<HTML object>", "image/png": "iVBORw0KGgo="}
    nb = _notebook(nbformat.v4.new_output("display_data", data={**markup, **kept}))
    assert safe_outputs(nb) == 1
    assert dict(nb.cells[0].outputs[0]["data"]) == kept and set(kept) <= set(SAFE_DATA)
