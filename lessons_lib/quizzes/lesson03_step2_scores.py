"""The quiz of lesson 03: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("In the score matrix Q·Kᵀ, what is entry (i, j)?",
       ("The dot product k_i · q_j, of token i's key with token j's query.", W,
        "That is entry (j, i), from the transposed matrix K·Qᵀ. In Q·Kᵀ the row index belongs to the "
        "query."),
       ("The probability that token i attends to token j, between 0 and 1.", W,
        "Not yet: raw scores can be any real number, negative ones included. They become probabilities "
        "only after scaling and softmax (step 3)."),
       ("The dot product q_i · k_j.", R,
        "Yes: row i belongs to query i, column j to key j, and the entry is their dot product, large "
        "when the two vectors point the same way: how well token j's key matches token i's query."),
       ("The dot product of the embeddings of tokens i and j, before any projection.", W,
        "The scores compare the projected vectors (queries and keys), not the raw embeddings; W_Q and "
        "W_K decide which aspects of the tokens get compared."),
       source="seed 000, step 2"),
    ask("Q holds 5 queries and K holds 7 keys, both with d_k = 16. What is the shape of Q·Kᵀ?",
       ("(16, 16)", W,
        "d_k is summed over inside each dot product, so it does not appear in the shape of the scores."),
       ("(5, 7)", R,
        "Right: (5, 16)·(16, 7) gives (5, 7), one score for every (query, key) pair."),
       ("(7, 5)", W,
        "That is K·Qᵀ, the transposed matrix. In Q·Kᵀ rows are queries and columns are keys."),
       ("(5, 16)", W,
        "That is the shape of Q. The scores have one column per key."),
       source="seed 000, step 2"),
    ask("Why does the formula use Kᵀ rather than K?",
       ("So that the inner sizes meet: (L, d_k) times (d_k, S) pairs every query with every key.", R,
        "Yes: in Q·Kᵀ, entry (i, j) is row i of Q times column j of Kᵀ, which is key j."),
       ("Transposing normalises each key to length 1, so the scores stay comparable.", W,
        "A transpose only rearranges entries into a different layout; no value changes."),
       ("It makes the score matrix symmetric, so relevance is the same both ways.", W,
        "Q·Kᵀ is symmetric only in special cases (such as Q = K). In general, how relevant j is to i "
        "differs from how relevant i is to j."),
       source="seed 000, step 2; seed 004, step 1"),
)
