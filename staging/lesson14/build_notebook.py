"""Writes notebooks/14_latent_and_sparse.ipynb (no outputs) beside this file: lesson 14's teacher's source.

Run from the repository root: ``python staging/lesson14/build_notebook.py``. After registering the lesson
(``staging/lesson14/register.py``), ``make notebooks`` stamps it (Colab cell, contents list, slide metadata,
graded cells) and runs it from a clean kernel.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
cells = []


def md(text: str, **lessons):
    cell = nbformat.v4.new_markdown_cell(text.strip("\n"))
    if lessons:
        cell.metadata["lessons"] = lessons
    cells.append(cell)


def code(text: str, *tags: str):
    cell = nbformat.v4.new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    cells.append(cell)


md("""
# 14 · Latent and sparse attention: DeepSeek's MLA and DSA

*The second lesson of **Part III · attention at the frontier**. Lesson 12 found the KV cache to be the bill of
a long context, and shared key/value heads to be one way of cutting it. DeepSeek's models cut it another way:
they cache one small latent per token and make every head's key and value from it, and DeepSeek-V3.2 lets
each query attend to a few keys that a cheap indexer picks. Here you build both, measure what they save and
what they give up, and read transformers' own modules with the course's functions.*

⏱ **about 75 minutes** · prerequisites: [11 · Position](11_position.ipynb) (RoPE),
[12 · Generation](12_generation.ipynb) (the KV cache, grouped-query attention). Section 4 compares with
transformers when it is installed (the course's test requirements pin it).
""")
md("""
**By the end of this lesson you can**

1. say what multi-head latent attention caches per token, and size it beside MHA, GQA and MQA for a
   published configuration;
2. fold the key and value up-projections into the query and the output, and test the folded order against
   the plain one;
3. explain why a rotation stands in the way of that fold, and what the separate rope key is for;
4. read transformers' DeepSeek attention into the course's functions and reproduce it, step by step with its
   cache;
5. score keys with a lightning indexer, keep each query's top-k, and measure what that saves and loses;
6. write the folded scores and the top-k selection yourself, checked case by case.
""")
code("""
import numpy as np

import lessons_lib as ll

SEED = 0                                    # every random number of this lesson comes from it
np.set_printoptions(precision=3, suppress=True)
""")

# ----------------------------------------------------------------------------------------------- 1
md("""
## 1 · Cache a latent, not keys and values

Multi-head attention keeps a key and a value for every head of every token. **Multi-head latent attention**
(MLA, DeepSeek-V2 and V3) keeps one small vector per token instead, the **latent** $c$ of $d_c$ numbers, and
makes each head's key and value from it when they are needed:

$$c = \\mathrm{RMSNorm}(x\\,W_{DKV}),\\qquad K_h = c\\,W_{UK,h},\\qquad V_h = c\\,W_{UV,h}$$

$W_{DKV}$ compresses ("down"), $W_{UK,h}$ and $W_{UV,h}$ expand ("up") for head $h$. These are the lines
that do it, on a tiny layer of 2 heads with a latent of 8:
""")
code("""
mla, _ = ll.tiny_mla_weights(d_c=8, seed=SEED)           # a tiny layer: d_model 16, 2 heads of 8, d_c = 8
x = np.random.default_rng(SEED).standard_normal((6, 16))  # 6 tokens
c = ll.rms_norm(x @ mla["w_dkv"], mla["kv_norm"])          # (6, 8): what the cache keeps, per token
K = c @ mla["w_uk"]                                        # (6, 2 × 8): every head's keys, made from it
V = c @ mla["w_uv"]                                        # (6, 2 × 8): every head's values
print("latent", c.shape, "keys", K.shape, "values", V.shape)
""")
md("""
DeepSeek-V3 runs 128 heads of 128 numbers in each of its 61 layers, with $d_c = 512$ and, beside the latent,
one more small key of 64 numbers per token that section 3 explains.
""")
md("""
**Predict.** Per token and layer, multi-query attention (one key/value head for all 128 heads) caches
2 × 128 = 256 numbers. Does DeepSeek-V3's cache keep more or fewer numbers than that, and by how much?
""", predict={"answer_phrases": ["2.25 times", "more than multi-query"]})
code("""
for row in ll.cache_per_token(ll.DEEPSEEK_V3, "bfloat16"):
    print(f"{row['attention']:42} {row['numbers']:>6,} numbers {row['bytes']:>7,} bytes  "
          f"{row['times']:6.2f} × the latent's")
""")
code("ll.plot_cache_per_token(ll.DEEPSEEK_V3)")
md("""
<details><summary>Check your answer</summary>

More: 512 + 64 = 576 numbers, **2.25 times** what multi-query attention keeps, so MLA keeps
**more than multi-query** attention, and 57 times less than multi-head attention's 32,768. The point is not
the smallest cache but a small one whose heads each still get their own key and value.
</details>

DeepSeek-V2's paper (§2.1.4) writes the latent cache as $(d_c + d_h^R)\\,l = \\tfrac{9}{2} d_h l$ elements
and calls it "equivalent to GQA with only 2.25 groups"; against its own dense 67B model it reports a KV cache
93.3% smaller. The calculator, on the paper's shapes:
""")
code("""
print("GQA groups holding as much as MLA:", ll.equivalent_gqa_groups(ll.DEEPSEEK_V2))
for bits in (6, 16):
    v2 = ll.v2_against_67b(bits=bits)
    print(f"DeepSeek-V2 at {bits} bits per number: {v2['v2_bytes']:,.0f} bytes per token against "
          f"DeepSeek 67B's {v2['67b_bytes']:,} (16 bits): {v2['reduction']:.1%} smaller")
print("DeepSeek-V3, one token in every layer, bfloat16:", ll.latent_cache_bytes(61, 512, 64, 1), "bytes")
""")
md("""
The 93.3% is the deployed model: DeepSeek-V2 stores its cache at about 6 bits per number ("Training and
Inference Efficiency" in the paper); at the same 16 bits the saving is 82.2%.
""")

# ----------------------------------------------------------------------------------------------- 2
md("""
## 2 · Absorb the up-projections

Building 128 heads' keys and values from every cached latent at every step would give back what the cache
saved. It is not needed. For head $h$, a query $q_h$ meets key $s$ as

$$q_h \\cdot (c_s W_{UK,h}) = (q_h W_{UK,h}^\\top) \\cdot c_s$$

so $W_{UK,h}$ can be folded into the query once, and the query then meets the cached latent itself. In the
same way $W_{UV,h}$ folds into the output projection: the weighted sum of latents goes through
$W_{UV,h} W_{O,h}$. The heads then share one key (the latent) and one value (the latent again): multi-query
attention over $c$.
""")
md("""
**Predict.** In float64, how far apart are the scores of the two orders, and which order does fewer
multiplications for one new token against 4,096 cached ones?
""", predict={"answer_phrases": ["only rounding apart", "over a hundred times fewer"]})
code("""
head = slice(0, 8)                                          # head 0's columns
q = np.random.default_rng(SEED + 1).standard_normal((6, 8))  # head 0's queries (their nope part)
plain = q @ (c @ mla["w_uk"][:, head]).T                    # build the keys, then the scores
folded = (q @ mla["w_uk"][:, head].T) @ c.T                 # fold W_UK into the query, meet the latent
print("scores:", ll.difference_claim(plain, folded, below=1e-12))
naive, cache = ll.mla_attention(x, mla, n_heads=2, d_c=8, d_rope=4)
absorbed, _ = ll.mla_attention(x, mla, n_heads=2, d_c=8, d_rope=4, absorbed=True)
print("the whole layer:", ll.difference_claim(naive, absorbed, below=1e-12))
counts = ll.absorption_counts(ll.DEEPSEEK_V3, 4096)
print(f"DeepSeek-V3, one new token against 4,096: naive {counts['naive']:,} multiplications, absorbed "
      f"{counts['absorbed']:,}: {counts['naive'] / counts['absorbed']:.0f} times fewer")
""")
md("""
<details><summary>Check your answer</summary>

They are **only rounding apart** (below 1e-12), since the products are the same numbers grouped differently.
The absorbed order does **over a hundred times fewer** multiplications at 4,096 tokens: the naive order
rebuilds 128 heads' keys and values for every cached token at every step. With a single cached token the
fold costs more (it is paid once per step, whatever the context), which is why prefill may use the plain
order.
</details>

Measured here, for a layer of 16 heads on numpy (one run; your machine gives its own numbers):
""")
code("""
for context, (plain_s, folded_s) in ll.measure_orders((512, 4096), seed=SEED).items():
    verdict = ll.time_ratio_verdict(folded_s / plain_s, "the naive time")
    print(f"{context:>5} cached tokens: absorbed {verdict}")
""", "nbval-ignore-output")

# ----------------------------------------------------------------------------------------------- 3
md("""
## 3 · Why RoPE breaks it, and the decoupled key

Lesson 11 turns each key by its position, $R_s$. A rotated key from the latent would be $c_s W_{UK,h} R_s$,
and the score $q_h R_t \\cdot c_s W_{UK,h} R_s$ has a rotation that depends on the key's position $s$ between
$W_{UK,h}$ and the query: no single matrix folded into the query fits every $s$.
""")
md("""
**Predict.** Turn the query and the keys made from the latent by their positions, then fold $W_{UK}$ into the
rotated query as if nothing stood between. Are the scores a little off, or wrong?
""", predict={"answer_phrases": ["wrong by as much as the scores", "except at position 0"]})
code("""
rng = np.random.default_rng(SEED + 2)
q, latent, w_uk = rng.standard_normal((8, 6)), rng.standard_normal((8, 5)), rng.standard_normal((5, 6))
true, folded = ll.absorbed_rope_scores(q, latent, w_uk, np.arange(8))
print(f"largest score {np.abs(true).max():.1f}, largest error of the fold {np.abs(true - folded).max():.1f}")
true0, folded0 = ll.absorbed_rope_scores(q, latent, w_uk, np.zeros(8))
print("every token at position 0:", ll.difference_claim(true0, folded0, below=1e-12))
""")
md("""
<details><summary>Check your answer</summary>

Wrong: the fold is **wrong by as much as the scores** themselves, everywhere **except at position 0**, where
every rotation is the identity.
</details>

DeepSeek's fix is the **decoupled rope key**: the latent's part of the score carries no position at all, and
each head's score gains a small second part, a rotated query part $q^R_h$ against one rotated key $k^R_s$ per
token, **shared by every head**, made from $x$ and cached beside the latent (64 numbers in DeepSeek-V3):

$$\\text{score}_h(t, s) = \\frac{q_h W_{UK,h}^\\top \\cdot c_s + R_t q^R_h \\cdot R_s k^R_s}
{\\sqrt{d_{nope} + d_{rope}}}$$

The scale is still the head's: $d_{nope} + d_{rope}$, 192 in DeepSeek-V3. `ll.mla_attention` computes exactly
this, naive or absorbed, with lesson 11's RoPE in either layout (DeepSeek's checkpoints pair neighbours,
"interleaved").
""")

# ----------------------------------------------------------------------------------------------- 4
md("""
## 4 · Read the real thing

transformers ships DeepSeek's attention in plain PyTorch: `DeepseekV3Attention` (MLA) and DeepSeek-V3.2's
`DeepseekV32Attention` with its `DeepseekV32Indexer`. `ll.weights_from_deepseek_attention(module)` reads
one into `ll.mla_attention`'s keywords (`q_a_proj` → `w_dq`, `kv_a_proj_with_mqa` → `w_dkv` and `w_kr`,
`kv_b_proj` → `w_uk` and `w_uv`, ...) and refuses, by name, what the course cannot reproduce (biases, YaRN's
stretched angles). This cell builds tiny random ones, nothing downloaded, and runs both:
""")
code("""
for line in ll.look_inside_deepseek(seed=SEED):
    print(line)
