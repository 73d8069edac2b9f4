"""Every option of a real attention module is reproduced by the adapters or refused by name: never a silent
wrong answer.

The options are not listed by hand: they are read from the modules themselves, ``nn.MultiheadAttention``'s
constructor and the ``GPT2Config`` / ``BertConfig`` attributes with the attention classes' own arguments,
plus the ways a module is built (on the ``meta`` device, with another attention implementation). Each is
changed away from its default, alone (one test per option) and together with others (hypothesis); the
module is built with random weights and non-zero biases in float64, and then either

* the adapter reads it and ``multi_head_attention`` gives the module's outputs and attention weights
  to 1e-10, or
* the adapter refuses it with a message that names the option.

An option new in a later torch or transformers fails ``test_every_option_is_walked`` until it is given
a changed value here, so it cannot slip past. transformers is a test-only dependency; nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.lab import adapters
from tests.helpers import require
from tests.helpers.modules import TOL, B, D, H, L, additive, agree, hf_padding, inputs, randomize

torch = pytest.importorskip("torch")
nn = torch.nn


# Config attributes that describe the file, not the computation (the tests always compute in float64).
METADATA = {"transformers_version", "architectures", "id2label", "label2id", "problem_type", "dtype",
            "_name_or_path", "model_type"}
# Changed values for options whose default is not a bool or a number (None, text).
CHANGED = {"n_inner": 64, "activation_function": "relu", "hidden_act": "relu", "summary_type": "last",
           "summary_activation": "tanh", "classifier_dropout": 0.3, "pad_token_id": 1, "bos_token_id": 1,
           "eos_token_id": 1, "attn_implementation": "sdpa", "device": "meta",
           "position_embedding_type": "relative_key", "layer_idx": 1, "kdim": D // 2, "vdim": D // 2,
           "dtype": "float32"}
# Options that change only the rounding: GPT-2's reorder_and_upcast_attn computes its scores in float32,
# even in a float64 module (the same formula, Megatron's order): agreement at float32's precision.
ROUNDING_ONLY = {"reorder_and_upcast_attn": 1e-5}


def _changed(name: str, default):
    if name in CHANGED:
        return CHANGED[name]
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return 2 * default if default else 1
    if isinstance(default, float):
        return 0.3 if default != 0.3 else 0.2
    raise AssertionError(f"option {name}={default!r}: give it a changed value in CHANGED")


@dataclass
class Family:
    """One kind of attention module: its options, how it is built, run, read and computed by the course."""

    name: str
    options: dict                                   # option -> its changed value
    build: Callable                                 # build(changed options) -> module
    run: Callable                                   # run(module, x, allowed (B, L, L)) -> (output, weights)
    read: Callable = field(default=None)            # read(module) -> weights for multi_head_attention

    def check(self, changed: dict) -> str:
        """'reproduced' or 'refused'; fails when the course silently disagrees or refuses unnamed."""
        with _built(self, changed) as module:
            try:
                weights = self.read(module)
            except (TypeError, ValueError) as error:
                named = [option for option in changed if option in str(error)]
                assert named, f"{self.name} {changed}: refused without naming the option: {error}"
                return "refused"
            d_model = weights["w_q"].shape[0]
            x = np.random.default_rng(7).standard_normal((B, L, d_model))
            allowed = np.asarray(ll.causal_mask(L) & ll.padding_mask(hf_padding()))     # (B, L, L)
            theirs = self.run(module, x, allowed)
            ours = ll.multi_head_attention(x, **weights, mask=allowed)
            tol = max([ROUNDING_ONLY.get(option, TOL) for option in changed] + [TOL])
            out_error = float(np.abs(ours[0] - theirs[0].detach().numpy()).max())
            assert out_error < tol, f"{self.name} {changed}: outputs differ by {out_error:.1e}, silently"
            if theirs[1] is not None:                    # SDPA returns no weights
                w_error = float(np.abs(ours[1] - theirs[1].detach().numpy()).max())
                assert w_error < tol, f"{self.name} {changed}: weights differ by {w_error:.1e}, silently"
            return "reproduced"


class Unbuildable(Exception):
    """torch or transformers itself refuses these options together (e.g. output_attentions with SDPA)."""


@contextlib.contextmanager
def _built(family: Family, changed: dict):
    try:
        module = family.build(changed)
    except (ValueError, AssertionError) as error:
        raise Unbuildable(f"{family.name} {changed}: {error}") from error
    if not any(p.device.type == "meta" for p in module.parameters()):
        module = randomize(module, seed=11)
    yield module


def _additive(allowed):
    """(B, L, L) bool as the (B, 1, L, L) additive float mask transformers' attention layers take."""
    return additive(allowed[:, None])


def _device(changed: dict):
    return torch.device("meta") if changed.get("device") == "meta" else contextlib.nullcontext()


# ------------------------------------------------------------------ torch.nn.MultiheadAttention

