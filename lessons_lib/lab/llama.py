"""Look inside a Llama-style model: its attention layers read and run by the course's functions (lesson 12).

:func:`look_inside_llama` runs a sentence through a Llama-style model of Hugging Face transformers and, layer
by layer, reads the attention's weights into the course's layout
(:func:`~lessons_lib.lab.adapters.weights_from_llama_attention`: query heads sharing key/value heads, RoPE)
and recomputes it twice with the course's own functions: every head's weights by
:func:`~lessons_lib.core.decoding.grouped_query_attention`, and the layer's output by the decode loop,
token by token with a :class:`~lessons_lib.core.decoding.KVCache`. Both are compared with what the model
itself computed (:class:`LlamaInside`).

Online it reads SmolLM2-135M (:data:`SMALL_LLAMA`, the Llama architecture at 135 million parameters);
offline (no transformers, no internet, ``LESSONS_OFFLINE=1``, and always in CI) it builds a tiny random
Llama here (:func:`tiny_llama`), untrained, and says so in one line. Lesson 10's ``RealModelExplorer``
shows the heads (``.attention``). The model runs in float32 with transformers' eager attention: it computes
RoPE's angles and its softmax in float32, so the agreement is float32's, about 1e-6.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .._checks import check_memory, check_positive_int, check_seed, check_text
from ..core import decoding
from .adapters import weights_from_llama_attention
from .kv_memory import kv_cache_bytes
from .real_model import ModelAttention, offline_reason

__all__ = ["SMALL_LLAMA", "LLAMA_SENTENCE", "LlamaInside", "tiny_llama", "llama_attention",
           "look_inside_llama", "course_built_llama", "transformers_agreement"]

#: A small pretrained model of the Llama architecture on the Hugging Face hub: 30 layers, 9 query heads
#: sharing 3 key/value heads, head_dim 64, RoPE base 100,000 (its config.json).
SMALL_LLAMA = "HuggingFaceTB/SmolLM2-135M"
#: The sentence the lesson looks at.
LLAMA_SENTENCE = "The animal didn't cross the street because it was too tired."

#: the tiny Llama's shape, with transformers (:func:`tiny_llama`) or without (:func:`course_built_llama`)
TINY_LAYERS, TINY_HEADS, TINY_KV_HEADS, TINY_HEAD_DIM, TINY_D_MODEL = 4, 8, 2, 8, 64


@dataclass(frozen=True)
class LlamaInside:
    """What :func:`look_inside_llama` found.

    ``attention``: every head's weights as the course computed them (``weights (n_layers, n_heads, L, L)``,
    the tokens, where they came from, the note saying which model was read), for lesson 10's
    ``RealModelExplorer``; ``n_heads``, ``n_kv_heads``, ``head_dim``; ``weights_agreement``: the largest
    difference from the model's own attention weights; ``decode_agreement``: the largest difference between
    each layer's attention output and the course's decode loop fed the layer's input token by token;
    ``kv_per_token``: the bytes its cache keeps per token in float32. Offline (the course-built stack)
    there is no model of its own to compare with: ``weights_agreement`` is None.
    """

    attention: ModelAttention
    n_heads: int
    n_kv_heads: int
    head_dim: int
    weights_agreement: float | None
    decode_agreement: float
    kv_per_token: int

    @property
    def note(self) -> str:
        return self.attention.note

    def claims(self) -> str:
        """What was compared with what, as claims at float32's precision (no digit a machine could change).
        Online: every head and every layer's decoded output against the pretrained model's own. Offline the
        stack has no model of its own: its one claim is the decode loop against the same layers run over the
        whole sequence (:func:`transformers_agreement` holds the functions to transformers' Llama)."""
        def claim(value: float) -> str:
            return ("largest difference below 1e-5" if value < 1e-5
                    else f"largest difference {value:.1e}, NOT below 1e-5")
        decoded = claim(self.decode_agreement)
        if self.weights_agreement is None:
            return (f"every layer's output decoded token by token with a KVCache, against the same layer "
                    f"over the whole sequence (grouped_query_attention): {decoded}")
        return (f"every head's weights against the model's own: {claim(self.weights_agreement)}\n"
                f"every layer's output, decoded token by token with a KVCache, against the model's own: "
                f"{decoded}")

    @property
    def groups(self) -> str:
        """Which query heads share each key/value head, in words."""
        owner = decoding.kv_head_of(self.n_heads, self.n_kv_heads)
        return "; ".join(f"KV head {g}: query heads {', '.join(str(h) for h in np.flatnonzero(owner == g))}"
                         for g in range(self.n_kv_heads))


def tiny_llama(seed: int = 0, *, vocab_size: int = 256):
    """A tiny Llama built here, untrained: 4 layers of 8 query heads sharing 2 key/value heads (head_dim 8,
    hidden size 64, RoPE base 10,000), random weights from ``seed`` (the query and key projections drawn
    large enough that the heads do not all look alike), float32, eager attention. Returns the ``LlamaModel``.
    """
    import torch
    from transformers import LlamaConfig, LlamaModel

    seed = check_seed(seed, allow_generator=False)
    vocab_size = check_positive_int(vocab_size, "vocab_size")
    check_memory(vocab_size * 64 * 4, f"a tiny Llama's embedding table of vocab_size={vocab_size:,} words",
                 "Use a vocabulary of a few hundred to a few thousand words.")
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=TINY_D_MODEL, intermediate_size=2 * TINY_D_MODEL,
                         num_hidden_layers=TINY_LAYERS, num_attention_heads=TINY_HEADS,
                         num_key_value_heads=TINY_KV_HEADS, head_dim=TINY_HEAD_DIM,
                         max_position_embeddings=256,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    config._attn_implementation = "eager"
    generator = torch.Generator().manual_seed(seed)
    model = LlamaModel(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            scale = 0.2 if ("q_proj" in name or "k_proj" in name) else 0.12
            if p.ndim > 1:
                p.copy_(torch.randn(p.shape, generator=generator) * scale)
    return model


def _word_ids(sentence: str, vocab_size: int) -> tuple[list[str], list[int]]:
    """The words of ``sentence`` and an id for each (the same word, the same id): the tiny model's tokens."""
    words = re.findall(r"[A-Za-z']+|[^\sA-Za-z]", sentence)
    vocab = {w: i for i, w in enumerate(dict.fromkeys(w.lower() for w in words))}
    return words, [vocab[w.lower()] % vocab_size for w in words]


def llama_attention(model, ids) -> tuple[np.ndarray, float, float]:
    """Every layer of a transformers ``LlamaModel`` on token ids ``(1, L)``, by the course's functions.

    Returns ``(weights (n_layers, n_heads, L, L), weights_agreement, decode_agreement)``: each layer's heads
    by ``grouped_query_attention`` on the layer's normalised input with the weights read by
    ``weights_from_llama_attention``, their largest difference from the model's own ``output_attentions``,
    and the largest difference between the layer's attention output and the course's decode loop (a
    ``KVCache``, one token at a time). The model needs the eager attention implementation.
    """
    import torch

    if not hasattr(model, "layers") or not hasattr(model, "config"):
        raise TypeError(f"llama_attention takes a transformers LlamaModel; got {type(model).__name__} "
                        f"(for a LlamaForCausalLM, give its .model).")
    implementation = getattr(model.config, "_attn_implementation", "eager") or "eager"
    if implementation != "eager":
        raise ValueError(f"llama_attention compares the course's weights with the model's own, which only "
                         f"the eager attention returns; this model runs {implementation!r}. Load it with "
                         f"attn_implementation=\"eager\".")
    outputs = []
    hooks = [layer.self_attn.register_forward_hook(lambda _m, _i, out: outputs.append(out[0].detach()))
             for layer in model.layers]
    try:
        with torch.no_grad():
            run = model(torch.as_tensor(ids), output_hidden_states=True, output_attentions=True)
            layers, worst_decode = [], 0.0
            for layer, hidden, out in zip(model.layers, run.hidden_states, outputs):
                h = layer.input_layernorm(hidden)[0].double().numpy()
                weights = weights_from_llama_attention(layer.self_attn)
                layers.append(decoding.grouped_query_attention(h, **weights, causal=True)[1])
                decoded, _ = decoding.decode_loop(h, **weights)
                worst_decode = max(worst_decode, float(np.abs(decoded - out[0].double().numpy()).max()))
    finally:
        for hook in hooks:
            hook.remove()
    weights = np.stack(layers)
    theirs = np.stack([a[0].double().numpy() for a in run.attentions])
    return weights, float(np.abs(weights - theirs).max()), worst_decode


def _inside(model, tokens, ids, source: str, note: str, reason: str = "") -> LlamaInside:
    weights, agreement, decoded = llama_attention(model, [ids])
    config = model.config
    n_heads, n_kv = config.num_attention_heads, config.num_key_value_heads
    head_dim = model.layers[0].self_attn.head_dim
    attention = ModelAttention(weights, list(tokens), source, note, agreement, reason)
    return LlamaInside(attention, n_heads, n_kv, head_dim, agreement, decoded,
                       kv_cache_bytes(config.num_hidden_layers, n_kv, head_dim, 1, dtype="float32"))


def _small_llama(sentence: str, name: str) -> LlamaInside:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name)
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="eager",
                                                 dtype=torch.float32).model.eval()
    ids = tokenizer(sentence)["input_ids"]
    tokens = [tokenizer.convert_tokens_to_string([t]) for t in tokenizer.convert_ids_to_tokens(ids)]
    c = model.config
    source = (f"{name.split('/')[-1]} (pretrained, Llama architecture: {c.num_hidden_layers} layers × "
              f"{c.num_attention_heads} heads sharing {c.num_key_value_heads} key/value heads)")
    note = f"Online: {source}, read and recomputed by the course's functions."
    return _inside(model, tokens, ids, source, note)


