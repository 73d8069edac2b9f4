"""An explorer's heaviest move, in JupyterLab and Notebook 7 on the lessons' pages after Run All: with its
seq_len slider at 128 tokens (End), every d_k arrow key still redraws the explorer with the new value. Each
move's key press → picture (ms) and websocket kB are recorded (test-artifacts/latency.json:
``at_128_tokens``) and printed; nothing about them is asserted.

How long a key press takes against a bare ipywidgets round trip is a benchmark, not a test:
``benchmarks/key_press.py`` (``make bench``); docs/accessibility.md gives its current figure.
"""

from __future__ import annotations

import pytest

from lessons_lib.explorers.base import SEQ_LEN_MAX
from tests.helpers.browser import FRONT_ENDS, PROBE, REDRAW_S, press, press_and_wait, step_key

PRESSES = 4


@pytest.mark.browser
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_a_d_k_move_at_128_tokens_redraws_the_explorer(lesson):
    page, wire, results, problems = lesson.page, lesson.wire, [], []
    page.evaluate(PROBE)
    seq = page.locator(".lessons-slider-seq_len")
    explorers = [j for j in range(seq.count())
                 if seq.nth(j).locator("xpath=ancestor::*[contains(@class, 'lessons-explorer')][1]")
                 .locator(".lessons-slider-d_k").count()]
    if not explorers:
        pytest.skip(f"{lesson.source.stem} has no explorer with a seq_len and a d_k slider")
    for j in explorers:
        handle = seq.nth(j).locator(".noUi-handle").first
        box = seq.nth(j).locator("xpath=ancestor::*[contains(@class, 'lessons-explorer')][1]")
        d_k = box.locator(".lessons-slider-d_k").first
        start = handle.get_attribute("aria-valuenow")
        if start != handle.get_attribute("aria-valuemax"):
            answered, n_draws = wire.answered, page.evaluate("() => window.__lessonsProbe.draws.length")
            press(page, handle, "End")
            try:
                page.wait_for_function(
                    "([n, w]) => window.__lessonsProbe.draws.slice(n).some((d) => d.alt.includes(w))",
                    arg=[n_draws, f"seq_len = {SEQ_LEN_MAX}"], timeout=REDRAW_S * 1000)
            except Exception:
                problems.append(f"seq_len slider #{j}: End did not show {SEQ_LEN_MAX} tokens")
                continue
            wire.wait_answered(answered, REDRAW_S)
        d_handle, moves = d_k.locator(".noUi-handle").first, []
        for _ in range(PRESSES):
            key = step_key(d_handle)
            try:
                moves.append(press_and_wait(page, d_k, d_handle, key, wire))
            except Exception as exc:
                problems.append(f"seq_len slider #{j}: d_k at {SEQ_LEN_MAX} tokens: {key} did not redraw the "
                                f"explorer with the new value ({type(exc).__name__})")
                break
        results.append({"index": j, "moves": moves})
        if start != handle.get_attribute("aria-valuemax"):
            problems += _seq_len_back(page, handle, round(float(start)), wire, j)
    lesson.run["at_128_tokens"] = results
    lesson.assert_no_problems(problems)


def _seq_len_back(page, handle, value: int, wire, j: int) -> list[str]:
    """The seq_len slider back where the lesson had it (Home, then a step at a time), drawn: the checks after
    this one read the figures cell by cell, which 128 rows in a figure's 100-odd pixels do not allow (a
    pointer on a row's middle hits its neighbour: lesson 05's cell cursor on two busy workers)."""
    answered, n_draws = wire.answered, page.evaluate("() => window.__lessonsProbe.draws.length")
    press(page, handle, "Home")
    for _ in range(SEQ_LEN_MAX):
        if round(float(handle.get_attribute("aria-valuenow"))) >= value:
            break
        press(page, handle, "ArrowRight")
    try:
        page.wait_for_function(
            "([n, v]) => window.__lessonsProbe.draws.slice(n)"
            ".some((d) => new RegExp(`seq_len = ${v}(?![0-9])`).test(d.alt))",
            arg=[n_draws, value], timeout=REDRAW_S * 1000)
    except Exception:
        return [f"seq_len slider #{j}: back at {value} tokens, the explorer did not draw them"]
    wire.wait_answered(answered, REDRAW_S)
    return []
