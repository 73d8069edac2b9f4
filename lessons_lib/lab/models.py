"""A tiny model whose attention you can read, trained here in seconds (notebook 09).

Two models, both small enough to train on a laptop CPU in a few seconds:

``CorefModel`` learns whom "it" means in the sentences of ``lessons_lib.lab.coref``::

    tokens ─► embedding + position ─► attention layer 1 ─► attention layer 2 ─► referent head
                                        (n_heads heads)      (n_heads heads)      (one head)

Each attention layer is pre-norm multi-head self-attention with a residual
connection, softmax(Q·Kᵀ/√d_k)·V per head, exactly the formula of notebooks
02–06 (``attend`` below is tested against ``lessons_lib.scaled_dot_product_attention``).
The *referent head* is one more attention head, read at the row of "it": its
weights over the words of the sentence are the model's answer, and the word
with the largest weight is the predicted referent (a pointer, as coreference
models score candidate antecedents). Only that answer is trained; what the two
layers below it attend to is up to the model, and notebook 09 looks at it.

``SinkHead`` is one attention head for the attention-sink experiment: when a
head sometimes has nothing to fetch, softmax still makes its weights sum to 1,
so it learns to park them on a harmless first token. Give it an "off" slot (one
extra key with score 0 and value 0, the "+1 in the softmax's denominator") and
it can attend to nothing instead.

torch is imported when this module is imported; ``import lessons_lib`` does not
import it (the names here load on first use).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import numpy as np

from .._checks import check_flag, check_pairs, check_positive_int, check_real, check_seed
from ..core.backends import import_torch, torch_rope
from . import coref

torch = import_torch()
nn = torch.nn

THREADS = 1  # one CPU thread: the same numbers on every machine, and fair on a shared one
EVAL_BATCH = 250  # sentences per forward pass when measuring accuracy (bounds a kernel's memory)


# --------------------------------------------------------------------------- attention
def attend(q, k, v, key_mask=None, off_slot: bool = False):
    """softmax(Q·Kᵀ/√d_k)·V in torch, differentiable; returns ``(output, weights)``.

    ``q (..., L, d_k)``, ``k (..., S, d_k)``, ``v (..., S, d_v)``; ``key_mask``
    bool ``(..., S)`` with True for real tokens (padding gets weight exactly 0).
    With ``off_slot=True`` one extra key with score 0 and value 0 joins every
    row: weights_j = exp(s_j) / (1 + Σ_i exp(s_i)), so a row sums to less than 1
    and the rest of the weight goes to "nothing". The numpy reference is
    ``lessons_lib.scaled_dot_product_attention`` (notebooks 02–05).
    """
    scores = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
    if key_mask is not None:
        scores = scores.masked_fill(~key_mask[..., None, :], float("-inf"))
    if off_slot:
        scores = torch.cat([scores, torch.zeros_like(scores[..., :1])], dim=-1)
        weights = torch.softmax(scores, dim=-1)[..., :-1]
    else:
        weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


class AttentionLayer(nn.Module):
    """Pre-norm multi-head self-attention with a residual: x + W_O·Concat(heads)(LayerNorm(x)).

    ``rope=True`` turns each head's queries and keys by their positions 0 … L − 1 before the scores
    (rotary embeddings, ``core.backends.torch_rope``; notebook 11); the values are not turned.
    """

    def __init__(self, d_model: int, n_heads: int, *, rope: bool = False):
        super().__init__()
        d_model = check_positive_int(d_model, "d_model")
        n_heads = check_positive_int(n_heads, "n_heads")
        if d_model % n_heads:
            raise ValueError(f"n_heads={n_heads} does not divide d_model={d_model}.")
        self.rope = check_flag(rope, "rope")
        if self.rope:
            check_pairs(d_model // n_heads, "each head", "d_head")
        self.n_heads = n_heads
        self.norm = nn.LayerNorm(d_model)
        self.w_qkv = nn.Linear(d_model, 3 * d_model, bias=False)  # W_Q, W_K, W_V side by side
        self.w_o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, key_mask, ablate=()):
        """``x (B, L, d_model)`` → ``(x + attention, weights (B, n_heads, L, L))``.

        ``ablate``: head numbers whose output is replaced by zeros (the head is switched off).
        """
        B, L, D = x.shape
        q, k, v = self.w_qkv(self.norm(x)).split(D, dim=-1)
        def split(t):
            return t.view(B, L, self.n_heads, D // self.n_heads).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        if self.rope:  # notebook 11: queries and keys turned by their positions, values as they are
            positions = np.arange(L)
            q, k = torch_rope(q, positions), torch_rope(k, positions)
        heads, weights = attend(q, k, v, key_mask[:, None, :])
        if ablate:
            keep = torch.ones(self.n_heads, 1, 1, dtype=heads.dtype)
            keep[list(ablate)] = 0.0
            heads = heads * keep
        return x + self.w_o(heads.transpose(1, 2).reshape(B, L, D)), weights


class CorefModel(nn.Module):
    """Embeddings + positions, ``n_layers`` attention layers, and the referent head read at "it".

    ``forward(ids, it_pos)`` takes ``ids (B, L)`` int64 (``coref`` encodings,
    ``<pad>`` = 0) and ``it_pos (B,)``, and returns ``(logits (B, L), weights)``:
    the referent head's scores over the L words (−inf on padding; softmax gives
    its attention row, the answer) and ``weights (B, n_layers, n_heads, L, L)``,
    every head's attention in every layer.
    """

    def __init__(self, *, d_model: int = 32, n_heads: int = 2, n_layers: int = 2,
                 vocab_size: int = len(coref.VOCAB), max_len: int = coref.MAX_LEN):
        super().__init__()
        d_model, n_heads, n_layers, vocab_size, max_len = (
            check_positive_int(value, name) for value, name in
            ((d_model, "d_model"), (n_heads, "n_heads"), (n_layers, "n_layers"), (vocab_size, "vocab_size"),
             (max_len, "max_len")))
        self.config = {"d_model": d_model, "n_heads": n_heads, "n_layers": n_layers,
                       "vocab_size": vocab_size, "max_len": max_len}
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList(AttentionLayer(d_model, n_heads) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.referent_q = nn.Linear(d_model, d_model, bias=False)
        self.referent_k = nn.Linear(d_model, d_model, bias=False)

    @property
    def n_parameters(self) -> int:
        """How many numbers training adjusts."""
        return sum(p.numel() for p in self.parameters())

    def forward(self, ids, it_pos, ablate=()):
        """``ablate``: (layer, head) pairs, counted from 1, to switch off."""
        B, L = ids.shape
        key_mask = ids != 0
        x = self.embed(ids) + self.position(torch.arange(L))
        weights = []
        for n, layer in enumerate(self.layers, start=1):
            x, w = layer(x, key_mask, ablate=[h - 1 for (ln, h) in ablate if ln == n])
            weights.append(w)
        h = self.norm(x)
        q = self.referent_q(h[torch.arange(B), it_pos])[:, None, :]          # (B, 1, d): the query of "it"
        scores = (q @ self.referent_k(h).transpose(1, 2))[:, 0] / h.shape[-1] ** 0.5
        return scores.masked_fill(~key_mask, float("-inf")), torch.stack(weights, dim=1)


# --------------------------------------------------------------------------- determinism
@contextlib.contextmanager
def deterministic(seed: int, threads: int = THREADS):
    """Seed torch (without touching the caller's random state) and fix its CPU threads.

    Yields a ``torch.Generator`` for batch sampling. One CPU thread is what makes the run
    repeatable: each CPU kernel then adds in one fixed order. (``torch.use_deterministic_algorithms``
    adds nothing on the CPU, and switching it on costs a kernel about 70 MB of memory.)
    """
    seed = check_seed(seed, allow_generator=False)
    threads = check_positive_int(threads, "threads")
    old_threads = torch.get_num_threads()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        torch.set_num_threads(threads)
        try:
            yield torch.Generator().manual_seed(seed)
        finally:
            torch.set_num_threads(old_threads)


class AdamW:
    """AdamW (Loshchilov & Hutter, "Decoupled weight decay regularization"), written out.

    Per parameter p with gradient g, at step t (moments m, v start at 0):
    p ← p·(1 − lr·wd);  m ← β₁m + (1 − β₁)g;  v ← β₂v + (1 − β₂)g²;
    p ← p − lr/(1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + ε).
    The same update, in the same order, as ``torch.optim.AdamW`` on the CPU (a test holds them equal
    bit for bit). The course writes it out because torch's own optimizer loads its compiler (with
    sympy) on first use, about 70 MB more in every learner's kernel of lessons 09 and 10.
    """

    def __init__(self, params, *, lr: float, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01):
        self.params = list(params)
        self.lr, (self.beta1, self.beta2), self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.steps = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.steps += 1
        correct1, correct2 = 1 - self.beta1 ** self.steps, 1 - self.beta2 ** self.steps
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            p.mul_(1 - self.lr * self.weight_decay)
            m.lerp_(p.grad, 1 - self.beta1)
            v.mul_(self.beta2).addcmul_(p.grad, p.grad, value=1 - self.beta2)
            p.addcdiv_(m, (v.sqrt() / correct2 ** 0.5).add_(self.eps), value=-self.lr / correct1)


def _progress(iterable, enabled: bool, desc: str):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, unit="step", mininterval=0.25)


def _check_split(split, name: str = "split") -> coref.CorefSet:
    """One split of the data (``data.train`` or ``data.test``), or a clear error."""
    if isinstance(split, coref.CorefData):
        raise TypeError(f"{name} must be one split of the data, data.train or data.test; got the whole "
                        f"data set (CorefData).")
    if not isinstance(split, coref.CorefSet):
        raise TypeError(f"{name} must be one split of the data (data.train or data.test); got "
                        f"{type(split).__name__}.")
    return split


def _check_loss(loss: float, step: int, lr: float) -> None:
    """Stop a diverging run at once, saying what to change (a NaN loss trains nothing further)."""
    if np.isfinite(loss):
        return
    raise ValueError(
        f"Training diverged at step {step}: the loss became {loss} (the weights overflowed). The learning "
        f"rate lr={lr:g} is too large for this model: try a smaller one, e.g. lr=3e-3 (the default).")


def _tensors(split: coref.CorefSet):
    split = _check_split(split)
    return torch.as_tensor(split.ids), torch.as_tensor(split.it_pos), torch.as_tensor(split.referent_pos)


# --------------------------------------------------------------------------- training
@dataclass
class TrainingRun:
    """What ``train_coref_model`` returns.

    ``losses[s]`` is the training loss at step s; ``test_accuracy`` the share of
    held-out sentences whose referent head points at the right noun.
    ``snapshot_steps`` are the steps at which the attention of each probe
    sentence was recorded: ``snapshots[name]["layers"]`` is
    ``(n_snapshots, n_layers, n_heads, L, L)`` and ``["referent"]`` is
    ``(n_snapshots, L)``, with the words in ``probe_tokens[name]``.
    """

    model: CorefModel
    data: coref.CorefData
    losses: np.ndarray
    snapshot_steps: np.ndarray
    snapshots: dict
    probe_tokens: dict
    train_accuracy: float
    test_accuracy: float
    seconds: float
    cpu_seconds: float
    config: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"TrainingRun({len(self.losses)} steps in {self.seconds:.1f} s, final loss "
                f"{self.losses[-1]:.3f}, held-out accuracy {self.test_accuracy:.1%})")


def train_coref_model(data: coref.CorefData | None = None, *, steps: int = 300, batch_size: int = 64,
                      lr: float = 3e-3, d_model: int = 32, n_heads: int = 2, n_layers: int = 2,
                      seed: int = 0, snapshot_every: int = 10, probes: dict | None = None,
                      progress: bool = True) -> TrainingRun:
    """Train a ``CorefModel`` on ``data`` (default ``coref.make_coref_data(seed=seed)``).

    AdamW, cross-entropy of the referent head's row of "it" against the
    referent's position. Deterministic for a given seed (one CPU thread,
    deterministic kernels). ``probes`` maps a name to a sentence whose attention
    is recorded every ``snapshot_every`` steps (default: the seed's sentences A and B).
    """
    steps = check_positive_int(steps, "steps")
    batch_size = check_positive_int(batch_size, "batch_size")
    snapshot_every = check_positive_int(snapshot_every, "snapshot_every")
    lr = check_real(lr, "lr", positive=True)
    data = coref.make_coref_data(seed=seed) if data is None else data
    if not isinstance(data, coref.CorefData):
        raise TypeError(f"data must be the whole data set from make_coref_data() (with .train and .test); "
                        f"got {type(data).__name__}.")
    probes = {"A": coref.SENTENCE_A, "B": coref.SENTENCE_B} if probes is None else probes
    if not isinstance(probes, dict):
        raise TypeError(f"probes must be a dict name -> sentence, e.g. {{'A': SENTENCE_A}}; got "
                        f"{type(probes).__name__}.")
    encoded = {name: coref.encode_sentence(text) for name, text in probes.items()}
    ids, it_pos, target = _tensors(data.train)
    losses = np.zeros(steps)
    snap_steps, snaps = [], {name: {"layers": [], "referent": []} for name in encoded}
    start, cpu_start = time.perf_counter(), time.process_time()
    with deterministic(seed) as gen:
        model = CorefModel(d_model=d_model, n_heads=n_heads, n_layers=n_layers)
        opt = AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        for step in _progress(range(steps + 1), progress, "training"):
            if step % snapshot_every == 0 or step == steps:
                snap_steps.append(step)
                for name, enc in encoded.items():
                    reading = _read(model, enc)
                    snaps[name]["layers"].append(reading["layers"])
                    snaps[name]["referent"].append(reading["referent"])
            if step == steps:
                break
            batch = torch.randint(len(data.train), (batch_size,), generator=gen)
            logits, _ = model(ids[batch], it_pos[batch])
            loss = nn.functional.cross_entropy(logits, target[batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[step] = loss.item()
            _check_loss(losses[step], step, lr)
        model.eval()
        train_acc, test_acc = accuracy(model, data.train), accuracy(model, data.test)
    return TrainingRun(
        model=model, data=data, losses=losses, snapshot_steps=np.array(snap_steps),
        snapshots={name: {k: np.stack(v) for k, v in s.items()} for name, s in snaps.items()},
        probe_tokens={name: enc["tokens"] for name, enc in encoded.items()},
        train_accuracy=train_acc, test_accuracy=test_acc,
        seconds=time.perf_counter() - start, cpu_seconds=time.process_time() - cpu_start,
        config={"steps": steps, "batch_size": batch_size, "lr": lr, "seed": seed, **model.config},
    )


def check_model(model) -> CorefModel:
    if isinstance(model, TrainingRun):
        return model.model
    if not isinstance(model, CorefModel):
        raise TypeError(f"Expected a trained CorefModel (or the TrainingRun holding one); got "
                        f"{type(model).__name__}.")
    return model


def _check_ablate(model: CorefModel, ablate) -> tuple:
    ablate = tuple(ablate)
    n_layers, n_heads = model.config["n_layers"], model.config["n_heads"]
    for pair in ablate:
        ok = (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, int) for x in pair))
        if not ok or not (1 <= pair[0] <= n_layers and 1 <= pair[1] <= n_heads):
            raise ValueError(f"ablate takes (layer, head) pairs counted from 1, with layer in 1..{n_layers} "
                             f"and head in 1..{n_heads}; got {pair!r}.")
    return ablate


def accuracy(model, split: coref.CorefSet, ablate=()) -> float:
    """Share of sentences in ``split`` whose referent head points at the referent (its largest weight).

    ``ablate``: (layer, head) pairs, counted from 1, switched off for this measurement.
    """
    model = check_model(model)
    ablate = _check_ablate(model, ablate)
    ids, it_pos, target = _tensors(split)
    right = 0
    with torch.no_grad():  # in batches: one forward pass over 2,000 sentences would hold ~100 MB at once
        for start in range(0, len(ids), EVAL_BATCH):
            part = slice(start, start + EVAL_BATCH)
            logits, _ = model(ids[part], it_pos[part], ablate=ablate)
            right += int((logits.argmax(-1) == target[part]).sum())
    return right / len(ids)


def _read(model: CorefModel, enc: dict, ablate=()) -> dict:
    with torch.no_grad():
        logits, weights = model(torch.as_tensor(enc["ids"]), torch.as_tensor([enc["it_pos"]]), ablate=ablate)
    return {"layers": weights[0].double().numpy(), "referent": torch.softmax(logits[0].double(), -1).numpy()}


@dataclass
class Reading:
    """The attention of a trained ``CorefModel`` on one sentence (``read_attention``).

    ``layers (n_layers, n_heads, L, L)``: every head's weights; ``referent (L,)``:
    the referent head's row of "it", which sums to 1; ``answer`` the word with
    the largest weight there.
    """

    tokens: list
    it_pos: int
    layers: np.ndarray
    referent: np.ndarray

    @property
    def answer(self) -> str:
        return self.tokens[int(np.argmax(self.referent))]

    @property
    def confidence(self) -> float:
        return float(np.max(self.referent))

    def __repr__(self) -> str:
        return f"Reading({' '.join(self.tokens[1:])!r}: 'it' → {self.answer!r} ({self.confidence:.0%}))"


def read_attention(model, sentence, ablate=()) -> Reading:
    """Run a trained model on one sentence (text or words from ``coref.VOCAB``) and return its attention.

    An unknown word, or a sentence without exactly one "it", raises a
    ``ValueError`` that says which word and what the model knows.
    """
    model = check_model(model)
    enc = coref.encode_sentence(sentence)
    r = _read(model, enc, _check_ablate(model, ablate))
    return Reading(tokens=enc["tokens"], it_pos=enc["it_pos"], layers=r["layers"], referent=r["referent"])


# --------------------------------------------------------------------------- attention sinks
class SinkHead(nn.Module):
    """One attention head that must fetch the referent's value into "it", or nothing at all.

    The query of "it" is given the adjective already (as if an earlier layer had
    mixed it in, like notebook 01's hand-made example). Values are fixed random
    vectors, one per word, except the first token ``<s>``, whose value the head
    may learn. With ``off_slot=True`` the head may also attend to nothing.
    """

    def __init__(self, *, d_model: int = 16, off_slot: bool = False, seed: int = 0,
                 vocab_size: int = len(coref.VOCAB), max_len: int = coref.MAX_LEN):
        super().__init__()
        d_model = check_positive_int(d_model, "d_model")
        vocab_size = check_positive_int(vocab_size, "vocab_size")
        max_len, seed = check_positive_int(max_len, "max_len"), check_seed(seed, allow_generator=False)
        self.off_slot = off_slot
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        rng = np.random.default_rng([seed, 77])
        values = rng.standard_normal((vocab_size, d_model)) / np.sqrt(d_model)
        self.register_buffer("word_values", torch.as_tensor(values, dtype=torch.float32))
        self.sink_value = nn.Parameter(self.word_values[coref.WORD_ID[coref.SINK]].clone())

    def forward(self, ids, it_pos, adj_pos):
        """Returns ``(output of "it" (B, d_model), weights of "it" (B, L))``."""
        B, L = ids.shape
        x = self.embed(ids) + self.position(torch.arange(L))
        rows = torch.arange(B)
        q = self.w_q(x[rows, it_pos] + x[rows, adj_pos])[:, None, :]
        values = self.word_values[ids].clone()
        values[:, 0] = self.sink_value
        out, weights = attend(q, self.w_k(x), values, key_mask=ids != 0, off_slot=self.off_slot)
        return out[:, 0], weights[:, 0]

    def target(self, ids, referent_pos):
        """The value of the referent word, or zeros when "it" refers to nothing."""
        has = referent_pos >= 0
        t = self.word_values[ids[torch.arange(len(ids)), referent_pos.clamp(min=0)]]
        return t * has[:, None]


@dataclass
class SinkRun:
    """What ``train_sink_head`` returns: the head, its losses, ``summary`` (see ``sink_summary``)
    at the end and ``history``: each summary entry as an array over the steps ``history["step"]``."""

    model: SinkHead
    data: coref.CorefData
    losses: np.ndarray
    summary: dict
    history: dict


def train_sink_head(off_slot: bool = False, *, steps: int = 600, seed: int = 0, none_fraction: float = 0.5,
                    batch_size: int = 64, lr: float = 1e-2, history_every: int = 25,
                    progress: bool = False) -> SinkRun:
    """Train a ``SinkHead`` on coreference sentences of which ``none_fraction`` have a dummy "it".

    Loss: squared distance between the head's output at "it" and the target
    (the referent's value, or zeros); AdamW with a little weight decay. Returns a
    ``SinkRun`` whose ``summary`` is ``sink_summary`` on the held-out split, and
    whose ``history`` holds that summary every ``history_every`` steps.
    """
    steps = check_positive_int(steps, "steps")
    batch_size = check_positive_int(batch_size, "batch_size")
    history_every = check_positive_int(history_every, "history_every")
    lr = check_real(lr, "lr", positive=True)
    data = coref.make_coref_data(1000, 400, seed=seed, none_fraction=none_fraction)
    ids, it_pos, ref = _tensors(data.train)
    adj = torch.as_tensor(_adjective_positions(data.train))
    losses = np.zeros(steps)
    with deterministic(seed) as gen:
        model = SinkHead(off_slot=off_slot, seed=seed)
        opt = AdamW(model.parameters(), lr=lr, weight_decay=0.05)
        history = []
        for step in _progress(range(steps), progress, "off slot" if off_slot else "softmax"):
            if step % history_every == 0:
                history.append({"step": step, **sink_summary(model, data.test)})
            b = torch.randint(len(data.train), (batch_size,), generator=gen)
            out, _ = model(ids[b], it_pos[b], adj[b])
            loss = ((out - model.target(ids[b], ref[b])) ** 2).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[step] = loss.item()
            _check_loss(losses[step], step, lr)
        summary = sink_summary(model, data.test)
        history.append({"step": steps, **summary})
    return SinkRun(model=model, data=data, losses=losses, summary=summary,
                   history={k: np.array([h[k] for h in history]) for k in history[0]})


def _adjective_positions(split: coref.CorefSet) -> np.ndarray:
    return np.array([1 + words.index(adj) for words, adj in zip(split.tokens, split.adjective)])


def sink_summary(model: SinkHead, split: coref.CorefSet) -> dict:
    """Where the head's row of "it" puts its weight, averaged over ``split``.

    For sentences with a dummy "it" (``none``) and with a referent (``ref``):
    ``sink`` the weight on ``<s>``, ``tokens`` the total weight on real tokens
    (``<s>`` included; 1 without an off slot), ``referent`` the weight on the
    referent; ``sink_value_norm`` the length of ``<s>``'s value next to
    ``word_value_norm``, the average length of the other values; ``error`` the
    mean squared distance to the target.
    """
    split = _check_split(split)
    ids, it_pos, ref = _tensors(split)
    adj = torch.as_tensor(_adjective_positions(split))
    with torch.no_grad():
        out, w = model(ids, it_pos, adj)
        err = ((out - model.target(ids, ref)) ** 2).sum(-1).double().numpy()
    w = w.double().numpy()
    none = split.referent_pos < 0
    rows = np.flatnonzero(~none)
    word_norms = model.word_values.norm(dim=-1).double().numpy()
    return {
        "none_sink": float(w[none, 0].mean()), "none_tokens": float(w[none].sum(-1).mean()),
        "ref_sink": float(w[~none, 0].mean()), "ref_tokens": float(w[~none].sum(-1).mean()),
        "ref_referent": float(w[rows, split.referent_pos[rows]].mean()),
        "sink_value_norm": float(model.sink_value.detach().norm()),
        "word_value_norm": float(np.delete(word_norms, [0, coref.WORD_ID[coref.SINK]]).mean()),
        "none_error": float(err[none].mean()), "ref_error": float(err[~none].mean()),
    }


__all__ = ["attend", "AttentionLayer", "CorefModel", "TrainingRun", "train_coref_model", "accuracy",
           "Reading", "read_attention", "deterministic", "SinkHead", "SinkRun", "train_sink_head",
           "sink_summary"]
