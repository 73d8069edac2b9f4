"""A tiny character-level language model that notebook 12 trains in seconds and generates text with.

The text is lesson 09's sentences ("the dog didn't cross the road because it was too tired .") run
together, one character per token. The model is a Llama-style stack kept small enough to train on a CPU in
a few seconds: token embeddings, ``N_LAYERS`` layers of (RMS norm, causal multi-head attention with RoPE,
residual; RMS norm, ReLU MLP, residual), a last RMS norm and the output projection. No position embedding:
RoPE (lesson 11) turns each query and key by its position, so a generation loop must turn every new token
at the position it really stands at (notebook 12, the offset bug).

* :func:`char_corpus` gives the text, :func:`train_char_model` trains the model with torch (seeded, one
  thread) and returns a :class:`CharModel`: its weights as numpy arrays, the parts of a layer that
  are not the lesson's idea (:meth:`CharLayer.project`, :meth:`CharLayer.finish`) and a reference
  :meth:`CharModel.full_logits` (causal attention over the whole sequence, no cache).
* The loop that fills and reads the KV cache is *not* here: notebook 12 writes it in a cell, and the tests
  hold it against :meth:`CharModel.full_logits`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import check_int_in_range, check_seed
from ..core.attention import softmax
from ..core.masks import causal_mask
from ..core.multihead import merge_heads, split_heads
from ..core.position import rope
from . import coref

__all__ = ["char_corpus", "CharLayer", "CharModel", "train_char_model", "CHAR_CONTEXT"]

#: The longest stretch of text the model is trained on: it has seen positions 0 … CHAR_CONTEXT − 1 only.
CHAR_CONTEXT = 64
D_MODEL, N_HEADS, N_LAYERS, D_MLP = 48, 4, 2, 128
EPS = 1e-6


def char_corpus(n_sentences: int = 1500, *, seed: int = 0) -> str:
    """Lesson 09's training sentences as one text, separated by a space (about 90,000 characters)."""
    n = check_int_in_range(n_sentences, "n_sentences", 10, 20000)
    split = coref.make_coref_data(n_train=n, n_test=10, seed=seed, none_fraction=0.1).train
    return " ".join(split.text(i) for i in range(len(split)))


def _rms_norm(x: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * gain


@dataclass(frozen=True)
class CharLayer:
    """One layer's weights, numpy, the course's ``x @ W`` layout: W_Q, W_K, W_V, W_O ``(d_model, d_model)``,
    the norms' gains, and the MLP's ``w_up (d_model, d_mlp)``, ``w_down (d_mlp, d_model)``."""

    norm_attn: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    norm_mlp: np.ndarray
    w_up: np.ndarray
    w_down: np.ndarray
    n_heads: int

    def project(self, x: np.ndarray):
        """The queries, keys and values of the tokens ``x (L, d_model)``: RMS norm, then X·W, each split into
        heads ``(n_heads, L, d_head)``. Not yet turned by RoPE: that needs their positions."""
        h = _rms_norm(x, self.norm_attn)
        return tuple(split_heads(h @ w, self.n_heads) for w in (self.w_q, self.w_k, self.w_v))

    def finish(self, x: np.ndarray, heads: np.ndarray) -> np.ndarray:
        """The rest of the layer once attention has given ``heads (n_heads, L, d_head)``: the heads merged and
        through W_O, added to ``x``; then the MLP on the RMS norm, added too."""
        x = x + merge_heads(heads) @ self.w_o
        h = _rms_norm(x, self.norm_mlp)
        return x + np.maximum(h @ self.w_up, 0) @ self.w_down


_LAYER_ARRAYS = ("norm_attn", "w_q", "w_k", "w_v", "w_o", "norm_mlp", "w_up", "w_down")


@dataclass(frozen=True)
class CharModel:
    """The trained character model: ``chars`` (its vocabulary, in id order), ``embed (V, d_model)``,
    ``layers``, ``norm_out`` and ``unembed (d_model, V)``; ``losses``: its training loss every step."""

    chars: str
    embed: np.ndarray
    layers: tuple
    norm_out: np.ndarray
    unembed: np.ndarray
    losses: np.ndarray

    def astype(self, dtype) -> CharModel:
        """The same model with its weights stored as ``dtype`` (np.float32 or np.float64): every computation
        with it then runs in that precision."""
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64; got {dtype}.")
        layers = tuple(CharLayer(*(getattr(layer, f).astype(dtype) for f in _LAYER_ARRAYS), layer.n_heads)
                       for layer in self.layers)
        return CharModel(self.chars, self.embed.astype(dtype), layers, self.norm_out.astype(dtype),
                         self.unembed.astype(dtype), self.losses)

    @property
    def dtype(self) -> np.dtype:
        return self.embed.dtype

    @property
    def n_heads(self) -> int:
        return self.layers[0].n_heads

    @property
    def d_head(self) -> int:
        return self.embed.shape[1] // self.n_heads

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``'s characters; a character the model never saw is refused by name."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string; got {type(text).__name__}.")
        unknown = sorted(set(text) - set(self.chars))
        if unknown:
            raise ValueError(f"the model knows only the characters {self.chars!r}; {unknown!r} are not among "
                             f"them (it was trained on lesson 09's lower-case sentences).")
        return [self.chars.index(c) for c in text]

    def decode(self, ids) -> str:
        """The text of the ids ``ids``."""
        return "".join(self.chars[int(i)] for i in ids)

    def logits_of(self, x: np.ndarray) -> np.ndarray:
        """The next-character logits ``(L, V)`` from the last layer's output ``x (L, d_model)``."""
        return _rms_norm(x, self.norm_out) @ self.unembed

    def full_logits(self, ids) -> np.ndarray:
        """The logits of every position of ``ids``, recomputed from scratch: causal attention over the whole
        sequence, no cache (the reference a cached loop must equal). ``(L, V)``."""
        ids = np.asarray(ids, dtype=np.int64)
        positions = np.arange(len(ids))
        x = self.embed[ids]
        for layer in self.layers:
            q, k, v = layer.project(x)
            q, k = rope(q, positions), rope(k, positions)
            scores = q @ np.swapaxes(k, -1, -2) * self.d_head ** -0.5
            scores = np.where(causal_mask(len(ids)), scores, -np.inf)
            x = layer.finish(x, softmax(scores) @ v)
        return self.logits_of(x)

    def loss(self, text: str) -> float:
        """Cross-entropy (nats per character) of each character of ``text`` given the ones before it."""
        ids = self.encode(text)
        logits = self.full_logits(ids)[:-1]
        logits = logits - logits.max(axis=-1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        return float(-log_p[np.arange(len(ids) - 1), ids[1:]].mean())


def _rope_torch(t, positions, torch):
    """RoPE in the "half" layout on a torch tensor ``(..., L, d_head)``, as
    :func:`~lessons_lib.core.position.rope` turns a numpy array."""
    d = t.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=t.dtype) / d)
    angle = positions[:, None].to(t.dtype) * theta
    cos, sin = torch.cos(angle), torch.sin(angle)
    a, b = t[..., : d // 2], t[..., d // 2:]
    return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)


