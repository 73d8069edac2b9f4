"""Small, deterministic data for the lessons: sentences, tokens, embeddings, Q/K/V.

Nothing is downloaded: every vector is made here from a seed, so a notebook
gives the same numbers on every machine and every run.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from .._checks import check_float_dtype, check_memory, check_positive_int, check_real, check_seed
from ..core.position import sinusoidal_positions

__all__ = ["SENTENCES", "tokenize", "tokens_of_length", "embed_tokens", "positional_encoding",
           "projection_weights", "random_qkv", "coreference_example", "COREFERENCE_FEATURES"]


def _check_size(n_numbers: float, itemsize: int, what: str) -> None:
    check_memory(float(n_numbers) * itemsize, what, "Use fewer tokens or smaller dimensions.")


SENTENCES = {
    "cat": "The cat sat on the mat.",
    "tired": "The animal didn't cross the street because it was too tired.",
    "wide": "The animal didn't cross the street because it was too wide.",
    "ai": "The AI Rishi is",
}

# A made-up text for the sequence-length sliders (any n ≤ 512 tokens).
_LONG_TEXT = (
    "The cat sat on the mat. The animal didn't cross the street because it was too tired. "
    "Later the street was quiet, so the cat walked to the park and sat under a tree. "
    "A dog watched the cat, but it was too sleepy to move. The children laughed, because "
    "the dog yawned as the sun went down behind the old houses. Every word in this story "
    "can look back at the words before it, and attention decides which of them matter. "
    "When the night came, the cat went home, the dog went to sleep, and the street "
    "was empty again, wide and silent under the moon."
)

_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|[0-9]+|[^\sA-Za-z0-9]")


def tokenize(sentence: str) -> list[str]:
    """Split ``sentence`` into words and punctuation marks.

    >>> tokenize("The cat sat on the mat.")
    ['The', 'cat', 'sat', 'on', 'the', 'mat', '.']
    """
    if not isinstance(sentence, str):
        raise TypeError(f"tokenize needs a string; got {type(sentence).__name__}.")
    tokens = _TOKEN.findall(sentence)
    if not tokens:
        raise ValueError(f"{sentence!r} has no words to tokenize.")
    return tokens


_LONG_TOKENS = tokenize(_LONG_TEXT)


def tokens_of_length(n: int) -> list[str]:
    """The first ``n`` tokens (1 ≤ n ≤ 512) of a made-up story, for sequence-length sliders."""
    n = check_positive_int(n, "n")
    if n > 512:
        raise ValueError(f"tokens_of_length goes up to 512 tokens; got n={n}.")
    reps = -(-n // len(_LONG_TOKENS))
    return (_LONG_TOKENS * reps)[:n]


def embed_tokens(tokens, d_model: int = 8, seed: int = 0, position_scale: float = 0.1) -> np.ndarray:
    """A ``(len(tokens), d_model)`` float64 embedding matrix X, one row per token.

    Each word (case-insensitive) gets a fixed random vector for a given seed, so
    "the" and "The" share a row; a small sinusoidal position signal
    (``position_scale``) makes repeated words at different places differ
    slightly, as positional encodings do in a transformer.
    """
    if isinstance(tokens, str):
        raise TypeError("embed_tokens needs a list of tokens; use tokenize(sentence) first.")
    tokens = list(tokens)
    if not tokens:
        raise ValueError("embed_tokens needs at least one token.")
    d_model = check_positive_int(d_model, "d_model")
    seed = check_seed(seed, allow_generator=False)
    position_scale = check_real(position_scale, "position_scale")
    _check_size(3.0 * len(tokens) * d_model, 8,
                f"embed_tokens of {len(tokens)} tokens with d_model={d_model}")
    rows = [
        np.random.default_rng([seed, zlib.crc32(str(t).lower().encode())]).standard_normal(d_model)
        for t in tokens
    ]
    return np.stack(rows) + position_scale * positional_encoding(len(tokens), d_model)


def positional_encoding(seq_len: int, d_model: int) -> np.ndarray:
    """Sinusoidal positions (Vaswani et al. §3.5): :func:`~lessons_lib.core.position.sinusoidal_positions`."""
    return sinusoidal_positions(seq_len, d_model)


def projection_weights(d_model: int, d_k: int, seed: int = 0, d_v: int | None = None):
    """Random (untrained) W_Q, W_K ``(d_model, d_k)`` and W_V ``(d_model, d_v)``, scaled by 1/√d_model.

    The scaling keeps the entries of Q, K, V near unit variance when X has
    unit-variance entries.
    """
    d_model = check_positive_int(d_model, "d_model")
    d_k = check_positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else check_positive_int(d_v, "d_v")
    _check_size(float(d_model) * (2 * d_k + d_v), 8, f"projection_weights({d_model}, {d_k})")
    rng = np.random.default_rng(check_seed(seed))
    s = 1.0 / np.sqrt(d_model)
    return (rng.standard_normal((d_model, d_k)) * s, rng.standard_normal((d_model, d_k)) * s,
            rng.standard_normal((d_model, d_v)) * s)


def random_qkv(seq_len: int, d_k: int, seed: int = 0, d_v: int | None = None, dtype=np.float64):
    """Q, K ``(seq_len, d_k)`` and V ``(seq_len, d_v)`` with independent standard-normal entries."""
    seq_len = check_positive_int(seq_len, "seq_len")
    d_k = check_positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else check_positive_int(d_v, "d_v")
    dtype = check_float_dtype(dtype)
    _check_size(float(seq_len) * (2 * d_k + d_v), 8 + dtype.itemsize, f"random_qkv({seq_len}, {d_k})")
    rng = np.random.default_rng(check_seed(seed))
    return tuple(rng.standard_normal(shape).astype(dtype) for shape in
                 ((seq_len, d_k), (seq_len, d_k), (seq_len, d_v)))


# ---------------------------------------------------------------- the "it" example
COREFERENCE_FEATURES = ("living thing", "place", "can be tired", "can be wide")

# What each word offers (its key) and carries (its value), on the four features.
_KEYS = {
    "animal": (1.0, 0.0, 1.0, 0.0),
    "street": (0.0, 1.0, 0.0, 1.0),
    "tired": (0.3, 0.0, 0.3, 0.0),
    "wide": (0.0, 0.3, 0.0, 0.3),
}


def coreference_example(which: str = "tired", strength: float = 3.0) -> dict:
    """Hand-built Q, K, V for "The animal didn't cross the street because it was too tired/wide."

    Features are readable (``COREFERENCE_FEATURES``). The query of "it" asks
    for something that *can be tired* (or *wide*): as if an earlier layer had
    already mixed the adjective into "it". Keys say what each word offers;
    values carry the same features, so the output row of "it" shows what it
    gathered. Other words ask for nothing in particular (a zero query), which
    spreads their attention evenly. Notebook 01.
    """
    if which not in ("tired", "wide"):
        raise ValueError(f'which must be "tired" or "wide"; got {which!r}.')
    strength = check_real(strength, "strength")
    tokens = tokenize(SENTENCES[which])
    d = len(COREFERENCE_FEATURES)
    k = np.array([_KEYS.get(t.lower(), (0.0,) * d) for t in tokens])
    q = np.zeros((len(tokens), d))
    wanted = COREFERENCE_FEATURES.index("can be tired" if which == "tired" else "can be wide")
    q[tokens.index("it"), wanted] = strength
    return {"tokens": tokens, "q": q, "k": k, "v": k.copy(), "feature_names": COREFERENCE_FEATURES}
