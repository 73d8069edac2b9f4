"""The experiments of notebook 11: attention alone ignores order, and a tiny model that needs it.

* :func:`attend_tokens` runs one attention head on the course's word vectors (lesson 02's embeddings
  *without* their position signal, then optionally sinusoidal positions added or RoPE applied) and
  :func:`shuffle_experiment` shuffles the tokens: with no positions every output row moves with its token
  and keeps its numbers (permutation equivariance), so "dog bites man" and "man bites dog" give the same
  set of outputs; with positions they do not.
* :func:`make_order_data` writes sequences that hold one "cat" and one "dog" among filler words; the
  question is *which came first?* The held-out sequences come in mirrored pairs (the same words, cat and
  dog swapped), so a model that cannot see order gives both sentences of a pair the same answer and is
  right on exactly one of them.
* :func:`train_order_model` trains lesson 09's tiny attention model (``models.AttentionLayer``, AdamW,
  one CPU thread, seconds) with no positions, with sinusoids added to the word vectors, or with RoPE in
  every layer; :func:`compare_positions` trains all three and gives each a verdict in words
  (:meth:`OrderComparison.verdicts`), so a notebook prints what every machine reproduces and the measured
  accuracies only beside it.

torch is imported by the order task only (``import lessons_lib`` never imports it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._checks import (
    as_float_array,
    check_choice,
    check_int_in_range,
    check_positive_int,
    check_real,
    check_seed,
    check_text,
    check_whole_number,
)
from ..core import attention, position
from . import data

__all__ = ["POSITION_KINDS", "ORDER_WORDS", "ORDER_FILLERS", "attend_tokens", "ShuffleResult", "rope_vectors",
           "RotationView", "rotation_view", "offset_scores", "sinusoid_similarity",
           "shuffle_experiment", "OrderSet", "OrderData", "make_order_data", "OrderRun", "train_order_model",
           "OrderComparison", "compare_positions", "LEARNED", "CHANCE"]

#: How the experiments tell attention where each token stands.
POSITION_KINDS = ("none", "sinusoidal", "rope")
_KIND_WORDS = {"none": "no positions", "sinusoidal": "sinusoids added", "rope": "RoPE"}

D_MODEL, D_HEAD = 8, 4          # lesson 02's sizes: the word vectors and one head
POSITION_SCALE = 1.0            # sinusoids added at full strength (entries in −1 … 1, words about ±1)


# --------------------------------------------------------------------------- one head, shuffled
def _check_kind(kind) -> str:
    return check_choice(kind, "positions", POSITION_KINDS)


def attend_tokens(tokens, *, positions: str = "none", d_model: int = D_MODEL, d_head: int = D_HEAD,
                  seed: int = 0):
    """One attention head over ``tokens``: ``(weights (L, L), outputs (L, d_head))``, float64.

    Each word gets the course's vector (``data.embed_tokens`` with no position signal, so the same word
    has the same vector wherever it stands); ``positions="sinusoidal"`` adds
    :func:`~lessons_lib.core.position.sinusoidal_positions` to them, ``"rope"`` turns the queries and keys
    by their positions (:func:`~lessons_lib.core.position.rope`), ``"none"`` does neither. Then
    softmax(Q·Kᵀ/√d_head)·V with lesson 02's projections (``seed``). Notebook 11.
    """
    kind = _check_kind(positions)
    d_model, d_head = check_positive_int(d_model, "d_model"), check_positive_int(d_head, "d_head")
    if isinstance(tokens, str):
        raise TypeError("tokens must be a list of words; use ll.tokenize(sentence) first.")
    tokens = [check_text(t, "each token") for t in tokens]
    x = data.embed_tokens(tokens, d_model, seed, position_scale=0.0)
    if kind == "sinusoidal":
        x = x + POSITION_SCALE * position.sinusoidal_positions(len(tokens), d_model)
    q, k, v = attention.project_qkv(x, *data.projection_weights(d_model, d_head, seed))
    if kind == "rope":
        q, k = (position.rope(t, np.arange(len(tokens))) for t in (q, k))
    output, weights = attention.scaled_dot_product_attention(q, k, v)
    return weights, output


@dataclass
class ShuffleResult:
    """What :func:`shuffle_experiment` found. ``order[i]`` is the index, in ``tokens``, of the i-th token of
    ``shuffled``; ``weights``/``outputs`` belong to ``tokens``, ``shuffled_weights``/``shuffled_outputs`` to
    ``shuffled``. ``moved_weights`` and ``moved_outputs`` are the original ones with their rows (and the
    weights' columns) put in the shuffled order: with no positions they are the shuffled run's numbers."""

    tokens: list
    shuffled: list
    order: np.ndarray
    positions: str
    weights: np.ndarray
    outputs: np.ndarray
    shuffled_weights: np.ndarray
    shuffled_outputs: np.ndarray

    @property
    def moved_weights(self) -> np.ndarray:
        return self.weights[np.ix_(self.order, self.order)]

    @property
    def moved_outputs(self) -> np.ndarray:
        return self.outputs[self.order]

    @property
    def difference(self) -> float:
        """The largest difference between the shuffled run's outputs and the original ones moved."""
        return float(np.abs(self.shuffled_outputs - self.moved_outputs).max())

    @property
    def follows(self) -> bool:
        """True when every output moved with its token (equal to roundoff): attention ignored the order."""
        return self.difference < 1e-12

    def sentence(self) -> str:
        """The finding in words (no digits a machine could change)."""
        words = " ".join(self.shuffled)
        if self.follows:
            return (f"{_KIND_WORDS[self.positions]}: “{words}” gives every token the output it had in "
                    f"“{' '.join(self.tokens)}”, only in the new order: the order made no difference.")
        return (f"{_KIND_WORDS[self.positions]}: in “{words}” the outputs are new numbers, not the old ones "
                f"moved: where a token stands now changes what it gathers.")


def _order(order, n: int) -> np.ndarray:
    arr = np.asarray(order)
    if arr.dtype.kind not in "iu" or arr.shape != (n,) or sorted(arr.tolist()) != list(range(n)):
        raise ValueError(f"order must list each index 0 … {n - 1} once (a permutation of the {n} tokens); "
                         f"got {order!r}.")
    return arr.astype(int)


def shuffle_experiment(tokens, order=None, *, positions: str = "none", seed: int = 0) -> ShuffleResult:
    """Run :func:`attend_tokens` on ``tokens`` and on the tokens in ``order`` (a permutation; default: a
    random one from ``seed``), and compare. Notebook 11."""
    kind = _check_kind(positions)
    if isinstance(tokens, str):
        raise TypeError("tokens must be a list of words; use ll.tokenize(sentence) first.")
    tokens = list(tokens)
    n = len(tokens)
    if n < 2:
        raise ValueError(f"shuffle_experiment needs at least 2 tokens to shuffle; got {n}.")
    if order is None:
        order = np.random.default_rng(check_seed(seed)).permutation(n)
    order = _order(order, n)
    shuffled = [tokens[i] for i in order]
    weights, outputs = attend_tokens(tokens, positions=kind, seed=seed)
    shuffled_weights, shuffled_outputs = attend_tokens(shuffled, positions=kind, seed=seed)
    return ShuffleResult(tokens, shuffled, order, kind, weights, outputs, shuffled_weights, shuffled_outputs)


# --------------------------------------------------------------------------- one query, one key, turned
def rope_vectors(d_head: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A query and a key of ``d_head`` numbers (standard normal, from ``seed``): the RoPE explorer's pair."""
    d_head = check_positive_int(d_head, "d_head")
    rng = np.random.default_rng([check_seed(seed), d_head])
    q, k = rng.standard_normal((2, d_head))
    return q, k


@dataclass
class RotationView:
    """What RoPE does to one query at position ``m`` and one key at ``n``, pair by pair.

    ``dims (n_pairs, 2)``: the two dimensions of each pair (:func:`~lessons_lib.core.position.rope_pairs`);
    ``theta (n_pairs,)``: radians per position; ``q``, ``k`` ``(n_pairs, 2)``: the turned pairs (x, y);
    ``parts (n_pairs,)``: what each pair adds to the score, q_pair·k_pair; ``score``: their sum, the dot
    product of the turned query and key, which depends on n − m only.
    """

    m: int
    n: int
    base: float
    convention: str
    dims: np.ndarray
    theta: np.ndarray
    q: np.ndarray
    k: np.ndarray
    parts: np.ndarray
    score: float

    @property
    def angle_between(self) -> np.ndarray:
        """The angle from the query's pair to the key's, in (−π, π], per pair."""
        a = np.arctan2(self.k[:, 1], self.k[:, 0]) - np.arctan2(self.q[:, 1], self.q[:, 0])
        return -((-a + np.pi) % (2 * np.pi) - np.pi)


def rotation_view(q, k, m: int, n: int, *, base: float = position.DEFAULT_BASE,
                  convention: str = "half") -> RotationView:
    """Turn query ``q (d_head,)`` to position ``m`` and key ``k (d_head,)`` to position ``n`` (RoPE), and
    split their score into what each pair adds. Notebook 11."""
    m, n = (check_whole_number(value, name) for value, name in ((m, "m"), (n, "n")))
    for value, name in ((m, "m"), (n, "n")):
        if value < 0:
            raise ValueError(f"{name} must be 0 or more (a position); got {value}.")
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    if q.ndim != 1 or q.shape != k.shape:
        raise ValueError(f"q and k must be two vectors of the same length d_head; got shapes {q.shape} and "
                         f"{k.shape}.")
    turned_q = position.rope(q[None], [m], base=base, convention=convention)[0]
    turned_k = position.rope(k[None], [n], base=base, convention=convention)[0]
    dims = position.rope_pairs(q.size, convention)
    pq, pk = turned_q[dims], turned_k[dims]
    parts = (pq * pk).sum(-1)
    theta = position.rope_frequencies(q.size, base=base)
    return RotationView(int(m), int(n), float(base), convention, dims, theta, pq, pk, parts,
                        float(turned_q @ turned_k))


def offset_scores(q, k, offsets, *, base: float = position.DEFAULT_BASE, convention: str = "half",
                  start: int = 0) -> np.ndarray:
    """The score of ``q`` turned to m and ``k`` turned to n, for each offset m − n in ``offsets``: the key
    at ``start`` (the query at start + offset) when the offset is ≥ 0, else the query at ``start``."""
    start = check_whole_number(start, "start")
    if start < 0:
        raise ValueError(f"start must be 0 or more (a position); got {start}.")
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    offsets = np.asarray(offsets, dtype=np.int64)
    m = start + np.maximum(offsets, 0)
    n = start + np.maximum(-offsets, 0)
    turned_q = position.rope(np.broadcast_to(q, (offsets.size, q.size)), m, base=base, convention=convention)
    turned_k = position.rope(np.broadcast_to(k, (offsets.size, k.size)), n, base=base, convention=convention)
    return (turned_q * turned_k).sum(-1)


def sinusoid_similarity(seq_len: int, d_model: int, pos: int) -> np.ndarray:
    """PE(pos)·PE(j) for every position j: ``(seq_len,)``. For an even d_model it depends on j − pos only
    (Σ_i cos((j − pos)·ω_i)), largest, d_model/2, at j = pos. Notebook 11."""
    pe = position.sinusoidal_positions(seq_len, d_model)
    pos = check_int_in_range(pos, "pos", 0, seq_len - 1)
    return pe @ pe[pos]


# --------------------------------------------------------------------------- which came first?
ORDER_WORDS = ("cat", "dog")
ORDER_FILLERS = ("the", "a", "sat", "ran", "saw", "big", "small", "red", "old", "and")
_PAD, _START = "<pad>", "<s>"
_VOCAB = (_PAD, _START, *ORDER_WORDS, *ORDER_FILLERS)
_ID = {word: i for i, word in enumerate(_VOCAB)}

#: A verdict's bar: a model that learned the order is right on at least this share of held-out sequences.
LEARNED = 0.9
#: Two sentences of a mirrored pair whose answers differ by less than this: the model could not tell them
#: apart (float32 roundoff, summing in another order, is about 1e-7).
CHANCE = 1e-4


@dataclass
class OrderSet:
    """Sequences of the order task: ``ids (N, 1 + seq_len)`` (``<s>`` first), ``target (N,)`` (0: "cat"
    came first, 1: "dog" did), ``tokens`` the words (without ``<s>``)."""

    ids: np.ndarray
    target: np.ndarray
    tokens: list

    def __len__(self) -> int:
        return len(self.target)

    def text(self, i: int) -> str:
        return " ".join(self.tokens[i])


@dataclass
class OrderData:
    """``train`` and ``test`` :class:`OrderSet`; the test sequences come in mirrored pairs (2i, 2i + 1)."""

    train: OrderSet
    test: OrderSet
    seq_len: int


def _sequence(rng, seq_len: int) -> tuple[list, int]:
    words = [ORDER_FILLERS[i] for i in rng.integers(len(ORDER_FILLERS), size=seq_len)]
    cat, dog = rng.choice(seq_len, size=2, replace=False)
    words[cat], words[dog] = "cat", "dog"
    return words, int(dog < cat)


def _encode(sequences: list, targets: list) -> OrderSet:
    ids = np.array([[_ID[_START]] + [_ID[w] for w in words] for words in sequences], dtype=np.int64)
    return OrderSet(ids, np.array(targets, dtype=np.int64), sequences)


def make_order_data(n_train: int = 2000, n_test: int = 500, *, seq_len: int = 8, seed: int = 0) -> OrderData:
    """Sequences of ``seq_len`` words with one "cat" and one "dog" at random places among filler words;
    the answer is which of the two came first (half and half). ``n_test`` (even) held-out sequences form
    mirrored pairs: the same words with cat and dog swapped, so their answers differ. Notebook 11."""
    n_train = check_positive_int(n_train, "n_train")
    n_test = check_positive_int(n_test, "n_test")
    seq_len = check_positive_int(seq_len, "seq_len", minimum=2)
    if n_test % 2:
        raise ValueError(f"n_test must be even (the held-out sequences come in mirrored pairs); got "
                         f"{n_test}.")
    rng = np.random.default_rng(check_seed(seed))
    train = [_sequence(rng, seq_len) for _ in range(n_train)]
    test_words, test_targets = [], []
    for _ in range(n_test // 2):
        words, target = _sequence(rng, seq_len)
        mirror = ["dog" if w == "cat" else "cat" if w == "dog" else w for w in words]
        test_words += [words, mirror]
        test_targets += [target, 1 - target]
    return OrderData(_encode([w for w, _ in train], [t for _, t in train]), _encode(test_words, test_targets),
                     seq_len)


@dataclass
class OrderRun:
    """What :func:`train_order_model` returns: the model, its loss per step, the held-out accuracy, the
    largest difference between the probabilities it gives the two sequences of a mirrored pair
    (``mirror_gap``: roundoff only when the model cannot tell them apart), the time taken."""

    positions: str
    model: object
    losses: np.ndarray
    test_accuracy: float
    mirror_gap: float
    seconds: float
    config: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """The finding in words a machine cannot change: blind to order, learned it, or neither."""
        name = _KIND_WORDS[self.positions]
        if self.mirror_gap < CHANCE:
            return (f"{name}: blind to order. Each held-out sequence and its mirror (cat and dog swapped) "
                    f"get the same answer, so exactly one of the two is right: a coin toss.")
        if self.test_accuracy >= LEARNED:
            return (f"{name}: learned which came first (right on more than {LEARNED:.0%} of held-out "
                    f"sequences).")
        return (f"{name}: tells the mirrored sequences apart, but is right on fewer than {LEARNED:.0%} of "
                f"them after {self.config.get('steps', '?')} steps: train longer.")

    def __repr__(self) -> str:
        return (f"OrderRun({_KIND_WORDS[self.positions]}: held-out accuracy {self.test_accuracy:.1%}, "
                f"{len(self.losses)} steps in {self.seconds:.1f} s)")


def _order_model(kind: str, d_model: int, n_heads: int, n_layers: int, max_len: int):
    from . import models

    torch, nn = models.torch, models.nn

    class OrderModel(nn.Module):
        """Word vectors (plus sinusoids, or RoPE in every layer, or nothing), lesson 09's attention layers,
        and a read-out of two scores from ``<s>``'s final vector: "cat first" and "dog first"."""

        def __init__(self):
            super().__init__()
            self.positions = kind
            self.embed = nn.Embedding(len(_VOCAB), d_model)
            self.layers = nn.ModuleList(models.AttentionLayer(d_model, n_heads, rope=kind == "rope")
                                        for _ in range(n_layers))
            self.norm = nn.LayerNorm(d_model)
            self.readout = nn.Linear(d_model, 2)
            table = position.sinusoidal_positions(max_len, d_model) if kind == "sinusoidal" else np.zeros(1)
            self.register_buffer("sinusoids", torch.as_tensor(table, dtype=torch.float32))

        def forward(self, ids):
            """``ids (B, L)`` → ``(scores (B, 2), weights (B, n_layers, n_heads, L, L))``."""
            x = self.embed(ids)
            if self.positions == "sinusoidal":
                x = x + self.sinusoids[: ids.shape[1]]
            weights = []
            for layer in self.layers:
                x, w = layer(x, ids != _ID[_PAD])
                weights.append(w)
            return self.readout(self.norm(x[:, 0])), torch.stack(weights, dim=1)

    return OrderModel()


def _answers(model, split: OrderSet) -> np.ndarray:
    """The probability of "dog first" for every sequence of ``split``."""
    from . import models

    torch = models.torch
    with torch.no_grad():
        scores, _ = model(torch.as_tensor(split.ids))
        return torch.softmax(scores.double(), dim=-1)[:, 1].numpy()


def train_order_model(positions: str = "rope", data: OrderData | None = None, *, steps: int = 200,
                      batch_size: int = 64, lr: float = 3e-3, d_model: int = 32, n_heads: int = 2,
                      n_layers: int = 2, seed: int = 0) -> OrderRun:
    """Train the order model with ``positions`` ("none", "sinusoidal" or "rope") on ``data`` (default
    :func:`make_order_data` of ``seed``): AdamW, cross-entropy, one CPU thread, deterministic for a seed
    (``models.deterministic``). A few seconds on a laptop. Notebook 11."""
    from . import models

    kind = _check_kind(positions)
    steps = check_positive_int(steps, "steps")
    batch_size = check_positive_int(batch_size, "batch_size")
    d_model, n_heads, n_layers = (check_int_in_range(value, name, 1, 1024) for value, name in
                                  ((d_model, "d_model"), (n_heads, "n_heads"), (n_layers, "n_layers")))
    lr = check_real(lr, "lr", positive=True)
    data = make_order_data(seed=seed) if data is None else data
    if not isinstance(data, OrderData):
        raise TypeError(f"data must come from make_order_data(); got {type(data).__name__}.")
    torch, nn = models.torch, models.nn
    ids, target = torch.as_tensor(data.train.ids), torch.as_tensor(data.train.target)
    losses = np.zeros(steps)
    start = time.perf_counter()
    with models.deterministic(seed) as gen:
        model = _order_model(kind, d_model, n_heads, n_layers, data.seq_len + 1)
        opt = models.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        for step in range(steps):
            batch = torch.randint(len(data.train), (batch_size,), generator=gen)
            scores, _ = model(ids[batch])
            loss = nn.functional.cross_entropy(scores, target[batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[step] = loss.item()
        model.eval()
        p_dog = _answers(model, data.test)
    right = (p_dog > 0.5) == (data.test.target == 1)
    gap = float(np.abs(p_dog[0::2] - p_dog[1::2]).max())
    return OrderRun(kind, model, losses, float(right.mean()), gap, time.perf_counter() - start,
                    {"steps": steps, "batch_size": batch_size, "lr": lr, "seed": seed, "d_model": d_model,
                     "n_heads": n_heads, "n_layers": n_layers})


@dataclass
class OrderComparison:
    """:func:`compare_positions`'s runs, by kind of positions."""

    runs: dict
    data: OrderData

    def verdicts(self) -> str:
        """One line per run, in words only: what every machine prints alike."""
        return "\n".join(run.verdict for run in self.runs.values())

    def measured(self) -> str:
        """This run's accuracies and times (they may differ a little on another machine)."""
        return "\n".join(f"{_KIND_WORDS[k]:>16}: held-out accuracy {r.test_accuracy:6.1%}, trained in "
                         f"{r.seconds:.1f} s" for k, r in self.runs.items())


def compare_positions(kinds=POSITION_KINDS, *, steps: int = 200, seed: int = 0) -> OrderComparison:
    """Train the order model once per kind of positions on the same data and seed. Notebook 11."""
    kinds = [_check_kind(k) for k in kinds]
    data = make_order_data(seed=seed)
    return OrderComparison({k: train_order_model(k, data, steps=steps, seed=seed) for k in kinds}, data)
