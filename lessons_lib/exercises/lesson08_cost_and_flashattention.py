"""Exercise of notebook 08_cost_and_flashattention: the online-softmax update.

The learner writes ``my_online_update(m, ell, chunk) -> (m_new, ell_new)`` for a few rows
at once: ``m, ell (rows,)`` are each row's running maximum and running sum
Σ exp(s − m) so far, ``chunk (rows, c)`` the next scores. The answer is

    m_new = max(m, max_j chunk_j),   ell_new = ell · exp(m − m_new) + Σ_j exp(chunk_j − m_new)

compared with :func:`lessons_lib.core.flash.online_softmax_update`. Content only (cases and
candidate mistakes); the checking is :mod:`.engine`'s.
"""

from __future__ import annotations

import numpy as np

from ..core import flash
from .engine import Case, Exercise, Mistake, distinct_sizes, like

__all__ = ["check_online_update"]

_NO = -np.inf


def _cases() -> list[Case]:
    # 3 rows and chunks of 5 (or 2) scores, so a reduction over the wrong axis cannot fit.
    rng = np.random.default_rng(8)
    return [
        Case("the first chunk: nothing seen yet (m = -inf, ell = 0)",
             {"m": np.full(3, _NO), "ell": np.zeros(3),
              "chunk": np.array([[0.5, 1.0, -1.0, 2.0, 0.0], [3.0, 1.0, 2.0, 0.0, -2.0],
                                 [-1.0, -0.5, 0.0, 0.5, 1.0]])}),
        Case("the maximum grows in every row (the new chunk holds larger scores)",
             {"m": np.array([1.0, 0.0, 2.0]), "ell": np.array([1.5, 2.0, 1.2]),
              "chunk": np.array([[3.0, 0.5, 1.0, 2.0, -1.0], [1.0, 2.5, 0.0, -0.5, 0.5],
                                 [4.0, 3.0, 1.0, 0.0, 2.0]])}),
        Case("the maximum stays in every row (the new chunk holds smaller scores)",
             {"m": np.array([4.0, 3.0, 5.0]), "ell": np.array([1.5, 2.2, 1.1]),
              "chunk": np.array([[1.0, 0.5, 2.0, -1.0, 3.5], [0.0, 2.0, 1.0, -0.5, 2.5],
                                 [4.0, 3.0, 1.0, 0.0, 2.0]])}),
        Case("random: the maximum grows in some rows and not in others",
             {"m": np.array([0.7, 1.9, -0.3]), "ell": np.array([1.3, 1.0, 2.6]),
              "chunk": rng.normal(0.5, 1.2, (3, 2))}),
        Case("large scores near 1000 (exp(1000) overflows a float)",
             {"m": np.array([1000.0, 998.0, 1001.0]), "ell": np.array([1.0, 1.5, 1.2]),
              "chunk": np.array([[1002.0, 999.0, 1000.5, 990.0, 1001.0], [997.0, 1003.0, 998.0, 999.0, 996.0],
                                 [995.0, 1000.0, 999.5, 1001.0, 998.0]])}, "large"),
        Case("row 2 is masked so far (m = -inf, ell = 0, its chunk all -inf)",
             {"m": np.array([0.5, 1.0, _NO]), "ell": np.array([1.0, 2.0, 0.0]),
              "chunk": np.array([[0.0, 1.5, -0.5, 0.5, 1.0], [2.0, 0.5, 1.0, -1.0, 0.0],
                                 [_NO, _NO, _NO, _NO, _NO]])}, "masked"),
        Case("rows far apart (near +1000, −1000 and 0) and a chunk spanning more than exp's range",
             {"m": np.array([1000.0, -1000.0, 0.0]), "ell": np.array([1.2, 1.0, 2.0]),
              "chunk": np.array([[1001.0, 999.0, -900.0, 1000.0, 990.0],
                                 [-998.0, -1001.0, -999.5, -1003.0, -997.0],
                                 [3.0, -800.0, 0.5, 1.0, -1.0]])}, "large"),
    ]


