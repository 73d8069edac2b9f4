"""Exercises of notebook 13_cheaper_attention: ``my_linear_attention_step`` (one token of linear attention,
with its normaliser), ``my_causal_linear_attention`` (every token at once, the parallel form) and
``my_delta_step`` (one write of the delta rule). Content only; the checking is :mod:`.engine`'s.

* ``my_linear_attention_step(state, z, q, k, v) -> (state, z, output)``: ``state (d_k, d_v)`` and ``z
  (d_k,)`` hold the tokens so far; ``q``, ``k (d_k,)`` and ``v (d_v,)`` are the new token's. With φ =
  elu + 1 (:func:`lessons_lib.core.linear.feature_map`): ``S_t = S_{t−1} + φ(k_t) v_tᵀ``, ``z_t = z_{t−1}
  + φ(k_t)``, ``o_t = S_tᵀ φ(q_t) / (φ(q_t) · z_t)``. The reference is
  :func:`lessons_lib.core.linear.linear_attention_step`.
* ``my_causal_linear_attention(Q, K, V) -> (N, d_v)``: ``Q``, ``K (N, d_k)``, ``V (N, d_v)``; row i is
  ``Σ_{j≤i} (φ(q_i)·φ(k_j)) v_j / Σ_{j≤i} φ(q_i)·φ(k_j)``, the parallel form of the same computation: the
  N × N similarities φ(Q)·φ(K)ᵀ with the causal mask, and each row's normaliser. The reference is
  :func:`lessons_lib.core.linear.linear_attention` (``form="parallel"``, causal, φ = elu + 1). Its check
  names the future leaking in (no mask, or a mask that keeps the later keys), or leaking through the
  normaliser alone.
* ``my_delta_step(state, k, v, beta) -> state``: ``state (d_k, d_v)``, a key ``k (d_k,)`` of length 1, a
  value ``v (d_v,)`` and a strength β in [0, 2]: ``S_t = S_{t−1} + β k_t (v_t − S_{t−1}ᵀ k_t)ᵀ``, what the
  state read at k_t moved towards v_t. The reference is :func:`lessons_lib.core.linear.delta_rule_step`.
"""

from __future__ import annotations

import numpy as np

from ..core import linear
from .engine import Case, Exercise, Mistake, distinct_sizes, like, rng_cases

__all__ = ["check_linear_attention_step", "check_causal_linear_attention", "check_delta_step"]


# =========================================================================== my_linear_attention_step
def _linear_answer(state, z, q, k, v):
    return linear.linear_attention_step(state, z, linear.feature_map(q), linear.feature_map(k), v)


def _linear_case(rng, label, d_k, d_v, past):
    """A state and normaliser that ``past`` earlier tokens left (φ(k) ≥ 0, so z > 0), and a new token."""
    keys = linear.feature_map(rng.normal(0, 1, (past, d_k)))
    values = rng.normal(0, 1, (past, d_v))
    return Case(label, {"state": keys.T @ values, "z": keys.sum(0), "q": rng.normal(0, 1.5, d_k),
                        "k": rng.normal(0, 1.5, d_k), "v": rng.normal(0, 1, d_v)})


def _linear_cases() -> list[Case]:
    hand = Case("hand-made: an empty state (the first token), d_k = 2, d_v = 3",
                {"state": np.zeros((2, 3)), "z": np.zeros(2), "q": np.array([1.0, -1.0]),
                 "k": np.array([0.0, 2.0]), "v": np.array([3.0, 0.0, -3.0])})
    specs = [
        ("after 4 tokens, d_k = 3, d_v = 5", 3, 5, 4),
        ("after 9 tokens, d_k = 6, d_v = 2", 6, 2, 9),
        ("after 6 tokens, d_k = 3, d_v = 3 (a square state)", 3, 3, 6),
        ("after 7 tokens, d_k = 5, d_v = 5 (a square state)", 5, 5, 7),
    ]
    return [hand, *rng_cases(specs, 13, lambda rng, *spec: _linear_case(rng, *spec))]


