"""The quiz of lesson 10: its questions as data (see :mod:`lessons_lib.quizzes.model`).

It asks the seed's three "Check Your Understanding" questions in order, each imported from the lesson
that asks it first (a question is written once: a quiz includes another lesson's question by importing
its name), then a review of the course.
"""

from __future__ import annotations

from .lesson02_step1_qkv import SEED_Q1
from .lesson05_step4_weighted_values import SEED_Q2
from .lesson08_cost_and_flashattention import SCORE_GROWTH, SEED_Q3
from .model import R, W, ask

QUESTIONS = (
    SEED_Q1,
    SEED_Q2,
    SEED_Q3,
    SCORE_GROWTH,
    ask("The paper uses d_model = 512 and h = 8 heads. How many numbers long is each head's query "
       "vector (its d_k)?",
       ("512: every head sees the whole model width.", W,
        "Each head gets its own slice: d_k = d_model / h. With all 512 per head, the 8 heads together "
        "would cost 8 times one full-width attention."),
       ("64 = 512 / 8.", R,
        "Yes: d_k = d_v = d_model / h = 64, so the 8 heads together cost about as much as one head of "
        "width 512 (notebook 06), and the scores are divided by √64 = 8."),
       ("8, one number per head.", W,
        "8 is the number of heads, not the length of a head's vectors."),
       ("4,096 = 512 × 8.", W,
        "The heads split the width between them; they do not multiply it."),
       source="Vaswani et al. §3.2.2; notebook 06"),
    ask("Causal masking sets the scores of future tokens to −∞ before the softmax. Why before and not "
       "after?",
       ("It makes no difference: zeroing the weights afterwards would work just as well.", W,
        "Zeroing after the softmax leaves rows that no longer sum to 1: the weight the future had is "
        "simply lost instead of shared among the allowed tokens."),
       ("−∞ makes the computation faster, since the masked scores need no exponential.", W,
        "It costs the same: the mask is about what may be seen, not about speed."),
       ("exp(−∞) = 0, so the allowed tokens share the whole 1.", R,
        "Right: the future gets weight exactly 0. Zeroing weights after the softmax would leave each row "
        "summing to less than 1; masking the scores first keeps every row a probability distribution "
        "over the past (notebook 07)."),
       ("So that the model can still peek at the future.", W,
        "exp(−∞) is exactly 0: no weight at all reaches a future token, which the leak experiment of "
        "notebook 07 checks."),
       source="seed 000 and 004, causal masking; notebook 07"),
    ask("FlashAttention computes attention tile by tile with an online softmax. How does its output "
       "compare with the plain formula's?",
       ("The same numbers, up to rounding, without ever holding the whole N × N matrix of scores.", R,
        "Yes: it is exact, not an approximation; its memory grows with N, its time still with N². It "
        "changes the bookkeeping (running maxima and sums per row), not the mathematics (notebook 08)."),
       ("An approximation: it drops the smallest weights to save both time and memory.", W,
        "Nothing is dropped: the online softmax rescales what it has summed so far whenever a larger "
        "score appears, so the result equals softmax(Q·Kᵀ/√d_k)·V."),
       ("The same numbers, in a time that grows only linearly with the length N.", W,
        "Every query still meets every key, so the work stays quadratic; what shrinks is the memory."),
       ("Different numbers, because each tile takes a softmax of its own scores only.", W,
        "The tiles' partial results are merged with the running maximum and sum of each row, which "
        "gives exactly the softmax over the whole row."),
       source="seed 004, FlashAttention; notebook 08"),
    ask("In notebook 09 a trained head sends 100% of the attention of “it” to the first token <s>. What "
       "may you conclude from that weight alone?",
       ("That <s> is the most important token for understanding what “it” means.", W,
        "A weight says where the head looks, not how much that matters: <s> carries almost nothing "
        "(its value is small), and the referent head answers from other words."),
       ("That the model is broken.", W,
        "The same model resolves “it” on held-out sentences nearly every time; sinks are common in "
        "large trained models too."),
       ("That <s> is the referent of “it” in this sentence, since the head points there.", W,
        "<s> is not a word of the sentence; the referent head, which gives the answer, points at a "
        "noun."),
       ("Little: rows must sum to 1, so an idle head parks its weight somewhere.", R,
        "Right: high weight is not importance. A head with nothing to fetch parks its weight somewhere "
        "harmless; to judge importance, change something and measure (switch the head off, compare "
        "accuracies). Notebook 09 shows the sink forming, its value shrinking, and the weight going to "
        "“nothing” instead once the head is given an off slot."),
       source="seed 004, common misconceptions; notebook 09"),
)
