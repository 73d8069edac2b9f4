"""The adapters read real attention modules into the course's layout, and the course then agrees with them.

Each module is built from a small config with random weights and non-zero biases (no download):
``torch.nn.MultiheadAttention``, Hugging Face transformers' GPT-2 attention and BERT self-attention,
and a nanoGPT-style ``CausalSelfAttention``. ``multi_head_attention(x, **weights)`` must give the
module's outputs and attention weights to 1e-10 in float64, with causal and padding masks (a
Hugging Face 0/1 ``attention_mask`` through ``padding_mask``). transformers is a test-only dependency.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.lab import adapters
from tests.helpers import require
from tests.helpers.modules import D, H, L, additive, agree, hf_padding, inputs, randomize

torch = pytest.importorskip("torch")
nn = torch.nn

@pytest.fixture(scope="module")
def record():
    """The largest differences measured, printed at the end (the report's agreement figures)."""
    found = {}
    yield found
    print("\nlargest |course - module| (output, weights), float64:")
    for name, (o, w) in found.items():
        print(f"  {name:<40} {o:.1e}  {w:.1e}")


# ------------------------------------------------------------------ torch.nn.MultiheadAttention
@pytest.mark.parametrize("masking", ["none", "causal", "padding"])
def test_torch_multihead_attention(record, masking):
    module = randomize(nn.MultiheadAttention(D, H, bias=True, batch_first=True), seed=1)
    weights = adapters.weights_from_torch_multihead(module)
    x = inputs(1)
    kwargs, ours_kwargs = {}, {}
    if masking == "causal":
        kwargs["attn_mask"] = torch.as_tensor(~ll.causal_mask(L))              # torch: True = blocked
        ours_kwargs["causal"] = True
    if masking == "padding":
        kwargs["key_padding_mask"] = torch.as_tensor(hf_padding() == 0)       # True = padding
        ours_kwargs["mask"] = ll.padding_mask(hf_padding())
    tx = torch.as_tensor(x)
    theirs = module(tx, tx, tx, need_weights=True, average_attn_weights=False, **kwargs)
    ours = ll.multi_head_attention(x, **weights, **ours_kwargs)
    agree(ours, theirs, record, f"nn.MultiheadAttention {masking}")


# ------------------------------------------------------------------ nanoGPT
class CausalSelfAttention(nn.Module):
    """nanoGPT's CausalSelfAttention (Karpathy, MIT licence): the explicit path, returning the weights."""

    def __init__(self, n_embd, n_head, bias=True):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
        self.n_head, self.n_embd = n_head, n_embd

    def forward(self, x):
        Bx, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(Bx, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(Bx, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(Bx, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / k.size(-1) ** 0.5)
        att = att.masked_fill(torch.tril(torch.ones(T, T, dtype=torch.bool)).logical_not(), float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(Bx, T, C)
        return self.c_proj(y), att


def test_nanogpt_causal_self_attention(record):
    module = randomize(CausalSelfAttention(D, H), seed=2)
    x = inputs(2)
    agree(ll.multi_head_attention(x, **adapters.weights_from_nanogpt_attention(module), causal=True),
           module(torch.as_tensor(x)), record, "nanoGPT CausalSelfAttention")


# ------------------------------------------------------------------ transformers
@pytest.fixture(scope="module")
def transformers():
    require(importlib.util.find_spec("transformers") is not None,
            "transformers is not installed (requirements-dev.txt pins it)")
    import transformers

    return transformers


def test_gpt2_attention(record, transformers):
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

    config = transformers.GPT2Config(n_embd=D, n_head=H, n_layer=1, n_positions=32)
    config._attn_implementation = "eager"
    module = randomize(GPT2Attention(config, layer_idx=0), seed=3)
    x = inputs(3)
    allowed = ll.causal_mask(L) & ll.padding_mask(hf_padding())                # (B, L, L): per sequence
    theirs = module(torch.as_tensor(x), attention_mask=additive(np.asarray(allowed)[:, None]))
    ours = ll.multi_head_attention(x, **adapters.weights_from_gpt2_attention(module), mask=allowed)
    agree(ours, theirs, record, "GPT-2 attention, causal + padding")


@pytest.mark.parametrize("part", ["BertSelfAttention", "BertAttention (with output.dense)"])
def test_bert_attention(record, transformers, part):
    from transformers.models.bert.modeling_bert import BertAttention

    config = transformers.BertConfig(hidden_size=D, num_attention_heads=H, num_hidden_layers=1,
                                     intermediate_size=32, vocab_size=50)
    config._attn_implementation = "eager"
    attention = randomize(BertAttention(config), seed=4)
    x = inputs(4)
    hf_mask = hf_padding()
    out, w = attention.self(torch.as_tensor(x), attention_mask=additive((hf_mask == 1)[:, None, None, :]))
    module = attention.self
    if part.startswith("BertAttention"):
        module, out = attention, attention.output.dense(out)     # W_O: the dense layer before the residual
    weights = adapters.weights_from_bert_attention(module)
    ours = ll.multi_head_attention(x, **weights, mask=ll.padding_mask(hf_mask))
    agree(ours, (out, w), record, f"BERT {part}, padding")


def test_dispatch_by_module(transformers):
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

    config = transformers.GPT2Config(n_embd=D, n_head=H)
    for module, reader in ((nn.MultiheadAttention(D, H), adapters.weights_from_torch_multihead),
                           (CausalSelfAttention(D, H), adapters.weights_from_nanogpt_attention),
                           (GPT2Attention(config, layer_idx=0), adapters.weights_from_gpt2_attention)):
        got, want = adapters.attention_weights_of(module), reader(module)
        assert got["n_heads"] == H and all(np.array_equal(got[k], want[k]) for k in want if k != "n_heads")
    with pytest.raises(TypeError, match="MultiheadAttention"):
        adapters.attention_weights_of(nn.Linear(D, D))


def test_the_layout_matters():
    """Forgetting the transpose of a square nn.Linear weight raises nothing: only the numbers tell."""
    module = randomize(CausalSelfAttention(D, H), seed=5)
    weights = adapters.weights_from_nanogpt_attention(module)
    x = inputs(5)
    right = ll.multi_head_attention(x, **weights, causal=True)[0]
    wrong = ll.multi_head_attention(x, **{**weights, "w_q": weights["w_q"].T}, causal=True)[0]
    assert np.abs(right - wrong).max() > 1e-3


def test_biases_are_optional_and_bias_free_results_unchanged():
    rng = np.random.default_rng(6)
    x, ws = rng.standard_normal((L, D)), [rng.standard_normal((D, D)) for _ in range(4)]
    plain = ll.multi_head_attention(x, *ws, H)
    zeros = ll.multi_head_attention(x, *ws, H, **{name: np.zeros(D) for name in ("b_q", "b_k", "b_v", "b_o")})
    np.testing.assert_array_equal(plain[0], zeros[0])
    np.testing.assert_array_equal(plain[1], zeros[1])
    with pytest.raises(ValueError, match="b_K"):
        ll.multi_head_attention(x, *ws, H, b_k=np.zeros(D + 1))


@pytest.mark.subprocess
def test_importing_lessons_lib_and_its_adapters_does_not_import_torch(fresh_imports):
    assert "torch" not in fresh_imports["import lessons_lib.lab.adapters"]