def _hidden(rng) -> list[Case]:
    """Unseen cases of the seven kinds above, with r rows and chunks of c scores (r ≠ c, drawn): the first
    chunk, a maximum that grows in every row, one that stays, a mix, large scores near +N, a masked
    row, and rows far apart beside a chunk spanning more than exp's range (N drawn from 800-1200)."""
    rows, width = distinct_sizes(rng, 2, (2, 3, 5, 6))
    big = float(rng.uniform(800, 1200))

    def ell():
        return rng.uniform(0.5, 3.0, rows)

    def chunk(center=0.0):
        return center + rng.normal(0.0, 1.5, (rows, width))

    m = rng.normal(0.0, 1.0, rows)
    grows = m[:, None] + np.abs(rng.normal(0.0, 1.0, (rows, width)))
    grows[np.arange(rows), rng.integers(0, width, rows)] = m + rng.uniform(1.0, 3.0, rows)
    stays = m[:, None] - rng.uniform(0.5, 3.0, (rows, width))
    mixed = chunk(0.5)
    masked_m, masked_ell, masked_chunk = rng.normal(0.0, 1.0, rows), ell(), chunk()
    last = rows - 1
    masked_m[last], masked_ell[last], masked_chunk[last] = _NO, 0.0, _NO
    far_m = np.array([big, -big, 0.0][:rows] + [0.0] * max(0, rows - 3))
    far_chunk = far_m[:, None] + rng.normal(0.0, 2.0, (rows, width))
    far_chunk[-1, 0] = far_m[-1] - rng.uniform(800, 1000)  # a chunk row spanning more than exp's range
    shape = f"{rows} rows, chunks of {width}"
    return [
        Case(f"unseen first chunk ({shape})",
             {"m": np.full(rows, _NO), "ell": np.zeros(rows), "chunk": chunk()}),
        Case(f"unseen: the maximum grows in every row ({shape})", {"m": m, "ell": ell(), "chunk": grows}),
        Case(f"unseen: the maximum stays in every row ({shape})",
             {"m": m.copy(), "ell": ell(), "chunk": stays}),
        Case(f"unseen: the maximum grows in some rows ({shape})",
             {"m": rng.normal(0.5, 1.0, rows), "ell": ell(), "chunk": mixed}),
        Case(f"unseen large scores near {big:.0f} ({shape})",
             {"m": big + rng.normal(0.0, 1.0, rows), "ell": ell(), "chunk": chunk(big)}, "large"),
        Case(f"unseen: the last row is masked so far ({shape})",
             {"m": masked_m, "ell": masked_ell, "chunk": masked_chunk}, "masked"),
        Case(f"unseen rows far apart, a chunk spanning more than exp's range ({shape})",
             {"m": far_m, "ell": ell(), "chunk": far_chunk}, "large"),
    ]


# Each wrong implementation comes in two variants: written straight, and with the guard for rows
# that have seen only -inf (shift by 0 there), so that a mistake is named whether or not the
# learner also handled masked rows.
def _new_max(m, chunk):
    return np.maximum(m, chunk.max(axis=-1))


def _shift(m_new, guard: bool):
    return np.where(m_new == -np.inf, 0.0, m_new) if guard else m_new


def _variants(wrong):
    """``like`` over ``wrong(m, ell, chunk, guard)`` with and without the -inf guard."""
    return like(lambda m, ell, chunk: wrong(m, ell, chunk, False),
                lambda m, ell, chunk: wrong(m, ell, chunk, True))


def _right(m, ell, chunk, guard):
    m_new = _new_max(m, chunk)
    c = _shift(m_new, guard)
    return m_new, ell * np.exp(m - c) + np.exp(chunk - c[:, None]).sum(axis=-1)


def _textbook(m, ell, chunk):
    """The formula written straight, without a guard for rows that have seen only -inf."""
    return _right(m, ell, chunk, False)


def _swapped(m, ell, chunk, guard):
    return tuple(reversed(_right(m, ell, chunk, guard)))


def _no_rescale(m, ell, chunk, guard):
    m_new = _new_max(m, chunk)
    return m_new, ell + np.exp(chunk - _shift(m_new, guard)[:, None]).sum(axis=-1)


