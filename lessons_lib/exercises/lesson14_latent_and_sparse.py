"""Exercises of notebook 14_latent_and_sparse: ``my_absorbed_scores`` (one MLA head's scores from the cached
latent, W_UK folded into the query, with the rotated part beside it) and ``my_topk_keys`` (the keys each query
keeps in DeepSeek's sparse attention). Content only; the checking is :mod:`.engine`'s.

* ``my_absorbed_scores(q_nope, q_rope, latent, k_rope, w_uk, positions) -> (L, L)``: ``q_nope (L, d_nope)``
  and ``q_rope (L, d_rope)`` one head's query parts, ``latent (L, d_c)`` the cached latent, ``k_rope (L,
  d_rope)`` the shared rope key (both rope parts not yet turned), ``w_uk (d_c, d_nope)`` the head's key
  up-projection, ``positions (L,)``. The scaled scores::

      ((q_nope·W_UKᵀ)·latentᵀ + RoPE(q_rope)·RoPE(k_rope)ᵀ) / √(d_nope + d_rope)

  RoPE is lesson 11's ``ll.rope`` ("half" pairs). The reference is the library's MLA pieces
  (:func:`lessons_lib.core.latent.mla_attention`'s order, written for one head).
* ``my_topk_keys(scores, top_k) -> bool (L, S)``: ``scores (L, S)`` the indexer's, L ≤ S, query i standing at
  position S − L + i; True for the ``top_k`` highest-scoring keys among those it may see (all of them when
  it sees fewer). The reference is :func:`lessons_lib.core.sparse.top_k_selection`.
"""

from __future__ import annotations

import numpy as np

from ..core import latent, position, sparse
from .engine import Case, Exercise, Mistake, distinct_sizes, like, rng_cases

__all__ = ["check_absorbed_scores", "check_topk_keys"]


# =========================================================================== my_absorbed_scores
def _absorbed_answer(q_nope, q_rope, latent_, k_rope, w_uk, positions):
    """One head's MLA scores in the absorbed order, from the library's RoPE."""
    nope = (q_nope @ w_uk.T) @ latent_.T
    rotated = position.rope(q_rope, positions) @ position.rope(k_rope, positions).T
    return (nope + rotated) / np.sqrt(q_nope.shape[-1] + q_rope.shape[-1])


def _absorbed_case(rng, label, n, d_nope, d_rope, d_c, start=0):
    return Case(label, {"q_nope": rng.normal(0, 1, (n, d_nope)), "q_rope": rng.normal(0, 1, (n, d_rope)),
                        "latent": rng.normal(0, 1, (n, d_c)), "k_rope": rng.normal(0, 1, (n, d_rope)),
                        "w_uk": rng.normal(0, 1, (d_c, d_nope)) / np.sqrt(d_c),
                        "positions": np.arange(start, start + n)})


def _absorbed_cases() -> list[Case]:
    hand = Case("hand-made: 2 tokens at positions 0, 1, d_nope = 2, d_rope = 2, d_c = 2 (W_UK not symmetric)",
                {"q_nope": np.array([[1.0, 0.0], [0.0, 1.0]]), "q_rope": np.array([[1.0, 0.0], [1.0, 0.0]]),
                 "latent": np.array([[2.0, 0.0], [0.0, 2.0]]), "k_rope": np.array([[1.0, 0.0], [1.0, 0.0]]),
                 "w_uk": np.array([[1.0, 2.0], [0.0, 1.0]]), "positions": np.array([0, 1])})
    specs = [
        ("5 tokens, d_nope = 6, d_rope = 2, d_c = 8", 5, 6, 2, 8, 0),
        ("3 tokens at positions 7, 8, 9, d_nope = 8, d_rope = 6, d_c = 10", 3, 8, 6, 10, 7),
        ("6 tokens, d_nope = 8, d_rope = 2, d_c = 8 (a square W_UK)", 6, 8, 2, 8, 0),
        ("7 tokens at positions 20 … 26, d_nope = 6, d_rope = 6, d_c = 2", 7, 6, 6, 2, 20),
    ]
    return [hand, *rng_cases(specs, 14, lambda rng, *spec: _absorbed_case(rng, *spec))]


