"""The quiz of lesson 06: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("d_model = 512 is split into 8 heads. Compared with one head of width 512, how many parameters "
       "do W_Q, W_K, W_V and W_O have together?",
       ("8 times as many: each head needs its own projections.", W,
        "Each head's projections are only d_head = 64 columns wide: the 8 heads' W_Q^i, side by side, "
        "are exactly one 512 × 512 W_Q. More heads means narrower heads, not more weights."),
       ("The same, 4 · 512² ≈ 1.05 million: the heads share out the columns of the same matrices.", R,
        "Right. Head i owns columns i·64 … i·64 + 63 of W_Q, W_K and W_V; the matrix products cost "
        "the same too. Only the softmax work and the number of attention weights grow with the heads "
        "(8 · L² instead of L²)."),
       ("One eighth: each head sees only 64 of the 512 features.", W,
        "Each head reads all 512 input features (its W_Q^i is 512 × 64); it is the output of each "
        "head that is narrower."),
       ("It depends on the sequence length.", W,
        "Weights are per feature, not per token: the same W_Q serves a sequence of any length."),
       source="seed 000 and 004, multi-head attention"),
    ask("Q has shape (L, d_model). Why does splitting it into heads need a transpose after "
       "Q.reshape(L, n_heads, d_head)?",
       ("To bring the head axis to the front, (n_heads, L, d_head), so each head is an ordinary "
        "(L, d_head) matrix and all heads attend in one batched product.", R,
        "Yes. The reshape only groups each token's columns by head (no number moves); the transpose "
        "makes 'head' the batch axis, and merging undoes both steps in reverse order."),
       ("Because reshape changes the numbers and the transpose puts them back.", W,
        "A reshape never changes or moves a number in memory; it only reads the same numbers with "
        "new axis boundaries."),
       ("It is not needed: Q.reshape(n_heads, L, d_head) gives the same result.", W,
        "Same shape, wrong numbers: that reshape makes its first 'head' out of whole rows of the "
        "first tokens, instead of the first d_head columns of every token."),
       ("To transpose K for Q·Kᵀ.", W,
        "Kᵀ is a separate, later step (swap the last two axes of K); this transpose swaps tokens "
        "and heads."),
       source="seed 000, MultiHead = Concat(head_1 … head_h)·W_O"),
    ask("Why do transformers use several heads instead of one head of the same total width?",
       ("Several heads are cheaper to compute.", W,
        "The matrix products cost the same, and the softmax work grows with the number of heads: "
        "heads are not a saving."),
       ("Each head has its own softmax, so each can put its weight somewhere else: one on the "
        "previous token, one on the subject, one spread out, at the same time.", R,
        "Right. One softmax row is one distribution over the keys; a single head has to compromise "
        "between the places it wants to look. h heads give each token h distributions, concatenated "
        "and mixed by W_O."),
       ("Each head reads a different part of the sentence.", W,
        "Every head sees every token (subject to the mask); heads differ in what they look for, "
        "not in which tokens they may see."),
       ("With one head, the weights of a row would not sum to 1.", W,
        "Every head's rows sum to 1, whatever the number of heads: each has its own softmax."),
       source="seed 000 and 004, heads that attend to different things"),
)