def look_inside_llama(sentence: str = LLAMA_SENTENCE, *, online: bool = True, name: str = SMALL_LLAMA,
                      seed: int = 0) -> LlamaInside:
    """A Llama-style model's attention on ``sentence``, recomputed by the course: SmolLM2-135M with
    transformers and the internet, else (:func:`course_built_llama`) a tiny Llama-style stack of the course's
    own functions from ``seed``, the same on every machine, transformers or not (the course's tests hold
    those functions to transformers' Llama: :func:`tiny_llama`, :func:`llama_attention`). ``.note`` says in
    one line which it is; ``.attention.reason`` what kept the pretrained model away. Notebook 12."""
    sentence = check_text(sentence, "sentence")
    reason = offline_reason(online, f"{name}'s weights")
    if reason is None:
        try:
            return _small_llama(sentence, name)
        except Exception as exc:             # a download cut short, a hub error: fall back, and say why
            reason = f"{name} could not be loaded ({type(exc).__name__})"
    return course_built_llama(sentence, seed=seed, reason=reason)



def course_built_llama(sentence: str = LLAMA_SENTENCE, *, seed: int = 0, reason: str = "") -> LlamaInside:
    """Offline: a tiny Llama-style stack built from the course's own functions (no transformers), the same
    shape as :func:`tiny_llama` (4 layers of 8 query heads sharing 2 key/value heads, head_dim 8, RoPE "half",
    random weights from ``seed``, untrained). Each layer normalises its input (RMSNorm without a gain),
    attends with ``grouped_query_attention`` and adds the output back; the decode loop with a ``KVCache``
    is compared with it layer by layer. No model of its own: ``weights_agreement`` is None. Notebook 12."""
    sentence = check_text(sentence, "sentence")
    rng = np.random.default_rng(check_seed(seed, allow_generator=False))
    tokens, ids = _word_ids(sentence, 256)
    x = rng.standard_normal((256, TINY_D_MODEL))[ids]
    width, kv_width = TINY_HEADS * TINY_HEAD_DIM, TINY_KV_HEADS * TINY_HEAD_DIM
    layers, worst_decode = [], 0.0
    for _ in range(TINY_LAYERS):
        weights = dict(w_q=0.2 * rng.standard_normal((TINY_D_MODEL, width)),
                       w_k=0.2 * rng.standard_normal((TINY_D_MODEL, kv_width)),
                       w_v=0.12 * rng.standard_normal((TINY_D_MODEL, kv_width)),
                       w_o=0.12 * rng.standard_normal((width, TINY_D_MODEL)),
                       n_heads=TINY_HEADS, n_kv_heads=TINY_KV_HEADS, rope=True)
        h = x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + 1e-6)
        out, heads = decoding.grouped_query_attention(h, **weights, causal=True)
        decoded, _ = decoding.decode_loop(h, **weights)
        worst_decode = max(worst_decode, float(np.abs(decoded - out).max()))
        layers.append(heads)
        x = x + out
    source = ("a tiny Llama-style stack built from the course's own functions (4 layers × 8 heads sharing 2 "
              "key/value heads, untrained)")
    note = (f"Offline: this is {source}; online, with transformers, the same look reads SmolLM2-135M and "
            f"compares every head with the model's own.")
    attention = ModelAttention(np.stack(layers), list(tokens), source, note, None, reason)
    return LlamaInside(attention, TINY_HEADS, TINY_KV_HEADS, TINY_HEAD_DIM, None, worst_decode,
                       kv_cache_bytes(TINY_LAYERS, TINY_KV_HEADS, TINY_HEAD_DIM, 1, dtype="float32"))


