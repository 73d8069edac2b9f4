"""Accessibility in a playwright page, what the browser tests share: axe-core, the accessibility engine, and
what a screen reader is told (an explorer's live region and its figures' names, after a key press).

axe-core comes from npm, pinned in the Makefile (``AXE_VERSION``) and installed into ``build/node`` with
configurable-http-proxy by ``make test-browser`` and ``make test-hub``; nothing is fetched at run time.
``LESSONS_AXE`` points at another copy of ``axe.min.js``.

    violations = run_axe(page, ".jp-OutputArea")       # only the outputs (the course's own content)
    assert not blocking(violations), format_violations(blocking(violations))

Rules are those of WCAG 2.0 and 2.1, levels A and AA (the course's target, WCAG 2.1 AA). A violation is
a dict: ``id`` (the rule, e.g. ``image-alt``), ``impact`` (minor, moderate, serious, critical), ``help``
(the rule in one line), ``url`` (axe's page on it) and ``nodes``: each failing element's ``target`` (CSS
selectors, one per frame or shadow root), ``html`` (its opening, cut at 200 characters), ``impact`` and
``summary`` (what to fix).

    before = spoken(box)                                     # a box: an explorer's element handle or locator
    ...press a key that sets d_k to 8...
    text, problems = names_follow(page, box, "d_k = 8", before, "lesson 04, slider d_k")
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.helpers import REPO, require
from tests.helpers.browser import REDRAW_S

AXE_JS = Path(os.environ.get("LESSONS_AXE", REPO / "build/node/node_modules/axe-core/axe.min.js"))
WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
BLOCKING = ("critical", "serious")   # what the tests allow none of
IMPACTS = BLOCKING + ("moderate", "minor")

RUN = """async ([context, tags]) => {
  const result = await axe.run(context === null ? document : context,
                               {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, url: v.helpUrl,
    nodes: v.nodes.map((n) => ({target: n.target, html: n.html.slice(0, 200), impact: n.impact,
                               summary: n.failureSummary || ''})),
  }));
}"""


def require_axe() -> None:
    """Skip (fail in CI) when axe-core is not installed, with what installs it."""
    require(AXE_JS.exists(), f"axe-core is not installed at {AXE_JS}: make test-browser installs it from npm")


def axe_version() -> str:
    """The installed axe-core's version (its package.json), e.g. ``"4.14.1"``."""
    return json.loads((AXE_JS.parent / "package.json").read_text(encoding="utf-8"))["version"]


def run_axe(page, context=None, tags: tuple[str, ...] = WCAG_TAGS) -> list[dict]:
    """The WCAG 2.0/2.1 A and AA violations axe-core finds in ``page`` (all of it, or ``context``); with
    ``tags``, those of other rules (``("best-practice",)``: landmarks, one level-one heading...).

    ``context`` is what ``axe.run`` takes: a CSS selector (``".jp-OutputArea"``) or a dict such as
    ``{"include": [[".jp-Notebook"]], "exclude": [[".jp-InputArea"]]}``. axe is injected into the page
    from the installed file (once per document).
    """
    require_axe()
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE_JS))
    return page.evaluate(RUN, [context, list(tags)])


def blocking(violations: list[dict]) -> list[dict]:
    """The violations the course allows none of: critical and serious."""
    return [v for v in violations if v["impact"] in BLOCKING]


def tally(violations: list[dict]) -> dict[str, int]:
    """Failing elements per impact, e.g. ``{"critical": 13, "serious": 13}`` (the issue's tallies)."""
    counts: dict[str, int] = {}
    for v in violations:
        for node in v["nodes"]:
            impact = node.get("impact") or v["impact"]
            counts[impact] = counts.get(impact, 0) + 1
    return counts


def _selector(target) -> str:
    """A node's target as one line: selectors inside frames or shadow roots joined by ' >>> '."""
    return " >>> ".join(_selector(t) if isinstance(t, list) else str(t) for t in target)


def format_violations(violations: list[dict], per_rule: int = 8) -> str:
    """The violations listed by rule, then by element (at most ``per_rule`` elements each)."""
    if not violations:
        return "no violations"
    lines = []
    for v in sorted(violations, key=lambda v: IMPACTS.index(v["impact"]) if v["impact"] in IMPACTS else 9):
        lines.append(f"{v['id']} [{v['impact']}] {v['help']}: {len(v['nodes'])} element(s) ({v['url']})")
        for node in v["nodes"][:per_rule]:
            summary = " ".join(node["summary"].split())
            lines.append(f"    {_selector(node['target'])}: {node['html'][:120]}"
                         + (f"\n        {summary[:300]}" if summary else ""))
        if len(v["nodes"]) > per_rule:
            lines.append(f"    ... and {len(v['nodes']) - per_rule} more")
    return "\n".join(lines)


# ------------------------------------------------------------------ what a screen reader is told

# An explorer's live region (how many times it spoke, what it says now) and its figures' names.
SPOKEN = """
(box) => {
  const region = box.querySelector('.lessons-live-region');
  return { said: region ? Number(region.dataset.said || 0) : -1, text: region ? region.textContent : null,
           names: [...box.querySelectorAll('canvas.lessons-figure-canvas')]
             .map((c) => c.getAttribute('aria-label') || '') };
}
"""


def spoken(box) -> dict:
    """What the box's live region has said (``said``: how often, ``text``: the last) and its figures'
    accessible names (``names``)."""
    return box.evaluate(SPOKEN)


def wait_said(page, box, before: dict, timeout_s: float = REDRAW_S, wanted: str | None = None) -> dict:
    """The live region's next sentence after ``before`` (it speaks once, a moment after the last change);
    with ``wanted`` ("seq_len = 23"), the next that states it: a sentence still due from an earlier move
    ("seq_len = 22", spoken a moment after the key press) comes first and is passed over."""
    page.wait_for_function(
        """([box, n, w]) => {
             const r = box.querySelector('.lessons-live-region');
             if (!r || Number(r.dataset.said) <= n) { return false; }
             const t = r.textContent, i = w ? t.indexOf(w) : 0;
             return i >= 0 && !(w && /[0-9.]/.test(t.charAt(i + w.length)));
           }""",
        arg=[box.element_handle(), before["said"], wanted], timeout=timeout_s * 1000)
    return spoken(box)


def names_follow(page, box, wanted: str, before: dict, label: str) -> tuple[str | None, list[str]]:
    """After a key press that set ``wanted`` ("d_k = 8"): the live region says it and what the figures show
    ("d_k = 8: ..."), and every figure whose name states that setting states the new value (with its data).
    Returns what the live region said and the problems found."""
    problems = []
    try:
        after = wait_said(page, box, before, wanted=wanted)
    except Exception:
        after = spoken(box)
        if after["said"] <= before["said"]:
            return None, [f"{label}: the live region said nothing after the key press (wanted {wanted!r})"]
    text = after["text"] or ""
    if wanted not in text or not re.search(r":\s*\S", text[text.find(wanted):]):
        problems.append(f"{label}: the live region says {text!r}, not {wanted!r} and what the figures show")
    setting = wanted.split(" = ")[0] + " = "
    for k, name in enumerate(after["names"]):
        if setting in before["names"][k] and (wanted not in name or name == before["names"][k]):
            problems.append(f"{label}: figure #{k}'s name is stale after the press (wanted {wanted!r}): "
                            f"{name!r}")
        elif setting in name and not re.search(r":\s*\S", name):
            problems.append(f"{label}: figure #{k}'s name gives the setting but not what it shows: {name!r}")
    return text, problems
