"""The synthetic coreference data set (lessons_lib.lab.coref, notebook 09): balanced, split as stated,
deterministic, labelled right, and not solvable from positions alone."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons_lib.lab import coref
from lessons_lib.lab.data import tokenize
from tests.helpers import examples


@pytest.fixture(scope="module")
def data():
    return coref.make_coref_data(2000, 500, seed=0)


def _pairs(split):
    return set(zip(split.agent.tolist(), split.place.tolist()))


# ------------------------------------------------------------------ determinism
def test_same_seed_same_data_other_seed_other_data():
    a, b = coref.make_coref_data(300, 100, seed=5), coref.make_coref_data(300, 100, seed=5)
    c = coref.make_coref_data(300, 100, seed=6)
    for name in ("train", "test"):
        assert getattr(a, name).tokens == getattr(b, name).tokens
        np.testing.assert_array_equal(getattr(a, name).ids, getattr(b, name).ids)
        np.testing.assert_array_equal(getattr(a, name).target, getattr(b, name).target)
    assert a.train.tokens != c.train.tokens


@pytest.mark.subprocess
def test_importing_coref_does_not_import_torch(fresh_imports):
    assert "torch" not in fresh_imports["import lessons_lib.lab.coref"]


# ------------------------------------------------------------------ balance
@settings(max_examples=examples(25))
@given(st.integers(1, 300), st.integers(1, 120), st.integers(0, 2**31), st.sampled_from([0.0, 0.2, 0.5]))
def test_balanced_and_labelled_right(n_train, n_test, seed, none_fraction):
    d = coref.make_coref_data(n_train, n_test, seed=seed, none_fraction=none_fraction)
    for split, n in ((d.train, n_train), (d.test, n_test)):
        assert len(split) == n
        counts = Counter(split.kind.tolist())
        assert counts["none"] == round(n * none_fraction)
        assert 0 <= counts["agent"] - counts["place"] <= 1  # half and half (one more agent when odd)
        for i, words in enumerate(split.tokens):
            enc = [coref.VOCAB[j] for j in split.ids[i, :split.lengths[i]]]
            assert enc == [coref.SINK, *words]
            assert (split.ids[i, split.lengths[i]:] == 0).all()
            assert words.count("it") == 1 and enc[split.it_pos[i]] == "it"
            answer = coref.REFERENTS[split.target[i]]
            assert coref.expected_referent(words) == answer
            if split.kind[i] == "none":
                assert answer == coref.NOTHING and split.referent_pos[i] == -1
            else:
                assert enc[split.referent_pos[i]] == answer
                assert answer == (split.agent[i] if split.kind[i] == "agent" else split.place[i])


def test_every_word_template_and_adjective_is_used(data):
    train = data.train
    assert set(train.template.tolist()) == set(range(len(coref.TEMPLATES)))
    assert set(train.agent.tolist()) == set(coref.AGENTS)
    assert set(train.place.tolist()) == set(coref.PLACES)
    assert set(train.adjective.tolist()) == set(coref.AGENT_ADJECTIVES + coref.PLACE_ADJECTIVES)
    # adjectives of each kind are roughly uniform (each within ±30% of its fair share)
    for kind, adjs in (("agent", coref.AGENT_ADJECTIVES), ("place", coref.PLACE_ADJECTIVES)):
        counts = Counter(train.adjective[train.kind == kind].tolist())
        fair = (train.kind == kind).sum() / len(adjs)
        assert all(0.7 * fair <= counts[a] <= 1.3 * fair for a in adjs), counts


# ------------------------------------------------------------------ splits
def test_held_out_pairs_never_occur_in_training(data):
    held = coref.held_out_pairs()
    assert len(held) == len(coref.AGENTS) == 6
    assert held.isdisjoint(coref.training_pairs())
    assert held | coref.training_pairs() == {(a, p) for a in coref.AGENTS for p in coref.PLACES}
    assert _pairs(data.test) <= held and _pairs(data.train) <= coref.training_pairs()
    assert _pairs(data.train).isdisjoint(_pairs(data.test))
    # ... while every single word of the held-out split occurs in training
    train_words = {w for words in data.train.tokens for w in words}
    test_words = {w for words in data.test.tokens for w in words}
    assert test_words <= train_words
    # every agent and place keeps five training partners
    for a in coref.AGENTS:
        assert sum(1 for (x, _) in coref.training_pairs() if x == a) == 5


def test_the_seed_sentences_use_a_held_out_pair():
    assert ("animal", "street") in coref.held_out_pairs()
    for text, answer in ((coref.SENTENCE_A, "animal"), (coref.SENTENCE_B, "street")):
        enc = coref.encode_sentence(text)
        assert enc["tokens"][0] == coref.SINK and enc["tokens"][enc["it_pos"]] == "it"
        assert coref.expected_referent(enc["tokens"]) == answer


# ------------------------------------------------------------------ position alone
def test_position_alone_cannot_solve_it(data):
    for split in (data.train, data.test):
        ok = split.referent_pos >= 0
        noun_pos = np.array([[1 + w.index(a), 1 + w.index(p)] for w, a, p in
                             zip(split.tokens, split.agent, split.place)])
        first_noun = noun_pos.min(1) == split.referent_pos
        nearest_noun = noun_pos.max(1) == split.referent_pos  # both nouns come before "it"
        assert (noun_pos.max(1) < split.it_pos).all()
        for rule in (first_noun, nearest_noun):
            assert 0.4 <= rule[ok].mean() <= 0.6
        base = coref.baseline_accuracies(split)
        assert base["first noun"] == first_noun[ok].mean()
        assert base["noun nearest to it"] == nearest_noun[ok].mean()
        assert all(0.4 <= v <= 0.6 for v in base.values())
        # for each template, either answer is about equally likely
        for t in range(len(coref.TEMPLATES)):
            sel = ok & (split.template == t)
            if sel.sum() >= 40:
                assert 0.3 <= (split.kind[sel] == "agent").mean() <= 0.7
        # the referent sits at many places, absolutely and relative to "it"
        assert len(set(split.referent_pos[ok].tolist())) >= 6
        assert len(set((split.it_pos - split.referent_pos)[ok].tolist())) >= 6
        assert len(set(split.it_pos.tolist())) >= 6


# ------------------------------------------------------------------ a learner's sentence
def test_encode_sentence_text_or_words_and_case():
    a = coref.encode_sentence("The Animal didn't cross the STREET because it was too tired.")
    b = coref.encode_sentence(["the", "animal", "didn't", "cross", "the", "street", "because", "it",
                               "was", "too", "tired", "."])
    np.testing.assert_array_equal(a["ids"], b["ids"])
    assert a["ids"].shape == (1, len(a["tokens"])) and a["ids"].dtype == np.int64
    assert a["tokens"] == [coref.SINK, *[w.lower() for w in tokenize(coref.SENTENCE_A)]]


def test_unknown_words_are_named():
    with pytest.raises(ValueError, match="never seen 'zebra', 'purple'") as err:
        coref.encode_sentence("The zebra didn't cross the purple street because it was too tired.")
    assert "animal" in str(err.value) and "tired" in str(err.value)
    with pytest.raises(ValueError, match="never seen '<s>'"):
        coref.encode_sentence(["<s>", "it", "was", "too", "tired"])


@pytest.mark.parametrize("text, count", [("the dog was too tired .", 0), ("it was it .", 2)])
def test_exactly_one_it(text, count):
    with pytest.raises(ValueError, match=rf"exactly one 'it' .*; it has {count}\."):
        coref.encode_sentence(text)


def test_too_long_and_wrong_types():
    with pytest.raises(ValueError, match="Shorten it"):
        coref.encode_sentence("the dog " * 12 + "it was too tired .")
    with pytest.raises(TypeError, match="as text"):
        coref.encode_sentence(42)
    with pytest.raises(TypeError, match="as text"):
        coref.encode_sentence([])


def test_expected_referent_edge_cases():
    assert coref.expected_referent("the dog saw it".split()) is None
    assert coref.expected_referent("the road was wet and it was too late".split()) == coref.NOTHING
    assert coref.expected_referent("the dog and the cat saw it , too tired".split()) is None


@pytest.mark.parametrize("kwargs, match", [
    (dict(none_fraction=1.0), "none_fraction"),
    (dict(none_fraction=-0.1), "none_fraction"),
    (dict(none_fraction="half"), "none_fraction"),
    (dict(seed=-1), "seed"),
    (dict(seed=1.5), "seed"),
    (dict(n_train=0), "n_train"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        coref.make_coref_data(**{"n_train": 10, "n_test": 10, **kwargs})


def test_vocabulary_and_lengths(data):
    assert coref.VOCAB[0] == coref.PAD and coref.VOCAB[1] == coref.SINK
    assert len(set(coref.VOCAB)) == len(coref.VOCAB)
    assert max(data.train.lengths.max(), data.test.lengths.max()) <= coref.MAX_LEN
    assert data.train.ids.shape == (len(data.train), coref.MAX_LEN)
