"""What a cheaper memory gives up, measured: multi-query associative recall (MQAR), notebook 13.

MQAR (Arora et al. 2023, "Zoology") asks a model to remember pairs: a sequence lists ``n_pairs`` keys, each
followed by its value, then asks for every key again, in another order, each followed by its value::

    k₁ v₁ k₂ v₂ … k_P v_P │ k₃ v₃ k₁ v₁ …          the answer at each asked key: the value that followed it

Scored only where a key is asked, and only the values (their own vocabulary, ``N_VALUES`` words), so
chance is 1 in ``N_VALUES``. The data is drawn fresh for every batch from a seed (:func:`mqar_data`).

The models are as small as the task allows: one layer, one head, ``d_state`` features per query, key and
value. A key is read from the token *before* (a token shift, as Zoology's models do with a short
convolution), so at the position of v_i the key is k_i and the value v_i; the query is the token itself.
Only the **mixer** changes (:data:`MIXERS`, :func:`mix`): softmax attention, linear attention (elu + 1,
normalised), a decaying state (a gate a_t per token, Mamba-2's scalar), the delta rule (β_t per token,
L2-normalised q and k) and softmax attention in a sliding window. Their formulas are those of
``lessons_lib.core.linear`` and ``core.attention``, here in torch for training (tests hold them equal in
float64). :func:`train_recall_model` trains one (AdamW, one CPU thread, deterministic for a seed, seconds);
:func:`compare_recall` trains each mixer at each number of pairs and states the verdicts from what it
measured (:meth:`RecallTable.verdicts`), beside the numbers each mixer keeps to generate the next token
(:func:`numbers_kept`): softmax's cache grows with the sequence, a state does not.

Without training, :func:`state_recall` writes random pairs straight into a ``d_state × d_state`` state by
each rule and reads every key back (milliseconds: what an explorer redraws per slider move), and
:func:`recall_curve` gives its recall against the number of pairs; :func:`written_state` is the state itself.
The random pairs are drawn once for each number of pairs, state size and seed, and kept: every rule and decay
writes the same ones, so an explorer's move to another decay, or back to a state size, draws nothing again.

torch is imported on first training (``import lessons_lib`` never imports it).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np

from .._checks import check_int_in_range, check_per_token, check_positive_int, check_real, check_seed
from ..core import linear

__all__ = ["MIXERS", "N_KEYS", "N_VALUES", "RECALLED", "CLOSE", "RecallSet", "mqar_data", "numbers_kept",
           "mix", "RecallRun", "train_recall_model", "RecallTable", "compare_recall", "WRITE_RULES",
           "written_state", "state_recall", "recall_curve"]

#: The mixers compared, by name, with what each keeps.
MIXERS = {
    "softmax": "softmax attention: every key and value kept (the KV cache)",
    "linear": "linear attention (elu + 1): one d × d state, everything added",
    "decay": "a decaying state (a gate per token): one d × d state, old pairs fade",
    "delta": "the delta rule: one d × d state, each pair overwrites what its key held",
    "window": "softmax attention over the last tokens only (a sliding window)",
}
N_KEYS, N_VALUES = 64, 64        # the keys' and the values' vocabularies: tokens 0–63 and 64–127
RECALLED = 0.9                   # the share of asked keys answered right that counts as "recalls"
CLOSE = 0.05                     # recalls closer than this are called "about as much"
_GATE_START = {"decay": 4.0}     # the gate's first bias: a_t ≈ 0.98 (a state that forgets slowly at first)


def _check_mixer(mixer) -> str:
    if not isinstance(mixer, str) or mixer not in MIXERS:
        raise ValueError(f"mixer must be one of {', '.join(map(repr, MIXERS))}; got {mixer!r}.")
    return mixer


# --------------------------------------------------------------------------- the data
@dataclass(frozen=True)
class RecallSet:
    """MQAR sequences: ``tokens (n_sequences, 4·n_pairs)``, ``targets`` of the same shape (the value
    index 0…N_VALUES−1 where a key is asked, −1 elsewhere)."""

    tokens: np.ndarray
    targets: np.ndarray
    n_pairs: int


def mqar_data(n_pairs: int, n_sequences: int, seed=0) -> RecallSet:
    """``n_sequences`` MQAR sequences of ``n_pairs`` distinct keys (each with a random value), then every
    key asked once in a random order, each followed by its value. ``seed`` is a whole number or a numpy
    ``Generator`` (training draws one batch after another from it).

    >>> s = mqar_data(2, 1, seed=0)
    >>> s.tokens.shape, int((s.targets >= 0).sum())
    ((1, 8), 2)
    """
    n_pairs = check_int_in_range(n_pairs, "n_pairs", 1, N_KEYS)
    n_sequences = check_int_in_range(n_sequences, "n_sequences", 1, 100_000)
    rng = np.random.default_rng(check_seed(seed))
    keys = np.argsort(rng.random((n_sequences, N_KEYS)), axis=1)[:, :n_pairs]      # distinct keys
    values = rng.integers(0, N_VALUES, (n_sequences, n_pairs))
    order = np.argsort(rng.random((n_sequences, n_pairs)), axis=1)                 # the order of asking
    asked, answers = np.take_along_axis(keys, order, 1), np.take_along_axis(values, order, 1)
    tokens = np.empty((n_sequences, 4 * n_pairs), dtype=np.int64)
    targets = np.full(tokens.shape, -1, dtype=np.int64)
    half = 2 * n_pairs
    tokens[:, 0:half:2], tokens[:, 1:half:2] = keys, N_KEYS + values
    tokens[:, half::2], tokens[:, half + 1::2] = asked, N_KEYS + answers
    targets[:, half::2] = answers
    return RecallSet(tokens, targets, n_pairs)


def numbers_kept(mixer: str, n_tokens: int, d_state: int = 16, window: int = 8) -> int:
    """How many numbers the layer keeps after ``n_tokens`` tokens to generate the next one: the cache
    ``2·d·N`` for softmax (``2·d·min(N, window)`` in a window), the state ``d·d`` (``d·d + d`` with linear
    attention's normaliser) for the others, whatever N is.

    >>> numbers_kept("softmax", 128), numbers_kept("delta", 128), numbers_kept("window", 128)
    (4096, 256, 256)
    """
    mixer = _check_mixer(mixer)
    n = check_positive_int(n_tokens, "n_tokens")
    d = check_int_in_range(d_state, "d_state", 1, 1024)
    window = check_positive_int(window, "window")
    return {"softmax": 2 * d * n, "window": 2 * d * min(n, window), "linear": d * d + d}.get(mixer, d * d)


# --------------------------------------------------------------------------- the mixers, in torch
def mix(mixer: str, q, k, v, gate=None, window: int = 8):
    """The mixer's outputs ``(B, N, d_v)`` from torch ``q, k (B, N, d_k)``, ``v (B, N, d_v)`` and ``gate
    (B, N)`` (a_t for ``"decay"``, β_t for ``"delta"``), all in parallel form, differentiable:

    * ``"softmax"``: causal softmax(Q·Kᵀ/√d_k)·V; ``"window"``: the same over the last ``window`` keys;
    * ``"linear"``: ``linear_attention(q, k, v)`` (elu + 1, normalised);
    * ``"decay"``: ``decay_attention(q, k, v, gate)``, (Q·Kᵀ ∘ L)·V;
    * ``"delta"``: ``delta_rule(q, k, v, gate)`` from an empty state: the chunked form with one chunk,
      the errors U solving (I + tril(β_i k_i·k_j)) U = β V, then (Q·Kᵀ ∘ mask)·U.
    """
    from . import models

    torch, functional = models.torch, models.nn.functional
    mixer = _check_mixer(mixer)
    window = check_positive_int(window, "window")
    _check_tensors(mixer, q, k, v, gate)
    n = q.shape[-2]
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    if mixer in ("softmax", "window"):
        if mixer == "window":
            causal = causal & ~torch.ones(n, n, dtype=torch.bool).tril(-window)
        scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
        return torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ v
    if mixer == "linear":
        weights = ((functional.elu(q) + 1) @ (functional.elu(k) + 1).transpose(-1, -2)) * causal
        return (weights @ v) / weights.sum(-1, keepdim=True)
    if mixer == "decay":
        kept = torch.log(gate).cumsum(-1)                                      # log(a_1 ⋯ a_t)
        mask = torch.exp((kept[..., :, None] - kept[..., None, :]).masked_fill(~causal, float("-inf")))
        return ((q @ k.transpose(-1, -2)) * mask) @ v
    q, k = functional.normalize(q, dim=-1), functional.normalize(k, dim=-1)
    couple = torch.tril(gate[..., :, None] * (k @ k.transpose(-1, -2)), -1)
    eye = torch.eye(n, dtype=q.dtype).expand_as(couple)
    errors = torch.linalg.solve_triangular(eye + couple, gate[..., None] * v, upper=False, unitriangular=True)
    return ((q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5 * causal) @ errors


def _check_tensors(mixer, q, k, v, gate) -> None:
    shapes = {name: tuple(getattr(x, "shape", ())) for name, x in (("q", q), ("k", k), ("v", v))}
    if any(len(shape) != 3 for shape in shapes.values()):
        raise ValueError(f"q, k and v must be torch tensors of shape (batch, N, d); got shapes {shapes}.")
    if shapes["q"] != shapes["k"] or shapes["k"][:2] != shapes["v"][:2]:
        raise ValueError(f"q and k must have one shape (batch, N, d_k) and v (batch, N, d_v) the same batch "
                         f"and N; got {shapes}.")
    if mixer in ("decay", "delta") and tuple(getattr(gate, "shape", ())) != shapes["q"][:2]:
        what = ("a_t, the share of the state kept" if mixer == "decay" else
                "β_t, the share of the error written")
        raise ValueError(f"the {mixer!r} mixer needs gate, {what}, one number per token: shape "
                         f"{shapes['q'][:2]}; got {getattr(gate, 'shape', gate)!r}.")


def _recall_model(mixer: str, d_model: int, d_state: int, window: int):
    from . import models

    torch, nn = models.torch, models.nn

    class RecallModel(nn.Module):
        """Embedding → q (this token), k (the token before), v (this token), a gate → the mixer →
        LayerNorm → scores over the values."""

        def __init__(self):
            super().__init__()
            self.mixer, self.window = mixer, window
            self.embed = nn.Embedding(N_KEYS + N_VALUES, d_model)
            self.w_q, self.w_k, self.w_v = (nn.Linear(d_model, d_state, bias=False) for _ in range(3))
            self.gate = nn.Linear(d_model, 1)
            nn.init.constant_(self.gate.bias, _GATE_START.get(mixer, 0.0))
            self.norm = nn.LayerNorm(d_state)
            self.readout = nn.Linear(d_state, N_VALUES)

        def forward(self, tokens):
            x = self.embed(tokens)
            before = nn.functional.pad(x, (0, 0, 1, 0))[:, :-1]              # the token shift
            gate = torch.sigmoid(self.gate(x))[..., 0]
            out = mix(self.mixer, self.w_q(x), self.w_k(before), self.w_v(x), gate, self.window)
            return self.readout(self.norm(out))

    return RecallModel()


# --------------------------------------------------------------------------- training
@dataclass
class RecallRun:
    """One trained model: its mixer, the number of pairs, the share of held-out asked keys answered right
    (``recall``), the loss per step, the numbers it keeps at the end of a sequence, the time taken."""

    mixer: str
    n_pairs: int
    recall: float
    losses: np.ndarray
    numbers_kept: int
    seconds: float
    model: object = field(repr=False, default=None)
    config: dict = field(default_factory=dict)


def train_recall_model(mixer: str = "softmax", n_pairs: int = 8, *, steps: int = 400, batch_size: int = 32,
                       lr: float = 3e-3, d_model: int = 64, d_state: int = 16, window: int = 8,
                       seed: int = 0, n_test: int = 500) -> RecallRun:
    """Train one recall model on fresh MQAR batches of ``n_pairs`` pairs drawn from ``seed``; score it on
    ``n_test`` sequences drawn from another seed (``10⁶ + seed``). AdamW, one CPU thread, the same numbers
    for the same seed (``models.deterministic``). Notebook 13."""
    from . import models

    mixer = _check_mixer(mixer)
    n_pairs = check_int_in_range(n_pairs, "n_pairs", 1, N_KEYS)
    steps, batch_size = check_positive_int(steps, "steps"), check_positive_int(batch_size, "batch_size")
    d_model = check_int_in_range(d_model, "d_model", 1, 1024)
    d_state = check_int_in_range(d_state, "d_state", 1, 1024)
    window = check_positive_int(window, "window")
    lr = check_real(lr, "lr", positive=True)
    seed = check_seed(seed, allow_generator=False)
    n_test = check_int_in_range(n_test, "n_test", 1, 100_000)
    torch, functional = models.torch, models.nn.functional
    rng, losses = np.random.default_rng(seed), np.zeros(steps)
    start = time.perf_counter()
    with models.deterministic(seed):
        model = _recall_model(mixer, d_model, d_state, window)
        opt = models.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
        for step in range(steps):
            batch = mqar_data(n_pairs, batch_size, rng)
            scores = model(torch.as_tensor(batch.tokens))
            loss = functional.cross_entropy(scores.flatten(0, 1), torch.as_tensor(batch.targets).flatten(),
                                            ignore_index=-1)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[step] = loss.item()
        model.eval()
        test = mqar_data(n_pairs, n_test, 10**6 + seed)
        with torch.no_grad():
            guesses = model(torch.as_tensor(test.tokens)).argmax(-1).numpy()
    asked = test.targets >= 0
    recall = float((guesses[asked] == test.targets[asked]).mean())
    return RecallRun(mixer, n_pairs, recall, losses, numbers_kept(mixer, 4 * n_pairs, d_state, window),
                     time.perf_counter() - start, model,
                     {"steps": steps, "batch_size": batch_size, "lr": lr, "d_model": d_model,
                      "d_state": d_state, "window": window, "seed": seed})


@dataclass
class RecallTable:
    """:func:`compare_recall`'s runs, ``runs[mixer][n_pairs]``."""

    runs: dict

    @property
    def pair_counts(self) -> list:
        return sorted(next(iter(self.runs.values())))

    def recall(self, mixer: str) -> list:
        """The mixer's recall at each number of pairs, in order."""
        return [self.runs[mixer][p].recall for p in self.pair_counts]

    def table(self) -> str:
        """Recall (%) per mixer and number of pairs, and the numbers each keeps at the longest sequence."""
        counts = self.pair_counts
        longest = 4 * counts[-1]
        head = (f"{'mixer':>8} │ " + " ".join(f"{p:>3} pairs" for p in counts)
                + f" │ numbers kept at N = {longest}")
        rows = [head, "─" * len(head)]
        for mixer, runs in self.runs.items():
            recalls = " ".join(f"{runs[p].recall:>8.0%}" + " " for p in counts)
            rows.append(f"{mixer:>8} │ {recalls}│ {runs[counts[-1]].numbers_kept:>6,}")
        return "\n".join(rows)

    def first_failure(self, mixer: str):
        """The smallest number of pairs at which ``mixer`` recalls less than :data:`RECALLED`, or None."""
        return next((p for p, r in zip(self.pair_counts, self.recall(mixer)) if r < RECALLED), None)

    def verdicts(self) -> str:
        """What this run found, in words computed from its numbers (never written in advance): where each
        mixer stops recalling, and which fixed state recalls most at the most pairs (or which are within
        :data:`CLOSE` of each other, where another machine's roundoff could swap them)."""
        counts, lines = self.pair_counts, []
        for mixer, runs in self.runs.items():
            failure = self.first_failure(mixer)
            memory = {"softmax": "a cache that grows with the sequence",
                      "window": f"the last {runs[counts[-1]].config['window']} tokens only"}.get(
                          mixer, "a state of fixed size")
            if failure is None:
                lines.append(f"{mixer}: recalls at least {RECALLED:.0%} of the asked keys at every count "
                             f"tried (up to {counts[-1]} pairs), keeping {memory}.")
            else:
                lines.append(f"{mixer}: recalls fewer than {RECALLED:.0%} from {failure} pairs on, keeping "
                             f"{memory}.")
        fixed = sorted((m for m in self.runs if m in ("linear", "decay", "delta")),
                       key=lambda m: -self.runs[m][counts[-1]].recall)
        if len(fixed) > 1:
            top = self.runs[fixed[0]][counts[-1]].recall
            close = [m for m in fixed if top - self.runs[m][counts[-1]].recall < CLOSE]
            if len(close) == 1:
                lines.append(f"At {counts[-1]} pairs the fixed state that recalls most is {fixed[0]!r}, by "
                             f"at least {CLOSE:.0%} of the asked keys.")
            else:
                lines.append(f"At {counts[-1]} pairs {' and '.join(map(repr, close))} recall about as much "
                             f"(within {CLOSE:.0%} of the asked keys) and most among the fixed states.")
        return "\n".join(lines)

    def measured(self) -> str:
        """This run's training times (another machine takes other times)."""
        return "\n".join(f"{m:>8}: " + ", ".join(f"{p} pairs {r.seconds:.1f} s"
                                                 for p, r in sorted(runs.items()))
                         for m, runs in self.runs.items())


def compare_recall(mixers=tuple(MIXERS), pair_counts=(4, 8, 16, 32), *, seed: int = 0,
                   **training) -> RecallTable:
    """Train each mixer at each number of pairs on the same seeded data (:func:`train_recall_model`,
    ``training`` passed on: ``steps``, ``d_state``, ``window``, ...). Notebook 13."""
    mixers = [_check_mixer(m) for m in mixers]
    counts = sorted({check_int_in_range(p, "n_pairs", 1, N_KEYS) for p in pair_counts})
    if not mixers or not counts:
        raise ValueError("compare_recall needs at least one mixer and one number of pairs.")
    return RecallTable({m: {p: train_recall_model(m, p, seed=seed, **training) for p in counts}
                        for m in mixers})


# --------------------------------------------------------------------------- writing pairs by hand
#: How :func:`state_recall` stores its pairs: a cache, or a d × d state written by one rule.
WRITE_RULES = {
    "softmax": "every key and value kept; a key is read back by its largest score (exact)",
    "linear": "S ← S + k vᵀ: every pair added on top of the others",
    "decay": "S ← a·S + k vᵀ: every pair added, the older ones faded by a at each step",
    "delta": "S ← a·S − β k (a·Sᵀk − v)ᵀ: what k held replaced by v (β = 1)",
}


def written_state(n_pairs: int, d_state: int = 16, *, rule: str = "linear", decay: float = 1.0, seed: int = 0,
                  n_trials: int = 1) -> tuple:
    """``(keys, values, state)``: ``n_pairs`` random pairs written into a memory by ``rule``
    (:data:`WRITE_RULES`), ``n_trials`` draws. ``keys``, ``values`` ``(n_trials, n_pairs, d_state)`` of length
    1, the first ``d_state`` keys at right angles; ``state (n_trials, d_state, d_state)`` after the last pair
    (None for ``"softmax"``, which keeps every pair). ``decay`` (a, in (0, 1]) is used by ``"decay"`` and
    ``"delta"`` (gated DeltaNet with a < 1). What :func:`state_recall` reads back and the explorer of
    notebook 13 draws.

    >>> keys, values, state = written_state(3, 4, rule="linear")
    >>> keys.shape, state.shape
    ((1, 3, 4), (1, 4, 4))
    """
    rule, n_pairs, d, a, seed, n_trials = _writing(rule, n_pairs, d_state, decay, seed, n_trials)
    keys, values = _pairs(n_pairs, d, seed, n_trials)
    return keys.copy(), values.copy(), _written(keys, values, rule, a)


def _writing(rule, n_pairs, d_state, decay, seed, n_trials) -> tuple:
    """The arguments of :func:`written_state`, checked: ``(rule, n_pairs, d, a, seed, n_trials)``."""
    if not isinstance(rule, str) or rule not in WRITE_RULES:
        raise ValueError(f"rule must be one of {', '.join(map(repr, WRITE_RULES))}; got {rule!r}.")
    n_pairs = check_int_in_range(n_pairs, "n_pairs", 1, 1024)
    d = check_int_in_range(d_state, "d_state", 1, 256)
    n_trials = check_int_in_range(n_trials, "n_trials", 1, 1024)
    a = float(check_per_token([check_real(decay, "decay")], "decay", (), 1, low=0.0, high=1.0, low_open=True,
                              meaning="the share of the state kept at each step")[0])
    return rule, n_pairs, d, a, check_seed(seed, allow_generator=False), n_trials


@functools.lru_cache(maxsize=64)
def _pairs(n_pairs: int, d: int, seed: int, n_trials: int) -> tuple[np.ndarray, np.ndarray]:
    """The random keys and values of :func:`written_state`, drawn once for each (n_pairs, d, seed, n_trials)
    and kept (read-only), since every rule and every decay writes the same draws: an explorer's move to a
    new decay, or back to a state size it showed, draws nothing again."""
    rng = np.random.default_rng(seed)
    keys = _spread_keys(rng, n_trials, n_pairs, d)
    values = linear.l2_normalize(rng.standard_normal((n_trials, n_pairs, d)), "values")
    keys.setflags(write=False)
    values.setflags(write=False)
    return keys, values


def _written(keys, values, rule: str, a: float):
    """The state ``rule`` leaves after writing ``keys`` and ``values`` (None for ``"softmax"``)."""
    if rule == "softmax":
        return None
    n_trials, n_pairs = keys.shape[:2]
    gates = np.full((n_trials, n_pairs), a if rule != "linear" else 1.0)
    if rule == "delta":
        _, state = linear.delta_rule(keys, keys, values, np.ones((n_trials, n_pairs)), gates, scale=1.0)
        return state
    faded = np.cumprod(gates[:, ::-1], axis=1)[:, ::-1] / gates   # a_{p+1} ⋯ a_P: what is left of pair p
    return np.swapaxes(keys * faded[..., None], -1, -2) @ values    # Σ_p faded_p k_p v_pᵀ, as one product


def state_recall(n_pairs: int, d_state: int = 16, *, rule: str = "linear", decay: float = 1.0,
                 seed: int = 0, n_trials: int = 32) -> float:
    """Write ``n_pairs`` random pairs into a memory by ``rule`` (:func:`written_state`), read every key back
    and return the share whose read-out is closest (largest cosine) to its own value among the stored
    values, over ``n_trials`` draws. Keys and values are random directions in ``d_state`` dimensions; no
    training, so the state's own limit shows: more pairs than dimensions cannot all be told apart.

    >>> state_recall(4, 16, rule="softmax"), state_recall(1, 16, rule="linear")
    (1.0, 1.0)
    """
    rule, n_pairs, d, a, seed, n_trials = _writing(rule, n_pairs, d_state, decay, seed, n_trials)
    return _recalled(rule, a, *_pairs(n_pairs, d, seed, n_trials))


def _recalled(rule: str, a: float, keys, values) -> float:
    """The share of the pairs ``rule`` writes that read back nearest their own value
    (:func:`state_recall`)."""
    state = _written(keys, values, rule, a)
    if state is None:
        read = np.take_along_axis(values, np.argmax(keys @ np.swapaxes(keys, -1, -2), -1)[..., None], 1)
    else:
        read = keys @ state                                               # Sᵀ k_i for every stored key
    nearest = np.argmax(read @ np.swapaxes(values, -1, -2), axis=-1)      # the value each read-out is nearest
    return float(np.mean(nearest == np.arange(keys.shape[1])))


def _spread_keys(rng, n_trials: int, n_pairs: int, d: int) -> np.ndarray:
    """Keys as far apart as d dimensions allow: the first d at right angles (a random rotation of the
    axes), any more in random directions, which must overlap the others."""
    rotations, _ = np.linalg.qr(rng.standard_normal((n_trials, d, d)))
    spread = np.swapaxes(rotations, -1, -2)[:, :n_pairs]
    extra = linear.l2_normalize(rng.standard_normal((n_trials, max(n_pairs - d, 0), d)) + 0.0, "keys") \
        if n_pairs > d else np.zeros((n_trials, 0, d))
    order = rng.permuted(np.tile(np.arange(n_pairs), (n_trials, 1)), axis=1)    # written in a random order
    return np.take_along_axis(np.concatenate([spread, extra], axis=1), order[..., None], 1)


def recall_curve(pair_counts=(1, 2, 4, 8, 16, 32, 64), d_state: int = 16, *, decay: float = 1.0,
                 seed: int = 0, rules=tuple(WRITE_RULES)) -> dict:
    """``{rule: [recall at each count]}`` of :func:`state_recall`, the same draws for every rule (drawn once
    per count, and kept: :func:`_pairs`)."""
    counts = [check_int_in_range(p, "n_pairs", 1, 1024) for p in pair_counts]
    checked = [_writing(rule, 1, d_state, decay, seed, 32) for rule in rules]
    draws = [_pairs(p, checked[0][2], checked[0][4], 32) for p in counts] if checked else []
    return {rule: [_recalled(rule, a, *pairs) for pairs in draws] for rule, _, _, a, _, _ in checked}
