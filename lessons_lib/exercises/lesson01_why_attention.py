"""Exercise of notebook 01_why_attention: write a query that makes "it" look mostly at "street".

Not a function to complete but a vector to design, so the check looks at the weights the
query produces in sentence A ("…too tired"), with the hand-built keys of
:func:`lessons_lib.lab.data.coreference_example`: it passes when "street" gets the largest weight
and at least half of it ("mostly"), and otherwise says what the query asks for instead.
"""

from __future__ import annotations

import numpy as np

from ..core import attention
from ..course.feedback import FAILED, NOT_ATTEMPTED, PASSED, Feedback
from ..lab import data

__all__ = ["check_street_query"]

MOSTLY = 0.5  # "mostly": at least half of the attention
#: The one case of this check, as graded feedback names it (sentence A, 12 tokens, 4 features).
CASE = "sentence A (“… because it was too tired”), your query for “it” (my_query: 4 numbers)"


def check_street_query(query) -> Feedback:
    """Check ``my_query`` (4 numbers: living thing, place, can be tired, can be wide) for "it" → "street".

    Uses sentence A of ``data.coreference_example("tired")`` with the query of "it"
    replaced by ``query``. Returns a :class:`~lessons_lib.course.feedback.Feedback`; never raises.
    """
    name = "my_query"
    ex = data.coreference_example("tired")
    tokens, names = ex["tokens"], ex["feature_names"]
    try:
        q = np.asarray(query, dtype=np.float64)
    except (TypeError, ValueError):
        return Feedback(name, FAILED, f"my_query must be 4 numbers, one per feature ({', '.join(names)}); "
                                      f"got {query!r}.", mistake="not_numbers", case=CASE)
    if q.shape != (len(names),):
        return Feedback(name, FAILED, f"my_query must hold {len(names)} numbers, one per feature "
                                      f"({', '.join(names)}); got shape {q.shape}.", mistake="wrong_shape",
                        case=CASE)
    if not np.isfinite(q).all():
        return Feedback(name, FAILED, "my_query holds inf or nan; use ordinary numbers.",
                        mistake="not_finite", case=CASE)
    if not q.any():
        return Feedback(name, NOT_ATTEMPTED,
                        "my_query is still all zeros: it asks for nothing, so every token gets 1/12 of the "
                        "attention. Put a number in at least one feature.")
    it = tokens.index("it")
    full = ex["q"].copy()
    full[it] = q
    _, w = attention.scaled_dot_product_attention(full, ex["k"], ex["v"])
    row = w[it]
    street = tokens.index("street")
    others = np.delete(np.arange(len(row)), street)
    rival = int(others[np.argmax(row[others])])
    share = f"“street” gets {row[street]:.2f} of the attention of “it”"
    if np.isclose(row[rival], row[street]):
        return Feedback(
            name, FAILED, f"{share}, and “{tokens[rival]}” gets just as much: a tie, not a winner.",
            hint=f"{_what_it_asks(q, names)} Ask for a feature that only “street” offers, so that it "
                 f"stands out from “{tokens[rival]}”.", mistake="tie", case=CASE)
    if row[rival] > row[street]:
        return Feedback(
            name, FAILED, f"{share}, but “{tokens[rival]}” gets more ({row[rival]:.2f}).",
            hint=f"{_what_it_asks(q, names)} Which features does the key of “street” offer? "
                 f"Ask for those (and not for what “animal” offers).", mistake="wrong_features", case=CASE)
    if row[street] >= MOSTLY:
        return Feedback(name, PASSED, f"{share}, the largest share and more than half: “it” now looks mostly "
                                      f"at the street. Only the question changed, not the sentence.")
    return Feedback(
        name, FAILED, f"{share}: the largest share, but not most of it (at least {MOSTLY:.2f}).",
        hint="The direction is right; make the query longer (multiply it by 2 or 3): bigger score gaps "
             "make softmax concentrate, as with the loud pear.", mistake="too_soft", case=CASE)


def _what_it_asks(q: np.ndarray, names) -> str:
    """Say in words what a query asks for: its positive features, or that it asks for none (lesson 01)."""
    wanted = [names[i] for i in np.argsort(-q) if q[i] > 0]
    avoided = [names[i] for i in range(len(q)) if q[i] < 0]
    avoid = (f" A negative number steers away from keys that offer “{'”, “'.join(avoided)}”; "
             f"it pushes “it” away, it asks for nothing.") if avoided else ""
    if not wanted:
        return f"Your query asks for no feature: none of its numbers is positive.{avoid}"
    return f"Your query asks most for “{wanted[0]}”.{avoid}"