def _linear_hidden(rng) -> list[Case]:
    """Unseen cases of the same kinds: a state of new sizes after some tokens, a square one, an empty one."""
    d_k, d_v, past = distinct_sizes(rng, 3, sizes=(2, 3, 5, 6, 7, 9))
    square = int(rng.choice([3, 5, 6]))
    cases = [_linear_case(rng, f"unseen: after {past} tokens, d_k = {d_k}, d_v = {d_v}", d_k, d_v, past),
             _linear_case(rng, f"unseen: a square state, d_k = d_v = {square}", square, square, past)]
    first = _linear_case(rng, f"unseen: the first token, d_k = {d_v}, d_v = {d_k}", d_v, d_k, 1)
    first.args["state"][:], first.args["z"][:] = 0.0, 0.0
    return [*cases, first]


def _phi(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def _stepping(*, normalise=True, phi_q=True, phi_k=True, flipped=False, read_old=False, keep_z=False):
    """``my_linear_attention_step`` with one mistake (the candidates of the table below)."""
    def wrong(state, z, q, k, v):
        fq, fk = (_phi(q) if phi_q else q), (_phi(k) if phi_k else k)
        new_state = state + (np.outer(v, fk) if flipped else np.outer(fk, v))
        new_z = z if keep_z else z + fk
        read, total = (state, z) if read_old else (new_state, new_z)
        output = fq @ read
        if normalise:
            with np.errstate(divide="ignore", invalid="ignore"):
                output = output / (fq @ total)
        return new_state, new_z, output
    return wrong


LINEAR_STEP = Exercise(
    name="my_linear_attention_step",
    params=("state", "z", "q", "k", "v"),
    task="moves the state and the normaliser on by one token and reads the new token's output",
    reference=_linear_answer,
    cases=_linear_cases,
    hidden=_linear_hidden,
    library_answers=(linear.linear_attention_step, linear.linear_attention),
    outputs=("state", "z", "output"),
    start_hint="Start with the hand-made case, the first token of a sequence: the state and z are zeros. "
               "Write down φ of its key and query, then the shapes of the three things you return: "
               "(2, 3), (2,) and (3,).",
    mistakes=(
        Mistake(
            "phi_forgotten", "φ is not used on the query or the key",
            "Your step uses the raw query or key where linear attention uses their features φ(q) and φ(k) "
            "(every entry positive). Without φ a key can write negative amounts into z, the "
            "normaliser can come out near zero, and the read-out stops being a weighted average of values.",
            ("φ makes every feature positive: that is what lets the read-out be an average of the values.",
             "Both the new key (what is written) and the query (what reads) go through φ.",
             "Try the hand-made case: φ of the key [0, 2] is [1, 3], and z must come back as [1, 3]."),
            like(_stepping(phi_q=False, phi_k=False), _stepping(phi_q=False), _stepping(phi_k=False)),
        ),
        Mistake(
            "no_normaliser", "the output is not normalised by φ(q) · z",
            "Your output is the state's raw read-out: it grows with the number of tokens seen, because every "
            "token's value is written in with its own weight. Softmax attention's weights sum to 1; here "
            "φ(q) · z, the total weight the query gives the keys so far, plays that part.",
            ("Attention's output is an average of values: its weights must come to 1 in total.",
             "z holds the total of the key features so far; the query's read of z is the total weight.",
             "Try the hand-made case: with one token seen, the output must be that token's value, "
             "[3, 0, −3]."),
            like(_stepping(normalise=False)),
        ),
        Mistake(
            "outer_flipped", "the state is written as v φ(k)ᵀ, (d_v, d_k), instead of φ(k) vᵀ, (d_k, d_v)",
            "Your state is written the other way round: rows by value features, columns by key features. "
            "The state is (d_k, d_v): row i holds what key feature i has stored of each value feature, so "
            "a query (d_k numbers) can read it. With d_k ≠ d_v the shapes do not fit; with d_k = d_v they "
            "fit and give wrong numbers.",
            ("The state has one row per key feature and one column per value feature.",
             "Compare the shape you write into the state with the state's own shape, (d_k, d_v).",
             "Try the square case with d_k = d_v = 3: your output differs although every shape fits."),
            like(_stepping(flipped=True)),
        ),
        Mistake(
            "read_before_write", "the output reads the state before the new token is written",
            "Your output reads the state of the tokens before, without the new one: the token does not see "
            "itself, which causal attention always lets it do (lesson 07's diagonal).",
            ("In causal attention a token attends to itself too.",
             "Which state should the query read: the one that came in, or the one you return?",
             "Try the hand-made case: with an empty state there is nothing to read unless the new token "
             "is in it."),
            like(_stepping(read_old=True)),
        ),
        Mistake(
            "z_not_moved", "z comes back as it came in",
            "Your state moves on but the normaliser z does not: the next step would weigh its output as if "
            "this token had never come, and the outputs drift as the sequence grows.",
            ("z is the running total of everything the keys have written, like the state.",
             "Compare the z you return with the z you were given: they must differ.",
             "Try the hand-made case: z comes in as [0, 0] and must come back as [1, 3]."),
            like(_stepping(keep_z=True)),
        ),
    ),
)


def check_linear_attention_step(fn):
    """Check the learner's ``my_linear_attention_step(state, z, q, k, v)``: one token of linear attention
    with its normaliser. Notebook 13_cheaper_attention. ``state (d_k, d_v)``, ``z (d_k,)``, ``q``, ``k
    (d_k,)``, ``v (d_v,)``; the answer ``(state, z, output)`` is compared with
    :func:`lessons_lib.core.linear.linear_attention_step` (φ = elu + 1) on an empty state and states of
    several sizes, square and not. Returns a Feedback; never raises."""
    return LINEAR_STEP.check(fn)


# =========================================================================== my_causal_linear_attention
def _causal_answer(Q, K, V):
    return linear.linear_attention(Q, K, V, form="parallel")


def _causal_case(rng, label, n, d_k, d_v):
    return Case(label, {"Q": rng.normal(0, 1.5, (n, d_k)), "K": rng.normal(0, 1.5, (n, d_k)),
                        "V": rng.normal(0, 1, (n, d_v))})


def _causal_cases() -> list[Case]:
    hand = Case("hand-made: 3 tokens, d_k = 2, d_v = 5",
                {"Q": np.array([[1.0, -1.0], [0.0, 2.0], [-1.0, 1.0]]),
                 "K": np.array([[0.0, 2.0], [1.0, 0.0], [2.0, -1.0]]),
                 "V": np.array([[3.0, 0.0, -3.0, 1.0, 0.0], [0.0, 6.0, 0.0, -6.0, 3.0],
                                [9.0, 0.0, 3.0, 0.0, -3.0]])})
    specs = [
        ("7 tokens, d_k = 3, d_v = 5", 7, 3, 5),
        ("6 tokens, d_k = 5, d_v = 2", 6, 5, 2),
        ("5 tokens, d_k = 3, d_v = 5 (as many value features as tokens)", 5, 3, 5),
        ("9 tokens, d_k = 6, d_v = 3", 9, 6, 3),
    ]
    return [hand, *rng_cases(specs, 17, lambda rng, *spec: _causal_case(rng, *spec))]


def _causal_hidden(rng) -> list[Case]:
    """Unseen cases of the same kinds: new sizes, and one with as many value features as tokens."""
    n, d_k, d_v = distinct_sizes(rng, 3, sizes=(2, 3, 5, 6, 7, 9))
    n = max(n, 3)
    square, other = distinct_sizes(rng, 2, sizes=(3, 5, 6, 7))
    return [_causal_case(rng, f"unseen: {n} tokens, d_k = {d_k}, d_v = {d_v}", n, d_k, d_v),
            _causal_case(rng, f"unseen: {square} tokens, d_k = {other}, d_v = {square}", square, other,
                         square),
            _causal_case(rng, f"unseen: {d_v + 5} tokens, d_k = {d_v}, d_v = {d_k}", d_v + 5, d_v, d_k)]


def _parallel(*, seen="causal", phi_q=True, phi_k=True, normalise="rows", total="seen"):
    """``my_causal_linear_attention`` with one mistake (the candidates of the table below): ``seen`` the keys
    each query meets ("causal", "all", "later", "before": up to itself, every one, itself and after, only
    the earlier ones); ``normalise`` how the weighted values are scaled ("rows": each query's own total;
    "none"; "columns": key i's total on row i; "columns across": key j's total on value column j; "rows
    across": row j's total on value column j); ``total`` the keys the normaliser counts ("seen", "all")."""
    def wrong(Q, K, V):
        fq, fk = (_phi(Q) if phi_q else Q), (_phi(K) if phi_k else K)
        similar = fq @ fk.T
        n = len(similar)
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        keep = {"causal": j <= i, "all": np.ones((n, n), dtype=bool), "later": j >= i, "before": j < i}[seen]
        weights = np.where(keep, similar, 0.0)
        counted = weights if total == "seen" else similar
        out = weights @ V
        with np.errstate(divide="ignore", invalid="ignore"):
            if normalise == "rows":
                return out / counted.sum(-1)[:, None]
            if normalise == "columns":
                return out / counted.sum(0)[:, None]
            if normalise == "columns across":
                return out / counted.sum(0)[None, :]
            if normalise == "rows across":
                return out / counted.sum(-1)[None, :]
        return out
    return wrong


_TRY_FIRST = ("Try the hand-made case: the first token sees only itself, so its output is its own value, "
              "[3, 0, −3, 1, 0]; the second weighs the first two values 10 to 5, so it is "
              "[2, 2, −2, −1.33, 1].")

CAUSAL_LINEAR = Exercise(
    name="my_causal_linear_attention",
    params=("Q", "K", "V"),
    task="computes causal linear attention for every token at once, each output normalised",
    reference=_causal_answer,
    cases=_causal_cases,
    hidden=_causal_hidden,
    library_answers=(linear.linear_attention, linear.linear_attention_step, linear.decay_attention),
    start_hint="Start with the hand-made case: 3 tokens, d_k = 2, d_v = 5. Write down which keys each of the "
               "three queries may use, then the shape of the similarities of every query with every key, "
               "(3, 3), and the shape you return, (3, 5).",
    mistakes=(
        Mistake(
            "future_leaks", "the future leaks in: a query uses keys after its own position",
            "Your output for a token uses the keys and values of tokens that come after it: the future leaks "
            "into the parallel form. Section 1's formula ran over every key, which is right only without "
            "causality; a causal model's token t may use tokens 1 … t and nothing later, as the loop of "
            "section 2 does, since the state it reads holds only what came before.",
            ("The parallel form must give what the loop gives, and the loop has not yet seen the later "
             "tokens when it reads.",
             "Change the last token's key and value: every row but the last must stay as it was.",
             _TRY_FIRST),
            like(_parallel(seen="all"), _parallel(seen="later")),
        ),
        Mistake(
            "future_in_normaliser", "the normaliser still counts the keys after the query",
            "Your weighted values use only the keys up to each query, but the normaliser below the line "
            "counts every key, later ones included: the future leaks through the normaliser. The weights of "
            "a row no longer come to 1, and each output depends on tokens that have not come yet.",
            ("Above and below the line, the same keys count: the ones the query may see.",
             "Each output row must be an average of the values it sees: its weights come to 1.",
             _TRY_FIRST),
            like(_parallel(total="all")),
        ),
        Mistake(
            "itself_excluded", "a query does not use its own key",
            "Your outputs use only the keys before each query, leaving the query's own token out. A causal "
            "token may attend to itself (lesson 07): without it the first token has nothing to read, and its "
            "output is not a number.",
            ("In causal attention each token sees the tokens before it and itself.",
             "Look at the first row: how many keys may the first query use?",
             _TRY_FIRST),
            like(_parallel(seen="before")),
        ),
        Mistake(
            "no_normaliser", "the weighted values are not normalised by each query's total weight",
            "Your output is the raw weighted values: they grow with the number of tokens each query sees. "
            "Section 1's formula has a line: below it, the total weight the query gives the keys it sees, "
            "which makes each output an average of values, as softmax's weights coming to 1 does.",
            ("Attention's output is an average of values: its weights must come to 1 in total.",
             "The first token sees only itself, so its output must be its own value, whatever its weight.",
             _TRY_FIRST),
            like(_parallel(normalise="none")),
        ),
        Mistake(
            "normaliser_wrong_axis",
            "the normaliser is not each query's own total weight, one number per row",
            "Your output is scaled, but not by each query's own total weight: the totals are taken along the "
            "wrong axis (per key instead of per query), or lined up with the value features instead of the "
            "rows. Each output row belongs to one query, and the whole row is scaled by that query's total "
            "over the keys it sees.",
            ("One query, one number: the query's total weight scales every value feature of its row alike.",
             "Your answer has a row per query; the number that scales a row must come from that query's "
             "similarities alone.",
             _TRY_FIRST),
            like(_parallel(normalise="columns"), _parallel(normalise="columns across"),
                 _parallel(normalise="rows across")),
        ),
        Mistake(
            "phi_forgotten", "φ is not used on the queries or the keys",
            "Your similarities use the raw queries or keys where linear attention uses their features φ(q) "
            "and φ(k), every entry positive. Raw products have either sign: a query's total weight can come "
            "out near zero or negative, and the output stops being an average of the values.",
            ("φ makes every feature positive: that is what lets each output be an average of the values.",
             "Both the queries (what reads) and the keys (what is read) go through φ.",
             "Try the hand-made case: φ of the first key [0, 2] is [1, 3], and every similarity is "
             "positive."),
            like(_parallel(phi_q=False, phi_k=False), _parallel(phi_q=False), _parallel(phi_k=False)),
        ),
    ),
)


def check_causal_linear_attention(fn):
    """Check the learner's ``my_causal_linear_attention(Q, K, V)``: causal linear attention for every token
    at once, the parallel form, each row normalised. Notebook 13_cheaper_attention. ``Q``, ``K (N, d_k)``,
    ``V (N, d_v)``; the answer ``(N, d_v)`` is compared with :func:`lessons_lib.core.linear.linear_attention`
    (φ = elu + 1, causal). Returns a Feedback; never raises."""
    return CAUSAL_LINEAR.check(fn)


# =========================================================================== my_delta_step
def _delta_answer(state, k, v, beta):
    return linear.delta_rule_step(state, k, k, v, beta)[0]


def _delta_case(rng, label, d_k, d_v, beta, past=3):
    keys = linear.l2_normalize(rng.normal(0, 1, (past, d_k)))
    state = keys.T @ rng.normal(0, 1, (past, d_v))
    return Case(label, {"state": state, "k": linear.l2_normalize(rng.normal(0, 1, d_k)),
                        "v": rng.normal(0, 1, d_v), "beta": float(beta)})


def _delta_cases() -> list[Case]:
    hand = Case("hand-made: key [1, 0] already holds [2, 2, 2]; write [5, 0, 2] there with β = 1",
                {"state": np.array([[2.0, 2.0, 2.0], [1.0, 0.0, -1.0]]), "k": np.array([1.0, 0.0]),
                 "v": np.array([5.0, 0.0, 2.0]), "beta": 1.0})
    specs = [
        ("d_k = 3, d_v = 5, β = 0.5", 3, 5, 0.5),
        ("d_k = 6, d_v = 2, β = 1.5", 6, 2, 1.5),
        ("a square state, d_k = d_v = 3, β = 0.7", 3, 3, 0.7),
        ("a square state, d_k = d_v = 5, β = 1", 5, 5, 1.0),
    ]
    return [hand, *rng_cases(specs, 31, lambda rng, *spec: _delta_case(rng, *spec))]


def _delta_hidden(rng) -> list[Case]:
    """Unseen cases of the same kinds: new sizes, a square state, a new β."""
    d_k, d_v = distinct_sizes(rng, 2, sizes=(2, 3, 5, 6, 7))
    square = int(rng.choice([3, 5, 6]))
    beta = float(rng.choice([0.3, 0.6, 0.8, 1.2]))
    return [_delta_case(rng, f"unseen: d_k = {d_k}, d_v = {d_v}, β = {beta}", d_k, d_v, beta),
            _delta_case(rng, f"unseen: a square state, d_k = d_v = {square}, β = {beta}", square, square,
                        beta),
            _delta_case(rng, f"unseen: d_k = {d_v}, d_v = {d_k}, β = 1", d_v, d_k, 1.0)]


def _writing(*, beta_on="error", flipped=False, read_rows=False, sign=1.0, correct=True):
    """``my_delta_step`` with one mistake (the candidates of the table below)."""
    def wrong(state, k, v, beta):
        held = state @ k if read_rows else k @ state                    # what the state reads at k
        if not correct:
            change = beta * v                                            # added, as linear attention does
        elif beta_on == "value":
            change = beta * v - held
        elif beta_on == "held":
            change = v - beta * held
        else:
            change = beta * (v - held)
        return state + sign * (np.outer(change, k) if flipped else np.outer(k, change))
    return wrong


DELTA_STEP = Exercise(
    name="my_delta_step",
    params=("state", "k", "v", "beta"),
    task="moves what the state holds at the key towards the new value",
    reference=_delta_answer,
    cases=_delta_cases,
    hidden=_delta_hidden,
    library_answers=(linear.delta_rule_step, linear.delta_rule),
    start_hint="Start with the hand-made case: key [1, 0] reads the first row of the state, [2, 2, 2]. "
               "Write down what it should read after the step when β = 1, then which rows change.",
    mistakes=(
        Mistake(
            "not_corrected", "the new value is written on top of what the key held, not in its place",
            "Your step writes the new value in as linear attention does and never takes away what the key "
            "held before: reading the key afterwards gives the old value and the new one together. The "
            "delta rule writes only the error, the new value against what the state already reads there.",
            ("The delta rule corrects: after a write with β = 1, the key reads exactly the new value.",
             "First find what the state reads at the key now; the error is what is missing from it.",
             "Try the hand-made case: after the step, row 0 must read [5, 0, 2], not [7, 2, 4]."),
            like(_writing(correct=False)),
        ),
        Mistake(
            "beta_on_one_term", "β weighs only the new value, or only what was held, instead of the error",
            "Your step applies β to one side of the error only: β is how far the state moves from what it "
            "reads at the key towards the new value, so it weighs the whole error. With β = 1 both "
            "agree; with any other β yours moves the state to a different place.",
            ("β is a step size: β = 0 leaves the state as it was, β = 1 moves it all the way.",
             "With β = 0 your step must return the state unchanged: does it?",
             "Try the case with β = 0.5: what the key reads must end halfway between the old read-out "
             "and the new value."),
            like(_writing(beta_on="value"), _writing(beta_on="held")),
        ),
        Mistake(
            "outer_flipped", "the correction is written as (d_v, d_k) instead of (d_k, d_v)",
            "Your correction is laid out the other way round: rows by value features, columns by key "
            "features. The state is (d_k, d_v), so the rows that change are picked by the key and each row "
            "receives value features. With d_k ≠ d_v the shapes do not fit; with d_k = d_v they fit and give "
            "wrong numbers.",
            ("The key picks which rows of the state change; the error fills them.",
             "Compare the shape of your correction with the state's own shape, (d_k, d_v).",
             "Try the hand-made case: only row 0 (the key [1, 0]) may change."),
            like(_writing(flipped=True)),
        ),
        Mistake(
            "read_wrong_side", "the state is read at the key from the wrong side",
            "Your step reads what the state holds at the key along the wrong axis, the state's columns "
            "instead of its rows. A query or key of d_k numbers reads the state row by row, giving d_v "
            "numbers, as the output o = Sᵀq does.",
            ("Reading the state at a key gives a value: d_v numbers.",
             "Which axis of the state has d_k entries: that is the one the key meets.",
             "Try the square case with d_k = d_v = 3: your read-out differs although every shape fits."),
            like(_writing(read_rows=True)),
        ),
        Mistake(
            "wrong_sign", "the state moves away from the new value",
            "Your step moves the state in the wrong direction: what the key reads ends further from the new "
            "value than before. The error is the new value against the old read-out, in that order.",
            ("After the step the key must read something closer to the new value.",
             "With β = 1 the key must read the new value exactly.",
             "Try the hand-made case: row 0 must become [5, 0, 2]."),
            like(_writing(sign=-1.0)),
        ),
    ),
)


def check_delta_step(fn):
    """Check the learner's ``my_delta_step(state, k, v, beta)``: one write of the delta rule. Notebook
    13_cheaper_attention. ``state (d_k, d_v)``, ``k (d_k,)`` of length 1, ``v (d_v,)``, β in [0, 2]; the
    answer, the new state, is compared with :func:`lessons_lib.core.linear.delta_rule_step` on states square
    and not and several β. Returns a Feedback; never raises."""
    return DELTA_STEP.check(fn)