""")
md("""
The tests hold more (`tests/lab/test_deepseek_adapter.py`): with and without the query's latent, both RoPE
layouts, prefill and step by step with transformers' own cache (which holds the latent and the turned rope
key, nothing per head), all below 1e-10 once transformers' RMSNorm runs in float64.
""")

# ----------------------------------------------------------------------------------------------- 5
md("""
## 5 · Sparse: attend to the k keys that matter

MLA makes the cache small; each query still meets every earlier key. DeepSeek-V3.2's **sparse attention**
(DSA) first scores every key cheaply with a **lightning indexer**: a few small heads $j$, one small key $k_s$
per token shared by them, and a weight $w_{t,j}$ per query and head:

$$I(t, s) = \\sum_j w_{t,j}\\,\\mathrm{ReLU}\\big(q_{t,j} \\cdot k_s / \\sqrt{d_I}\\big)$$

Each query then keeps its `top_k` best keys among those it may see, and attends to them alone.
""")
code("""
_, index = ll.tiny_mla_weights(d_c=8, seed=SEED)
x16 = np.random.default_rng(SEED + 1).standard_normal((16, 16))
q_latent = ll.rms_norm(x16 @ mla["w_dq"], mla["q_norm"])
scores = ll.lightning_indexer(x16, q_latent, index, n_heads=4, d_rope=4)  # (16, 16): every key, every query
keep = ll.top_k_selection(scores, 4)                                       # each query's 4 best earlier keys
print("keys kept by query 15:", np.flatnonzero(keep[15]))
""")
md("""
**Predict.** The explorer opens on the tiny layer with `top_k` = 4 of 16 keys and an indexer that was never
trained. Will the keys it keeps for the last query hold most of that query's dense attention weight?
""", predict={"answer_phrases": ["a small part of it", "never trained to agree"]})
code("ll.LatentSparseExplorer(d_c=8, top_k=4, seed=SEED)", "nbval-ignore-output")
md("""
*The explorer. Top left, dense attention's weights (head 0), the row of `query` framed; top right, the same
weights on the keys the indexer keeps, the others hatched. Bottom left, the numbers one token keeps in the
cache beside multi-head and multi-query attention: move `d_c`. Bottom right, for every query, how far its
output moves from dense attention and how much dense weight falls on keys not kept: move `top_k`.*

