"""Real models' attention weights in the course's layout, for ``multi_head_attention``.

The course multiplies on the right, ``Q = X @ W_Q``, so every weight is stored
**(in, out)**: rows are input features, columns output features, and head i owns
columns i·d_head … (i+1)·d_head − 1 (notebook 06). Real models store them in
other layouts, and a forgotten transpose of a square matrix raises nothing: the
numbers are just wrong. Each function here takes one module and returns a dict

    {"w_q", "w_k", "w_v", "w_o": (d_model, d_model) float64, (in, out) layout,
     "b_q", "b_k", "b_v", "b_o": (d_model,) float64, "n_heads": int}

ready for ``multi_head_attention(x, **weights, causal=...)``. Where each layout
comes from:

==================================  ===================================================================
module                              how its weights are stored, and what is done here
==================================  ===================================================================
``torch.nn.Linear``                 ``weight`` is (out, in), used as ``x @ weight.T``: transposed
``torch.nn.MultiheadAttention``     ``in_proj_weight`` (3·d, d) = [W_Q; W_K; W_V] stacked by rows,
                                    each (out, in): split by rows, then transposed; ``out_proj`` a Linear
GPT-2 (``transformers``)            ``c_attn``, ``c_proj`` are ``Conv1D``: weight (in, out), used as
                                    ``x @ weight``, the course's layout; ``c_attn`` holds
                                    [W_Q | W_K | W_V] side by side: split by columns, not transposed
BERT self-attention                 ``query``, ``key``, ``value`` are Linear: transposed; the output
                                    projection lives in ``BertSelfOutput.dense`` (given a
                                    ``BertAttention``, it is read; a bare ``BertSelfAttention`` has
                                    none: W_O = I, b_O = 0)
nanoGPT ``CausalSelfAttention``     ``c_attn`` = Linear(d, 3·d), ``c_proj`` = Linear(d, d): split by
                                    rows, then transposed
Llama-style attention               ``q_proj``, ``k_proj``, ``v_proj``, ``o_proj`` are Linear: transposed;
(``transformers``: Llama, Mistral,  ``k_proj`` and ``v_proj`` hold fewer heads than ``q_proj`` (grouped-
Qwen 2 and their kin)               query attention); RoPE in the "half" layout with the config's base
                                    (notebook 12)
==================================  ===================================================================

Every option of these modules that changes what they compute is either reproduced or refused with
a message naming it (``tests/lab/test_adapters.py`` walks them all):

* ``nn.MultiheadAttention``: ``bias=False`` reproduced (zero biases); ``add_bias_kv`` (a learned extra
  key and value) and ``add_zero_attn`` (a zero key and value) refused: the course's attention has no
  extra key; ``kdim``/``vdim`` other than ``embed_dim`` refused (that is not self-attention).
* GPT-2: its score scale is carried into W_Q and b_Q, so ``scale_attn_weights=False`` (no 1/√d_head)
  and ``scale_attn_by_inverse_layer_idx`` (a further 1/(layer_idx + 1)) are reproduced: W_Q and b_Q
  are then GPT-2's times that factor × √d_head. ``reorder_and_upcast_attn`` is the same formula (GPT-2
  then rounds its scores to float32, even in float64). Cross-attention is refused.
* BERT: cross-attention (``BertCrossAttention``, a layer's ``crossattention``) refused; a decoder's
  causal self-attention (``config.is_decoder``: ``is_causal``) is read with ``causal=True`` only, and is
  then used with ``multi_head_attention(..., causal=True)``; relative or rotary position embeddings
  (``position_embedding_type``) and a score scale other than 1/√d_head refused.
* Any of them with its weights on the ``meta`` device (made without weights) is refused: there is
  nothing to read.

* Llama-style attention (``weights_from_llama_attention``, notebook 12): its dict is for
  ``grouped_query_attention(x, **weights, causal=True)`` (and the cache's ``cached_attention``,
  ``decode_loop``): W_Q ``(d, n_heads·d_head)``, W_K and W_V ``(d, n_kv_heads·d_head)``, W_O
  ``(n_heads·d_head, d)``, ``n_kv_heads`` and ``rope`` (a ``Rotary`` with the config's base). Biases
  (``attention_bias``, Qwen 2) are read; a score scale other than 1/√d_head is carried into W_Q and b_Q as
  for GPT-2. Refused: RoPE scaled or stretched (``rope_type`` other than "default": Llama 3.1's "llama3",
  "linear", "dynamic", "yarn" change the angles), RoPE on part of each head (``partial_rotary_factor``),
  queries and keys normalised per head (``q_norm``, ``k_norm``: Qwen 3, OLMo 2) and a sliding window
  (Mistral's ``sliding_window``: use ``decode_loop`` with ``KVCache(window=...)``).

Which attention *implementation* a model runs (eager, SDPA) changes nothing here. Dropout is not
read: use the modules in ``eval()`` mode to compare (in ``train()`` mode their outputs are random).
torch is imported only inside the functions: ``import lessons_lib`` never imports it.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_flag
from ..core.position import Rotary

__all__ = ["weights_from_torch_multihead", "weights_from_gpt2_attention", "weights_from_bert_attention",
           "weights_from_nanogpt_attention", "weights_from_llama_attention", "attention_weights_of"]


def _numpy(tensor) -> np.ndarray:
    """A torch parameter as a float64 numpy array (a copy, detached from autograd)."""
    return tensor.detach().cpu().double().numpy().copy()


def _bias(layer, d_out: int) -> np.ndarray:
    """A Linear's or Conv1D's bias as float64, zeros when it has none (``bias=False``)."""
    return np.zeros(d_out) if layer.bias is None else _numpy(layer.bias)


def _pack(w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, n_heads) -> dict:
    return {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o,
            "b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o, "n_heads": int(n_heads)}


def _require(module, attributes: tuple, what: str, function: str):
    missing = [a for a in attributes if not hasattr(module, a)]
    if missing:
        raise TypeError(f"{function} takes {what}; got {type(module).__name__}, which has no "
                        f"{', '.join(missing)}.")
    on_meta = [name for name, p in module.named_parameters() if p.device.type == "meta"] if hasattr(
        module, "named_parameters") else []
    if on_meta:
        raise ValueError(
            f"{function}: this {type(module).__name__}'s weights ({on_meta[0]}, ...) are on the meta "
            f"device: it was built without its numbers (device=\"meta\", or loaded without its weights), "
            f"so there is nothing to read. Load or initialise the weights first, e.g. "
            f"module.to_empty(device=\"cpu\") then module.load_state_dict(...), or from_pretrained(...).")


def _refuse(function: str, option: str, why: str):
    raise ValueError(f"{function}: this module has {option}, which the course's multi_head_attention "
                     f"cannot reproduce: {why}")


def weights_from_torch_multihead(module) -> dict:
    """The weights of a ``torch.nn.MultiheadAttention``, in the course's (in, out) layout.

    ``in_proj_weight`` is ``(3·d, d)``: rows 0…d−1 are W_Q, then W_K, then W_V, each
    in Linear's (out, in) layout, so each block is transposed. Needs the packed form
    (``kdim = vdim = embed_dim``, the default). Biases are zeros for ``bias=False``.
    ``multi_head_attention`` then matches ``module(x, x, x, need_weights=True,
    average_attn_weights=False)``; the module's ``attn_mask`` uses True = may *not*
    attend, the course's mask is its ``~``.
    """
    function = "weights_from_torch_multihead"
    _require(module, ("in_proj_weight", "out_proj", "num_heads"), "a torch.nn.MultiheadAttention", function)
    if module.in_proj_weight is None:
        raise ValueError("This nn.MultiheadAttention has separate q/k/v projections (kdim or vdim differ "
                         "from embed_dim): the course's self-attention needs them equal.")
    if getattr(module, "bias_k", None) is not None or getattr(module, "bias_v", None) is not None:
        _refuse(function, "add_bias_kv=True", "it appends a learned key and value (bias_k, bias_v) to "
                "every sequence, an extra key each query also attends to. Use add_bias_kv=False.")
    if getattr(module, "add_zero_attn", False):
        _refuse(function, "add_zero_attn=True", "it appends a key and a value of zeros to every sequence, "
                "an extra key each query also attends to. Use add_zero_attn=False.")
    d = module.embed_dim
    w = _numpy(module.in_proj_weight)                        # (3d, d), each block (out, in)
    b = np.zeros(3 * d) if module.in_proj_bias is None else _numpy(module.in_proj_bias)
    w_q, w_k, w_v = (w[i * d:(i + 1) * d].T for i in range(3))
    b_q, b_k, b_v = (b[i * d:(i + 1) * d] for i in range(3))
    out = module.out_proj
    return _pack(w_q, w_k, w_v, _numpy(out.weight).T, b_q, b_k, b_v, _bias(out, d), module.num_heads)


def weights_from_gpt2_attention(module) -> dict:
    """The weights of a Hugging Face GPT-2 attention layer (``model.transformer.h[i].attn``).

    GPT-2's ``Conv1D`` computes ``x @ weight + bias`` with ``weight (in, out)``: the
    course's layout already, so nothing is transposed. ``c_attn.weight (d, 3·d)``
    holds W_Q, W_K, W_V side by side: split by *columns*. GPT-2 is causal: call
    ``multi_head_attention(x, **weights, causal=True)``. Where GPT-2 scales its scores by
    something other than 1/√d_head (``scale_attn_weights=False``, ``scale_attn_by_inverse_layer_idx``),
    W_Q and b_Q carry the ratio, so the course's 1/√d_head gives GPT-2's scores.
    """
    function = "weights_from_gpt2_attention"
    _require(module, ("c_attn", "c_proj", "num_heads"), "a GPT-2 attention layer (with c_attn, c_proj)",
             function)
    if getattr(module, "is_cross_attention", False):
        raise ValueError("This GPT-2 attention is cross-attention (is_cross_attention=True, q_attn "
                         "separate); the course's multi_head_attention is self-attention.")
    w = _numpy(module.c_attn.weight)                         # (d, 3d), (in, out)
    d = w.shape[0]
    b = _bias(module.c_attn, 3 * d)
    w_q, w_k, w_v = (w[:, i * d:(i + 1) * d] for i in range(3))
    b_q, b_k, b_v = (b[i * d:(i + 1) * d] for i in range(3))
    # multi_head_attention divides the scores by √d_head; GPT-2 multiplies them by its own scale. Carry
    # the ratio in W_Q and b_Q: (factor·q)·k / √d_head = scale · q·k.
    factor = _gpt2_score_scale(module, d // module.num_heads) * np.sqrt(d // module.num_heads)
    if factor != 1.0:
        w_q, b_q = w_q * factor, b_q * factor
    proj = module.c_proj
    return _pack(w_q, w_k, w_v, _numpy(proj.weight), b_q, b_k, b_v, _bias(proj, d), module.num_heads)


def _gpt2_score_scale(module, d_head: int) -> float:
    """What GPT-2 multiplies its scores by: 1/√d_head (``scale_attn_weights``, else 1), then 1/(layer_idx + 1)
    with ``scale_attn_by_inverse_layer_idx``; the module's own ``scaling`` where it keeps one."""
    if hasattr(module, "scaling"):
        return float(module.scaling)
    scale = 1.0 / np.sqrt(d_head) if getattr(module, "scale_attn_weights", True) else 1.0
    if getattr(module, "scale_attn_by_inverse_layer_idx", False):
        scale /= float(module.layer_idx + 1)
    return scale


