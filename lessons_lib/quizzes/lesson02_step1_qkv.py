"""The quiz of lesson 02: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

# The seed's "Check Your Understanding" Q1: asked here, and again in the review of lesson 10.
SEED_Q1 = ask(
    "Why does every token get three separate projections (a query, a key and a value) instead of one "
    "projection used three times?",
    ("Three is an arbitrary number from the original paper; two or four would work just as well.", W,
     "The number follows from the jobs to do: matching needs two sides (the query and the key), and "
     "a third vector (the value) carries the content."),
    ("Q and K measure relevance; V is what gets averaged into the output: two different jobs.", R,
     "Right. What makes two tokens relevant to each other is not necessarily the information worth "
     "passing along, so matching (Q, K) and content (V) each get their own learned matrix."),
    ("To make the model three times larger.", W,
     "The extra parameters are a side effect, not the purpose. The separate matrices earn their "
     "place because matching and carrying content are different jobs."),
    ("Only for speed: one shared projection for Q and K would score every pair exactly the same.", W,
     "With Q = K the score matrix would be symmetric (q_i·q_j = q_j·q_i): 'it' would find 'animal' "
     "exactly as relevant as 'animal' finds 'it', and each token would tend to match itself best. "
     "Separate W_Q and W_K allow relevance in one direction only."),
    source="seed 000, Check Your Understanding Q1",
)

QUESTIONS = (
    SEED_Q1,
    ask("X holds 6 tokens with d_model = 8, so X is (6, 8), and W_Q is (8, 4). What is the shape of "
       "Q = X·W_Q?",
       ("(8, 4)", W,
        "That is W_Q itself. A product keeps the rows of its left factor (the tokens) and the columns "
        "of its right factor."),
       ("(6, 8)", W,
        "That is X. Multiplying by W_Q changes each token's width from d_model = 8 to d_k = 4."),
       ("(4, 6)", W,
        "That would be Qᵀ. The rows stay tokens."),
       ("(6, 4)", R,
        "Yes: (6, 8)·(8, 4) gives (6, 4), one 4-number query per token; the inner 8s meet in the dot "
        "products."),
       source="seed 000, step 1"),
    ask("Does each token have its own W_Q?",
       ("No: one W_Q serves every token; their queries differ because their rows of X differ.", R,
        "Right: X·W_Q applies the same matrix to each row of X, so the same three matrices (W_Q, W_K, "
        "W_V) serve a sequence of any length."),
       ("Yes: every position in the sentence has its own W_Q.", W,
        "Then a sentence longer than any seen in training would have no matrices for its last tokens. "
        "Sharing one W_Q is what lets attention handle any length."),
       ("Yes: every word of the vocabulary has its own W_Q, looked up like the word's embedding.", W,
        "Which word a token is enters through its embedding (its row of X), not through the projection "
        "matrices."),
       source="seed 000, step 1"),
)
