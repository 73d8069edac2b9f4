"""The quiz of lesson 05: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

# The seed's "Check Your Understanding" Q2: asked here, and again in the review of lesson 10.
SEED_Q2 = ask(
    "The weights of token i add up to 1 over all tokens j. What does that guarantee about token i's "
    "output?",
    ("Token i spreads its attention equally over all tokens, since the shares must come to 1.", W,
     "Adding up to 1 says nothing about equal shares: 0.9 + 0.05 + 0.05 adds up to 1 too. Equal "
     "weights occur only when all the scores in the row are equal."),
    ("Token i can attend to only one token at a time.", W,
     "Any number of weights may be non-zero; they only have to share a total of 1."),
    ("Token i's output equals its input, since the weights only pass its own vector through.", W,
     "The output mixes the value vectors of many tokens. It equals token i's own value vector only "
     "if all the weight sits on token i."),
    ("It is a weighted average (a convex combination) of the values: it stays in their range.", R,
     "Right. Non-negative weights that add up to 1 cannot overshoot: each coordinate of the output lies "
     "between the smallest and the largest value of that coordinate among the v_j, on their scale, "
     "however long the sequence."),
    source="seed 000, Check Your Understanding Q2",
)

QUESTIONS = (
    SEED_Q2,
    ask("weights is (4, 6) and V is (6, 3). What is the shape of weights·V, and what is its row 2?",
       ("(6, 3); row 2 is the value vector of token 2, v_2, as it was.", W,
        "The output has one row per query (4 of them), and each row mixes all the value vectors."),
       ("(4, 3); row 2 mixes all the v_j with the weights of query 2.", R,
        "Yes: (4, 6)·(6, 3) gives (4, 3), and row 2 is Σ_j weights[2, j] · v_j, a weighted sum of the "
        "rows of V."),
       ("(4, 6); row 2 is the row of weights of query 2, unchanged.", W,
        "That is the shape of the weights. Multiplying by V replaces each weight row by a mixture of "
        "value vectors, d_v = 3 numbers long."),
       source="seed 000, step 4; seed 004, step 4"),
    ask("In row i, all of the weight (1.0) sits on token j. What is output i?",
       ("The average of all the value vectors, since the weights still add up to 1.", W,
        "That is the result of uniform weights, where every token gets the same share."),
       ("k_j, the key of token j, since that key matched the query best.", W,
        "Keys never reach the output; they only shape the weights. The output is made of values."),
       ("Exactly v_j.", R,
        "Right: Σ weights[i, j'] · v_j' keeps only the term with weight 1, the value vector of token j."),
       ("A vector of zeros, since all the other tokens get no weight.", W,
        "Zeros would need all weights to be 0; here one weight is 1."),
       source="seed 000, step 4"),
)