def weights_from_bert_attention(module, *, causal: bool = False) -> dict:
    """The weights of a Hugging Face BERT attention (``BertAttention``) or self-attention.

    ``query``, ``key``, ``value`` are ``nn.Linear``, weight (out, in): transposed. Given
    a ``BertAttention`` (``layer.attention``), W_O and b_O come from its
    ``output.dense``; a bare ``BertSelfAttention`` (``layer.attention.self``) stops at the
    concatenated heads, so W_O = I and b_O = 0. (BERT then adds the residual and a
    LayerNorm, outside attention.) BERT is not causal; a BERT decoder's self-attention
    (``config.is_decoder``, the module's ``is_causal``) is, and is read only with
    ``causal=True``, a promise to call ``multi_head_attention(..., causal=True)``.
    Cross-attention, relative or rotary position embeddings, and another score scale are refused.
    """
    function = "weights_from_bert_attention"
    self_attention = getattr(module, "self", module)
    _require(self_attention, ("query", "key", "value", "num_attention_heads"),
             "a BERT attention (BertAttention or BertSelfAttention)", function)
    causal = check_flag(causal, "causal")
    if getattr(module, "is_cross_attention", False) or "CrossAttention" in type(self_attention).__name__:
        raise ValueError(f"{function}: this BERT attention is cross-attention (is_cross_attention, a "
                         f"decoder layer's crossattention with config.add_cross_attention): its keys and "
                         f"values come from another sequence; the course's multi_head_attention is "
                         f"self-attention. Read the layer's self-attention, layer.attention, instead.")
    module_causal = bool(getattr(self_attention, "is_causal", False))
    if module_causal != causal:
        kind = ("a decoder, whose tokens see only the tokens before them" if module_causal else
                "an encoder, whose tokens see the whole sentence")
        raise ValueError(
            f"{function}: this BERT self-attention has is_causal={module_causal} (config.is_decoder="
            f"{module_causal}: {kind}), but causal={causal} was asked. Read it with "
            f"weights_from_bert_attention(module, causal={module_causal}) and call "
            f"multi_head_attention(x, **weights, causal={module_causal}).")
    config = getattr(self_attention, "config", None)
    position = getattr(self_attention, "position_embedding_type",
                       getattr(config, "position_embedding_type", "absolute"))
    if position not in (None, "absolute") or hasattr(self_attention, "distance_embedding"):
        _refuse(function, f"position_embedding_type={position!r}", "relative (or rotary) positions change "
                "every score by the distance between query and key; the course adds positions to the "
                "embeddings only (absolute).")
    d = self_attention.query.weight.shape[1]
    if self_attention.query.weight.shape[0] != d:
        _refuse(function, f"an all_head_size of {self_attention.query.weight.shape[0]} (not hidden_size={d})",
                "the course's heads share out d_model exactly.")
    d_head = d // self_attention.num_attention_heads
    scaling = getattr(self_attention, "scaling", None)
    if scaling is not None and not np.isclose(float(scaling), d_head ** -0.5, rtol=1e-12, atol=0):
        _refuse(function, f"scaling={float(scaling):g} (not 1/√d_head = {d_head ** -0.5:g})",
                "its scores are scaled in another way or another place than the course's 1/√d_head.")
    w_q, w_k, w_v = (_numpy(getattr(self_attention, name).weight).T for name in ("query", "key", "value"))
    b_q, b_k, b_v = (_bias(getattr(self_attention, name), d) for name in ("query", "key", "value"))
    dense = getattr(getattr(module, "output", None), "dense", None)
    w_o, b_o = (np.eye(d), np.zeros(d)) if dense is None else (_numpy(dense.weight).T, _bias(dense, d))
    return _pack(w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, self_attention.num_attention_heads)


