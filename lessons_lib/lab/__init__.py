"""What the lessons compute with and measure: ``data`` (the course's sentences, embeddings, random Q, K,
V), ``heads`` (lesson 06: the shape at each stage, the cost of heads, heads built by hand), ``masking``
(lesson 07: the causal average, the gallery, the convention trap, the leak experiment, wrong ways to mask),
``cost`` (lesson 08: counts, memory estimates, measured scaling), ``measurements`` (claims and verdicts that
hold on every CPU), ``coref`` and ``models`` (lesson 09: the synthetic coreference set, the tiny torch model
trained deterministically), ``adapters`` and ``real_model`` (lesson 10: real models' attention weights in
the course's layout, GPT-2 or the course's own model offline), ``position`` (lesson 11: shuffled tokens,
the order task), ``generation``, ``char_model``, ``kv_memory`` and ``llama`` (lesson 12: generation
traced and timed, pooled key/value heads, windows and sinks; a character model trained in seconds to
generate text with; the KV-cache calculator; a Llama-style model's layers recomputed), ``fixed_state`` and
``recall`` (lesson 13: a state of fixed size against the growing cache, memory and time per token;
multi-query associative recall, tiny models with softmax attention, linear attention, a decaying state,
the delta rule or a sliding window trained on it, their verdicts), ``deepseek`` (lesson 14: the latent
cache beside MHA, GQA and MQA for DeepSeek's published shapes; transformers' DeepSeek attention and
indexer read into the course's weights).
"""