def train_char_model(steps: int = 200, *, seed: int = 0, batch_size: int = 32) -> CharModel:
    """Train the character model on :func:`char_corpus` for ``steps`` steps of ``batch_size`` stretches of
    ``CHAR_CONTEXT + 1`` characters (AdamW, lr 3e-3, float32, torch on one thread, seeded: the same model
    on every run of a machine). A few seconds on a laptop's CPU. The weights come back as float64
    (:meth:`CharModel.astype` gives a float32 copy). Notebook 12."""
    steps = check_int_in_range(steps, "steps", 1, 5000)
    batch_size = check_int_in_range(batch_size, "batch_size", 1, 256)
    seed = check_seed(seed, allow_generator=False)
    import torch

    from .models import AdamW, deterministic

    text = char_corpus(seed=seed)
    chars = "".join(sorted(set(text)))
    data = torch.as_tensor([chars.index(c) for c in text])
    vocab, d, dt = len(chars), D_MODEL, torch.float32
    d_head = d // N_HEADS
    losses = []
    with deterministic(seed) as gen:
        def weight(*shape, scale=None):
            w = torch.randn(*shape, generator=gen, dtype=dt) * (scale or shape[0] ** -0.5)
            return w.requires_grad_()

        params = {"embed": weight(vocab, d, scale=1.0), "unembed": weight(d, vocab),
                  "norm_out": torch.ones(d, dtype=dt, requires_grad=True)}
        for i in range(N_LAYERS):
            for name in ("w_q", "w_k", "w_v"):
                params[f"{i}.{name}"] = weight(d, d)
            params[f"{i}.w_o"] = weight(d, d, scale=0.5 * d ** -0.5)
            params[f"{i}.w_up"] = weight(d, D_MLP)
            params[f"{i}.w_down"] = weight(D_MLP, d, scale=0.5 * D_MLP ** -0.5)
            for name in ("norm_attn", "norm_mlp"):
                params[f"{i}.{name}"] = torch.ones(d, dtype=dt, requires_grad=True)
        opt = AdamW(params.values(), lr=3e-3, weight_decay=0.0)
        positions = torch.arange(CHAR_CONTEXT)
        mask = torch.ones(CHAR_CONTEXT, CHAR_CONTEXT, dtype=torch.bool).tril()

        def norm(x, g):
            return x / torch.sqrt((x * x).mean(-1, keepdim=True) + EPS) * g

        for _ in range(steps):
            starts = torch.randint(len(data) - CHAR_CONTEXT - 1, (batch_size,), generator=gen)
            chunk = torch.stack([data[s:s + CHAR_CONTEXT + 1] for s in starts.tolist()])
            x = params["embed"][chunk[:, :-1]]
            for i in range(N_LAYERS):
                h = norm(x, params[f"{i}.norm_attn"])
                q, k, v = ((h @ params[f"{i}.{n}"]).view(batch_size, CHAR_CONTEXT, N_HEADS, d_head)
                           .transpose(1, 2) for n in ("w_q", "w_k", "w_v"))
                q, k = _rope_torch(q, positions, torch), _rope_torch(k, positions, torch)
                scores = (q @ k.transpose(-1, -2) / d_head ** 0.5).masked_fill(~mask, float("-inf"))
                heads = scores.softmax(-1) @ v
                x = x + heads.transpose(1, 2).reshape(batch_size, CHAR_CONTEXT, d) @ params[f"{i}.w_o"]
                h = norm(x, params[f"{i}.norm_mlp"])
                x = x + torch.relu(h @ params[f"{i}.w_up"]) @ params[f"{i}.w_down"]
            logits = norm(x, params["norm_out"]) @ params["unembed"]
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), chunk[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
    w = {name: p.detach().numpy().astype(np.float64) for name, p in params.items()}   # float64 from here
    layers = tuple(CharLayer(w[f"{i}.norm_attn"], w[f"{i}.w_q"], w[f"{i}.w_k"], w[f"{i}.w_v"], w[f"{i}.w_o"],
                             w[f"{i}.norm_mlp"], w[f"{i}.w_up"], w[f"{i}.w_down"], N_HEADS)
                   for i in range(N_LAYERS))
    return CharModel(chars, w["embed"], layers, w["norm_out"], w["unembed"], np.array(losses))