def _absorbed_hidden(rng) -> list[Case]:
    """Unseen cases of the same kinds: new even sizes (one with a square W_UK), positions from 0 or later."""
    cases = []
    for square in (False, True, False):
        d_nope, d_rope, d_c = (2 * s for s in distinct_sizes(rng, 3, sizes=(1, 3, 4, 5, 6)))
        d_c = d_nope if square else d_c
        n, start = int(rng.choice([3, 5, 7])), int(rng.choice([0, 4, 11]))
        label = f"unseen: {n} tokens from position {start}, d_nope = {d_nope}, d_rope = {d_rope}, d_c = {d_c}"
        cases.append(_absorbed_case(rng, label, n, d_nope, d_rope, d_c, start))
    return cases


def _scores(*, fold="right", rope_where="apart", scale="head", turn=True):
    """``my_absorbed_scores`` with one mistake (the candidates of the table below)."""
    def wrong(q_nope, q_rope, latent_, k_rope, w_uk, positions):
        def turned(x):
            return position.rope(x, positions) if turn else x

        if fold == "right":
            q_latent, keys = q_nope @ w_uk.T, latent_
        elif fold == "untransposed":          # W_UK read the wrong way round (runs when it is square)
            q_latent, keys = q_nope @ w_uk, latent_
        if rope_where == "nope query":        # the query turned before W_UK is folded in
            q_latent = position.rope(q_nope, positions) @ w_uk.T
        elif rope_where == "latent":          # the folded query and the latent turned, as if they were keys
            q_latent, keys = position.rope(q_latent, positions), position.rope(latent_, positions)
        if fold == "scores flipped":          # keys against queries: the (S, L) scores
            nope = (latent_ @ w_uk) @ q_nope.T
        else:
            nope = q_latent @ keys.T
        rotated = 0.0 if rope_where == "forgotten" else turned(q_rope) @ turned(k_rope).T
        width = {"head": q_nope.shape[-1] + q_rope.shape[-1], "latent": latent_.shape[-1],
                 "nope": q_nope.shape[-1]}[scale]
        return (nope + rotated) / np.sqrt(width)
    return wrong


_TRY_HAND = "Try the hand-made case: the first query's score for the first key is 1.5."

