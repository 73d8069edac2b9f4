"""Exercise of notebook 11_position: the learner writes ``my_rope(q, k, v, positions, convention)``.

Rotary embeddings as attention uses them: return the query, the key and the value arrays as they enter
softmax(Q·Kᵀ/√d)·V. Pair i of each row of Q and K turns by position · θ_i, θ_i = 10000^(−2i/d_head), the
pairs laid out as ``convention`` says ("half": dimension i with i + d_head/2; "interleaved": 2i with
2i + 1); V is handed over as it is. An odd d_head cannot be split into pairs: the right answer is a
``ValueError`` that says so (a :class:`~.outcome.Refusal`). Content only; the checking is :mod:`.engine`'s.

Shapes: ``q``, ``k`` ``(..., seq_len, d_head)``, ``v (..., seq_len, d_v)``, ``positions (seq_len,)``.
"""

from __future__ import annotations

import numpy as np

from ..core import position
from .engine import Case, Exercise, Mistake, Outcome, Refusal, either, like, rng_cases
from .outcome import close

__all__ = ["check_rope"]

#: A clear refusal of an odd d_head names it (or the pairs it lacks).
REFUSAL_WORDS = ("d_head", "odd", "even", "pair")


def _answer(q, k, v, positions, convention="half"):
    """The library's rotary embeddings on Q and K, V as it is; an odd d_head is refused."""
    try:
        return (position.rope(q, positions, convention=convention),
                position.rope(k, positions, convention=convention), np.array(v, copy=True))
    except ValueError as exc:
        if np.shape(q)[-1] % 2:
            return Refusal(str(exc), REFUSAL_WORDS)
        raise


# --------------------------------------------------------------------------- the cases
def _random_case(rng, label, lead, seq_len, d_head, d_v, positions, convention):
    q, k = (rng.normal(0, 1, (*lead, seq_len, d_head)) for _ in range(2))
    return Case(label, {"q": q, "k": k, "v": rng.normal(0, 1, (*lead, seq_len, d_v)),
                        "positions": np.asarray(positions), "convention": convention})


def _cases() -> list[Case]:
    hand = Case("hand-made: one pair (d_head = 2) at positions 0, 1, 2, “half”",
                {"q": np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]),
                 "k": np.array([[0.0, 2.0], [0.0, 2.0], [0.0, 2.0]]),
                 "v": np.arange(18.0).reshape(3, 6), "positions": np.array([0, 1, 2]), "convention": "half"})
    specs = [
        ("random, d_head = 8, positions 0 … 4, “half”", (), 5, 8, 6, [0, 1, 2, 3, 4], "half"),
        ("random, d_head = 6, positions 3, 5, 9 (not 0, 1, 2), “interleaved”", (), 3, 6, 8, [3, 5, 9],
         "interleaved"),
        ("three heads, d_head = 10, positions far apart (0, 9, 40, 700, 5000), “half”", (3,), 5, 10, 2,
         [0, 9, 40, 700, 5000], "half"),
        ("random, d_head = 12, positions out of order (7, 2, 11, 0, 5, 9, 30), “interleaved”", (), 7, 12, 10,
         [7, 2, 11, 0, 5, 9, 30], "interleaved"),
    ]
    odd = Case("an odd d_head = 5 (one dimension without a partner), “half”",
               {"q": np.ones((3, 5)), "k": np.ones((3, 5)), "v": np.ones((3, 2)), "positions": np.arange(3),
                "convention": "half"}, "odd")
    return [hand, *rng_cases(specs, 11, lambda rng, *spec: _random_case(rng, *spec)), odd]


_EVEN = (2, 6, 8, 10, 12)


def _hidden(rng) -> list[Case]:
    """Unseen cases of the same kinds: new sizes (d_head and d_v even, never 4 or 16), positions that do not
    start at 0, far apart or out of order, both layouts, one with heads, and an odd d_head to refuse."""
    cases = []
    for i, convention in enumerate(("half", "interleaved", "half", "interleaved")):
        d_head, d_v = (int(x) for x in rng.choice(_EVEN[1:], size=2, replace=False))
        seq_len = int(rng.choice([n for n in (3, 5, 7, 9) if n not in (d_head, d_v)]))
        start = int(rng.integers(1, 50))
        kinds = [np.arange(start, start + seq_len), rng.choice(1000, size=seq_len, replace=False),
                 np.sort(rng.choice(20000, size=seq_len, replace=False)), rng.permutation(seq_len) * 3 + 1]
        lead = (3,) if i == 2 else ()
        label = f"unseen: d_head = {d_head}, {seq_len} positions, “{convention}”"
        cases.append(_random_case(rng, label, lead, seq_len, d_head, d_v, kinds[i], convention))
    odd = int(rng.choice([3, 5, 7, 9]))
    layout = str(rng.choice(["half", "interleaved"]))
    cases.append(Case(f"unseen: an odd d_head = {odd}, “{layout}”",
                      {"q": rng.normal(0, 1, (2, odd)), "k": rng.normal(0, 1, (2, odd)),
                       "v": rng.normal(0, 1, (2, 6)), "positions": np.arange(2), "convention": layout},
                      "odd"))
    return cases


