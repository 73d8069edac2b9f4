"""The formulas in numpy, read like the paper: ``attention`` (the four steps, their composition, the
low-memory variant), ``masks`` (causal, padding and sliding-window masks, True = may attend, aligned as in
torch), ``multihead`` (split, attend, concatenate, W_O; the per-head form), ``flash`` (tiles and the online
softmax, never an L × S matrix), ``position`` (lesson 11: sinusoids, RoPE in both layouts, ALiBi),
``decoding`` (lesson 12: the KV cache, a decode step, key/value heads shared by groups of query heads),
``linear`` (lesson 13: linear attention, a decaying state and the delta rule, each parallel, recurrent and
chunked), ``latent`` (lesson 14: multi-head latent attention, its cache, the absorbed order) and ``sparse``
(lesson 14: the lightning indexer, each query's top-k keys); ``backends`` is the torch path, SDPA on CUDA
when there is one (torch imported lazily).
"""
