"""Lesson 12's look inside a Llama-style model: offline (``LESSONS_OFFLINE=1``, always in CI) it says so in
one line and reads a tiny Llama-style stack of the course's own functions, the same with transformers or
without (Binder, a learner's machine), its decode loop with a KV cache equal to its full attention.
Online, the course's grouped-query attention gives a transformers Llama's own attention weights, and its
decode loop each layer's attention output, to float32's precision: held here on a tiny random
LlamaModel, and the online glue on a tiny LlamaForCausalLM with a stand-in tokenizer (nothing is
downloaded)."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.lab import llama

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def inside():
    return ll.look_inside_llama(online=False)


def test_offline_says_so_in_one_line_and_reads_a_stack_of_the_courses_own_functions(inside, monkeypatch):
    assert inside.note.startswith("Offline") and "\n" not in inside.note
    assert "built from the course's own functions" in inside.note
    assert inside.attention.reason == "offline by request"
    assert (inside.n_heads, inside.n_kv_heads, inside.head_dim) == (8, 2, 8)
    assert inside.attention.weights.shape == (4, 8, 12, 12) and inside.attention.tokens[1] == "animal"
    monkeypatch.setenv("LESSONS_OFFLINE", "1")
    assert ll.look_inside_llama("The cat sat.").attention.tokens == ["The", "cat", "sat", "."]


def test_offline_the_cached_decoding_equals_full_attention_and_no_model_is_claimed(inside):
    assert inside.weights_agreement is None and inside.decode_agreement < 1e-12
    claims = inside.claims()
    assert "model's own" not in claims and "not compared" not in claims          # offline: no model claimed
    assert claims == ("every layer's output decoded token by token with a KVCache, against the same layer "
                      "over the whole sequence (grouped_query_attention): largest difference below 1e-5")
    w = inside.attention.weights
    np.testing.assert_allclose(w.sum(-1), 1, atol=1e-9)
    assert (np.triu(w, 1) == 0).all()
    assert inside.kv_per_token == 2 * 4 * 2 * 8 * 4
    assert inside.groups == "KV head 0: query heads 0, 1, 2, 3; KV head 1: query heads 4, 5, 6, 7"


def test_lesson_10s_explorer_shows_its_heads(inside):
    explorer = ll.RealModelExplorer(inside.attention, layer=2)
    assert explorer.widget is not None and not explorer.error_box.value
    assert "layer = 2 of 4" in explorer.settings()


def test_a_model_without_eager_attention_is_refused_with_the_way_to_load_it():
    model = ll.tiny_llama(1)
    model.config._attn_implementation = "sdpa"
    with pytest.raises(ValueError, match='attn_implementation="eager"'):
        ll.llama_attention(model, [[1, 2, 3]])
    with pytest.raises(TypeError, match="LlamaForCausalLM, give its .model"):
        ll.llama_attention(torch.nn.Linear(2, 2), [[1]])


def test_the_online_path_reads_a_pretrained_model_the_same_way(monkeypatch):
    import transformers

    class Tokenizer:
        def __call__(self, text):
            return {"input_ids": [3, 1, 4, 1, 5]}

        def convert_ids_to_tokens(self, ids):
            return [f"t{i}" for i in ids]

        def convert_tokens_to_string(self, tokens):
            return tokens[0]

    class Wrapped:
        def __init__(self):
            self.model = ll.tiny_llama(2)

    monkeypatch.setattr(llama, "offline_reason", lambda online=True, weights="": None)  # as if online
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda name: Tokenizer())
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", lambda name, **kw: Wrapped())
    found = llama.look_inside_llama("anything")
    assert found.note.startswith("Online: SmolLM2-135M (pretrained") and found.attention.reason == ""
    assert found.attention.tokens == ["t3", "t1", "t4", "t1", "t5"] and found.weights_agreement < 1e-5
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained",
                        lambda name, **kw: (_ for _ in ()).throw(OSError("cut")))
    fallback = llama.look_inside_llama("anything")
    assert fallback.note.startswith("Offline")
    assert "could not be loaded (OSError)" in fallback.attention.reason


def test_offline_needs_no_transformers(monkeypatch):
    """Binder and a learner's machine have no transformers: the offline look never builds a transformers
    model, so lesson 12 runs there and shows the same output as here."""
    def no_transformers(seed=0, **kwargs):
        raise ImportError("No module named 'transformers'")

    monkeypatch.setattr(llama, "tiny_llama", no_transformers)
    inside = ll.look_inside_llama(online=False)
    assert inside.attention.weights.shape == (4, 8, 12, 12)
    ll.RealModelExplorer(inside.attention, layer=1)   # what the notebook shows next


def test_the_courses_functions_recompute_a_transformers_llama_and_its_cached_decoding():
    ids = [3, 1, 4, 1, 5, 9, 2, 6]
    weights, weights_agreement, decode_agreement = ll.llama_attention(ll.tiny_llama(0), [ids])
    assert weights.shape == (4, 8, 8, 8)
    assert weights_agreement < 1e-5 and decode_agreement < 1e-5


def test_the_lessons_comparison_with_transformers_llama_claims_what_holds_and_says_why():
    pytest.importorskip("transformers")
    claims = ll.transformers_agreement(seed=0)
    assert len(claims) == 5 and all(c.startswith("largest difference below") for c in claims.values())
    assert claims["the values in the course's KVCache against transformers' DynamicCache (layer 0)"].endswith(
        "below 1e-12")
    assert "float32 even in a float64 model" in ll.transformers_agreement.__doc__