def _rescale_upside_down(m, ell, chunk, guard):
    m_new = _new_max(m, chunk)
    c = _shift(m_new, guard)
    return m_new, ell * np.exp(c - m) + np.exp(chunk - c[:, None]).sum(axis=-1)


def _old_max_for_chunk(m, ell, chunk, guard):
    m_new = _new_max(m, chunk)
    old = _shift(m, guard)[:, None]
    return m_new, ell * np.exp(m - _shift(m_new, guard)) + np.exp(chunk - old).sum(axis=-1)


def _no_max_subtraction(m, ell, chunk, guard):
    return _new_max(m, chunk), ell + np.exp(chunk).sum(axis=-1)


def _chunk_max_only(m, ell, chunk, guard):
    m_new = chunk.max(axis=-1)
    c = _shift(m_new, guard)
    return m_new, ell * np.exp(m - c) + np.exp(chunk - c[:, None]).sum(axis=-1)


def _wrong_axis(m, ell, chunk, guard):
    m_new = np.maximum(m, chunk.max(axis=0))
    c = _shift(m_new, guard)
    return m_new, ell * np.exp(m - c) + np.exp(chunk - c).sum(axis=0)


def _no_column(m, ell, chunk, guard):
    m_new = _new_max(m, chunk)
    c = _shift(m_new, guard)
    return m_new, ell * np.exp(m - c) + np.exp(chunk - c).sum(axis=-1)


#: hand-checked cases the hints offer: m grows from 2 to 5 in one row; two rows that tell the axes apart
_TRY_GROW = ("Try m = np.array([2.0]), ell = np.array([1.0]), chunk = np.array([[5.0]]): the answer is "
             "m_new = [5], ell_new = [1.0498].")
_TRY_ROWS = ("Try m = np.array([0.0, 0.0]), ell = np.array([1.0, 1.0]), chunk = np.array([[0.0, 0.0], "
             "[1.0, 1.0]]): the answer is m_new = [0, 1], ell_new = [3, 2.3679].")

