"""The quiz of lesson 13: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("Linear attention computes φ(Q)·(φ(K)ᵀ·V) instead of (φ(Q)·φ(K)ᵀ)·V. For a sequence of N tokens with "
        "d features each, what does the regrouping change?",
        ("The outputs, slightly: the regrouped product only approximates the first grouping's numbers.",
         W,
         "A matrix product is associative: both groupings give the same numbers up to rounding. What "
         "approximates softmax attention is dropping the softmax, not the regrouping."),
        ("The cost: a d × d matrix instead of an N × N one, so O(N·d²) work instead of O(N²·d).", R,
         "Right: φ(K)ᵀ·V is d × d whatever N is, and the N × N matrix of weights is never formed."),
        ("Nothing: both groupings form the N × N matrix of weights first.", W,
         "Only the first grouping does. φ(K)ᵀ·V combines keys and values before any query meets them."),
        ("The memory only; the number of multiplications stays N²·d.", W,
         "Counting them: φ(K)ᵀ·V is N·d² multiplications and φ(Q) times it another N·d², no N² term."),
        source="notebook 13, section 1"),
    ask("During generation, a linear-attention layer with d_k = d_v = 64 has read 100,000 tokens. How many "
        "numbers does it keep for the next token, per head?",
        ("2 × 100,000 × 64: one key and one value for every token read so far, as lesson 12's cache does.",
         W,
         "That is softmax attention's cache (lesson 12). Linear attention has folded every key and value "
         "into its state."),
        ("100,000 × 64: the values only, since the keys are summed.", W,
         "Both the keys and the values are folded into the state; no per-token row is kept."),
        ("64 × 64 + 64: the state and its normaliser, whatever the number of tokens.", R,
         "Right: 4,160 numbers, the same after 10 tokens or 100,000. That is the saving, and also the "
         "limit: everything read must fit in them."),
        ("It depends on the chunk size of the chunked form.", W,
         "The chunked form is a way to compute the same outputs in training; what generation keeps is the "
         "state between chunks, d × d."),
        source="notebook 13, section 2"),
    ask("A state decays: S_t = a·S_{t−1} + k_t v_tᵀ with a = 0.9. Which masked-attention form gives the same "
        "outputs?",
        ("The causal mask with every key weighted by 0.9.", W,
         "The weight depends on how far back the key is: the key of one step ago is faded once, of ten "
         "steps ago ten times."),
        ("Softmax attention in a window of 9 tokens.", W,
         "A decay never drops a token completely and has no softmax; it fades every earlier key by a "
         "power of a."),
        ("Attention without any mask at all: the decay fades every key alike, so it has nothing to do with "
         "position.", W,
         "The state is causal (it only holds the past), and the fading is counted in steps between key "
         "and query."),
        ("(Q·Kᵀ ⊙ L)·V with L_ij = 0.9 to the power i − j on and below the diagonal, 0 above.", R,
         "Right: key j has been faded once per step since it was written. That is the state-space duality "
         "of Dao and Gu, which the notebook shows below 1e-12."),
        source="notebook 13, section 3"),
    ask("A delta-rule state has stored the value v₁ at the key k (unit length). The same key comes again "
        "with a new value v₂ and β = 1. What does the state read at k afterwards?",
        ("v₂: the error v₂ − v₁ is written, replacing the old value.", R,
         "Right: the step writes β times the error between the new value and what the state read at k, "
         "so with β = 1 the key reads exactly v₂."),
        ("v₁ + v₂: every value written at a key is added to the others, as in linear attention.", W,
         "That is linear attention's rule, which only adds. The delta rule first reads what k holds and "
         "writes the difference."),
        ("(v₁ + v₂) / 2: the state averages what it has seen at k.", W,
         "That would take β = 0.5. With β = 1 the correction is complete."),
        ("v₁: the first value written at a key is kept.", W,
         "The delta rule overwrites: the newest value wins, in proportion to β."),
        source="notebook 13, section 4"),
    ask("A startup replaces a model's attention by linear attention with a 16 × 16 state per head, to serve "
        "long documents cheaply. On the recall task of this lesson, what should you expect?",
        ("The same recall as softmax attention, since the outputs are equal.", W,
         "Linear attention is not softmax attention: the outputs differ, and the fixed state holds only "
         "so many pairs apart."),
        ("Good recall while the pairs to remember are few, falling once they outnumber what the state can "
         "hold apart, while the memory stays fixed.", W,
         "Close, but it is not only the number of pairs: linear attention also blurs pairs well before "
         "the state is full, because it only adds. Look at the table again."),
        ("Less recall than softmax attention as the pairs grow, for a memory that does not grow.", R,
         "Right: the table shows softmax recalling every pair while the fixed states fall away as the "
         "pairs grow, and which of them holds on longest, measured by the run, for a memory that does not "
         "grow."),
        ("Better recall than softmax attention on long documents, since nothing is forgotten.", W,
         "A fixed state must forget or blur once it is full; softmax attention keeps every key."),
        source="notebook 13, section 5"),
)