<details><summary>Check your answer</summary>

No: the four keys hold **a small part of it** (13% for the last query here). The indexer was **never trained
to agree** with attention; DeepSeek trains its indexer to match the main attention's weights before switching
the selection on. Even a perfect indexer keeps only the top-k weights: the rest is given up.
</details>
""")
md("""
What it saves, counted for DeepSeek-V3.2's sizes (128 heads, absorbed, `top_k` = 2,048; the indexer has 64
heads of 128, run in 8 bits by DeepSeek), per query:
""")
code("""
for context in (2048, 16384, 131072):
    work = ll.sparse_counts(context)
    print(f"{context:>7} keys: sparse {work['dense'] / work['sparse']:5.1f} times less attention work than "
          f"dense; the indexer adds {work['indexer'] / work['dense']:.1%} of dense")
""")
code("ll.plot_sparse_cost()")
md("""
Past 2,048 keys the attention's work per query stays flat and the indexer's keeps growing: past about 32,000
keys the indexer does more multiplications than the attention it serves, each of them cheap (8 bits in
DeepSeek's kernel) but many.


Measured here with numpy, 8 heads sharing one selection, the indexer's scores given (one run): gathering each
query's keys costs numpy more than its dense matrix products at these sizes. The saving needs a kernel that
gathers the kept keys in fast memory, as DeepSeek's FlashMLA does; the counts above are what such a kernel
saves.
""")
code("""
import time

rng = np.random.default_rng(SEED)
for n in (512, 1024):
    q8 = rng.standard_normal((8, n, 64)).astype(np.float32)
    given = rng.standard_normal((n, n)).astype(np.float32)
    start = time.perf_counter()
    ll.scaled_dot_product_attention(q8, q8, q8, causal=True)
    dense_s = time.perf_counter() - start
    start = time.perf_counter()
    ll.sparse_attention(q8, q8, q8, 64, given)
    sparse_s = time.perf_counter() - start
    print(f"{n} tokens, top 64: sparse {ll.time_ratio_verdict(sparse_s / dense_s, 'the dense time')}")
""", "nbval-ignore-output")

# ----------------------------------------------------------------------------------------------- 6
md("""
## 6 · What it gives up

A key outside a query's top-k is never seen, whatever weight attention would have given it. The case below is
the query whose kept keys miss most of its dense weight:
""")
code("""
run = ll.sparse_run(d_c=8, top_k=4, seed=SEED)
worst = int(np.argmin(run.kept_weight))
favourite = int(np.argmax(run.dense[worst]))
print(f"query {worst} keeps keys {np.flatnonzero(run.keep[worst]).tolist()}, holding "
      f"{run.kept_weight[worst]:.0%} of its dense weight; dense attention's favourite, key {favourite} "
      f"({run.dense[worst, favourite]:.0%}), is {'kept' if run.keep[worst, favourite] else 'not kept'}")
print(f"its output moves {run.difference[worst]:.0%} of its length from dense attention; a perfect indexer "
      f"would have kept {run.best_weight[worst]:.0%} of the weight")
""")
code("ll.plot_sparse_run(run, worst)")

# ----------------------------------------------------------------------------------------------- 7
md("""
## 7 · Exercise: the absorbed scores

*Difficulty: medium · about 15 minutes.*

Write `my_absorbed_scores(q_nope, q_rope, latent, k_rope, w_uk, positions)` for one head:

* `q_nope` is `(L, d_nope)` and `q_rope` `(L, d_rope)`: the head's query parts;
* `latent` is `(L, d_c)`, the cached latents, and `k_rope` `(L, d_rope)`, the shared rope keys; the rope parts
  arrive not yet turned, `positions` `(L,)` says where each token stands (turn them with `ll.rope`);
* `w_uk` is `(d_c, d_nope)`, the head's key up-projection;
* return the `(L, L)` scaled scores, with `W_UK` folded into the query so that it meets the latent itself, and
  the rotated part beside it (no mask).
""")
md("""
<details><summary>Hint (click to open)</summary>

Section 2 and section 3: write the shape of every piece before you write code. The folded query must come out
d_c wide; the positions reach the score only through the small rope parts; and the scale is the head's, the
width of a whole query. In the hand-made case (two tokens, everything 2 wide) the first query's score for the
first key is 1.5.
</details>
""")
md("Run the check after each try: it names the mistake it sees. Use numpy and `ll.rope`, not "
   "`ll.mla_attention`.")
code("""
def my_absorbed_scores(q_nope, q_rope, latent, k_rope, w_uk, positions):
    ### BEGIN SOLUTION
    q_latent = q_nope @ w_uk.T                                  # W_UK folded into the query: (L, d_c)
    nope = q_latent @ latent.T                                  # the query meets the cached latent itself
    rotated = ll.rope(q_rope, positions) @ ll.rope(k_rope, positions).T   # the part that knows positions
    return (nope + rotated) / np.sqrt(q_nope.shape[-1] + q_rope.shape[-1])   # the head's scale
    ### END SOLUTION
""")
code("ll.check_absorbed_scores(my_absorbed_scores)")

# ----------------------------------------------------------------------------------------------- 8
md("""
## 8 · Exercise: the keys each query keeps

*Difficulty: easy · about 10 minutes.*

Write `my_topk_keys(scores, top_k)`:

* `scores` is `(L, S)`, the indexer's score of every key for every query, with L ≤ S: the queries are the last
  L of S tokens, so query i stands at position S − L + i;
* return a bool `(L, S)` array: True for each query's `top_k` highest-scoring keys among those it may see
  (every key it may see when it sees fewer), False everywhere else.
""")
md("""
<details><summary>Hint (click to open)</summary>

Do the hand-made case on paper first: three queries, three keys, `top_k` = 2. The first query sees one key,
the second two, the third three and keeps the two best. With earlier tokens before the queries, each row
starts further right: section 5's rows.
</details>
""")
md("Run the check after each try. Use numpy, not `ll.top_k_selection`.")
code("""
def my_topk_keys(scores, top_k):
    ### BEGIN SOLUTION
    n_queries, n_keys = scores.shape
    keep = np.zeros((n_queries, n_keys), dtype=bool)
    for i in range(n_queries):
        seen = n_keys - n_queries + i + 1                     # query i sees keys 0 … S − L + i
        best = np.argsort(-scores[i, :seen])[:top_k]          # its keys, best first: the first top_k
        keep[i, best] = True
    return keep
    ### END SOLUTION
""")
code("ll.check_topk_keys(my_topk_keys)")

# ----------------------------------------------------------------------------------------------- end
md("## 9 · Quiz")
code('ll.show("14")', "nbval-ignore-output")
md("## Takeaways")
md("""
* **MLA** caches one latent of $d_c$ numbers and one shared rope key per token and layer (576 in DeepSeek-V3):
  2.25 key/value heads' worth, while every head keeps its own key and value, made from the latent.
* The up-projections **fold**: $W_{UK}$ into the query, $W_{UV}$ into the output. The same scores, and at
  long contexts far fewer multiplications per new token: the heads attend to the latent itself.
* RoPE cannot be folded, since its rotation depends on the key's position; so the position lives in a small
  **decoupled rope key** beside the latent, and the scale stays the head's.
* **DSA** scores every key with a cheap **lightning indexer** and attends to each query's top-k: attention
  work per query stops growing past k, the indexer's keeps growing but cheaply; a key the indexer ranks low is
  never seen.
* The course reads transformers' `DeepseekV3Attention` and `DeepseekV32Attention` and reproduces them.
""")
md("""
**You have finished the course.** **Back to the start:** [00 · Start here](00_start_here.ipynb) · Previous:
[13 · Cheaper attention](13_cheaper_attention.ipynb)
""")

nb = nbformat.v4.new_notebook(cells=cells, metadata={
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"}})
out = HERE / "notebooks" / "14_latent_and_sparse.ipynb"
out.parent.mkdir(exist_ok=True)
nbformat.write(nb, out)
print(f"wrote {out}")