ONLINE_UPDATE = Exercise(
    name="my_online_update",
    params=("m", "ell", "chunk"),
    task="updates the running maximum and the running sum of the online softmax",
    reference=flash.online_softmax_update,
    formula=_textbook,
    outputs=("m_new", "ell_new"),
    cases=_cases,
    library_answers=(flash.online_softmax_update,),
    hidden=_hidden,
    start_hint="Start from section 3, where the online softmax runs on one row, chunk by chunk, and prints "
               "m and ell after each chunk. Work out its first two lines by hand; then write the same for "
               "several rows at once: m and ell are (rows,), chunk is (rows, c).",
    mistakes=(
        Mistake(
            "swapped_outputs", "the two outputs are returned in the wrong order",
            "Your numbers are right, but you return (ell_new, m_new); the check (and flash_attention) "
            "expects (m_new, ell_new).",
            ("The pair goes back in the order of the arguments: m first, then ell.",
             "The check unpacks `m_new, ell_new = my_online_update(m, ell, chunk)`.",
             "On the case below, compare the expected pair with yours: the same two arrays, in the other "
             "order."),
            _variants(_swapped),
        ),
        Mistake(
            "no_rescale", "the old ell is not brought up to date when m grows",
            "Every term in ell was measured against the old m. Once m grows to m_new, those terms are too "
            "big next to the new ones, which are measured against m_new: your answer is right only in the "
            "rows whose m did not grow.",
            ("All of ell_new must be measured against m_new, the old terms as well as the chunk's.",
             "In a row where m grows, the old ell must shrink before the chunk's terms come in; where m "
             "stays, it stays.",
             _TRY_GROW),
            _variants(_no_rescale),
        ),
        Mistake(
            "rescale_upside_down", "the correction of the old ell goes the wrong way",
            "The factor is upside down. m only grows, so the old terms must shrink when they are measured "
            "against the new m; yours grow, and on the first chunk (m = -inf) yours is inf, and 0 · inf "
            "gives NaN.",
            ("m only grows, so the factor that brings the old terms up to date is at most 1.",
             "In a row whose m goes from 2 to 5, the old ell must become about 20 times smaller, not "
             "larger.",
             _TRY_GROW),
            _variants(_rescale_upside_down),
        ),
        Mistake(
            "old_max_for_chunk", "the chunk's terms are measured against the old m, not against m_new",
            "Both parts of ell_new must be measured against the same number, m_new. Against the old m "
            "the chunk's terms can exceed 1 (even overflow), and on the first chunk (m = -inf) they are "
            "inf.",
            ("Both parts of ell_new are measured against m_new.",
             "After the update every term of ell_new is at most 1, and the one of the score equal to m_new "
             "is exactly 1.",
             _TRY_GROW),
            _variants(_old_max_for_chunk),
        ),
        Mistake(
            "no_max_subtraction", "large scores overflow",
            "The terms of ell must never be above 1: that is why m is carried along. Here scores near 1000 "
            "overflow to inf.",
            ("Every term that goes into ell must be at most 1: measure each score against m_new.",
             "A score equal to m_new brings exactly 1 into ell_new.",
             "Try m = np.array([1000.0]), ell = np.array([1.0]), chunk = np.array([[1000.0]]): the answer "
             "is m_new = [1000], ell_new = [2]."),
            _variants(_no_max_subtraction),
        ),
        Mistake(
            "chunk_max_only", "m_new forgets the old one",
            "m_new must be at least as large as every score seen so far, the old m included. Yours falls "
            "when a chunk holds smaller scores, and then the old ell grows instead of staying.",
            ("m_new is never smaller than m.",
             "m_new is at least m and at least every score of the chunk, and equal to one of them.",
             "Try m = np.array([5.0]), ell = np.array([1.0]), chunk = np.array([[2.0]]): the answer is "
             "m_new = [5], ell_new = [1.0498]."),
            _variants(_chunk_max_only),
        ),
        Mistake(
            "wrong_axis", "the chunk is read down its columns instead of along its rows",
            "chunk holds one row of scores per entry of m: (rows, c). Everything you take from it must "
            "come from each row, not from each column.",
            ("Row i of chunk belongs to m[i] and ell[i].",
             "What you take from chunk must have one number per row: shape (rows,).",
             _TRY_ROWS),
            _variants(_wrong_axis),
        ),
        Mistake(
            "no_column", "m_new does not line up with the rows of chunk",
            "m_new has shape (rows,) and chunk (rows, c). numpy lines arrays up from the right, so row i's "
            "m_new meets column i of chunk (or numpy refuses when c ≠ rows), instead of row i.",
            ("Each row of chunk must meet its own row's m_new.",
             "Print the shapes: chunk is (rows, c); for numpy to pair each row with its own number, that "
             "number must be (rows, 1).",
             _TRY_ROWS),
            _variants(_no_column),
        ),
        Mistake(
            "nan_for_masked_row", "a row that has seen only -inf becomes NaN",
            "Your formula is right wherever a row has seen a real score. But in a row masked so far, "
            "m and m_new are both -inf, and -inf − (-inf) is NaN (not a number), so the row becomes NaN. "
            "FlashAttention meets such rows with padding masks; the row must stay m = -inf, ell = 0.",
            ("A row that has seen only -inf has nothing to measure against: it must come out as m = -inf "
             "and ell = 0.",
             "In a masked row no step may produce NaN: find the first line where row 2 of the case below "
             "becomes NaN.",
             "Try m = np.array([float('-inf')]), ell = np.array([0.0]), chunk = np.array([[float('-inf'), "
             "float('-inf')]]): the answer is m_new = [-inf], ell_new = [0]."),
            like(_textbook),
        ),
    ),
)


def check_online_update(fn):
    """Check the learner's ``my_online_update(m, ell, chunk) -> (m_new, ell_new)``. Notebook 08.

    ``m, ell (rows,)``, ``chunk (rows, c)``; compared with
    :func:`lessons_lib.core.flash.online_softmax_update` on a first chunk, a growing and a
    staying maximum, large scores and a masked row. Returns a Feedback; never raises.
    """
    return ONLINE_UPDATE.check(fn)
