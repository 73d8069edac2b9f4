"""Look inside a real model: GPT-2 small's heads on your sentence, by the course's own functions (lesson 10).

:func:`look_inside` loads GPT-2 small's pretrained weights with Hugging Face
transformers, reads each layer's attention weights into the course's layout
(:func:`lessons_lib.lab.adapters.weights_from_gpt2_attention`) and computes every
head's attention pattern with :func:`lessons_lib.core.multihead.multi_head_attention`
on the hidden states GPT-2 feeds its attention layers; it also checks that these
patterns are GPT-2's own (``agreement``). When transformers or the internet is
missing (and always in CI), it says so in one line and shows the same views on the
course's own model, trained here as in lesson 09. Lesson 10's ``RealModelExplorer``
(``explorers/lesson10_review_and_paper.py``) shows them on the head grid of lesson 06.

Nothing is downloaded unless ``online`` allows it and huggingface.co answers within
a second or two; ``LESSONS_OFFLINE=1`` (or ``HF_HUB_OFFLINE=1``, or ``TRANSFORMERS_OFFLINE=1``) keeps it
offline. Each variable is read as huggingface_hub reads ``HF_HUB_OFFLINE``: 1, ON, YES or TRUE (any case)
means offline, anything else (0, false, no, empty) does not.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass

import numpy as np

from . import coref

__all__ = ["ModelAttention", "look_inside", "gpt2_attention", "gpt2_layer_weights", "course_model_attention",
           "GPT2_NAME", "offline_reason"]

GPT2_NAME = "gpt2"              # GPT-2 small on the Hugging Face hub: 12 layers × 12 heads, d_model = 768
_HUB = ("huggingface.co", 443)


@dataclass(frozen=True)
class ModelAttention:
    """Every head's attention on one sentence.

    ``weights (n_layers, n_heads, L, L)`` (rows: queries, columns: keys); ``tokens``
    the L tokens as the model split them; ``source`` the model in words; ``note`` one
    line on where the weights came from (shown above the views, the same whatever kept
    GPT-2 away); ``reason`` why GPT-2 was not used ("" when it was); ``agreement`` the
    largest difference between the course's weights and the model's own (None offline).
    """

    weights: np.ndarray
    tokens: list
    source: str
    note: str
    agreement: float | None = None
    reason: str = ""

    @property
    def n_layers(self) -> int:
        return self.weights.shape[0]

    @property
    def n_heads(self) -> int:
        return self.weights.shape[1]


# The values huggingface_hub reads as "true" (huggingface_hub.constants.ENV_VARS_TRUE_VALUES, used when
# it is installed; this copy when it is not: tests/lab/test_real_model.py holds the two together).
TRUE_VALUES = frozenset({"1", "ON", "YES", "TRUE"})


def true_values() -> frozenset:
    try:
        from huggingface_hub.constants import ENV_VARS_TRUE_VALUES  # no torch: a few standard modules
    except ImportError:
        return TRUE_VALUES
    return frozenset(ENV_VARS_TRUE_VALUES)


def _is_true(value: str | None) -> bool:
    """An environment variable's value as huggingface_hub reads its switches (``_is_true`` there)."""
    return value is not None and value.upper() in true_values()


def offline_requested() -> bool:
    """LESSONS_OFFLINE, or the hub's HF_HUB_OFFLINE (else TRANSFORMERS_OFFLINE), read as the hub does."""
    hub = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
    return _is_true(os.environ.get("LESSONS_OFFLINE")) or _is_true(hub)


def _hub_reachable(timeout: float = 1.5) -> bool:
    try:
        with socket.create_connection(_HUB, timeout=timeout):
            return True
    except OSError:
        return False


def offline_reason(online: bool = True, weights: str = "the weights") -> str | None:
    """Why a look inside a real model must stay offline, in a few words, or None when it may go online:
    ``online=False`` or an offline switch (LESSONS_OFFLINE, HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE), no
    transformers, or no answer from huggingface.co to fetch ``weights`` (lessons 10 and 12)."""
    if not online or offline_requested():
        return "offline by request"
    try:
        import transformers  # noqa: F401
    except ImportError:
        return "transformers is not installed (pip install transformers)"
    if not _hub_reachable():
        return f"no internet to fetch {weights}"
    return None


def gpt2_attention(sentence: str, *, name: str = GPT2_NAME) -> ModelAttention:
    """GPT-2's heads on ``sentence``, computed by the course's ``multi_head_attention``.

    Loads ``name`` with transformers (the hub's cache first, then the internet), runs
    the sentence once to get the hidden states entering each layer, applies the layer's
    ``ln_1`` and then ``multi_head_attention(h, **weights_from_gpt2_attention(attn),
    causal=True)``, in float64. ``agreement`` is the largest difference from GPT-2's
    own ``output_attentions`` (float32): about 1e-5 or better. Raises if transformers or the
    weights are missing.
    """
    from transformers import AutoTokenizer, GPT2Model

    tokenizer = AutoTokenizer.from_pretrained(name)
    model = GPT2Model.from_pretrained(name, attn_implementation="eager").eval()
    ids = tokenizer(sentence, return_tensors="pt")["input_ids"]
    weights, agreement = gpt2_layer_weights(model, ids)
    tokens = [tokenizer.convert_tokens_to_string([t]) for t in tokenizer.convert_ids_to_tokens(ids[0])]
    return ModelAttention(weights, tokens, "GPT-2 small (pretrained, 12 layers × 12 heads)",
                          f"GPT-2 small's real heads on your sentence, computed by multi_head_attention "
                          f"with GPT-2's weights (they match GPT-2's own attention to {agreement:.0e}).",
                          agreement)


