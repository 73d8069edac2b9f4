"""Notebook 06's library: split/merge, per-head matrices, agreement with torch, cost, hand-built heads."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib import exercises
from lessons_lib.core import multihead
from lessons_lib.lab import data
from tests.helpers import examples

# (n_heads, d_model) pairs where the heads divide d_model
HEADS_AND_WIDTH = st.sampled_from([(1, 4), (2, 4), (4, 8), (3, 6), (8, 16), (2, 10)])


def _weights(rng, d):
    return [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4)]


# ------------------------------------------------------------------ split / merge
@settings(max_examples=examples(60))
@given(HEADS_AND_WIDTH, st.integers(1, 9), st.lists(st.integers(1, 3), max_size=2), st.integers(0, 10_000))
def test_split_then_merge_is_the_identity_and_back(heads_and_width, L, batch, seed):
    h, d = heads_and_width
    x = np.random.default_rng(seed).standard_normal((*batch, L, d))
    heads = ll.split_heads(x, h)
    assert heads.shape == (*batch, h, L, d // h)
    np.testing.assert_array_equal(ll.merge_heads(heads), x)
    np.testing.assert_array_equal(ll.split_heads(ll.merge_heads(heads), h), heads)


def test_split_heads_gives_head_i_the_columns_i_times_d_head():
    x = np.arange(3 * 12, dtype=float).reshape(3, 12)
    heads = ll.split_heads(x, 4)
    for i in range(4):
        np.testing.assert_array_equal(heads[i], x[:, 3 * i:3 * (i + 1)])


# ------------------------------------------------------------------ shape stages
@pytest.mark.parametrize("L,d,h", [(4, 8, 2), (5, 12, 3), (1, 6, 6), (7, 16, 1)])
def test_shape_stages_are_the_shapes_the_code_produces(L, d, h):
    """Run the stages' code literally and compare every shape with the table."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = _weights(rng, d)
    q = x @ w_q
    view = q.reshape(L, h, d // h)
    heads_q = view.transpose(1, 0, 2)
    heads_k = (x @ w_k).reshape(L, h, d // h).transpose(1, 0, 2)
    heads_v = (x @ w_v).reshape(L, h, d // h).transpose(1, 0, 2)
    scores = heads_q @ heads_k.transpose(0, 2, 1) / np.sqrt(d // h)
    weights = ll.softmax(scores)
    out_heads = weights @ heads_v
    back = out_heads.transpose(1, 0, 2)
    concat = back.reshape(L, d)
    output = concat @ w_o
    produced = [x, q, view, heads_q, scores, weights, out_heads, back, concat, output]
    table = multihead.shape_stages(L, d, h)
    assert [shape for _, _, shape in table] == [a.shape for a in produced]
    np.testing.assert_array_equal(heads_q, ll.split_heads(q, h))
    np.testing.assert_allclose(output, ll.multi_head_attention(x, w_q, w_k, w_v, w_o, h)[0], atol=1e-12)


def test_shape_stages_refuses_heads_that_do_not_divide():
    with pytest.raises(ValueError, match=r"n_heads=3 does not divide d_model=8.*\[1, 2, 4, 8\]"):
        multihead.shape_stages(4, 8, 3)


# ------------------------------------------------------------------ 1 head = single head
@settings(max_examples=examples(40))
@given(st.integers(1, 9), st.sampled_from([1, 2, 5, 8]), st.booleans(), st.integers(0, 10_000))
def test_one_head_is_single_head_attention(L, d, causal, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = _weights(rng, d)
    out, weights = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=1, causal=causal)
    single, w1 = ll.scaled_dot_product_attention(*ll.project_qkv(x, w_q, w_k, w_v), causal=causal)
    np.testing.assert_allclose(out, single @ w_o, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(weights[0], w1, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ one big W_Q = separate W_Q per head
@settings(max_examples=examples(40))
@given(HEADS_AND_WIDTH, st.integers(1, 8), st.booleans(), st.integers(0, 10_000))
def test_one_big_projection_split_into_heads_equals_separate_per_head_projections(hd, L, causal, seed):
    h, d = hd
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = _weights(rng, d)
    per_head = [multihead.split_projection(w, h) for w in (w_q, w_k, w_v)]
    assert per_head[0].shape == (h, d, d // h)
    for i in range(h):  # X·W_Q^i is head i's slice of X·W_Q
        np.testing.assert_allclose(x @ per_head[0][i], ll.split_heads(x @ w_q, h)[i], atol=1e-13)
    big_out, big_w = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, h, causal=causal)
    loop_out, loop_w = multihead.multi_head_attention_per_head(x, *per_head, w_o, causal=causal)
    np.testing.assert_allclose(loop_out, big_out, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(loop_w, big_w, rtol=1e-11, atol=1e-13)


def test_split_projection_takes_blocks_of_columns():
    w = np.arange(4 * 8, dtype=float).reshape(4, 8)
    blocks = multihead.split_projection(w, 2)
    np.testing.assert_array_equal(blocks[0], w[:, :4])
    np.testing.assert_array_equal(blocks[1], w[:, 4:])


def test_per_head_attention_explains_bad_shapes():
    x = np.ones((3, 4))
    good = np.ones((2, 4, 2))
    with pytest.raises(ValueError, match=r"W_K heads must be \(n_heads, d_model, d_head\) with d_model=4"):
        multihead.multi_head_attention_per_head(x, good, np.ones((2, 5, 2)), good, np.eye(4))
    with pytest.raises(ValueError, match=r"W_O has 3 rows but the concatenated heads have .* = 4"):
        multihead.multi_head_attention_per_head(x, good, good, good, np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"same shape"):
        multihead.multi_head_attention_per_head(x, good, np.ones((2, 4, 3)), good, np.eye(4))


# ------------------------------------------------------------------ agreement with torch
def _torch_mha(d, h, w_q, w_k, w_v, w_o):
    """nn.MultiheadAttention carrying our weights. torch computes x·Wᵀ, so it stores W transposed."""
    mha = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.as_tensor(np.concatenate([w_q.T, w_k.T, w_v.T])))
        mha.out_proj.weight.copy_(torch.as_tensor(w_o.T))
    return mha


@settings(max_examples=examples(40))
@given(HEADS_AND_WIDTH, st.integers(1, 8), st.sampled_from(["none", "causal", "padding"]),
       st.integers(0, 10_000))
def test_multi_head_attention_agrees_with_torch_nn_multiheadattention(hd, L, masking, seed):
    h, d = hd
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, L, d))
    ws = _weights(rng, d)
    mask = {"none": None, "causal": ll.causal_mask(L),
            "padding": ll.padding_mask(lengths=[L], n_keys=L)[0] & (np.arange(L) < max(1, L - 2))}[masking]
    ours, our_w = ll.multi_head_attention(x, *ws, n_heads=h, mask=mask)
    tx = torch.as_tensor(x)
    # nn.MultiheadAttention's bool attn_mask means True = NOT allowed: the opposite of ours
    blocked = None if mask is None else torch.as_tensor(~mask)
    theirs, their_w = _torch_mha(d, h, *ws)(tx, tx, tx, attn_mask=blocked, need_weights=True,
                                            average_attn_weights=False)
    np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_w, their_w.detach().numpy(), rtol=1e-10, atol=1e-12)


@settings(max_examples=examples(25))
@given(HEADS_AND_WIDTH, st.integers(1, 8), st.booleans(), st.integers(0, 10_000))
def test_multi_head_attention_agrees_with_multi_head_attention_forward(hd, L, causal, seed):
    h, d = hd
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((L, d))
    w_q, w_k, w_v, w_o = _weights(rng, d)
    ours, our_w = ll.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=h, causal=causal)
    tx = torch.as_tensor(x)[:, None, :]   # (L, batch=1, d): the function's sequence-first layout
    t = {name: torch.as_tensor(w.T.copy()) for name, w in (("q", w_q), ("k", w_k), ("v", w_v), ("o", w_o))}
    blocked = torch.as_tensor(~ll.causal_mask(L)) if causal else None
    out, w = torch.nn.functional.multi_head_attention_forward(
        tx, tx, tx, d, h, in_proj_weight=None, in_proj_bias=None, bias_k=None, bias_v=None,
        add_zero_attn=False, dropout_p=0.0, out_proj_weight=t["o"], out_proj_bias=None, training=False,
        need_weights=True, attn_mask=blocked, use_separate_proj_weight=True, q_proj_weight=t["q"],
        k_proj_weight=t["k"], v_proj_weight=t["v"], average_attn_weights=False)
    np.testing.assert_allclose(ours, out[:, 0].numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_w, w[0].numpy(), rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ cost
@pytest.mark.parametrize("d", [12, 64, 96])
def test_cost_of_heads_is_the_cost_of_one_big_head(d):
    L = 32
    one = multihead.multi_head_cost(L, d, 1)
    for h in [h for h in range(1, d + 1) if d % h == 0]:
        many = multihead.multi_head_cost(L, d, h)
        assert many["params"] == one["params"] == 4 * d * d   # W_Q, W_K, W_V, W_O
        for stage in ("Q, K, V projections", "scores Q·Kᵀ", "weights·V", "output projection W_O"):
            assert many["flops"][stage] == one["flops"][stage], stage
        assert many["flops"]["softmax"] == h * one["flops"]["softmax"]
        assert many["attention_entries"] == h * L * L


def test_cost_counts_the_products_of_the_shape_stages():
    """FLOPs of each product = 2 · (output size) · (inner size), read off the shapes."""
    L, d, h = 10, 12, 3
    shapes = {name: shape for name, _, shape in multihead.shape_stages(L, d, h)}
    cost = multihead.multi_head_cost(L, d, h)["flops"]
    dh = d // h
    assert cost["scores Q·Kᵀ"] == 2 * np.prod(shapes["scores per head"]) * dh
    assert cost["weights·V"] == 2 * np.prod(shapes["head outputs"]) * L
    assert cost["Q, K, V projections"] == 3 * 2 * np.prod(shapes["queries Q = X·W_Q"]) * d
    assert cost["output projection W_O"] == 2 * np.prod(shapes["output = Concat(heads)·W_O"]) * d


def test_cost_with_full_width_heads_grows_with_the_heads():
    plain = multihead.multi_head_cost(16, 64, 8)
    wide = multihead.multi_head_cost(16, 64, 8, d_head=64)
    assert wide["params"] == 8 * plain["params"]
    with pytest.raises(ValueError, match="does not divide"):
        multihead.multi_head_cost(16, 64, 5)


# ------------------------------------------------------------------ hand-built heads
def test_handmade_heads_look_where_they_are_built_to_look():
    tokens = data.tokenize(data.SENTENCES["tired"])
    heads = multihead.handmade_heads(tokens, "animal")
    subject = tokens.index("animal")
    L = len(tokens)
    out, w = ll.multi_head_attention(heads["x"], heads["w_q"], heads["w_k"], heads["w_v"], heads["w_o"],
                                     heads["n_heads"])
    prev, subj, unif = w
    assert heads["head_names"] == ("previous token", "subject", "uniform")
    np.testing.assert_allclose(prev[0], 1 / L)                 # "The" has no previous token
    assert (np.argmax(prev[1:], axis=1) == np.arange(L - 1)).all()
    assert prev[np.arange(1, L), np.arange(L - 1)].min() > 0.99
    assert (np.argmax(subj, axis=1) == subject).all() and subj[:, subject].min() > 0.99
    np.testing.assert_allclose(unif, 1 / L, atol=1e-15)
    # W_V copies the key's position and W_O is the identity: each head's output block is its weights
    d_head = heads["x"].shape[1] // 3
    for k in range(3):
        np.testing.assert_allclose(out[:, k * d_head:k * d_head + L], w[k], atol=1e-15)


def test_handmade_heads_sharpness_sets_the_scaled_score():
    tokens = ["a", "b", "c"]
    heads = multihead.handmade_heads(tokens, 1, sharpness=2.0)
    _, w = ll.multi_head_attention(heads["x"], heads["w_q"], heads["w_k"], heads["w_v"], heads["w_o"], 3)
    # the subject's scaled score is 2, the others 0: weight e² / (e² + 2)
    np.testing.assert_allclose(w[1][:, 1], np.e ** 2 / (np.e ** 2 + 2))


def test_handmade_heads_explain_bad_input():
    with pytest.raises(TypeError, match="list of words"):
        multihead.handmade_heads("The cat sat", 0)
    with pytest.raises(ValueError, match="'dog' is not one of the tokens"):
        multihead.handmade_heads(["the", "cat"], "dog")
    with pytest.raises(ValueError, match="at least 2 tokens"):
        multihead.handmade_heads(["cat"], 0)
    with pytest.raises(ValueError, match="index 0..1"):
        multihead.handmade_heads(["the", "cat"], 5)


# ------------------------------------------------------------------ figures
def test_plot_head_shapes_places_cells_as_split_heads_does():
    fig = ll.plot_head_shapes(seq_len=3, d_model=6, n_heads=2)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert ".reshape(3, 2, 3)" in texts and ".transpose(1, 0, 2)" in texts and ".reshape(3, 6)" in texts
    # Q's 18 cells appear in Q, in the view and in the heads: 3 times each
    for i in range(3):
        for c in range(6):
            assert texts.count(f"{i},{c}") >= 3
    with pytest.raises(ValueError, match="n_heads=4 does not divide d_model=6"):
        ll.plot_head_shapes(3, 6, 4)


def test_plot_head_shapes_labels_a_heads_cells_alike_in_the_split_and_the_merge():
    """Head 1 of 2 over d_model = 6 holds columns 3-5: its cells read "0,3" … "2,5" in both rows."""
    fig = ll.plot_head_shapes(seq_len=3, d_model=6, n_heads=2)
    texts = [t.get_text() for t in fig.axes[0].texts]
    # split: Q, the view, the heads; merge: the head outputs, tokens first, Concat: 6 times each
    assert all(texts.count(f"{i},{c}") == 6 for i in range(3) for c in range(6)), texts
    assert not any(t in texts for t in ("0,6", "3,0")), "no label beyond Q's 3 × 6 cells"


def test_plot_head_grid_one_panel_per_head_on_one_scale():
    tokens = data.tokenize(data.SENTENCES["cat"])
    x = data.embed_tokens(tokens, d_model=8, seed=0)
    rng = np.random.default_rng(0)
    _, w = ll.multi_head_attention(x, *_weights(rng, 8), n_heads=4)
    fig = ll.plot_head_grid(w, tokens, head_names=["a", "b", "c", "d"])
    images = [im for ax in fig.axes for im in ax.images]
    assert len(images) == 4
    for k, im in enumerate(images):
        np.testing.assert_allclose(im.get_array(), w[k])
        assert im.get_clim() == (0.0, 1.0)
    titles = [ax.get_title() for ax in fig.axes if ax.images]
    assert titles == ["head 0: a", "head 1: b", "head 2: c", "head 3: d"]
    with pytest.raises(ValueError, match=r"\(n_heads, seq_len, seq_len\)"):
        ll.plot_head_grid(w[0], tokens)


# ------------------------------------------------------------------ exercises of notebook 06
def _solutions():
    from tests.helpers import solutions

    return solutions


@pytest.mark.parametrize("check, name", [(exercises.check_split_heads, "my_split_heads"),
                                         (exercises.check_merge_heads, "my_merge_heads"),
                                         (exercises.check_next_token_head, "my_next_token_head")])
def test_the_solutions_of_notebook_06_pass(check, name):
    feedback = check(getattr(_solutions(), name))
    assert feedback.passed, str(feedback)


def test_other_right_answers_pass_too():
    assert exercises.check_split_heads(lambda x, n_heads: np.stack(np.split(x, n_heads, axis=1))).passed
    assert exercises.check_merge_heads(lambda heads: np.concatenate(list(heads), axis=1)).passed
    # any large enough gain, any d_head: what counts is where the head looks
    assert exercises.check_next_token_head(lambda n: (np.hstack([8 * np.eye(n, k=1), np.zeros((n, 2))]),
                                                      np.hstack([np.eye(n), np.ones((n, 2))]))).passed


def _placeholder(*args):
    raise NotImplementedError("your code here")


@pytest.mark.parametrize("check", [exercises.check_split_heads, exercises.check_merge_heads,
                                   exercises.check_next_token_head])
def test_placeholders_are_not_attempted(check):
    assert check(_placeholder).status == "not attempted"


@pytest.mark.parametrize("check, fn, key, words", [
    (exercises.check_split_heads, lambda x, n_heads: x.reshape(n_heads, len(x), -1), "reshape_only",
     ["without a transpose", ".transpose(1, 0, 2)"]),
    (exercises.check_split_heads, lambda x, n_heads: x.reshape(len(x), n_heads, -1), "view_only",
     ["not moved to the front"]),
    (exercises.check_split_heads, lambda x, n_heads: np.stack([x[:, i::n_heads] for i in range(n_heads)]),
     "interleaved", ["every n_heads-th column"]),
    (exercises.check_merge_heads, lambda heads: heads.reshape(heads.shape[1], -1), "reshape_only",
     ["without transposing back"]),
    (exercises.check_merge_heads, lambda heads: np.concatenate(list(heads), axis=0), "stacked_tokens",
     ["under each other"]),
    (exercises.check_merge_heads, lambda heads: sum(heads), "summed", ["added"]),
    (exercises.check_next_token_head, lambda n: (10 * np.eye(n, k=-1), np.eye(n)), "previous_token",
     ["previous token"]),
    (exercises.check_next_token_head, lambda n: (np.eye(n, k=1), np.eye(n)), "too_soft",
     ["larger number"]),
    (exercises.check_next_token_head, lambda n: (5 * np.eye(n), 5 * np.eye(n)), "itself", ["itself"]),
])
def test_each_notebook_06_mistake_is_named(check, fn, key, words):
    feedback = check(fn)
    assert feedback.mistake == key, str(feedback)
    for word in words:
        assert word in feedback.message + feedback.hint, str(feedback)


def test_a_broken_head_is_explained_not_raised():
    feedback = exercises.check_next_token_head(lambda n: np.eye(n))
    assert feedback.passed is False and "two matrices" in feedback.message
    feedback = exercises.check_next_token_head(lambda n: (np.eye(n + 1), np.eye(n + 1)))
    assert feedback.passed is False and "one row per position" in feedback.message


# ------------------------------------------------------------------ the live head view and the explorer
def _sent(widget):
    """Record what ``widget`` sends to the browser: (names of the traits sent, total bytes) per message."""
    import json

    sent = []
    real = widget.comm.send

    def spy(data=None, metadata=None, buffers=None):
        size = len(json.dumps(data, default=str)) + sum(len(memoryview(b).cast("B")) for b in buffers or [])
        names = set(data.get("state", {})) | {path[0] for path in data.get("buffer_paths", [])}
        sent.append((names, size))
        return real(data=data, metadata=metadata, buffers=buffers)
    widget.comm.send = spy
    return sent


def test_head_view_sends_the_weights_of_every_head_in_one_message():
    from lessons_lib.figures.live.heads import HeadView
    from lessons_lib.figures.live.wire import decode_matrix

    rng = np.random.default_rng(0)
    w = ll.softmax(rng.standard_normal((8, 32, 32)) * 3)
    view = HeadView()
    sent = _sent(view)
    view.draw(w, data.tokens_of_length(32), token=5)
    assert len(sent) == 1, "one draw, one message"
    assert view.shape == [8, 32, 32] and view.token == 5 and view.panel_titles[7] == "head 7"
    shown = decode_matrix(view.encoding, view.values, view.shape, view.vmin, view.vmax)
    assert np.abs(shown - w).max() <= 0.5 / 256 + 1e-6     # 8-bit colour bins at this size: ±half a bin
    assert sent[0][1] < 32 * 1024, f"{sent[0][1]} bytes for 8 heads × 32 tokens"
    # the same tokens again: labels and ticks do not cross a second time
    view.draw(ll.softmax(rng.standard_normal((8, 32, 32))), data.tokens_of_length(32))
    assert "row_labels" not in sent[1][0] and "values" in sent[1][0]


def test_head_view_keeps_token_and_lock_valid_when_the_sizes_shrink():
    from lessons_lib.figures.live.heads import HeadView

    view = HeadView()
    view.draw(np.full((8, 10, 10), 0.1), token=9)
    view.locked = 6
    view.draw(np.full((4, 5, 5), 0.2))
    assert view.token == 4 and view.locked == -1
    with pytest.raises(ValueError, match=r"\(n_heads, seq_len, seq_len\)"):
        view.draw(np.ones((3, 4)))
    with pytest.raises(ValueError, match="token must be from 0 to 4"):
        view.draw(np.full((4, 5, 5), 0.2), token=7)


def test_head_view_traits_are_the_ones_its_javascript_reads():
    """Every synced trait of HeadView appears in the `heads` kind of live_figures.js, and back."""
    import re
    from pathlib import Path

    from lessons_lib.figures.live.heads import HeadView

    js = (Path(ll.__file__).parent / "figures" / "live" / "live_figures.js").read_text(encoding="utf-8")
    block = js[js.index("KINDS.heads = {"):]
    listed = set(re.findall(r'"(\w+)"', block[:block.index("]")]))
    synced = {name for name in HeadView().traits(sync=True)
              if not name.startswith("_")}
    assert listed <= synced, listed - synced
    assert {"values", "shape", "locked", "hovered", "token", "direction", "panel_titles"} <= listed


def test_head_grid_explorer_shows_the_librarys_heads():
    from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer

    ex = HeadGridExplorer(n_heads=8, d_model=64, seq_len=12, token=3)
    assert ex.last_error is None and ex.weights.shape == (8, 12, 12)
    np.testing.assert_allclose(ex.view.matrix, ex.weights)
    np.testing.assert_allclose(ex.weights.sum(axis=-1), 1.0)
    ex.set(n_heads=1)
    x = data.embed_tokens(data.tokens_of_length(12), 64, 0)
    w_q, w_k, w_v = data.projection_weights(64, 64, seed=0)
    _, single = ll.scaled_dot_product_attention(*ll.project_qkv(x, 3.0 * w_q, w_k, w_v))
    np.testing.assert_allclose(ex.weights[0], single, atol=1e-12)   # 1 head = single-head attention
    ex.set(seq_len=5)
    assert ex.controls["token"].max == 4 and ex.view.shape == [1, 5, 5]
    with pytest.raises(ValueError, match="n_heads must be one of 1, 2, 4, 8, 16; got 3"):
        ex.set(n_heads=3)
    with pytest.raises(TypeError, match="has no control heads"):
        ex.set(heads=2)


def test_head_grid_explorer_moves_cross_as_few_bytes():
    from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer

    ex = HeadGridExplorer(n_heads=8, d_model=64, seq_len=32)
    sent = _sent(ex.view)
    for n in (4, 8, 16, 8):
        ex.set(n_heads=n)
    for L in (31, 32):
        ex.set(seq_len=L)
    assert len(sent) == 6 and max(size for _, size in sent) < 32 * 1024


def test_head_grid_explorer_links_token_and_direction_in_the_browser():
    from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer

    ex = HeadGridExplorer()
    linked = {(link.source[1], link.target[1]) for link in ex._links}
    assert linked == {("value", "token"), ("index", "direction")}
    assert all(link.target[0] is ex.view for link in ex._links)


def test_head_grid_explorer_still_and_sentence_for_static_pages():
    from lessons_lib.explorers.lesson06_multi_head import HeadGridExplorer
    from lessons_lib.figures.base import read_still

    bundle = HeadGridExplorer(n_heads=4, seq_len=6)._repr_mimebundle_()
    assert "n_heads = 4" in read_still(bundle)[1]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "n_heads = 4" in bundle["text/plain"] and "JupyterLab" in bundle["text/plain"]
