"""The quiz of lesson 06: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("d_model = 512 is split into 8 heads. Compared with one head of width 512, how many parameters "
       "do W_Q, W_K, W_V and W_O have together?",
       ("The same, 4 · 512².", R,
        "Right, about 1.05 million: head i owns columns i·64 … i·64 + 63 of W_Q, W_K and W_V, so the "
        "heads share out the columns of the same matrices, and the matrix products cost the same too. "
        "Only the softmax work and the number of attention weights grow with the heads (8 · L² instead "
        "of L²)."),
       ("8 times as many, since each of the 8 heads needs its own four projections.", W,
        "Each head's projections are only d_head = 64 columns wide: the 8 heads' W_Q^i, side by side, "
        "are exactly one 512 × 512 W_Q. More heads means narrower heads, not more weights."),
       ("One eighth as many, since each head sees only 64 of the 512 features.", W,
        "Each head reads all 512 input features (its W_Q^i is 512 × 64); it is the output of each "
        "head that is narrower."),
       ("It depends on the sequence length, since a longer input needs wider heads.", W,
        "Weights are per feature, not per token: the same W_Q serves a sequence of any length."),
       source="seed 000 and 004, multi-head attention"),
    ask("Q has shape (L, d_model). Why does splitting it into heads need a transpose after "
       "Q.reshape(L, n_heads, d_head)?",
       ("Because the reshape scrambles the numbers, and the transpose puts them back in order.", W,
        "A reshape never changes or moves a number in memory; it only reads the same numbers with "
        "new axis boundaries."),
       ("It is not needed: Q.reshape(n_heads, L, d_head) gives the same array directly.", W,
        "Same shape, wrong numbers: that reshape makes its first 'head' out of whole rows of the "
        "first tokens, instead of the first d_head columns of every token."),
       ("To bring the head axis to the front, so that each head is an ordinary (L, d_head) matrix.", R,
        "Yes. The reshape only groups each token's columns by head (no number moves); the transpose "
        "makes 'head' the batch axis, so all heads attend in one batched product, and merging undoes "
        "both steps in reverse order."),
       ("To transpose the keys for Q·Kᵀ, which every head needs before it computes scores.", W,
        "Kᵀ is a separate, later step (swap the last two axes of K); this transpose swaps tokens "
        "and heads."),
       source="seed 000, MultiHead = Concat(head_1 … head_h)·W_O"),
    ask("Why do transformers use several heads instead of one head of the same total width?",
       ("Several narrow heads are cheaper to compute than one head of the same total width.", W,
        "The matrix products cost the same, and the softmax work grows with the number of heads: "
        "heads are not a saving."),
       ("Each head reads its own part of the sentence, so a long text is shared out among them.", W,
        "Every head sees every token (subject to the mask); heads differ in what they look for, "
        "not in which tokens they may see."),
       ("With one head, a row of weights would not add up to 1.", W,
        "Every head's rows sum to 1, whatever the number of heads: each has its own softmax."),
       ("Each head has its own softmax, so each can look somewhere else.", R,
        "Right: one on the previous token, one on the subject, one spread out, at the same time. One "
        "softmax row is one distribution over the keys, so a single head has to compromise between the "
        "places it wants to look; h heads give each token h distributions, concatenated and mixed by "
        "W_O."),
       source="seed 000 and 004, heads that attend to different things"),
)