def gpt2_layer_weights(model, ids) -> tuple[np.ndarray, float]:
    """Every layer's heads of a transformers ``GPT2Model`` on token ids ``(1, L)``, by the course's functions.

    Returns ``(weights (n_layers, n_heads, L, L), agreement)``: the course's
    ``multi_head_attention`` on ``ln_1`` of each layer's input hidden state, with the
    layer's weights read by ``weights_from_gpt2_attention``; ``agreement`` is the largest
    difference from the model's own ``output_attentions`` (the model needs the eager
    attention implementation to return them).
    """
    import torch

    from ..core.multihead import multi_head_attention
    from .adapters import weights_from_gpt2_attention

    if not hasattr(model, "h") or not hasattr(model, "config"):
        raise TypeError(f"gpt2_layer_weights takes a transformers GPT2Model; got {type(model).__name__} "
                        f"(for a GPT2LMHeadModel, give its .transformer).")
    implementation = getattr(model.config, "_attn_implementation", "eager") or "eager"
    if implementation != "eager":
        raise ValueError(_EAGER_NEEDED.format(implementation=implementation))
    with torch.no_grad():
        run = model(ids, output_hidden_states=True, output_attentions=True)
        if not run.attentions or any(a is None for a in run.attentions):
            raise ValueError(_EAGER_NEEDED.format(implementation=implementation))
        layers = []
        for block, hidden in zip(model.h, run.hidden_states):
            h = block.ln_1(hidden)[0].double().numpy()
            layers.append(multi_head_attention(h, **weights_from_gpt2_attention(block.attn), causal=True)[1])
    weights = np.stack(layers)
    theirs = np.stack([a[0].double().numpy() for a in run.attentions])
    return weights, float(np.abs(weights - theirs).max())


_EAGER_NEEDED = (
    "gpt2_layer_weights compares the course's weights with GPT-2's own, and only the eager attention "
    "implementation returns them; this model runs attn_implementation={implementation!r} (transformers' "
    "default is SDPA, which never forms the weights). Load it with GPT2Model.from_pretrained(name, "
    "attn_implementation=\"eager\"), or call model.set_attn_implementation(\"eager\") first.")


def course_model_attention(sentence: str = coref.SENTENCE_A, *, run=None, steps: int = 300,
                           seed: int = 0) -> ModelAttention:
    """The heads of the course's own model (lesson 09) on ``sentence`` (words it knows).

    ``run`` a ``TrainingRun`` to reuse; by default one is trained here (``steps`` steps,
    a few seconds). A sentence the model cannot read (a word it never saw, not exactly one
    "it") is replaced by lesson 09's sentence A, and ``note`` says so in one line, naming why.
    """
    from . import models

    run = models.train_coref_model(steps=steps, seed=seed, progress=False) if run is None else run
    note = ""
    try:
        reading = models.read_attention(run, sentence)
    except ValueError as exc:
        why = re.split(r"[:;]", str(exc), maxsplit=1)[0].rstrip(".")
        note = (f"It cannot read {sentence!r} ({why[:1].lower()}{why[1:]}), so these are its heads on "
                f"lesson 09's sentence {coref.SENTENCE_A!r} instead.")
        reading = models.read_attention(run, coref.SENTENCE_A)
    L = len(reading.tokens)
    cfg = run.model.config if hasattr(run, "model") else run.config
    source = f"the course's model of lesson 09 ({cfg['n_layers']} layers × {cfg['n_heads']} heads)"
    return ModelAttention(reading.layers[:, :, :L, :L], list(reading.tokens), source, note)


def look_inside(sentence: str = coref.SENTENCE_A, *, online: bool = True, run=None) -> ModelAttention:
    """GPT-2 small's heads on ``sentence`` with transformers and the internet, else the course's model.

    The returned ``note`` says in one line which it is (``reason``: what kept GPT-2
    away). ``run``: a lesson-09 ``TrainingRun`` to use offline instead of training one.
    """
    if not isinstance(sentence, str) or not sentence.strip():
        raise TypeError(f"sentence must be text, e.g. {coref.SENTENCE_A!r}; got {sentence!r}.")
    reason = offline_reason(online, "GPT-2's weights")
    if reason is None:
        try:
            return gpt2_attention(sentence)
        except Exception as exc:             # a download cut short, a hub error: fall back, and say why
            reason = f"GPT-2 could not be loaded ({type(exc).__name__})"
    own = course_model_attention(sentence, run=run)
    note = (f"Offline: GPT-2 small needs transformers and the internet, so these are the same views "
            f"on {own.source}." + (f" {own.note}" if own.note else ""))
    return ModelAttention(own.weights, own.tokens, own.source, note, reason=reason)