def _mha_family() -> Family:
    signature = inspect.signature(nn.MultiheadAttention.__init__)
    defaults = {"embed_dim": D, "num_heads": H}
    sizes = {"embed_dim": D // 2, "num_heads": H // 2}
    options = {name: sizes[name] if name in sizes else _changed(name, p.default)
               for name, p in signature.parameters.items() if name != "self"}
    options["dtype"] = torch.float32            # built in float32, then read as float64 like any other

    def build(changed):
        kwargs = {**defaults, **changed}
        if kwargs.get("embed_dim") != D and "num_heads" not in changed:
            kwargs["num_heads"] = H // 2
        return nn.MultiheadAttention(**kwargs)

    def run(module, x, allowed):
        tx = torch.as_tensor(x)
        blocked = torch.as_tensor(~allowed).repeat_interleave(module.num_heads, dim=0)   # (B·H, L, L)
        if not module.batch_first:
            tx = tx.transpose(0, 1)
        out, w = module(tx, tx, tx, need_weights=True, average_attn_weights=False, attn_mask=blocked)
        return (out if module.batch_first else out.transpose(0, 1)), w

    return Family("nn.MultiheadAttention", options, build, run, adapters.weights_from_torch_multihead)


# ------------------------------------------------------------------ transformers: GPT-2 and BERT

def _config_options(config_class, attention_class) -> dict:
    config = config_class()
    options = {name: _changed(name, value) for name, value in config.to_dict().items()
               if name not in METADATA}
    for name, p in inspect.signature(attention_class.__init__).parameters.items():
        if name not in ("self", "config"):
            options[name] = _changed(name, p.default)
    options["device"] = "meta"
    options["attn_implementation"] = "sdpa"
    return options


def _configured(transformers, config_class, small: dict, changed: dict):
    config = config_class(**small)
    config._attn_implementation = changed.get("attn_implementation", "eager")
    for name, value in changed.items():
        if name not in ("device", "attn_implementation") and hasattr(config, name):
            setattr(config, name, value)
    return config


def _gpt2_family(transformers) -> Family:
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

    options = _config_options(transformers.GPT2Config, GPT2Attention)
    options.update(n_embd=2 * D, n_head=2 * H, layer_idx=1)
    small = {"n_embd": D, "n_head": H, "n_layer": 3, "n_positions": 32, "vocab_size": 50}

    def build(changed):
        config = _configured(transformers, transformers.GPT2Config, small, changed)
        kwargs = {"layer_idx": changed.get("layer_idx", 2)}   # layer 3: scale_attn_by_inverse_layer_idx ÷ 3
        if "is_cross_attention" in changed:
            kwargs["is_cross_attention"] = changed["is_cross_attention"]
        with _device(changed):
            return GPT2Attention(config, **kwargs)

    def run(module, x, allowed):
        mask = _additive(allowed)
        if module.reorder_and_upcast_attn:        # its float32 scores take a float32 mask, or it stops
            mask = mask.float()
        return module(torch.as_tensor(x), attention_mask=mask)

    return Family("GPT-2 attention", options, build, run, adapters.weights_from_gpt2_attention)


def _bert_family(transformers) -> Family:
    from transformers.models.bert.modeling_bert import BertAttention

    options = _config_options(transformers.BertConfig, BertAttention)
    options.update(hidden_size=2 * D, num_attention_heads=2 * H, position_embedding_type="relative_key")
    small = {"hidden_size": D, "num_attention_heads": H, "num_hidden_layers": 1, "intermediate_size": 32,
             "vocab_size": 50}

    def build(changed):
        config = _configured(transformers, transformers.BertConfig, small, changed)
        if "position_embedding_type" in changed:   # a config of an older transformers carries it
            config.position_embedding_type = changed["position_embedding_type"]
        kwargs = {name: changed[name] for name in ("is_causal", "layer_idx", "is_cross_attention")
                  if name in changed}
        with _device(changed):
            return BertAttention(config, **kwargs)

    def run(module, x, allowed):                      # the same mask on both sides: the weights are compared
        out, w = module.self(torch.as_tensor(x), attention_mask=_additive(allowed))
        return module.output.dense(out), w

    return Family("BERT attention", options, build, run, adapters.weights_from_bert_attention)


@pytest.fixture(scope="module")
def transformers():
    require(importlib.util.find_spec("transformers") is not None,
            "transformers is not installed (requirements-dev.txt pins it)")
    import transformers

    return transformers


@pytest.fixture(scope="module")
def families(transformers):
    return {"mha": _mha_family(), "gpt2": _gpt2_family(transformers), "bert": _bert_family(transformers)}


FAMILY_NAMES = ["mha", "gpt2", "bert"]


def test_every_option_is_walked(families):
    """The walk holds what torch and transformers offer; a new option fails _changed() until given one."""
    assert {"add_bias_kv", "add_zero_attn", "kdim", "vdim", "batch_first", "bias", "dropout",
            "device"} <= set(families["mha"].options)
    assert {"scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn",
            "is_cross_attention", "layer_idx", "add_cross_attention", "attn_implementation",
            "device"} <= set(families["gpt2"].options)
    assert {"is_decoder", "add_cross_attention", "is_causal", "is_cross_attention", "position_embedding_type",
            "attention_probs_dropout_prob", "attn_implementation", "device"} <= set(families["bert"].options)


def _walk():
    """(family, option) for every option, found as the families are built (a fixture cannot parametrize)."""
    if importlib.util.find_spec("transformers") is None:
        return [("mha", name) for name in _mha_family().options]
    import transformers as tf

    built = {"mha": _mha_family(), "gpt2": _gpt2_family(tf), "bert": _bert_family(tf)}
    return [(family, option) for family in FAMILY_NAMES for option in built[family].options]


WALK = _walk()


@pytest.mark.parametrize(("family", "option"), WALK, ids=[f"{f}-{o}" for f, o in WALK])
def test_each_option_alone_is_reproduced_or_refused_by_name(families, family, option):
    chosen = families[family]
    chosen.check({option: chosen.options[option]})


# The options that change what the module computes, and what becomes of each.
EXPECTED = [
    ("mha", "add_bias_kv", "refused"), ("mha", "add_zero_attn", "refused"), ("mha", "kdim", "refused"),
    ("mha", "vdim", "refused"), ("mha", "device", "refused"), ("mha", "bias", "reproduced"),
    ("mha", "batch_first", "reproduced"),
    ("gpt2", "scale_attn_by_inverse_layer_idx", "reproduced"), ("gpt2", "scale_attn_weights", "reproduced"),
    ("gpt2", "reorder_and_upcast_attn", "reproduced"), ("gpt2", "is_cross_attention", "refused"),
    ("gpt2", "device", "refused"), ("gpt2", "attn_implementation", "reproduced"),
    ("bert", "is_cross_attention", "refused"), ("bert", "is_causal", "refused"),
    ("bert", "position_embedding_type", "refused"), ("bert", "device", "refused"),
]


@pytest.mark.parametrize(("family", "option", "fate"), EXPECTED, ids=[f"{f}-{o}" for f, o, _ in EXPECTED])
def test_options_that_change_the_computation_meet_their_fate(families, family, option, fate):
    chosen = families[family]
    assert chosen.check({option: chosen.options[option]}) == fate


@pytest.mark.parametrize("family", FAMILY_NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_options_together_are_reproduced_or_refused_by_name(families, family, data):
    chosen = families[family]
    names = data.draw(st.sets(st.sampled_from(sorted(chosen.options)), min_size=2, max_size=4),
                      label="options")
    try:
        chosen.check({name: chosen.options[name] for name in names})
    except Unbuildable:
        reject()


def test_gpt2_scale_options_alone_change_the_module_so_the_walk_can_see_them(families):
    """The changed values are not no-ops: GPT-2's output with each scale option differs from the default."""
    gpt2 = families["gpt2"]
    x = torch.as_tensor(np.random.default_rng(1).standard_normal((B, L, D)))
    allowed = _additive(np.asarray(ll.causal_mask(L) & ll.padding_mask(hf_padding())))
    with torch.no_grad(), _built(gpt2, {}) as plain:
        reference = plain(x, attention_mask=allowed)[1]
    for option in ("scale_attn_weights", "scale_attn_by_inverse_layer_idx"):
        with torch.no_grad(), _built(gpt2, {option: gpt2.options[option]}) as changed:
            assert float((changed(x, attention_mask=allowed)[1] - reference).abs().max()) > 1e-3, option


def test_a_bert_decoder_is_read_with_causal_true_and_agrees(transformers):
    from transformers.models.bert.modeling_bert import BertLayer

    config = transformers.BertConfig(hidden_size=D, num_attention_heads=H, num_hidden_layers=1,
                                     intermediate_size=32, vocab_size=50, is_decoder=True,
                                     add_cross_attention=True)
    config._attn_implementation = "eager"
    layer = randomize(BertLayer(config, layer_idx=0), seed=12)
    with pytest.raises(ValueError, match=r"is_causal=True \(config.is_decoder"):
        adapters.weights_from_bert_attention(layer.attention)
    with pytest.raises(ValueError, match=r"cross-attention"):
        adapters.weights_from_bert_attention(layer.crossattention)
    with pytest.raises(ValueError, match=r"cross-attention"):
        adapters.weights_from_bert_attention(layer.crossattention.self)
    weights = adapters.weights_from_bert_attention(layer.attention, causal=True)
    x = inputs(12)
    allowed = np.asarray(ll.causal_mask(L) & ll.padding_mask(hf_padding()))
    out, w = layer.attention.self(torch.as_tensor(x), attention_mask=_additive(allowed))
    ours = ll.multi_head_attention(x, **weights, mask=ll.padding_mask(hf_padding()), causal=True)
    agree(ours, (layer.attention.output.dense(out), w), {}, "BERT decoder self-attention")
    with pytest.raises(TypeError, match="causal must be True or False"):
        adapters.weights_from_bert_attention(layer.attention, causal="yes")
