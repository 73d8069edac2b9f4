"""A synthetic coreference data set: whom does "it" mean? (notebook 09)

The seed's pair of sentences, made into a data set a tiny model can learn from:

    The animal didn't cross the street because it was too tired.   → "it" = the animal
    The animal didn't cross the street because it was too wide.    → "it" = the street

Each sentence names one *agent* (an animal) and one *place* (a road), then says
"it was too ADJ". The adjective fits only one of the two: tired, hungry, sleepy,
scared fit an agent; wide, busy, wet, icy fit a place. So the adjective decides
the referent, and the model has to find the noun of the matching kind.

Position alone cannot solve it: eight templates put the agent first or the
place first, and optional fillers ("yesterday ,", "again", "far too") move every
word around. Optionally (``none_fraction``) some sentences use a *dummy* "it"
("it was too late"), which refers to nothing: notebook 09 uses those to show an
attention sink.

Splits: the held-out sentences use (agent, place) pairs that never occur
together in any training sentence, while every single word does occur in
training. The seed's own pair (animal, street) is held out, so sentences A and
B are new to a trained model.

Everything is made from a seed with numpy; nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._checks import check_positive_int, check_seed, is_real_number, is_whole_number
from .data import SENTENCES, tokenize

# ----------------------------------------------------------------- vocabulary
AGENTS = ("animal", "dog", "cat", "horse", "goat", "fox")
PLACES = ("street", "road", "river", "bridge", "lane", "track")
AGENT_ADJECTIVES = ("tired", "hungry", "sleepy", "scared")
PLACE_ADJECTIVES = ("wide", "busy", "wet", "icy")
# A dummy "it" (it was too late): the adjective fits neither noun, "it" refers to nothing.
NONE_ADJECTIVES = ("late", "early")
NOTHING = "nothing"
# What the model predicts: one of the nouns, or "nothing".
REFERENTS = (*AGENTS, *PLACES, NOTHING)

KINDS = ("agent", "place", "none")

# Eight templates: {a} agent, {p} place, {pre} optional opening filler,
# {mid} optional filler before the reason, {deg} "too", "far too", ...
TEMPLATES = (
    "{pre} the {a} didn't cross the {p} {mid} because it was {deg} {adj} .",
    "{pre} the {a} did not walk onto the {p} {mid} because it was {deg} {adj} .",
    "{pre} the {a} stayed away from the {p} {mid} since it was {deg} {adj} .",
    "{pre} the {a} looked at the {p} {mid} , but it was {deg} {adj} .",
    "{pre} the {p} was not crossed by the {a} {mid} because it was {deg} {adj} .",
    "{pre} near the {p} , the {a} stopped {mid} because it was {deg} {adj} .",
    "{pre} on the {p} , the {a} gave up {mid} since it was {deg} {adj} .",
    "{pre} the {p} was ahead of the {a} {mid} , but it was {deg} {adj} .",
)
PRE_FILLERS = ("", "", "yesterday ,", "that night ,", "then", "in the morning ,")
MID_FILLERS = ("", "", "again", "that day", "for a while")
DEGREES = ("too", "too", "far too", "much too", "just too")

SINK = "<s>"   # the first token of every encoded sentence (as a BOS token)
PAD = "<pad>"  # fills short sentences up to the batch length; never attended to

# Sentences A and B of the seed (notebooks 01 and 09).
SENTENCE_A = SENTENCES["tired"]
SENTENCE_B = SENTENCES["wide"]


def _template_words() -> list[str]:
    words = set()
    for text in (*TEMPLATES, *PRE_FILLERS, *MID_FILLERS, *DEGREES):
        for w in text.replace("{", " {").split():
            if not w.startswith("{"):
                words.add(w)
    return sorted(words)


VOCAB = (PAD, SINK, *sorted(set(_template_words()) | set(AGENTS) | set(PLACES) | set(AGENT_ADJECTIVES)
                             | set(PLACE_ADJECTIVES) | set(NONE_ADJECTIVES)))
WORD_ID = {w: i for i, w in enumerate(VOCAB)}


def _fill(template: str, a: str, p: str, pre: str, mid: str, deg: str, adj: str) -> str:
    return " ".join(template.format(a=a, p=p, pre=pre, mid=mid, deg=deg, adj=adj).split())


MAX_LEN = 1 + max(len(_fill(t, "a", "p", max(PRE_FILLERS, key=len), max(MID_FILLERS, key=len),
                            max(DEGREES, key=len), "x").split()) for t in TEMPLATES)


# ----------------------------------------------------------------- splits
def held_out_pairs() -> frozenset:
    """The (agent, place) pairs kept for the held-out split: agent i with place i.

    (animal, street), (dog, road), (cat, river), (horse, bridge), (goat, lane),
    (fox, track): one pair per word, so every agent and every place still occurs
    in training, each with the five other partners. The seed's pair (animal,
    street) is held out, so sentences A and B are new to a trained model.
    """
    return frozenset(zip(AGENTS, PLACES))


def training_pairs() -> frozenset:
    """Every (agent, place) pair that is not held out (30 of 36)."""
    held = held_out_pairs()
    return frozenset((a, p) for a in AGENTS for p in PLACES if (a, p) not in held)


# ----------------------------------------------------------------- data
@dataclass
class CorefSet:
    """One split: sentences, their encodings and the answers.

    ``tokens[i]`` are the words of sentence i (without the sink); ``ids`` is
    ``(n, MAX_LEN)`` int64 with ``SINK`` first and ``PAD`` after the end;
    ``it_pos`` is the position of "it" in ``ids``; ``target`` indexes
    ``REFERENTS``; ``referent_pos`` is the position of the referent noun in
    ``ids`` (−1 for a dummy "it"); ``kind`` is "agent", "place" or "none".
    """

    tokens: list
    ids: np.ndarray
    lengths: np.ndarray
    it_pos: np.ndarray
    target: np.ndarray
    referent_pos: np.ndarray
    kind: np.ndarray
    agent: np.ndarray
    place: np.ndarray
    adjective: np.ndarray
    template: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def text(self, i: int) -> str:
        """Sentence ``i`` as text."""
        return " ".join(self.tokens[i])


@dataclass
class CorefData:
    """The train and held-out splits, with how they were made."""

    train: CorefSet
    test: CorefSet
    seed: int
    held_out: frozenset


def make_coref_data(n_train: int = 2000, n_test: int = 500, *, seed: int = 0,
                    none_fraction: float = 0.0) -> CorefData:
    """Generate the train and held-out splits, deterministically from ``seed``.

    Within each split, exactly half of the sentences with a real referent
    point to the agent and half to the place (one more to the agent when the
    count is odd), and a ``none_fraction`` of all sentences have a dummy "it"
    ("it was too late"). Held-out sentences use only the (agent, place) pairs
    of ``held_out_pairs()``, never seen together in training.
    """
    n_train = check_positive_int(n_train, "n_train")
    n_test = check_positive_int(n_test, "n_test")
    if not is_real_number(none_fraction) or not 0.0 <= none_fraction < 1.0:
        raise ValueError(f"none_fraction must be a number in [0, 1): the share of sentences with a "
                         f"dummy 'it'; got {none_fraction!r}.")
    if not is_whole_number(seed) or seed < 0:
        raise ValueError(f"seed must be a whole number ≥ 0; got {seed!r}.")
    seed = check_seed(seed, allow_generator=False)
    rng = np.random.default_rng([int(seed), 10])
    held = held_out_pairs()
    train = _make_split(n_train, sorted(training_pairs()), none_fraction, rng)
    test = _make_split(n_test, sorted(held), none_fraction, rng)
    return CorefData(train, test, int(seed), held)


def _make_split(n: int, pairs: list, none_fraction: float, rng: np.random.Generator) -> CorefSet:
    n_none = int(round(n * none_fraction))
    n_ref = n - n_none
    kinds = np.array(["agent"] * ((n_ref + 1) // 2) + ["place"] * (n_ref // 2) + ["none"] * n_none)
    rng.shuffle(kinds)
    rows = []
    for kind in kinds:
        a, p = pairs[rng.integers(len(pairs))]
        adj_list = {"agent": AGENT_ADJECTIVES, "place": PLACE_ADJECTIVES, "none": NONE_ADJECTIVES}[kind]
        adj = adj_list[rng.integers(len(adj_list))]
        t = int(rng.integers(len(TEMPLATES)))
        text = _fill(TEMPLATES[t], a, p, PRE_FILLERS[rng.integers(len(PRE_FILLERS))],
                     MID_FILLERS[rng.integers(len(MID_FILLERS))], DEGREES[rng.integers(len(DEGREES))], adj)
        rows.append((text.split(), kind, a, p, adj, t))
    return _to_set(rows)


def _to_set(rows) -> CorefSet:
    n = len(rows)
    ids = np.zeros((n, MAX_LEN), dtype=np.int64)
    lengths = np.zeros(n, dtype=np.int64)
    it_pos = np.zeros(n, dtype=np.int64)
    target = np.zeros(n, dtype=np.int64)
    ref_pos = np.full(n, -1, dtype=np.int64)
    for i, (words, kind, a, p, _adj, _t) in enumerate(rows):
        enc = [WORD_ID[SINK], *(WORD_ID[w] for w in words)]
        ids[i, :len(enc)] = enc
        lengths[i] = len(enc)
        it_pos[i] = 1 + words.index("it")
        noun = {"agent": a, "place": p, "none": NOTHING}[kind]
        target[i] = REFERENTS.index(noun)
        if kind != "none":
            ref_pos[i] = 1 + words.index(noun)
    cols = list(zip(*rows))
    return CorefSet(tokens=[r[0] for r in rows], ids=ids, lengths=lengths, it_pos=it_pos, target=target,
                    referent_pos=ref_pos, kind=np.array(cols[1]), agent=np.array(cols[2]),
                    place=np.array(cols[3]), adjective=np.array(cols[4]), template=np.array(cols[5]))


# ----------------------------------------------------------------- a learner's sentence
def encode_sentence(sentence) -> dict:
    """Tokens and ids of a sentence the learner typed, with the sink token in front.

    Accepts text ("The animal didn't cross the street because it was too tired.")
    or a list of words; case is ignored. Raises ``ValueError`` naming every word
    the model has never seen, and when there is not exactly one "it".
    Returns ``{"tokens": [...], "ids": (1, L) int64, "it_pos": int}`` where
    ``tokens`` includes the sink token ``<s>``.
    """
    if isinstance(sentence, str):
        words = [w.lower() for w in tokenize(sentence)]
    elif isinstance(sentence, (list, tuple)) and sentence and all(isinstance(w, str) for w in sentence):
        words = [w.lower() for w in sentence]
    else:
        raise TypeError(f"Give a sentence as text (or a list of words); got {type(sentence).__name__}.")
    unknown = [w for w in dict.fromkeys(words) if w not in WORD_ID or w in (PAD, SINK)]
    if unknown:
        raise ValueError(
            f"The model has never seen {', '.join(repr(w) for w in unknown)}: its vocabulary has only "
            f"{len(VOCAB) - 2} words, so it has no vector for "
            f"{'this word' if len(unknown) == 1 else 'these words'}. Try one of the agents "
            f"{', '.join(AGENTS)}; the places {', '.join(PLACES)}; the adjectives "
            f"{', '.join(AGENT_ADJECTIVES)} (they fit an animal) and {', '.join(PLACE_ADJECTIVES)} "
            f"(they fit a place)."
        )
    n_it = words.count("it")
    if n_it != 1:
        raise ValueError(f"The sentence needs exactly one 'it' for the model to resolve; it has {n_it}.")
    if len(words) + 1 > MAX_LEN:
        raise ValueError(f"The sentence has {len(words)} words; the model was trained on at most "
                         f"{MAX_LEN - 1}. Shorten it.")
    tokens = [SINK, *words]
    ids = np.array([[WORD_ID[w] for w in tokens]], dtype=np.int64)
    return {"tokens": tokens, "ids": ids, "it_pos": tokens.index("it")}


def baseline_accuracies(split: CorefSet) -> dict:
    """How often rules that ignore the adjective would be right, on the sentences with a referent.

    ``"first noun"``: the noun that comes first; ``"noun nearest to it"``: the
    later one (both nouns come before "it"); ``"always the animal"``. Each is
    about 50% by construction: the words decide, not the positions.
    """
    ok = split.referent_pos >= 0
    nouns = np.array([[1 + w.index(a), 1 + w.index(p)]
                      for w, a, p in zip(split.tokens, split.agent, split.place)])
    ref = split.referent_pos
    return {"first noun": float((nouns.min(1) == ref)[ok].mean()),
            "noun nearest to it": float((nouns.max(1) == ref)[ok].mean()),
            "always the animal": float((split.kind[ok] == "agent").mean())}


def expected_referent(tokens) -> str | None:
    """The referent a reader would pick: the noun whose kind the adjective after "it" fits.

    Returns the noun, ``"nothing"`` for a dummy adjective, or ``None`` when the
    sentence has no such adjective or no noun of the right kind.
    """
    words = [w.lower() for w in tokens]
    after = words[words.index("it") + 1:] if "it" in words else []
    adj = next((w for w in after if w in AGENT_ADJECTIVES + PLACE_ADJECTIVES + NONE_ADJECTIVES), None)
    if adj is None:
        return None
    if adj in NONE_ADJECTIVES:
        return NOTHING
    nouns = AGENTS if adj in AGENT_ADJECTIVES else PLACES
    found = [w for w in words if w in nouns]
    return found[0] if len(found) == 1 else None


__all__ = ["AGENTS", "PLACES", "AGENT_ADJECTIVES", "PLACE_ADJECTIVES", "NONE_ADJECTIVES", "NOTHING",
           "REFERENTS", "TEMPLATES", "VOCAB", "SINK", "PAD", "MAX_LEN", "SENTENCE_A", "SENTENCE_B",
           "CorefSet", "CorefData", "make_coref_data", "held_out_pairs", "training_pairs",
           "encode_sentence", "expected_referent", "baseline_accuracies"]
