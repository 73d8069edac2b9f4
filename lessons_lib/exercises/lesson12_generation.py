"""Exercises of notebook 12_generation: ``my_decode_step`` (new tokens through attention with a KV cache) and
``my_repeat_kv`` (each key/value head for its group of query heads). Content only; the checking is
:mod:`.engine`'s.

* ``my_decode_step(q, k, v, k_cache, v_cache) -> (output, K cache, V cache)``: ``q``, ``k`` ``(n_new, d_k)``
  and ``v (n_new, d_v)`` are the new tokens' query, key and value; ``k_cache (past, d_k)`` and ``v_cache
  (past, d_v)`` those of the tokens before them. The new keys and values join the caches, after the old ones;
  new token i (at position past + i) attends to keys 0 … past + i, itself included, never later ones;
  softmax(q·Kᵀ/√d_k)·V. The reference is :func:`lessons_lib.core.decoding.decode_step` with a
  :class:`~lessons_lib.core.decoding.KVCache`.
* ``my_rope_step(q, k, past) -> (q, k)``: the new tokens' queries and keys ``(n_new, d_head)``, not yet
  turned, after ``past`` tokens already in the cache: each turned by RoPE at the position it stands at,
  past, past + 1, …, past + n_new − 1 (``ll.rope`` may be used: the lesson is where the new tokens stand).
  The mistake it names first is the offset bug: the new tokens turned as if they stood at 0, 1, ….
* ``my_repeat_kv(kv, n_heads) -> (..., n_heads, seq_len, d_head)``: ``kv (..., n_kv_heads, seq_len,
  d_head)``; KV head g serves query heads g·r … g·r + r − 1 (r = n_heads / n_kv_heads). When n_kv_heads does
  not divide n_heads the right answer is a ``ValueError`` that says so (a :class:`~.outcome.Refusal`). The
  reference is :func:`lessons_lib.core.decoding.repeat_kv`.
"""

from __future__ import annotations

import numpy as np

from ..core import decoding, position
from .engine import Case, Exercise, Mistake, Outcome, Refusal, distinct_sizes, either, like, rng_cases

__all__ = ["check_decode_step", "check_repeat_kv", "check_rope_step"]


# =========================================================================== my_decode_step
def _decode_answer(q, k, v, k_cache, v_cache):
    """The library's decode step: the caches with the new tokens appended, the new rows of attention."""
    cache = decoding.KVCache(k_cache, v_cache) if np.shape(k_cache)[-2] else decoding.KVCache()
    step = decoding.decode_step(q, k, v, cache)
    return step.output, cache.keys.copy(), cache.values.copy()


def _decode_case(rng, label, n_new, past, d_k, d_v):
    q, k = (rng.normal(0, 1, (n_new, d_k)) for _ in range(2))
    return Case(label, {"q": q, "k": k, "v": rng.normal(0, 1, (n_new, d_v)),
                        "k_cache": rng.normal(0, 1, (past, d_k)), "v_cache": rng.normal(0, 1, (past, d_v))})


def _decode_cases() -> list[Case]:
    hand = Case("hand-made: one new token after 2 cached ones, d_k = 2, d_v = 3",
                {"q": np.array([[0.0, 2.0]]), "k": np.array([[1.0, 1.0]]), "v": np.array([[0.0, 0.0, 6.0]]),
                 "k_cache": np.array([[2.0, 0.0], [0.0, 1.0]]),
                 "v_cache": np.array([[3.0, 0.0, 0.0], [0.0, 3.0, 0.0]])})
    specs = [
        ("one new token after 5 cached ones, d_k = 3, d_v = 2", 1, 5, 3, 2),
        ("three new tokens at once after 6 cached ones, d_k = 5, d_v = 2", 3, 6, 5, 2),
        ("two new tokens and an empty cache (the first step), d_k = 3, d_v = 7", 2, 0, 3, 7),
        ("one new token after 9 cached ones, d_k = 8, d_v = 6", 1, 9, 8, 6),
        ("two new tokens after 7 cached ones, d_k = 6, d_v = 3", 2, 7, 6, 3),
    ]
    return [hand, *rng_cases(specs, 12, lambda rng, *spec: _decode_case(rng, *spec))]


