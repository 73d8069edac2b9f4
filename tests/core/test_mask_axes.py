"""Masks from the course's builders carry their axes; Hugging Face's 0/1 attention_mask is read as such.

``padding_mask`` returns a ``SequenceMask``: against inputs with heads, ``(B, H, L, S)``, sequence
b's mask reaches every head of sequence b (as ``mask[:, None]`` would), also when B equals H,
where torch's right-aligned rule would silently apply it per head. A raw array keeps torch's rule.
A key-padding array of 0/1 integers (``attention_mask``) or booleans is read as key padding;
lengths only through ``lengths=``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from tests.helpers import examples


def _inputs(B, H, L, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((B, H, L, d)) for _ in range(3))


@settings(max_examples=examples(40))
@given(B=st.integers(1, 4), H=st.integers(1, 4), L=st.integers(2, 6), data=st.data())
def test_a_padding_mask_reaches_every_head_of_its_own_sequence(B, H, L, data):
    lengths = data.draw(st.lists(st.integers(1, L), min_size=B, max_size=B))
    q, k, v = _inputs(B, H, L, seed=B * 100 + H * 10 + L)
    mask = ll.padding_mask(lengths=lengths, n_keys=L)                     # (B, L, L)
    per_sequence = np.asarray(mask)[:, None]                              # (B, 1, L, L): what is meant
    for attend in (lambda m: ll.scaled_dot_product_attention(q, k, v, mask=m),
                   lambda m: (None, ll.attention_weights(q @ np.swapaxes(k, -1, -2), d_k=3, mask=m))):
        got, want = attend(mask), attend(per_sequence)
        for a, b in zip(got, want):
            if a is not None:
                np.testing.assert_array_equal(a, b)
    weights = ll.scaled_dot_product_attention(q, k, v, mask=mask)[1]
    for b, n in enumerate(lengths):
        assert (weights[b, :, :, n:] == 0).all()          # the padding keys of sequence b, in every head


def test_when_batch_equals_heads_the_mask_is_not_applied_per_head():
    """The report's case: lengths [4, 2] with B = H = 2 gave sequence 1's padding to head 1 of sequence 0."""
    q, k, v = _inputs(2, 2, 4)
    weights = ll.scaled_dot_product_attention(q, k, v, mask=ll.padding_mask(lengths=[4, 2]))[1]
    assert (weights[0, 1, :, 2:] > 0).all()        # sequence 0 has 4 real tokens in every head
    assert (weights[1, :, :, 2:] == 0).all()       # sequence 1 has 2, in every head


def test_a_raw_array_keeps_torchs_right_aligned_rule():
    q, k, v = _inputs(2, 2, 4)
    raw = np.asarray(ll.padding_mask(lengths=[4, 2]))          # a plain (2, 4, 4) array
    weights = ll.scaled_dot_product_attention(q, k, v, mask=raw)[1]
    assert (weights[:, 1, :, 2:] == 0).all() and (weights[0, 0, :, 2:] > 0).all()   # aligned with the heads


def test_multi_head_attention_and_torch_agree_with_a_sequence_mask():
    torch = pytest.importorskip("torch")
    q, k, v = _inputs(3, 3, 5)
    mask = ll.padding_mask(lengths=[5, 3, 1])
    ours = ll.scaled_dot_product_attention(q, k, v, mask=mask)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.as_tensor(t) for t in (q, k, v)), attn_mask=torch.as_tensor(np.asarray(mask)[:, None]))
    np.testing.assert_allclose(ours[0], theirs.numpy(), atol=1e-12)
    fused = ll.sdpa_attention(q, k, v, mask=mask, device="cpu").output
    np.testing.assert_allclose(fused, ours[0], atol=1e-12)
    np.testing.assert_allclose(ll.torch_attention_with_weights(q, k, v, mask=mask)[1], ours[1], atol=1e-12)


@pytest.mark.parametrize("valid", [[[1, 1, 1, 0], [1, 1, 0, 0]],
                                   [[True, True, True, False], [True, True, False, False]]],
                         ids=["0/1 ints (attention_mask)", "booleans"])
def test_a_key_padding_array_is_read_as_such(valid):
    mask = ll.padding_mask(np.array(valid))
    assert mask.shape == (2, 4, 4)
    np.testing.assert_array_equal(mask, ll.padding_mask(lengths=[3, 2], n_keys=4))


def test_an_attention_mask_of_only_ones_keeps_its_shape():
    """All ones: every key real. Read as lengths it would have been a different, silently wrong, shape."""
    assert ll.padding_mask(np.ones((2, 5), dtype=np.int64)).shape == (2, 5, 5)
    assert ll.padding_mask([1, 1, 1]).shape == (3, 3)


def test_lengths_only_where_lengths_are_asked_for():
    with pytest.raises(ValueError, match=r"lengths=") as info:
        ll.padding_mask([4, 2])
    assert "0 (or False) for padding" in str(info.value)
    with pytest.raises(TypeError, match="exactly one"):
        ll.padding_mask([1, 0], lengths=[1])
    with pytest.raises(ValueError, match="n_keys"):
        ll.padding_mask([1, 1, 0], n_keys=4)
    assert ll.padding_mask(lengths=[4, 2]).shape == (2, 4, 4)


def test_a_torch_attention_mask_is_accepted():
    torch = pytest.importorskip("torch")
    hf = torch.tensor([[1, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(ll.padding_mask(hf), ll.padding_mask(lengths=[2, 1], n_keys=3))
