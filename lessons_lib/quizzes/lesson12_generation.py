"""The quiz of lesson 12: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("A causal model generates token 7 with a KV cache: it reuses the keys and values that tokens 0 to 6 "
        "computed at earlier steps. Compared with recomputing the whole sequence at this step, what is the "
        "output of token 7?",
        ("Slightly different, because the cached keys were computed when the sequence was still shorter.", W,
         "In a causal model token j's key and value depend on tokens 0 … j only, and those never change: a "
         "key computed at step j is the key step 7 would compute again."),
        ("The same, up to rounding.", R,
         "Right: nothing a cached key or value depends on has changed, so reusing them changes no number "
         "(the notebook shows the two below 1e-12, for one head, several heads with RoPE and shared "
         "key/value heads)."),
        ("Different, because the new token changes where the earlier tokens look.", W,
         "The earlier tokens never look at a later one: their rows of weights are fixed once computed."),
        ("The same in the first layer only; deeper layers must be recomputed because their inputs change.",
         W, "A deeper layer's input for token j comes from tokens 0 … j of the layer below, which did not "
            "change either: every layer keeps its own cache."),
        source="notebook 12, section 1"),
    ask("Llama-3-8B has 32 query heads and 8 key/value heads in each layer. Compared with the same model "
        "with one key/value head per query head, how large is its KV cache?",
        ("The same size: a cache keeps one key and one value per query head.", W,
         "The cache keeps what the layer computes for each token, one key and one value per key/value "
         "head; the query heads are not cached at all."),
        ("8 times smaller.", W,
         "8 is the number of key/value heads; the saving is the size of a group, 32 / 8."),
        ("32 times smaller, one key/value head instead of 32.", W,
         "That is multi-query attention (one key/value head). Llama-3-8B keeps 8."),
        ("4 times smaller.", R,
         "Right: bytes = 2 × layers × n_kv_heads × d_head × tokens × bytes per value, and n_kv_heads drops "
         "from 32 to 8 (131 kB per token in bfloat16 instead of 524 kB)."),
        source="notebook 12, sections 3 and 4"),
    ask("8 query heads share 2 key/value heads, as in transformers' grouped-query attention. Which key/value "
        "head does query head 6 read?",
        ("Key/value head 1.", R,
         "Right: the groups are runs of neighbours, heads 0 to 3 read key/value head 0 and heads 4 to 7 "
         "read key/value head 1 (6 // 4 = 1)."),
        ("Key/value head 0: the heads take turns, 0, 1, 0, 1, …", W,
         "That is the tiled layout, a real bug (ONNX's first GQA had it): the query heads of a group are "
         "neighbours, each key/value head repeated in place."),
        ("Both, averaged: every query head reads the mean of the key/value heads.", W,
         "Averaging is how a multi-head checkpoint is converted to fewer key/value heads; afterwards each "
         "query head reads exactly one."),
        ("Key/value head 3, because 6 / 2 = 3.", W,
         "There are only 2 key/value heads, 0 and 1; the group size is 8 / 2 = 4, and 6 // 4 = 1."),
        source="notebook 12, section 4"),
    ask("A model generates one token at a time (decode) with a long context in its cache. What limits its "
        "speed on most hardware?",
        ("The multiplications per token, whose number grows with the square of the context.", W,
         "With the cache a step does work proportional to the context, not its square: one query against "
         "every key."),
        ("The exponentials of the softmax, which cost more than the products.", W,
         "One row of scores per step is a small part of the time; the cache itself is the bulk."),
        ("Reading the cached keys and values from memory.", R,
         "Right: each step reads the whole cache to do about one operation per byte read; the processor "
         "waits on memory (the notebook measures it on your machine)."),
        ("The projection of the new token into its query, key and value, the only matrix product left once "
         "the earlier tokens are cached.", W,
         "The projections are a fixed cost per token; reading the cache grows with the context and soon "
         "dominates."),
        source="notebook 12, section 6"),
    ask("A chat model runs with a sliding window of 4,096 tokens. Once its first tokens leave the window, "
        "its text turns to nonsense; keeping the first 4 tokens in the cache for good fixes it. Why?",
        ("The first tokens hold the prompt's instructions, which the model must reread at every step to stay "
         "on topic.", W,
         "The first tokens can be anything, even a start symbol with no meaning; keeping any 4 other tokens "
         "does not help (StreamingLLM's experiment)."),
        ("Heads park their spare weight on them; without them it lands on real tokens.", R,
         "Right: they are attention sinks. Rows must sum to 1, so a head with nothing to fetch puts its "
         "weight on the first tokens, whose values carry little (lesson 09); evicted, that weight goes to "
         "tokens that hand over their values."),
        ("RoPE's angles overflow after 4,096 positions.", W,
         "RoPE's angles grow smoothly with the position; a window does not change them."),
        ("The cache is full, so the model stops storing new keys and values.", W,
         "A rolling cache overwrites its oldest slot for each new token: it never stops storing."),
        source="notebook 12, section 5"),
    ask("A prompt of 2,000 tokens is read at once (prefill) before the model generates. Per token, why is "
        "prefill so much faster than decode?",
        ("Each key and value read serves 2,000 queries at once, not one.", R,
         "Right: prefill is a matrix product, decode a matrix-vector product per token; the same bytes "
         "feed 2,000 times more arithmetic."),
        ("Prefill needs no causal mask, since the whole prompt is known.", W,
         "The prompt's tokens still may not see later ones: prefill is causal attention over the prompt."),
        ("Prefill writes nothing to the KV cache, so it moves fewer numbers between memory and the "
         "processor.", W,
         "Prefill fills the cache with the prompt's keys and values; that is what decode then reads."),
        ("It is not faster per token; prefill and decode do the same work for each token.", W,
         "The arithmetic per token is similar; what differs is how often each byte read from memory is "
         "used."),
        source="notebook 12, section 6"),
)
