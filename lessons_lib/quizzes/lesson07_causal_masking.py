"""The quiz of lesson 07: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("Why is the causal mask added to the scores as −∞ before the softmax, rather than by zeroing "
       "the weights after it?",
       ("Both give the same weights; −∞ is only a convention.", W,
        "Zeroing afterwards leaves rows that sum to less than 1, and the future scores have already "
        "taken their share of each row's total: the past weights still depend on the future."),
       ("exp(−∞) = 0, so the masked keys get exactly 0 weight and the softmax shares the whole 1 among "
        "the allowed keys only: nothing of the future enters the row, not even through the sum.", R,
        "Yes. The leak experiment shows it: with −∞ before the softmax, changing a future token moves "
        "earlier outputs by exactly 0.0."),
       ("−∞ makes the computation faster.", W,
        "A dense implementation computes every score anyway; the mask is about correctness (fused "
        "kernels may skip masked blocks, but that is an optimisation of the same result)."),
       ("Softmax cannot take zeros as input.", W,
        "Softmax takes any finite number; a score of 0 gets weight exp(0) = 1 before normalising, "
        "which is exactly why 0 is not a mask."),
       source="seed 000 and 004, causal masking"),
    ask("You pass torch.triu(torch.ones(L, L), diagonal=1).bool(), nn.MultiheadAttention's causal mask, "
       "as attn_mask to torch's scaled_dot_product_attention. What happens?",
       ("The same causal attention: both functions read True as masked.", W,
        "SDPA's boolean mask means the opposite: True = may attend. The two conventions differ, which "
        "is the trap."),
       ("An error: SDPA only accepts float masks.", W,
        "SDPA accepts boolean masks (True = may attend) and float masks (added to the scores)."),
       ("Each token attends only to later tokens, and the last token may attend to nothing (its "
        "output is 0): the mask is inverted, because SDPA reads True as may attend.", R,
        "Right. Invert it (~mask) or build it with tril. A check such as "
        "ll.causal_mask_mistake(mask) names this mistake before it ships."),
       ("torch detects the mix-up and inverts the mask for you.", W,
        "Nothing can tell a deliberate mask from an inverted one; the library does what the "
        "convention says."),
       source="the convention trap"),
    ask("A sequence of 3 real tokens is padded to 5 in a batch, and the model is causal. Which keys may "
       "query 2 (the third real token) attend to?",
       ("Keys 0, 1, 2: itself and the tokens before it; the padding keys 3 and 4 are hidden anyway.", R,
        "Yes: causal allows keys 0…2, padding hides keys 3 and 4; the mask is their AND, True only "
        "where both allow."),
       ("Keys 0 to 4: padding is only about which outputs are used.", W,
        "Padding keys must be hidden from the real tokens, or their made-up vectors would leak into "
        "the real outputs."),
       ("Keys 3 and 4 only.", W,
        "That is the inverted mask: it hides what should be seen and shows the future and the "
        "padding."),
       ("Only key 2, itself.", W,
        "A causal mask allows every earlier token too; only a window of size 1 would leave only "
        "itself."),
       source="mask gallery: causal + padding"),
)
