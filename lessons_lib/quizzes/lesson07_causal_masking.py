"""The quiz of lesson 07: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("Why is the causal mask added to the scores as −∞ before the softmax, rather than by zeroing "
       "the weights after it?",
       ("Both give the same weights: −∞ is only the convention most libraries chose.", W,
        "Zeroing afterwards leaves rows that sum to less than 1, and the future scores have already "
        "taken their share of each row's total: the past weights still depend on the future."),
       ("exp(−∞) = 0, so the row's 1 is shared among the allowed keys only.", R,
        "Yes. The masked keys get exactly 0 weight and nothing of the future enters the row, not even "
        "through the sum. The leak experiment shows it: with −∞ before the softmax, changing a future "
        "token moves earlier outputs by exactly 0.0."),
       ("−∞ makes the computation faster, since a kernel can then skip every masked score.", W,
        "A dense implementation computes every score anyway; the mask is about correctness (fused "
        "kernels may skip masked blocks, but that is an optimisation of the same result)."),
       ("Softmax cannot take 0 as an input.", W,
        "Softmax takes any finite number; a score of 0 gets weight exp(0) = 1 before normalising, "
        "which is exactly why 0 is not a mask."),
       source="seed 000 and 004, causal masking"),
    ask("You pass torch.triu(torch.ones(L, L), diagonal=1).bool(), nn.MultiheadAttention's causal mask, "
       "as attn_mask to torch's scaled_dot_product_attention. What happens?",
       ("The mask is read inverted: each token sees only later tokens.", R,
        "Right: SDPA reads True as may attend, so each token attends only to later tokens, and the last "
        "token may attend to nothing (its output is 0). Invert it (~mask) or build it with tril; a check "
        "such as ll.causal_mask_mistake(mask) names this mistake before it ships."),
       ("The same causal attention as nn.MultiheadAttention: both read True as masked.", W,
        "SDPA's boolean mask means the opposite: True = may attend. The two conventions differ, which "
        "is the trap."),
       ("An error, because SDPA only accepts float masks that are added to the scores.", W,
        "SDPA accepts boolean masks (True = may attend) and float masks (added to the scores)."),
       ("torch notices the mix-up and inverts the mask for you before it computes the scores.", W,
        "Nothing can tell a deliberate mask from an inverted one; the library does what the "
        "convention says."),
       source="the convention trap"),
    ask("A sequence of 3 real tokens is padded to 5 in a batch, and the model is causal. Which keys may "
       "query 2 (the third real token) attend to?",
       ("Keys 0 to 4: padding only decides which outputs are used, not what is seen.", W,
        "Padding keys must be hidden from the real tokens, or their made-up vectors would leak into "
        "the real outputs."),
       ("Keys 3 and 4 only, the positions the padding added after the real tokens.", W,
        "That is the inverted mask: it hides what should be seen and shows the future and the "
        "padding."),
       ("Only key 2, itself.", W,
        "A causal mask allows every earlier token too; only a window of size 1 would leave only "
        "itself."),
       ("Keys 0, 1 and 2: itself and the tokens before it.", R,
        "Yes. Causal allows keys 0…2, padding hides keys 3 and 4; the "
        "mask is their AND, True only where both allow."),
       source="mask gallery: causal + padding"),
)