def weights_from_nanogpt_attention(module) -> dict:
    """The weights of a nanoGPT-style ``CausalSelfAttention`` (``c_attn``, ``c_proj`` as ``nn.Linear``).

    ``c_attn`` is Linear(d, 3·d): weight (3·d, d), W_Q, W_K, W_V stacked by rows in
    (out, in) layout, so split by rows, then transposed. ``n_head`` heads; causal.
    """
    _require(module, ("c_attn", "c_proj", "n_head"), "a nanoGPT CausalSelfAttention (c_attn, c_proj, n_head)",
             "weights_from_nanogpt_attention")
    w = _numpy(module.c_attn.weight)                         # (3d, d), (out, in)
    d = w.shape[1]
    b = _bias(module.c_attn, 3 * d)
    w_q, w_k, w_v = (w[i * d:(i + 1) * d].T for i in range(3))
    b_q, b_k, b_v = (b[i * d:(i + 1) * d] for i in range(3))
    proj = module.c_proj
    return _pack(w_q, w_k, w_v, _numpy(proj.weight).T, b_q, b_k, b_v, _bias(proj, d), module.n_head)


def weights_from_llama_attention(module) -> dict:
    """The weights of a Hugging Face Llama-style attention (``model.model.layers[i].self_attn``), for
    :func:`~lessons_lib.core.decoding.grouped_query_attention`.

    ``q_proj``, ``k_proj``, ``v_proj``, ``o_proj`` are ``nn.Linear``, weight (out, in): transposed. W_Q is
    ``(d, n_heads·d_head)``, W_K and W_V ``(d, n_kv_heads·d_head)`` (grouped-query attention: query head h
    reads key/value head h // (n_heads / n_kv_heads), as transformers' ``repeat_kv``), W_O ``(n_heads·d_head,
    d)``; d_head is the module's ``head_dim``. RoPE: ``rope`` is ``Rotary(base=<the config's rope_theta>,
    convention="half")`` (transformers' ``rotate_half``). Llama is causal: call
    ``grouped_query_attention(x, **weights, causal=True)``, or generate with ``cached_attention`` and a
    ``KVCache``. Options that change what the module computes and that the course cannot reproduce are
    refused by name (the module docstring lists them). Notebook 12.
    """
    function = "weights_from_llama_attention"
    _require(module, ("q_proj", "k_proj", "v_proj", "o_proj", "config", "head_dim"),
             "a Llama-style attention (LlamaAttention, MistralAttention, Qwen2Attention: q_proj, k_proj, "
             "v_proj, o_proj)", function)
    config = module.config
    for norm in ("q_norm", "k_norm"):
        if getattr(module, norm, None) is not None:
            _refuse(function, f"a {norm}", "it normalises every query (or key) of each head before RoPE "
                    "(Qwen 3, OLMo 2); the course's attention projects and turns them, nothing more.")
    window = getattr(module, "sliding_window", getattr(config, "sliding_window", None))
    if window is not None and getattr(config, "use_sliding_window", True) is not False:
        _refuse(function, f"sliding_window={window}", f"each query sees only its last {window} keys "
                f"(Mistral's window), while grouped_query_attention sees every earlier key. For "
                f"generation with the window, use ll.decode_loop(x, **weights, "
                f"cache=ll.KVCache(window={window})) on weights read from a copy of the config without it.")
    rope = dict(getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {})
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind != "default":
        _refuse(function, f"rope_type={kind!r}", "it rescales or stretches RoPE's angles for long contexts; "
                "the course's Rotary turns pair i by position · base^(−2i/d_head) exactly, the \"default\" "
                "RoPE.")
    partial = rope.get("partial_rotary_factor", getattr(config, "partial_rotary_factor", 1.0))
    if partial not in (None, 1, 1.0):
        _refuse(function, f"partial_rotary_factor={partial}", "RoPE turns only part of each head; the "
                "course's Rotary turns all of it.")
    theta = float(rope.get("rope_theta", getattr(config, "rope_theta", 10000.0)))
    d_head = int(module.head_dim)
    n_heads = module.q_proj.weight.shape[0] // d_head
    n_kv = module.k_proj.weight.shape[0] // d_head
    if n_heads * d_head != module.q_proj.weight.shape[0] or n_kv * d_head != module.k_proj.weight.shape[0]:
        _refuse(function, f"projections that are not whole heads of head_dim={d_head}",
                "each projection must hold its heads side by side.")
    w_q, w_k, w_v, w_o = (_numpy(getattr(module, f"{name}_proj").weight).T for name in "qkvo")
    b_q, b_k, b_v = (_bias(getattr(module, f"{name}_proj"), width)
                     for name, width in (("q", n_heads * d_head), ("k", n_kv * d_head), ("v", n_kv * d_head)))
    b_o = _bias(module.o_proj, w_o.shape[1])
    factor = float(getattr(module, "scaling", d_head ** -0.5)) * np.sqrt(d_head)   # as for GPT-2
    if factor != 1.0:
        w_q, b_q = w_q * factor, b_q * factor
    return {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o, "b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o,
            "n_heads": int(n_heads), "n_kv_heads": int(n_kv), "rope": Rotary(base=theta, convention="half")}


def attention_weights_of(module) -> dict:
    """The course-layout weights of any module above, recognised by its attributes."""
    if hasattr(module, "in_proj_weight"):
        return weights_from_torch_multihead(module)
    if hasattr(module, "num_heads") and hasattr(module, "c_attn"):
        return weights_from_gpt2_attention(module)
    if hasattr(module, "n_head") and hasattr(module, "c_attn"):
        return weights_from_nanogpt_attention(module)
    if hasattr(getattr(module, "self", module), "num_attention_heads"):
        return weights_from_bert_attention(module)
    if hasattr(module, "q_proj") and hasattr(module, "o_proj"):
        return weights_from_llama_attention(module)
    raise TypeError(f"attention_weights_of does not know {type(module).__name__}: give an "
                    f"nn.MultiheadAttention, a GPT-2, BERT or Llama-style attention layer, or a nanoGPT "
                    f"CausalSelfAttention.")
