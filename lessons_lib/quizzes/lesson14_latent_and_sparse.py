"""The quiz of lesson 14: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("DeepSeek-V3 runs 128 heads of 128 in each layer with multi-head latent attention (d_c = 512, a rope "
        "key of 64). What does its cache keep per token and layer?",
        ("A key and a value for each of the 128 heads, compressed to 8 bits each.", W,
         "That would still be 2 × 128 × 128 numbers; MLA keeps no per-head key or value at all."),
        ("One latent of 512 numbers and one rope key of 64, shared by all heads.", R,
         "Right: 576 numbers, about 57 times fewer than multi-head attention's 32,768; every head's key and "
         "value are made from the latent when needed, or never made at all in the absorbed order."),
        ("Nothing: the latent is recomputed from the tokens at every step.", W,
         "Recomputing would cost a pass over every earlier token at every step: the latent is what is "
         "cached, and that is the point."),
        ("One key and one value of 128, shared by all heads, as in multi-query attention.", W,
         "That is multi-query attention's 256 numbers, less than MLA's 576; but its heads all read the same "
         "key, while MLA's heads each get their own from the latent."),
        source="notebook 14, section 1"),
    ask("In the absorbed order, W_UK is folded into the query. Compared with building every head's keys "
        "from the latent first, what changes in the scores?",
        ("They grow by a factor d_c / d_nope, so the scale must change.", W,
         "The scale is still the head's: the score is the same query meeting the same key, in another "
         "order of the same products."),
        ("They lose precision, which is why DeepSeek uses the naive order when it generates.", W,
         "In float64 the two orders agree below 1e-12 (section 2); DeepSeek's own inference code uses the "
         "absorbed order to generate."),
        ("They are only approximately equal, because the latent is compressed.", W,
         "The compression happens before either order: both start from the same latent, and from there "
         "the algebra is exact."),
        ("Nothing but rounding: the products are the same, grouped differently.", R,
         "Right: q·(c·W_UK)ᵀ = (q·W_UKᵀ)·cᵀ. What changes is the cost, which section 2 measures."),
        source="notebook 14, section 2"),
    ask("Why does MLA carry a separate rope key beside the latent?",
        ("No fixed matrix absorbs a rotation that depends on the key's position.", R,
         "Right: the rotated key R_s·W_UKᵀ changes with s; the small shared rope key takes the position "
         "instead, and the latent stays free of it (section 3 shows the folded score going wrong)."),
        ("RoPE needs more numbers than the latent has.", W,
         "RoPE turns any even number of dimensions; the rope key is small (64) on purpose."),
        ("The latent is normalised, and a normalised vector cannot be rotated.", W,
         "A rotation keeps lengths, so normalised vectors rotate fine; the obstacle is folding, not norms."),
        ("Each head needs its own position, so a rope key is kept for every head and every token.", W,
         "The rope key is one per token, shared by all heads; only the query's rope part is per head."),
        source="notebook 14, section 3"),
    ask("DeepSeek-V3.2's sparse attention keeps the top 2,048 keys per query by the lightning indexer's "
        "scores. On a 100,000-token context, what does it give up?",
        ("Causality: a kept key may lie after the query.", W,
         "The choice is made among the keys the query may see; sparse attention is still causal."),
        ("Memory: the cache grows, because the indexer keeps its own keys beside it.", W,
         "The indexer does keep a small key per token, but that is not what the selection gives up."),
        ("A key the indexer ranks low is never attended to.", R,
         "Right: the attention is exact over the kept keys and blind to the others (section 6 shows a "
         "case the indexer misses); the indexer itself still scores every key, cheaply."),
        ("Nothing: with 2,048 keys it equals dense attention.", W,
         "Only when a query sees at most 2,048 keys; beyond, every other key weighs 0."),
        source="notebook 14, sections 5 and 6"),
)
