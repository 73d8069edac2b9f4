"""The quiz of lesson 08: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

# The seed's "Check Your Understanding" Q3: asked here, and again in the review of lesson 10.
SEED_Q3 = ask(
    "A startup claims its new architecture \"replaces attention with a more efficient mechanism\". "
    "Which question gets at the mathematics behind the claim?",
    ("How many stars does its GitHub repository have, and how many companies already use it in "
     "production?", W,
     "Popularity says nothing about how the mechanism works or how its cost grows."),
    ("Is it faster than a GPU, and does it need less memory than a GPU has to offer?", W,
     "That compares an algorithm with a piece of hardware; the new mechanism could run on a GPU "
     "just as well."),
    ("How do tokens exchange information, and how does its cost grow with the sequence length?", R,
     "Right. Attention compares every pair of tokens (pairwise dot products), so its cost grows with "
     "the square of the length: in notebook 08 you measured it, time and memory of the plain formula "
     "rising with a slope of about 2 on a log-log plot (twice the tokens, about four times the cost). An "
     "efficiency claim is a claim about that slope, and how tokens interact (dot products, convolutions, "
     "a recurrence, …) tells you what the new mechanism may give up in return (a recurrence, for "
     "example, must squeeze the past into a fixed-size state). FlashAttention, by contrast, keeps the "
     "slope of the time and lowers the memory: same result, different bookkeeping."),
    ("Is it written in Python or in a compiled language, and does it run on a laptop?", W,
     "The programming language changes constant factors at most, not how the cost grows with the "
     "length of the input."),
    source="seed 000, Check Your Understanding Q3",
)
# Asked here, and again in the review of lesson 10.
SCORE_GROWTH = ask(
    "From a 1,000-token prompt to a 100,000-token prompt, by what factor does the number of "
    "query-key scores (per head and layer) grow?",
    ("10,000", R,
     "Yes: (100,000)² / (1,000)² = 10,000, from 1 million scores to 10 billion."),
    ("100", W,
     "That is how much the sequence grew. Scores count pairs of tokens, N × N, so the factor is "
     "squared."),
    ("1,000", W,
     "Scores count pairs (N × N): the factor is 100², not 100 × 10."),
    ("1: only memory grows, not the number of scores.", W,
     "Every query is compared with every key, so the number of scores grows with the square of N, "
     "and the memory to hold them with it."),
    source="seed 004, quadratic cost",
)
QUESTIONS = (
    SEED_Q3,
    SCORE_GROWTH,
    ask("Naive attention and FlashAttention give the same output. What does FlashAttention change?",
       ("It computes fewer scores: N·log N instead of N².", W,
        "Every query is still compared with every key: the same N² scores and the same 4·N²·d "
        "operations of the two matrix products. What changes is where the scores live."),
       ("It approximates the softmax, trading a little accuracy for a lot of speed.", W,
        "It is exact: the rescaling by exp(m − m') makes the result equal to the naive one up to "
        "rounding (≤ 1e-12 in float64, as the lesson checks)."),
       ("It skips the keys far from each query, which would only get small weights.", W,
        "That is a sliding-window mask, which changes the result. FlashAttention computes full "
        "attention; with a causal mask it skips only tiles whose weights would be 0 anyway."),
       ("It never stores the N × N matrix: its memory grows like N.", R,
        "Right. It works tile by tile with a running maximum and sum; the arithmetic is the same N², "
        "but the scores of one tile live only in fast memory and are gone before the next tile, so "
        "nothing of size N × N is ever written (and on a GPU, fewer trips to slow memory make it "
        "faster)."),
       source="seed 004, quadratic cost and FlashAttention"),
    ask("A new tile raises row i's running maximum from m = 2 to m' = 5. What happens to its running "
       "sum ℓ = Σ exp(s_j − m) before the tile's own terms are added?",
       ("It is multiplied by exp(5 − 2) = exp(3) ≈ 20, to catch up with the larger maximum.", W,
        "That factor is upside down: it makes the old terms grow although they are now measured "
        "against a larger maximum. The factor is exp(m − m'), which is never more than 1."),
       ("It is multiplied by exp(2 − 5) ≈ 0.05.", R,
        "Right. Each old term exp(s_j − 2) must become exp(s_j − 5) = exp(s_j − 2) · exp(2 − 5): "
        "measured against a larger maximum, the old terms shrink."),
       ("Nothing: the old sum is kept as it is, and the tile's terms are simply added.", W,
        "The old terms were computed against m = 2; kept as they are they count exp(3) ≈ 20 times "
        "too much next to the new terms computed against 5."),
       ("It is set back to 0, and the earlier tiles are read again against the new maximum.", W,
        "That would be a second pass over the keys, the very thing the online softmax avoids: "
        "one multiplication fixes all the old terms at once."),
       source="online softmax (Milakov & Gimelshein 2018), FlashAttention (Dao et al. 2022)"),
)