ABSORBED_SCORES = Exercise(
    name="my_absorbed_scores",
    params=("q_nope", "q_rope", "latent", "k_rope", "w_uk", "positions"),
    task="scores one head's queries against the cached latent, with W_UK folded into the query and the "
         "rotated part beside it",
    reference=_absorbed_answer,
    cases=_absorbed_cases,
    hidden=_absorbed_hidden,
    library_answers=(latent.mla_attention, latent.mla_scores, latent.absorbed_rope_scores),
    start_hint="Start with the hand-made case of section 7: two tokens, everything 2 wide. Write the shape "
               "of the query once W_UK is folded into it (it must meet the latent, d_c wide), then the small "
               "rotated part, then the scale of the whole head.",
    mistakes=(
        Mistake(
            "rope_absorbed", "the turn by position is folded in with W_UK anyway",
            "Your scores turn the query's nope part (or the latent) by position before meeting W_UK. A "
            "rotation that depends on the key's position cannot be folded into a fixed matrix: the latent is "
            "cached as it is, and positions reach the score only through the small rope parts.",
            ("The nope part and the latent carry no position at all in MLA; only the small rope parts do.",
             "Move every position on by the same amount: the true scores stay as they are (only the offsets "
             "count), and yours change.",
             "Try the case with positions 7, 8, 9: set q_rope and k_rope to 0 and your scores should not "
             "depend on the positions at all."),
            like(_scores(rope_where="nope query"), _scores(rope_where="latent")),
        ),
        Mistake(
            "w_uk_wrong_side", "W_UK is used from the wrong side",
            "W_UK maps a latent (d_c numbers) to a key (d_nope numbers). To fold it into the query it must "
            "map the other way, a query of d_nope numbers to d_c; your function uses it as it stands (which "
            "runs only when W_UK is square, and gives other numbers), or builds the scores keys against "
            "queries, the (S, L) table.",
            ("Write the shape of each matrix on paper: which sizes must meet in each product?",
             "A query of d_nope numbers must come out d_c wide to meet the latent; W_UK is (d_c, d_nope).",
             "Try the hand-made case, whose W_UK is square but not symmetric: the second query's score for "
             "the first key is about 2.27."),
            like(_scores(fold="untransposed"), _scores(fold="scores flipped")),
        ),
        Mistake(
            "rope_forgotten", "the rotated part is left out",
            "Your scores hold only the nope part, the query against the latent. Each MLA score also has "
            "the small rotated part, q_rope against the shared rope key: without it the head knows nothing "
            "of where the tokens stand.",
            ("A score has two parts: what the tokens say, and where they stand.",
             "Your function does not read q_rope or k_rope: change them and see whether your answer moves.",
             _TRY_HAND),
            like(_scores(rope_where="forgotten")),
        ),
        Mistake(
            "rope_not_turned", "the rope parts are not turned by their positions",
            "Your function uses q_rope and k_rope as they are given. They arrive untouched: the rotation by "
            "each token's position is what makes them the position part of the score (lesson 11).",
            ("The rope parts carry the tokens' positions only once they are rotated.",
             "Your scores stay the same whatever the positions: compare the case at positions 7, 8, 9 with "
             "the same vectors at 0, 1, 2.",
             _TRY_HAND),
            like(_scores(turn=False)),
        ),
        Mistake(
            "scale_of_latent", "the scale uses d_c, the latent's width, instead of the head's",
            "The latent is d_c wide, but a score is still one head's query meeting one head's key, its nope "
            "part and its rope part together: the scale is the head's, as in the naive order. Folding W_UK "
            "in changes the order of the work, not what the score is.",
            ("The absorbed order must give exactly the naive order's scores.",
             "Which length does a query have in the naive order: d_c, or its two parts together?",
             "Try the case with d_c = 8, d_nope = 6, d_rope = 2: your scores are off by the same factor "
             "everywhere."),
            like(_scores(scale="latent")),
        ),
        Mistake(
            "scale_of_nope", "the scale leaves out the rope part's width",
            "Your scale counts only the nope part, d_nope. A head's query is its nope part and its rope part "
            "together: the rope part is part of the head.",
            ("A head's query has two parts, and both count in its length.",
             "Compare your factor with the one from the head's full width.",
             "Try the case with d_nope = 6, d_rope = 6: your scores are off by the same factor everywhere."),
            like(_scores(scale="nope")),
        ),
    ),
)


def check_absorbed_scores(fn):
    """Check the learner's ``my_absorbed_scores(q_nope, q_rope, latent, k_rope, w_uk, positions)``: one MLA
    head's scaled scores with W_UK folded into the query and the rotated part beside it. Notebook
    14_latent_and_sparse. Returns a Feedback; never raises."""
    return ABSORBED_SCORES.check(fn)


# =========================================================================== my_topk_keys
def _topk_case(rng, label, n_queries, n_keys, top_k):
    return Case(label, {"scores": rng.normal(0, 1, (n_queries, n_keys)), "top_k": top_k})


def _topk_cases() -> list[Case]:
    hand = Case("hand-made: 3 queries, 3 keys, top_k = 2",
                {"scores": np.array([[0.5, 9.0, 9.0], [3.0, 1.0, 9.0], [1.0, 3.0, 2.0]]), "top_k": 2})
    specs = [
        ("6 queries, 6 keys, top_k = 3", 6, 6, 3),
        ("2 queries after 5 earlier tokens (7 keys), top_k = 4", 2, 7, 4),
        ("8 queries, 8 keys, top_k = 1", 8, 8, 1),
        ("5 queries after 4 earlier tokens (9 keys), top_k = 6", 5, 9, 6),
    ]
    return [hand, *rng_cases(specs, 15, lambda rng, *spec: _topk_case(rng, *spec))]


def _topk_hidden(rng) -> list[Case]:
    cases = []
    for earlier in (0, int(rng.choice([2, 3, 5]))):
        n_queries = int(rng.choice([4, 6, 7]))
        top_k = int(rng.choice([2, 3]))
        label = f"unseen: {n_queries} queries after {earlier} earlier tokens, top_k = {top_k}"
        cases.append(_topk_case(rng, label, n_queries, n_queries + earlier, top_k))
    return cases


