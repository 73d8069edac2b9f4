"""The coloured feedback box shared by the exercise checks and the quizzes.

One look for "right", "not yet" and "not attempted" across the course: a word
(PASSED / NOT YET / NOT ATTEMPTED YET, or the quiz's ✓ Correct / ✗ Not quite)
carries the meaning, the colour only repeats it (readable without colour vision,
and in the plain-text form GitHub and nbval see).

:class:`Feedback` is what every ``check_*`` function returns; :func:`box_html`
draws the box itself, for the quiz widgets and for anything else that reports.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

__all__ = ["PASSED", "FAILED", "NOT_ATTEMPTED", "Badge", "badge", "box_html", "Feedback"]

PASSED, FAILED, NOT_ATTEMPTED = "passed", "failed", "not attempted"


@dataclass(frozen=True)
class Badge:
    """How a status looks: a symbol, a word, a border colour and a background colour."""

    symbol: str
    label: str
    border: str
    background: str


_BADGES = {
    PASSED: Badge("✓", "PASSED", "#1a7f37", "#edf7ef"),   # the word in green on it: 4.6:1 (WCAG AA)
    FAILED: Badge("✗", "NOT YET", "#b3261e", "#fdecea"),
    NOT_ATTEMPTED: Badge("…", "NOT ATTEMPTED YET", "#5f6368", "#f1f3f4"),
}


def badge(status: str) -> Badge:
    """The badge of ``"passed"``, ``"failed"`` or ``"not attempted"`` (anything else: not attempted)."""
    return _BADGES.get(status, _BADGES[NOT_ATTEMPTED])


def box_html(status: str, body_html: str, css_class: str = "lessons-feedback", *, live: bool = True) -> str:
    """A ``role="status"`` box with the status's coloured left border around ``body_html``.

    ``body_html`` must already be escaped; the box adds only its frame. ``live=False`` leaves the role out,
    for a box shown inside a status region that is already on the page (a quiz's feedback line): a
    region is heard when its content changes, not when it appears with it. A long name
    (``my_causal_linear_attention``) may break anywhere, so that the box reflows at 320 CSS px (400 % zoom).
    """
    look = badge(status)
    role = 'role="status" ' if live else ""
    return (
        f'<div {role}class="{css_class} {css_class}-{status.replace(" ", "-")}" '
        f'style="border-left:6px solid {look.border};background:{look.background};color:#1f1f1f;'
        f'padding:0.6em 1em;margin:0.4em 0;font-family:sans-serif;line-height:1.45;overflow-wrap:anywhere">'
        f'{body_html}</div>'
    )


@dataclass(frozen=True)
class Feedback:
    """What a check says: shown as a coloured box in Jupyter and as plain text elsewhere.

    ``status`` is ``"passed"``, ``"failed"`` or ``"not attempted"``; ``passed`` is
    ``True``, ``False`` or ``None`` (not attempted). ``mistake`` is the short name of the
    diagnosed mistake (e.g. ``"wrong_axis"``), ``None`` when passed or not attempted.
    ``hint`` is what the learner reads now (it may grow more specific when the same mistake comes
    back); ``nudge`` is the first, least specific hint, which graded feedback carries; ``case``
    names the failing case by its label and input shapes, without its numbers.
    The words PASSED / NOT YET / NOT ATTEMPTED YET carry the meaning, not only the colour.
    """

    exercise: str
    status: str
    message: str
    hint: str = ""
    details: str = ""
    mistake: str | None = None
    nudge: str = ""
    case: str = ""

    @property
    def passed(self) -> bool | None:
        return {PASSED: True, FAILED: False}.get(self.status)

    def __str__(self) -> str:
        look = badge(self.status)
        lines = [f"{look.symbol} {look.label}: {self.exercise}", self.message]
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        if self.details:
            lines.append(self.details)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        look, esc = badge(self.status), html.escape
        parts = [
            f'<div style="font-size:1.1em"><strong style="color:{look.border}">{look.symbol} {look.label}'
            f"</strong> &nbsp;<code>{esc(self.exercise)}</code></div>",
            f'<div style="margin-top:0.3em">{esc(self.message)}</div>',
        ]
        if self.hint:
            parts.append(f'<div style="margin-top:0.3em"><strong>Hint:</strong> {esc(self.hint)}</div>')
        if self.details:
            parts.append(
                '<details style="margin-top:0.3em"><summary>Show the case that failed</summary>'
                f'<pre style="white-space:pre-wrap;color:#1f1f1f">{esc(self.details)}</pre></details>'
            )
        return box_html(self.status, "".join(parts))