def transformers_agreement(seed: int = 0) -> dict[str, str]:
    """The course against transformers' own Llama, offline: a :func:`tiny_llama` built here in float64 (no
    download). ``{what: claim}``, each claim a largest difference said at the precision it holds on every
    machine (:func:`~lessons_lib.lab.measurements.difference_claim`):

    * every head's weights by ``grouped_query_attention`` against the model's ``output_attentions``;
    * each layer's attention output by the course's decode loop (a ``KVCache``, token by token) against the
      model's own;
    * the keys and the values the course's ``KVCache`` holds after the first layer against those in
      transformers' ``DynamicCache``, filled by the model itself generating token by token;
    * the model's last hidden states token by token with its ``DynamicCache`` against one pass over the
      whole sequence.

    transformers computes RoPE's angles in float32 even in a float64 model, so what RoPE touches (the keys,
    the weights, the outputs) agrees to float32's precision (below 1e-6); the values, which RoPE never turns,
    and transformers against itself, to float64's (below 1e-12). Raises ImportError without torch and
    transformers. Notebook 12.
    """
    import torch
    from transformers import DynamicCache

    from .measurements import difference_claim

    model = tiny_llama(seed).double()
    ids = [[3, 1, 4, 1, 5, 9, 2, 6, 5, 3]]
    _, heads, outputs = llama_attention(model, ids)
    tokens = torch.as_tensor(ids)
    with torch.no_grad():
        whole = model(tokens).last_hidden_state
        cache = DynamicCache(config=model.config)
        steps = [model(tokens[:, i:i + 1], past_key_values=cache, use_cache=True)
                 for i in range(tokens.shape[1])]
        stepped = torch.cat([step.last_hidden_state for step in steps], dim=1)
        first = model.layers[0]
        h = first.input_layernorm(model.embed_tokens(tokens))[0].numpy()
    _, ours = decoding.decode_loop(h, **weights_from_llama_attention(first.self_attn))
    theirs = cache.layers[0]
    turned, exact = 1e-6, 1e-12
    return {
        "every head's weights against the model's own": difference_claim(heads, 0.0, below=turned),
        "every layer's attention output, by the course's decode loop with a KVCache":
            difference_claim(outputs, 0.0, below=turned),
        "the keys in the course's KVCache against transformers' DynamicCache (layer 0)":
            difference_claim(ours.keys, theirs.keys[0].numpy(), below=turned),
        "the values in the course's KVCache against transformers' DynamicCache (layer 0)":
            difference_claim(ours.values, theirs.values[0].numpy(), below=exact),
        "the model token by token with its DynamicCache against one pass over all":
            difference_claim(stepped.numpy(), whole.numpy(), below=exact)}