def _decode_hidden(rng) -> list[Case]:
    """Unseen cases of the same kinds: one new token, a chunk of new tokens, an empty cache; new sizes."""
    cases = []
    for n_new, kind in ((1, "one new token"), (int(rng.choice([2, 3])), "new tokens at once"),
                        (int(rng.choice([2, 3])), "an empty cache")):
        past, d_k, d_v = distinct_sizes(rng, 3, sizes=(5, 6, 7, 8, 9))
        past = 0 if kind == "an empty cache" else past
        what = kind if n_new == 1 else "new tokens"
        label = f"unseen: {n_new} {what}, {past} cached, d_k = {d_k}, d_v = {d_v}"
        cases.append(_decode_case(rng, label, n_new, past, d_k, d_v))
    return cases


def _softmax_rows(scores):
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True, initial=-np.inf))
    return e / e.sum(axis=-1, keepdims=True)


def _attend(q, keys, values, allowed, scale):
    """Masked attention written out as a learner writes it (the candidates below change one thing)."""
    scores = np.where(allowed, (q @ keys.T) * scale, -np.inf)
    with np.errstate(invalid="ignore"):
        return _softmax_rows(scores) @ values


def _decoding(*, append_first=True, see_self=True, twice=None, future=0, top_left=False, scale="sqrt",
              return_old=False, prepend=False):
    """``my_decode_step`` with one mistake (the candidates of the table below). Keys are matched to queries by
    position: key j is visible to new token i (at past + i) when j ≤ past + i + ``future`` (``future`` None:
    every key), or j < past + i when it may not ``see_self``."""
    def wrong(q, k, v, k_cache, v_cache):
        past, n = k_cache.shape[0], q.shape[0]
        new_k = np.concatenate([k, k_cache] if prepend else [k_cache, k])
        new_v = np.concatenate([v, v_cache] if prepend else [v_cache, v])
        keys, values, key_pos = new_k, new_v, np.arange(past + n)   # prepended: positions read by index
        if not append_first:                                         # the scores before the new keys join
            keys, values, key_pos = k_cache, v_cache, np.arange(past)
        if twice == "kept":                   # the caches keep the new tokens twice, each by its position
            keys = new_k = np.concatenate([new_k, k])
            values = new_v = np.concatenate([new_v, v])
            key_pos = np.concatenate([key_pos, past + np.arange(n)])
        elif twice == "attended":             # the right caches, but the step attends over them plus the new
            keys, values = np.concatenate([new_k, k]), np.concatenate([new_v, v])
            key_pos = np.arange(past + 2 * n) - n                    # the bottom-right rule, read by index
        query_pos = past + np.arange(n)
        if top_left:
            allowed = np.arange(keys.shape[0])[None, :] <= np.arange(n)[:, None]
        elif future is None:
            allowed = np.ones((n, keys.shape[0]), bool)
        elif see_self:
            allowed = key_pos[None, :] <= query_pos[:, None] + future
        else:
            allowed = key_pos[None, :] < query_pos[:, None]
        factor = {"sqrt": 1 / np.sqrt(q.shape[-1]), "none": 1.0, "d": 1 / q.shape[-1]}[scale]
        output = _attend(q, keys, values, allowed, factor)
        return (output, k_cache.copy(), v_cache.copy()) if return_old else (output, new_k, new_v)
    return wrong


def _own_key_unseen(o: Outcome) -> bool:
    """On the failing case (with tokens in the cache), the output is what each new token gets from the keys
    before it alone, its own left out, whatever the code does where the cache is empty."""
    if o.error is not None or not isinstance(o.result, (tuple, list)) or not o.result:
        return False
    args = o.case.args
    if not args["k_cache"].shape[0]:
        return False
    unseen = _decoding(see_self=False)(**args)[0]
    output = np.asarray(o.result[0]) if np.shape(o.result[0]) == unseen.shape else None
    return output is not None and bool(np.allclose(output, unseen, atol=1e-8, equal_nan=True))


def _counted(o: Outcome) -> str:
    return f"{o.case.args['k_cache'].shape[0]} cached token(s) and {o.case.args['q'].shape[0]} new"


_TRY_HAND = ("Try the hand-made case by hand: the new token's query [0, 2] meets the keys [2, 0], [0, 1] "
             "and its own [1, 1]; three scores.")