# --------------------------------------------------------------------------- wrong implementations
def _correct(i, d):
    return 10000.0 ** (-2.0 * i / d)


def _turn(x, positions, convention, *, speed=_correct, degrees=False, sign=1.0, swap=False):
    """RoPE written out as a learner might, with one thing changed (the candidates below)."""
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"d_head = {d} is odd")
    angle = np.asarray(positions, dtype=float)[:, None] * speed(np.arange(d // 2), d)
    if degrees:
        angle = np.deg2rad(angle)
    cos, sin = np.cos(angle), sign * np.sin(angle)
    if swap:
        cos, sin = sin, cos
    first, second = position.rope_pairs(d, convention).T
    out = np.empty_like(x)
    out[..., first] = x[..., first] * cos - x[..., second] * sin
    out[..., second] = x[..., second] * cos + x[..., first] * sin
    return out


def _candidate(q_turn=True, k_turn=True, v_turn=False, layout=None, **changes):
    """``my_rope`` with one mistake: which arrays turn, which layout, what angle."""
    def wrong(q, k, v, positions, convention="half"):
        pairs = layout(convention) if layout else convention
        parts = []
        for x, turned in ((q, q_turn), (k, k_turn), (v, v_turn)):
            parts.append(_turn(x, positions, pairs, **changes) if turned else np.array(x, copy=True))
        if not (q_turn or k_turn) and q.shape[-1] % 2:
            raise ValueError("d_head is odd")
        return tuple(parts)
    return wrong


def _row_numbers(q, k, v, positions, convention="half"):
    """The rows' numbers 0, 1, 2, … used as positions."""
    return _candidate()(q, k, v, np.arange(np.shape(q)[-2]), convention)


def _only_v_changed(o: Outcome) -> bool:
    """Q and K right, V of the right shape but changed: V turned, at whatever speeds (a learner who turns
    V with the speeds of its own width, or of d_head, is not :func:`_candidate`'s)."""
    if o.error is not None or not isinstance(o.result, tuple) or not isinstance(o.expected, tuple):
        return False
    if len(o.result) != 3 or not all(isinstance(part, np.ndarray) for part in o.result):
        return False
    (q, k, v), (eq, ek, ev) = o.result, o.expected
    return close(q, eq) and close(k, ek) and v.shape == ev.shape and not close(v, ev)


def _odd_not_refused(o: Outcome) -> bool:
    return isinstance(o.expected, Refusal)


def _odd_explained(o: Outcome) -> str:
    d = o.case.args["q"].shape[-1]
    if o.error is None:
        did = "your function returned arrays anyway, so one dimension was turned with nothing, or dropped"
    elif isinstance(o.error, ValueError):
        did = (f"your function stops, but with “{o.error}”: numpy's words, which do not tell the caller that "
               f"d_head is the problem")
    else:
        did = f"your function raised {type(o.error).__name__} (“{o.error}”) instead of a ValueError"
    return (f"d_head = {d} is odd: the dimensions cannot all be paired, so RoPE has no answer here, and the "
            f"right reply is a ValueError whose message tells the caller that d_head = {d} is odd. Instead "
            f"{did}.")


_TRY_HAND = "Try the hand-made case: q = [[1, 0]] at position 1 should come back as about [[0.54, 0.84]]."

ROPE = Exercise(
    name="my_rope",
    params=("q", "k", "v", "positions", "convention"),
    task="turns the queries and keys by their positions (and hands the values over as they are)",
    reference=_answer,
    formula=_answer,
    cases=_cases,
    library_answers=(position.rope, position.rope_angles, position.rope_frequencies),
    hidden=_hidden,
    outputs=("Q", "K", "V"),
    start_hint="Start with the hand-made case of section 3: one pair (d_head = 2) at positions 0, 1, 2. Your "
               "answer for it should match the table there; then several pairs, then the second layout, then "
               "an odd d_head.",
    mistakes=(
        Mistake(
            "values_rotated", "V turned: the values are turned as well as Q and K",
            "Your Q and K are right, but V came back changed: turned as well. Positions decide where a token "
            "looks (the scores, from Q and K); what it hands over, its value, must not depend on where it "
            "stands, so V leaves the function exactly as it came in.",
            ("Positions belong to the matching of queries with keys, not to the content a token hands over.",
             "Of the three arrays, only the two that meet in the scores carry positions.",
             "Try the hand-made case: V should come back exactly as it went in."),
            either(like(_candidate(v_turn=True)), _only_v_changed),
        ),
        Mistake(
            "only_one_turned", "only one of the queries and the keys is turned",
            "One of Q and K came back as it went in. The score depends on the offset between two positions "
            "only because both sides are turned, each by its own position.",
            ("A score compares a query with a key: both need their positions.",
             "Look at which of your outputs Q and K equals its input.",
             "Try the hand-made case: at position 1 both q and k must have moved."),
            like(_candidate(q_turn=False), _candidate(k_turn=False)),
        ),
        Mistake(
            "interleaved_for_half", "the interleaved pairs are turned where “half” is asked",
            "On the “half” cases your function turns neighbouring dimensions together, 0 with 1, 2 with 3, "
            "…; in the “half” layout dimension i turns with dimension i + d_head/2. The two layouts give "
            "other numbers for the same vectors: the trap of section 5.",
            ("Which dimensions form a pair is set by the layout the call asks for.",
             "Compare the pairs your function turns together with the lesson's table of pairs for "
             "d_head = 6.",
             "Try d_head = 6 with only dimension 1 non-zero, “half”, at position 1: it must move into "
             "dimension 4."),
            like(_candidate(layout=lambda c: "interleaved")),
        ),
        Mistake(
            "half_for_interleaved", "the “half” pairs are turned where “interleaved” is asked",
            "On the “interleaved” cases your function pairs dimension i with i + d_head/2; in the "
            "“interleaved” layout neighbours turn together, 0 with 1, 2 with 3, …. The two layouts give "
            "other numbers for the same vectors: the trap of section 5.",
            ("Which dimensions form a pair is set by the layout the call asks for.",
             "Compare the pairs your function turns together with the lesson's table of pairs for "
             "d_head = 6.",
             "Try d_head = 6 with only dimension 1 non-zero, “interleaved”, at position 1: it must move into "
             "dimension 0."),
            like(_candidate(layout=lambda c: "half")),
        ),
        Mistake(
            "conventions_swapped", "the two layouts are swapped",
            "Where “half” is asked your function pairs neighbours, and where “interleaved” is asked it pairs "
            "i with i + d_head/2: each layout is the other's.",
            ("Each layout name says which dimensions turn together.",
             "Read the lesson's table of pairs for d_head = 6 again, one row per layout.",
             "Try d_head = 6, “half”, with only dimension 1 non-zero: which dimension receives it?"),
            like(_candidate(layout=lambda c: "half" if c == "interleaved" else "interleaved")),
        ),
        Mistake(
            "one_frequency", "every pair turns at the same speed",
            "All your pairs turn by the same angle, the position itself. RoPE gives each pair its own speed, "
            "θ_i, from one radian per position for pair 0 down to a tiny fraction of one for the last: fast "
            "pairs tell near tokens apart, slow ones far tokens.",
            ("Each pair turns at its own speed: the first fast, the last slowly.",
             "Your first pair may be right; compare the angle of your last pair with the lesson's list of "
             "speeds.",
             "Try d_head = 8 at position 1: the four pairs must turn by 1, 0.1, 0.01 and 0.001 radians."),
            like(_candidate(speed=lambda i, d: np.ones_like(i, dtype=float)),
                 _candidate(speed=lambda i, d: np.full(i.shape, _correct(0, d)))),
        ),
        Mistake(
            "speeds_fall_too_slowly", "the speeds fall too slowly from pair to pair",
            "Your pairs slow down from one to the next, but too gently: in a head of 8 your last pair turns "
            "about 0.03 radians per position, where RoPE's turns 0.001. Over a head the speeds fall from 1 "
            "towards 1/10000, and the way there is measured in dimensions, two to a pair, not in pairs.",
            ("A pair holds two dimensions: the speeds are spread over all d_head dimensions of the head.",
             "Compare your last pair's speed with the lesson's list for the same d_head.",
             "Try d_head = 8 at position 1: the four pairs must turn by 1, 0.1, 0.01 and 0.001 radians."),
            like(_candidate(speed=lambda i, d: 10000.0 ** (-i / d))),
        ),
        Mistake(
            "speeds_rise", "the speeds rise from pair to pair instead of falling",
            "Your later pairs turn faster than the first: in a head of 8 your last pair turns 1000 radians "
            "per position. RoPE's speeds fall: pair 0 turns one radian per position, the last the least.",
            ("The first pair is the fastest; the others slow down.",
             "Every speed except the first is below one radian per position.",
             "Try d_head = 8 at position 1: the four pairs must turn by 1, 0.1, 0.01 and 0.001 radians."),
            like(_candidate(speed=lambda i, d: 10000.0 ** (2.0 * i / d))),
        ),
        Mistake(
            "no_base", "the speeds do not come from the base 10000",
            "Your speeds are not RoPE's: with the base 10000 the last pair of a head of 8 turns a "
            "thousandth of a radian per position, and yours turns far faster, or one of your pairs does not "
            "turn at all.",
            ("The speeds are set by one number, the base (10000 in the paper), and by d_head: nothing else.",
             "The last pair of a head of 8 turns a thousandth of a radian per position.",
             "Try d_head = 8 at position 1: the four pairs must turn by 1, 0.1, 0.01 and 0.001 radians."),
            like(_candidate(speed=lambda i, d: np.exp(-2.0 * i / d)),
                 _candidate(speed=lambda i, d: 2.0 * i / d)),
        ),
        Mistake(
            "degrees", "the angle is read as degrees",
            "Your angles come out 57.3 times too small: the angle position · θ is in radians, as numpy's "
            "trigonometry expects, and was converted as if it were degrees.",
            ("numpy's trigonometry measures angles in radians.",
             "At position 1, pair 0 turns by one radian, about 57 degrees: a clear turn, not a small one.",
             _TRY_HAND),
            like(_candidate(degrees=True)),
        ),
        Mistake(
            "sin_cos_swapped", "the two parts of each turn have changed places",
            "At position 0 every angle is 0 and a turn by 0 must leave a vector as it is, but your function "
            "moves it: the hand-made query [1, 0] at position 0 comes back as [0, 1], a quarter turn. The "
            "part of the turn that keeps a vector in place at angle 0 and the part that moves it have "
            "changed places.",
            ("A turn by 0 must leave a vector as it is.",
             "At position 0 your output should equal your input: compare the two.",
             "Try the hand-made case at position 0: q = [[1, 0]] must come back as [[1, 0]]."),
            like(_candidate(swap=True)),
        ),
        Mistake(
            "turns_backwards", "the pairs turn the wrong way",
            "Your pairs turn by the right angles but clockwise. RoPE turns counter-clockwise, as angles grow "
            "in mathematics: [1, 0] turned by a quarter turn becomes [0, 1], and the hand-made query [1, 0] "
            "at position 1 becomes about [0.54, 0.84], its second part positive.",
            ("Angles grow counter-clockwise.",
             "At position 1, the first pair of (1, 0) must gain a positive second coordinate.",
             _TRY_HAND),
            like(_candidate(sign=-1.0)),
        ),
        Mistake(
            "positions_ignored", "the row numbers are used instead of the positions given",
            "Your function turns row r by r, whatever positions the call gives. A token's place comes from "
            "``positions``: a sentence may start at 3, a decoding step has one token at its own place.",
            ("A token's angle comes from the position it is given, which need not be its row number.",
             "Some cases give positions such as 3, 5, 9, or out of order.",
             "Try positions [3, 5, 9]: the first row must turn by 3 radians in pair 0."),
            like(_row_numbers),
        ),
        Mistake(
            "odd_d_head", "an odd d_head is not refused with a clear ValueError",
            _odd_explained,
            ("A pair needs two dimensions: think about the last one when d_head is odd.",
             "An input your function cannot honour should stop it, with a message that names the problem.",
             "Try q with 5 columns: the caller should read that d_head is odd."),
            _odd_not_refused,
        ),
    ),
)


def check_rope(fn):
    """Check the learner's ``my_rope(q, k, v, positions, convention)``: RoPE on Q and K, V as it is.

    Notebook 11_position. ``q``, ``k`` ``(..., seq_len, d_head)``, ``v (..., seq_len, d_v)``, ``positions
    (seq_len,)``, ``convention`` "half" or "interleaved"; the answer ``(Q, K, V)`` is compared with
    :func:`lessons_lib.core.position.rope` on hand-made, random, multi-head and far-position cases, and an odd
    d_head must be refused with a ValueError that says so. Returns a Feedback; never raises.
    """
    return ROPE.check(fn)
