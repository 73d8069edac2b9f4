"""Lesson 10's look inside a real model: GPT-2's heads by the course's functions, or its own model offline,
and a note that says which it shows.

Offline (no transformers, no internet, ``LESSONS_OFFLINE=1``, and always in CI) ``look_inside`` says so in
one line and returns the course's own model's heads; online it reads GPT-2 small. The GPT-2 path is held
here on a small random GPT-2 (no download): the course's ``multi_head_attention`` with the adapted weights
gives the model's own attention. The offline switches are read as huggingface_hub reads them; a sentence
the course's model cannot read is named in the note; a GPT-2 without eager attention is refused with the
way to load it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.lab import real_model
from tests.helpers import require

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def run():
    return ll.train_coref_model(steps=20, snapshot_every=10, progress=False)


@pytest.mark.training
def test_offline_says_so_in_one_line_and_shows_the_course_model(run, monkeypatch):
    monkeypatch.setenv("LESSONS_OFFLINE", "1")
    seen = real_model.look_inside(ll.SENTENCE_B, run=run)
    assert seen.note.startswith("Offline") and "\n" not in seen.note and "GPT-2" in seen.note
    assert seen.weights.shape == (2, 2, len(seen.tokens), len(seen.tokens)) and seen.agreement is None
    np.testing.assert_allclose(seen.weights.sum(-1), 1, atol=1e-6)


@pytest.mark.training
def test_a_sentence_the_course_model_cannot_read_falls_back_to_lesson_09s(run):
    seen = real_model.look_inside("Transformers read every word at once.", online=False, run=run)
    assert "animal" in seen.tokens


def test_the_gpt2_path_is_the_course_functions_on_gpt2s_weights():
    require(importlib.util.find_spec("transformers") is not None, "transformers is not installed")
    import transformers

    config = transformers.GPT2Config(n_embd=16, n_head=4, n_layer=2, n_positions=32, vocab_size=50)
    torch.manual_seed(0)
    model = transformers.GPT2Model._from_config(config, attn_implementation="eager").double().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)          # non-zero biases, LayerNorms away from 1 and 0
    weights, agreement = real_model.gpt2_layer_weights(model, torch.tensor([[3, 14, 15, 9, 26, 5]]))
    assert weights.shape == (2, 4, 6, 6) and agreement < 1e-10
    assert (np.triu(weights, k=1) == 0).all()          # causal, as GPT-2


@pytest.mark.training
def test_the_explorer_builds_at_both_ends_and_refuses_outside(run):
    seen = real_model.look_inside(online=False, run=run)
    for layer in (1, seen.n_layers):
        explorer = ll.RealModelExplorer(seen, layer=layer)
        assert explorer.widget is not None and not explorer.error_box.value
    with pytest.raises(ValueError, match="layer"):
        ll.RealModelExplorer(seen, layer=seen.n_layers + 1)
    with pytest.raises(ValueError, match="token"):
        ll.RealModelExplorer(seen, token=len(seen.tokens))
    with pytest.raises(TypeError, match="sentence"):
        real_model.look_inside(42)


# ------------------------------------------------------------------ the offline switches and the note
SWITCHES = ("LESSONS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
ENV_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                   max_size=6)
VALUE = st.one_of(st.none(), ENV_TEXT, st.sampled_from(["1", "0", "true", "FALSE", "no", "Yes", "on", "off",
                                                         "", " 1", "2", "tRuE", "y"]))


@pytest.fixture(scope="module")
def hub_constants():
    require(importlib.util.find_spec("huggingface_hub") is not None,
            "huggingface_hub is not installed (transformers brings it: requirements-dev.txt)")
    import huggingface_hub.constants

    return huggingface_hub.constants


def _hub_reads_offline(constants, monkeypatch, hf, tf) -> bool:
    """HF_HUB_OFFLINE as huggingface_hub itself computes it, from these values (its module re-read)."""
    for name, value in (("HF_HUB_OFFLINE", hf), ("TRANSFORMERS_OFFLINE", tf)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return importlib.reload(constants).HF_HUB_OFFLINE


@settings(max_examples=150, deadline=None)
@given(hf=VALUE, tf=VALUE)
def test_the_hubs_offline_switches_are_read_as_huggingface_hub_reads_them(hub_constants, hf, tf):
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("LESSONS_OFFLINE", raising=False)
        try:
            expected = _hub_reads_offline(hub_constants, patch, hf, tf)
            assert real_model.offline_requested() == expected, (hf, tf)
        finally:
            patch.undo()
            importlib.reload(hub_constants)               # the process' own setting back


@pytest.mark.parametrize("value", ["false", "no", "0", "off", "", "FALSE"])
def test_false_no_and_off_keep_lesson_10_online(value, monkeypatch):
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert real_model.offline_requested() is False
    monkeypatch.setenv("LESSONS_OFFLINE", value)
    assert real_model.offline_requested() is False


@pytest.mark.parametrize("value", ["1", "true", "YES", "On"])
def test_each_switch_set_true_means_offline(value, monkeypatch):
    for name in SWITCHES:
        for other in SWITCHES:
            monkeypatch.delenv(other, raising=False)
        monkeypatch.setenv(name, value)
        assert real_model.offline_requested() is True, name


def test_without_huggingface_hub_the_same_values_mean_true(hub_constants, monkeypatch):
    assert real_model.TRUE_VALUES == frozenset(hub_constants.ENV_VARS_TRUE_VALUES)
    monkeypatch.setitem(sys.modules, "huggingface_hub.constants", None)      # as if it were not installed
    assert real_model.true_values() == real_model.TRUE_VALUES




@pytest.mark.parametrize("sentence", ["The cat sat on the mat.", "Transformers read every word at once.",
                                      "The animal saw the street and it and it."])
def test_a_sentence_the_course_model_cannot_read_is_named_in_the_note(run, sentence):
    seen = real_model.look_inside(sentence, online=False, run=run)
    assert "\n" not in seen.note and seen.note.startswith("Offline")
    assert f"cannot read {sentence!r}" in seen.note and ll.SENTENCE_A in seen.note
    assert seen.tokens[1:4] == ["the", "animal", "didn't"]                   # what the note says is shown


def test_a_sentence_it_can_read_gets_no_such_note(run):
    seen = real_model.look_inside(ll.SENTENCE_B, online=False, run=run)
    assert "cannot read" not in seen.note and "wide" in seen.tokens


@pytest.mark.parametrize("implementation", ["sdpa"])
def test_gpt2_without_eager_attention_is_refused_with_the_way_to_load_it(implementation):
    require(importlib.util.find_spec("transformers") is not None, "transformers is not installed")
    import transformers

    config = transformers.GPT2Config(n_embd=16, n_head=4, n_layer=2, n_positions=32, vocab_size=50)
    model = transformers.GPT2Model._from_config(config, attn_implementation=implementation).double().eval()
    with pytest.raises(ValueError) as error:
        real_model.gpt2_layer_weights(model, torch.tensor([[3, 14, 15, 9]]))
    message = str(error.value)
    assert f"attn_implementation={implementation!r}" in message
    assert 'attn_implementation="eager"' in message and "set_attn_implementation" in message