DECODE_STEP = Exercise(
    name="my_decode_step",
    params=("q", "k", "v", "k_cache", "v_cache"),
    task="attends the new tokens over the cache and themselves, and returns the caches with them added",
    reference=_decode_answer,
    cases=_decode_cases,
    hidden=_decode_hidden,
    library_answers=(decoding.decode_step, decoding.cached_attention, decoding.decode_loop,
                     decoding.KVCache.append),
    outputs=("output", "K cache", "V cache"),
    start_hint="Start with the hand-made case: one new token after two cached ones. First write down which "
               "keys its query must meet (there are three) and the shapes of what you return; then the case "
               "of three new tokens at once.",
    mistakes=(
        Mistake(
            "not_appended_first", "the new token does not see its own key",
            "Your new token's query meets the cached keys but not its own key: the scores were computed "
            "over the old cache alone, before it held the new keys (or its own column was masked). The new "
            "key goes into the cache before the scores: a token at position t attends to positions 0 … t, "
            "itself included, as in full causal attention.",
            ("In causal attention every token sees itself: the diagonal is never masked.",
             "Count the keys the new token meets: with 2 cached tokens there must be 3 scores, not 2.",
             _TRY_HAND),
            either(like(_decoding(append_first=False), _decoding(see_self=False)), _own_key_unseen),
        ),
        Mistake(
            "appended_twice", "the new keys and values are kept in the cache twice",
            lambda o: f"Your step keeps or meets the new tokens twice: with {_counted(o)} the keys are "
                      f"{o.expected[1].shape[0]} rows, each token once. Every token met twice is weighed "
                      f"double, in this step and in every later one.",
            ("Each token's key and value is kept exactly once, whatever the number of steps.",
             "Compare the number of rows of the caches you return with cached + new.",
             "Try the case with an empty cache and two new tokens: each cache must come back with 2 rows."),
            like(_decoding(twice="kept"), _decoding(twice="attended")),
        ),
        Mistake(
            "future_position", "a new token attends to a position after its own",
            "When several new tokens arrive at once, your earlier ones look at keys of later ones: they see "
            "the future, which a causal model never does (generating the second token cannot depend on a "
            "third that does not exist yet).",
            ("Causal: a token at position t may attend to positions up to t, and no further.",
             "Look at the new tokens of one step: which keys of that same step may the first one see?",
             "Try the case of three new tokens at once: the first of them sees the 6 cached keys and itself, "
             "7 in all."),
            like(_decoding(future=None), _decoding(future=1)),
        ),
        Mistake(
            "mask_top_left", "the causal rows are aligned at the top left, not the bottom right",
            "Your new tokens see only the first keys of the cache: new token i sees keys 0 … i, as in a "
            "causal mask over a whole sequence. Here the queries are the last tokens: new token i stands at "
            "position past + i and sees keys 0 … past + i (lesson 07's note on the bottom-right alignment).",
            ("The new tokens come after the cached ones: where do their rows start?",
             "With 5 cached tokens, the one new token sees all 6 keys, not just the first.",
             "Try the case of one new token after 5 cached ones: none of its 6 weights may be 0."),
            like(_decoding(top_left=True)),
        ),
        Mistake(
            "no_scale", "the scores are not scaled",
            "Your weights come from the raw scores: lesson 04's scaling is missing, so your weights are "
            "sharper than attention's (with d_k = 8 the scores come out about 2.8 times too large).",
            ("Attention brings the scores back to a typical size of about 1 before the softmax (lesson 04).",
             "The factor depends on d_k, the length of a query.",
             "Try the case with d_k = 8 and compare your largest weight with the expected one: yours is "
             "larger."),
            like(_decoding(scale="none")),
        ),
        Mistake(
            "scaled_by_d_k", "the scores shrink by a factor of d_k, which is too much",
            "Your scores come out d_k times smaller (8 times when d_k = 8), so your weights are flatter than "
            "attention's. The typical size of a score grows more slowly than d_k (lesson 04), so the factor "
            "must grow more slowly too.",
            ("Lesson 04: the variance of a score grows like d_k; its typical size, the standard deviation, "
             "grows more slowly.",
             "Compare your factor for d_k = 9 with attention's: 9 or 3?",
             "Try the case with d_k = 8 and compare your largest weight with the expected one: yours is "
             "smaller."),
            like(_decoding(scale="d")),
        ),
        Mistake(
            "cache_not_updated", "the caches come back without the new tokens",
            "Your output is right, but the caches you return are the old ones: the next step would not find "
            "this step's keys and values, and its tokens would never be seen again.",
            ("The caches you return are what the next step starts from.",
             "Count the rows of the caches you return: cached + new.",
             "Try the case with an empty cache: each cache must come back with 2 rows, not 0."),
            like(_decoding(return_old=True)),
        ),
        Mistake(
            "prepended", "the new keys and values are put before the cached ones",
            "Your caches hold the new tokens first and the older ones after: rows of a cache are kept in "
            "order of position, so the mask and the next steps find each key where its position says.",
            ("A cache keeps its tokens in the order they came.",
             "Look at the first row of the K cache you return: is it the oldest token?",
             "Try the hand-made case: the K cache you return must start with [2, 0]."),
            like(_decoding(prepend=True)),
        ),
    ),
)