def _topk(*, first=None, last=1, sign=-1.0, fill=False, every=False):
    """``my_topk_keys`` with one mistake (the candidates of the table below), as a learner's loop: row i ranks
    its first ``seen`` keys, seen = i + ``last`` + (S − L, or ``first``), by ``sign`` × score; ``fill``: a row
    that sees fewer than top_k ranks every key instead; ``every``: every row ranks every key."""
    def wrong(scores, top_k):
        n_queries, n_keys = scores.shape
        keep = np.zeros(scores.shape, dtype=bool)
        for i in range(n_queries):
            seen = n_keys if every else max(i + last + (n_keys - n_queries if first is None else first), 0)
            ranked = np.argsort(sign * scores[i, :seen], kind="stable")[:top_k]
            if fill and seen < top_k:
                ranked = np.argsort(sign * scores[i], kind="stable")[:top_k]
            keep[i, ranked] = True
        return keep
    return wrong


TOPK_KEYS = Exercise(
    name="my_topk_keys",
    params=("scores", "top_k"),
    task="keeps, for each query, its top_k keys by the indexer's scores among the keys it may see",
    reference=sparse.top_k_selection,
    cases=_topk_cases,
    hidden=_topk_hidden,
    library_answers=(sparse.top_k_selection, sparse.sparse_attention),
    answer_kind="b",
    start_hint="Start with the hand-made case: 3 queries, 3 keys, top_k = 2. For each query, first list the "
               "keys it may see, then the two it keeps.",
    mistakes=(
        Mistake(
            "future_keys", "a query keeps keys after its own position",
            "Your selection ranks every key, later ones included: a query keeps keys it may never see. "
            "The indexer's scores exist for every pair, but a causal model only looks back.",
            ("Sparse attention is still causal: the choice is made among the keys a query may see.",
             "Look at the first query: how many keys may it see at all?",
             "Try the hand-made case: the first query sees only key 0, so its row keeps key 0 alone, "
             "whatever the high scores of keys 1 and 2."),
            like(_topk(every=True)),
        ),
        Mistake(
            "short_rows_filled",
            "a query that sees fewer than top_k keys keeps later ones to make up the number",
            "The early queries see fewer than top_k keys; your selection still keeps top_k per row, so it "
            "takes keys after the query's own position to fill the row. A row keeps every key it may see, "
            "and no more.",
            ("A row keeps at most the keys its query may see.",
             "Count the kept keys of each row: the first row of a case with no earlier tokens keeps 1.",
             "Try the hand-made case: the first row keeps only key 0, the second keys 0 and 1."),
            like(_topk(fill=True)),
        ),
        Mistake(
            "top_left", "the queries stand at the first positions instead of the last",
            "When the queries come after earlier tokens (more keys than queries), they are the last tokens: "
            "the last query stands at position S − 1 and sees every key, as in lesson 12's decode step, and "
            "each query before it one key fewer. Your rows see only keys 0 … i.",
            ("The queries are the newest tokens: where do their rows start?",
             "With 5 earlier tokens, the first of 2 queries sees 6 keys, not 1.",
             "Try the case of 2 queries after 5 earlier tokens, top_k = 4: each row keeps 4 keys."),
            like(_topk(first=0)),
        ),
        Mistake(
            "lowest_kept", "the lowest scores are kept instead of the highest",
            "Your rows keep the keys the indexer ranks last. The indexer's score says how much a key "
            "matters to a query: the keys kept are the best-ranked ones.",
            ("The indexer scores a key high when the query should attend to it.",
             "Compare the scores of the keys you keep with the ones you leave out.",
             "Try the hand-made case: the third query sees keys 0, 1, 2 scored 1, 3, 2 and keeps keys 1 "
             "and 2."),
            like(_topk(sign=1.0)),
        ),
        Mistake(
            "itself_excluded", "a query does not keep its own key",
            "Your rows leave the query's own position out. Every token may attend to itself in causal "
            "attention: its own key is one of the keys it may see and rank.",
            ("In causal attention the diagonal is never masked.",
             "Look at the first row: its query sees exactly one key, its own.",
             "Try the hand-made case: the first row must keep key 0."),
            like(_topk(last=0)),
        ),
    ),
)


def check_topk_keys(fn):
    """Check the learner's ``my_topk_keys(scores, top_k)``: for each query (the last L of S tokens), its
    ``top_k`` highest-scoring keys among those it may see, as a bool ``(L, S)`` array. Notebook
    14_latent_and_sparse. Returns a Feedback; never raises."""
    return TOPK_KEYS.check(fn)