def check_decode_step(fn):
    """Check the learner's ``my_decode_step(q, k, v, k_cache, v_cache)``: new tokens through attention with a
    cache. Notebook 12_generation. ``q``, ``k`` ``(n_new, d_k)``, ``v (n_new, d_v)``, ``k_cache (past, d_k)``,
    ``v_cache (past, d_v)``; the answer ``(output, K cache, V cache)`` is compared with
    :func:`lessons_lib.core.decoding.decode_step` on one new token, several at once, and an empty cache.
    Returns a Feedback; never raises."""
    return DECODE_STEP.check(fn)


# =========================================================================== my_repeat_kv
#: A clear refusal of heads that cannot share names the counts involved.
REFUSAL_WORDS = ("n_heads", "n_kv_heads", "divid", "multiple", "group", "share")


def _repeat_answer(kv, n_heads):
    try:
        return decoding.repeat_kv(kv, n_heads)
    except ValueError as exc:
        n_kv = np.shape(kv)[-3]
        if n_heads % n_kv:
            return Refusal(str(exc), REFUSAL_WORDS)
        raise


def _kv_case(rng, label, shape, n_heads, tag=""):
    return Case(label, {"kv": rng.normal(0, 1, shape), "n_heads": n_heads}, tag)


def _repeat_cases() -> list[Case]:
    hand = Case("hand-made: 2 key/value heads (all 1s, all 2s), 3 tokens, d_head = 5, for 6 query heads",
                {"kv": np.stack([np.full((3, 5), 1.0), np.full((3, 5), 2.0)]), "n_heads": 6})
    specs = [
        ("random: 3 key/value heads, 5 tokens, d_head = 2, for 6 query heads", (3, 5, 2), 6),
        ("a batch of 2 in front: 3 key/value heads, 7 tokens, d_head = 5, for 9 query heads", (2, 3, 7, 5),
         9),
        ("multi-query: 1 key/value head, 6 tokens, d_head = 3, for 5 query heads", (1, 6, 3), 5),
        ("multi-head: 3 key/value heads for 3 query heads, 2 tokens, d_head = 5", (3, 2, 5), 3),
    ]
    refusals = [
        ("3 key/value heads cannot be shared by 7 query heads", (3, 5, 2), 7),
        ("6 key/value heads for 3 query heads (more key/value heads than query heads)", (6, 2, 3), 3),
    ]
    rng = np.random.default_rng(13)
    return [hand, *(_kv_case(rng, *spec) for spec in specs),
            *(_kv_case(rng, *spec, tag="refuse") for spec in refusals)]


def _repeat_hidden(rng) -> list[Case]:
    """Unseen cases of the same kinds: new counts of heads, tokens and d_head, a batch in front, and two pairs
    of head counts to refuse."""
    n_kv, group = (int(x) for x in rng.choice([2, 3], size=2))
    seq, d = distinct_sizes(rng, 2, sizes=(5, 6, 7, 8, 9))
    cases = [_kv_case(rng, f"unseen: {n_kv} key/value heads for {n_kv * group} query heads", (n_kv, seq, d),
                      n_kv * group),
             _kv_case(rng, "unseen: a batch in front", (2, n_kv, d, seq), n_kv * (group + 1)),
             _kv_case(rng, "unseen: one key/value head", (1, seq, d), int(rng.choice([3, 5, 7])))]
    odd = int(rng.choice([5, 7]))
    cases.append(_kv_case(rng, f"unseen: {n_kv} key/value heads for {odd} query heads", (n_kv, seq, d), odd,
                          "refuse"))
    cases.append(_kv_case(rng, f"unseen: {odd + 1} key/value heads for {odd - 2} query heads",
                          (odd + 1, 2, d), odd - 2, "refuse"))
    return cases


def _both(candidate):
    """A candidate as written without a check of the head counts, and with one (the mistake is the same)."""
    def refusing(kv, n_heads):
        if n_heads % kv.shape[-3]:
            raise ValueError(f"n_heads = {n_heads} is not a multiple of n_kv_heads = {kv.shape[-3]}")
        return candidate(kv, n_heads)
    return candidate, refusing


def _tiled(kv, n_heads):
    return np.tile(kv, (*[1] * (kv.ndim - 3), n_heads // kv.shape[-3], 1, 1))


def _per_token(kv, n_heads):
    return np.repeat(kv, n_heads // kv.shape[-3], axis=-2)


def _first_axis(kv, n_heads):
    return np.repeat(kv, n_heads // kv.shape[-3], axis=0)


def _flattened(kv, n_heads):
    return np.repeat(kv, n_heads // kv.shape[-3])


def _count_n_kv(kv, n_heads):
    return np.repeat(kv, kv.shape[-3], axis=-3)


def _count_n_heads(kv, n_heads):
    return np.repeat(kv, n_heads, axis=-3)


def _heads_not_refused(o: Outcome) -> bool:
    return isinstance(o.expected, Refusal)


def _refusal_explained(o: Outcome) -> str:
    n_kv, n_heads = o.case.args["kv"].shape[-3], o.case.args["n_heads"]
    if o.error is None:
        did = ("your function returned an array anyway, so some query heads got a key/value head of another "
               "group")
    elif isinstance(o.error, ValueError):
        did = (f"your function stops, but with “{o.error}”: numpy's words, which do not tell the caller that "
               f"the head counts are the problem")
    else:
        did = f"your function raised {type(o.error).__name__} (“{o.error}”) instead of a ValueError"
    return (f"{n_kv} key/value heads cannot be shared evenly by {n_heads} query heads: {n_heads} is not "
            f"a multiple of {n_kv}, so no group size fits, and the right reply is a ValueError that says so "
            f"(the library: “{o.expected.message}”). Instead {did}.")


REPEAT_KV = Exercise(
    name="my_repeat_kv",
    params=("kv", "n_heads"),
    task="gives every query head the key/value head of its group",
    reference=_repeat_answer,
    cases=_repeat_cases,
    hidden=_repeat_hidden,
    library_answers=(decoding.repeat_kv, decoding.kv_head_of, decoding.grouped_query_attention),
    start_hint="Start with the hand-made case: 2 key/value heads (one all 1s, one all 2s) for 6 query heads. "
               "Write down, head by head, which of the two each query head should read; then the shape of "
               "the answer.",
    mistakes=(
        Mistake(
            "tiled", "the heads come in turn, [0, 1, 0, 1], where each group stays together, [0, 0, 1, 1]",
            "Your query heads read the key/value heads in turn, 0, 1, 0, 1, … (the whole set of heads laid "
            "down again and again, as np.tile does). In grouped-query attention the "
            "query heads of a group are neighbours: heads 0 … r − 1 read key/value head 0, the next r read "
            "head 1 (transformers, Llama, torch's enable_gqa; ONNX's first GQA fixed exactly this).",
            ("A group is a run of neighbouring query heads that read the same key/value head.",
             "With 2 key/value heads for 6 query heads, query heads 0, 1 and 2 all read key/value head 0.",
             "Try the hand-made case: the first three heads of your answer must be all 1s."),
            like(*_both(_tiled)),
        ),
        Mistake(
            "tokens_repeated", "the tokens grow in number instead of the heads",
            "Your answer has more tokens (rows of each head) than the input instead of more heads: its token "
            "axis grew (or the array lost its axes) and its head axis did not. The heads sit on the third "
            "axis from the end, (..., heads, tokens, d_head).",
            ("Which axis holds the heads? Read the shape (..., n_kv_heads, seq_len, d_head).",
             "The answer has as many tokens as the input, and more heads.",
             "Try the hand-made case: the answer's shape must be (6, 3, 5)."),
            like(*_both(_per_token), *_both(_flattened)),
        ),
        Mistake(
            "first_axis", "the first axis grows, not the heads' axis",
            "Your answer is right when the key/value heads come first, but with a batch in front it grows "
            "the batch instead. The heads are the third axis from the end, whatever stands before them.",
            ("Count the axes from the end: a batch may stand in front of the heads.",
             "For kv of shape (2, 3, 7, 5) the answer has shape (2, 9, 7, 5).",
             "Try the case with a batch of 2 in front."),
            like(*_both(_first_axis)),
        ),
        Mistake(
            "group_size", "each key/value head serves a group of the wrong size",
            "Each key/value head must serve n_heads / n_kv_heads query heads (the size of its group), so "
            "that the answer has n_heads heads; in yours it appears n_kv_heads or n_heads times.",
            ("The answer has exactly n_heads heads.",
             "With 3 key/value heads for 9 query heads, each appears 3 times.",
             "Try the multi-query case: 1 key/value head for 5 query heads gives 5 heads."),
            like(*_both(_count_n_kv), *_both(_count_n_heads)),
        ),
        Mistake(
            "not_refused", "n_heads not divisible by n_kv_heads is not refused with a clear ValueError",
            _refusal_explained,
            ("Each key/value head serves the same number of query heads: think about 3 of them and 7.",
             "An input your function cannot honour should stop it, with a message that names the problem.",
             "Try 3 key/value heads for 7 query heads: the caller should read that 7 is not a multiple of "
             "3."),
            _heads_not_refused,
        ),
    ),
)


def check_repeat_kv(fn):
    """Check the learner's ``my_repeat_kv(kv, n_heads)``: each key/value head for its group of query heads.
    Notebook 12_generation. ``kv (..., n_kv_heads, seq_len, d_head)``; the answer ``(..., n_heads, seq_len,
    d_head)`` is compared with :func:`lessons_lib.core.decoding.repeat_kv`, and head counts that cannot be
    shared must be refused with a ValueError that says so. Returns a Feedback; never raises."""
    return REPEAT_KV.check(fn)



# =========================================================================== my_rope_step
def _rope_step_answer(q, k, past):
    """The new tokens turned where they stand, at positions past, past + 1, … (as ``cached_attention``)."""
    positions = past + np.arange(np.shape(q)[-2])
    return position.rope(q, positions), position.rope(k, positions)


def _rope_case(rng, label, n_new, past, d_head):
    return Case(label, {"q": rng.normal(0, 1, (n_new, d_head)), "k": rng.normal(0, 1, (n_new, d_head)),
                        "past": past})


def _rope_cases() -> list[Case]:
    hand = Case("hand-made: one new token after 3 cached ones, d_head = 2, q = k = [1, 0]",
                {"q": np.array([[1.0, 0.0]]), "k": np.array([[1.0, 0.0]]), "past": 3})
    specs = [
        ("one new token after 7 cached ones, d_head = 8", 1, 7, 8),
        ("three new tokens at once after 5 cached ones, d_head = 6", 3, 5, 6),
        ("two new tokens and an empty cache (the prompt's first tokens), d_head = 6", 2, 0, 6),
        ("one new token after 40 cached ones, d_head = 10", 1, 40, 10),
    ]
    return [hand, *rng_cases(specs, 21, lambda rng, *spec: _rope_case(rng, *spec))]


def _rope_hidden(rng) -> list[Case]:
    """Unseen cases: one new token, a chunk, both after a cache of a new length; new head sizes."""
    past = int(rng.integers(9, 60))
    d_head = int(rng.choice([6, 8, 10]))
    n_new = int(rng.choice([2, 3]))
    return [_rope_case(rng, f"unseen: 1 new token after {past} cached, d_head = {d_head}", 1, past, d_head),
            _rope_case(rng, f"unseen: {n_new} new tokens after {past + 3} cached, d_head = {d_head}", n_new,
                       past + 3, d_head)]


def _turned(positions_of, *, turn_q=True, turn_k=True):
    """``my_rope_step`` turning at ``positions_of(past, n_new)`` (one of the mistakes below)."""
    def wrong(q, k, past):
        positions = positions_of(past, q.shape[-2])
        return (position.rope(q, positions) if turn_q else q.copy(),
                position.rope(k, positions) if turn_k else k.copy())
    return wrong


def _right_positions(past, n):
    return past + np.arange(n)


_TRY_STEP = ("Try the hand-made case: one new token after 3 cached ones, so it is the fourth token of the "
             "text. With d_head = 2 its pair turns by one radian per position.")

ROPE_STEP = Exercise(
    name="my_rope_step",
    params=("q", "k", "past"),
    task="turns the new tokens' queries and keys at the positions they stand at",
    reference=_rope_step_answer,
    cases=_rope_cases,
    hidden=_rope_hidden,
    library_answers=(decoding.cached_attention, decoding.decode_loop),
    outputs=("q", "k"),
    start_hint="Start with the hand-made case: one new token after three cached ones. Write down the "
               "position it stands at (the first token of a text stands at 0), then how far each pair "
               "turns at that position.",
    mistakes=(
        Mistake(
            "offset_bug", "the new tokens are turned as if they stood at the start of the text",
            lambda o: f"Your new tokens are turned at positions 0, 1, … as if nothing came before them, "
                      f"but {o.case.args['past']} token(s) are in the cache: the first new one stands at "
                      f"position {o.case.args['past']}. This is the offset bug: under a cache every new "
                      f"query then meets the cached keys at a negative distance, as if they came after it, "
                      f"and its own key is kept as if it stood at the start.",
            ("A token's position counts every token before it, the cached ones included.",
             "With 3 tokens in the cache, at which position does the next token stand?",
             _TRY_STEP),
            like(_turned(lambda past, n: np.arange(n))),
        ),
        Mistake(
            "one_too_far", "the new tokens are turned one position too far",
            "Your first new token is turned at position past + 1. Positions count from 0: with past tokens "
            "before it (at 0 … past − 1), the first new token stands at position past.",
            ("Positions start at 0: the first token of a text stands at 0.",
             "With no token in the cache, the first new token stands where?",
             "Try the case with an empty cache: its first new token must come back as it went in."),
            like(_turned(lambda past, n: past + 1 + np.arange(n))),
        ),
        Mistake(
            "one_position_for_all", "every new token of a step is turned at the same position",
            "When several new tokens arrive at once, yours are all turned at one position. Each stands one "
            "place after the one before it: a prompt of three tokens read at once stands at past, past + 1 "
            "and past + 2.",
            ("Several new tokens at once are still several positions.",
             "The second new token stands one place after the first.",
             "Try the case of three new tokens at once after 5 cached ones."),
            like(_turned(lambda past, n: np.full(n, past)),
                 _turned(lambda past, n: np.full(n, past + n - 1))),
        ),
        Mistake(
            "key_not_turned", "only the queries are turned",
            "Your queries are turned but the keys come back as they went in. Both are turned, each at its "
            "own position, so that a query and a key meet at the angle of their distance; a key kept "
            "unturned in the cache would meet every later query at the wrong angle.",
            ("Both vectors that meet in a dot product are turned.",
             "Compare the keys you return with the keys you were given.",
             _TRY_STEP),
            like(_turned(_right_positions, turn_k=False)),
        ),
        Mistake(
            "query_not_turned", "only the keys are turned",
            "Your keys are turned but the queries come back as they went in. Both are turned, each at its "
            "own position: the dot product then depends only on their distance.",
            ("Both vectors that meet in a dot product are turned.",
             "Compare the queries you return with the queries you were given.",
             _TRY_STEP),
            like(_turned(_right_positions, turn_q=False)),
        ),
    ),
)


def check_rope_step(fn):
    """Check the learner's ``my_rope_step(q, k, past)``: the new tokens' queries and keys ``(n_new, d_head)``
    turned by RoPE at positions past, past + 1, … (notebook 12_generation). Compared with
    :func:`lessons_lib.core.position.rope` at those positions; names the offset bug (positions from 0) and
    its neighbours. Returns a Feedback; never raises."""
    return ROPE_STEP.check(fn)
