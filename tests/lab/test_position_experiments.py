"""The experiments of notebook 11 (lessons_lib.lab.position): shuffled tokens carry their outputs with them
when attention has no positions and not otherwise; the order task's data hold what its verdicts rely on;
lesson 09's attention layer with RoPE is the course's formula; and the trained models give the verdicts
the notebook prints (no positions: blind to order; sinusoids, RoPE: learned)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons_lib as ll
from lessons_lib.lab import position as lab
from tests.helpers import examples

SENTENCE = ll.tokenize("The cat sat on the mat.")


# ------------------------------------------------------------------ shuffling
@settings(max_examples=examples(40))
@given(st.permutations(range(len(SENTENCE))), st.integers(0, 50))
def test_without_positions_every_output_moves_with_its_token(order, seed):
    found = ll.shuffle_experiment(SENTENCE, order, positions="none", seed=seed)
    assert found.follows, found.difference
    np.testing.assert_allclose(found.shuffled_weights, found.moved_weights, atol=1e-14)
    np.testing.assert_allclose(found.weights.sum(-1), 1.0, atol=1e-12)
    assert "the order made no difference" in found.sentence()


@pytest.mark.parametrize("positions", ["sinusoidal", "rope"])
def test_with_positions_a_shuffle_gives_new_numbers(positions):
    found = ll.shuffle_experiment(["dog", "bites", "man"], [2, 1, 0], positions=positions)
    assert not found.follows and found.difference > 0.01
    assert "where a token stands now changes what it gathers" in found.sentence()


def test_dog_bites_man_and_man_bites_dog_give_the_same_set_of_outputs():
    _, dog_first = ll.attend_tokens(["dog", "bites", "man"])
    _, man_first = ll.attend_tokens(["man", "bites", "dog"])
    np.testing.assert_allclose(dog_first, man_first[::-1], atol=1e-14)


def test_the_experiments_refuse_what_they_cannot_run():
    with pytest.raises(ValueError, match=r"order must list each index 0 … 2 once"):
        ll.shuffle_experiment(["a", "b", "c"], [0, 0, 1])
    with pytest.raises(ValueError, match="positions must be one of none, sinusoidal, rope"):
        ll.attend_tokens(["a", "b"], positions="learned")
    with pytest.raises(TypeError, match="list of words"):
        ll.shuffle_experiment("dog bites man")
    with pytest.raises(ValueError, match="n_test must be even"):
        ll.make_order_data(10, 5)


# ------------------------------------------------------------------ the order task's data
def test_every_sequence_holds_one_cat_and_one_dog_and_the_answer_says_which_came_first():
    data = ll.make_order_data(300, 100, seq_len=7, seed=3)
    for split in (data.train, data.test):
        assert split.ids.shape == (len(split), 8) and (split.ids[:, 0] == split.ids[0, 0]).all()   # <s>
        for words, target in zip(split.tokens, split.target):
            assert words.count("cat") == words.count("dog") == 1
            assert target == int(words.index("dog") < words.index("cat"))
    assert 0.4 < data.train.target.mean() < 0.6


def test_the_held_out_sequences_come_in_mirrored_pairs():
    test = ll.make_order_data(10, 40, seed=4).test
    for a, b in zip(test.tokens[0::2], test.tokens[1::2]):
        assert sorted(a) == sorted(b) and a != b
        assert [w for w in a if w not in ll.ORDER_WORDS] == [w for w in b if w not in ll.ORDER_WORDS]
    assert (test.target[0::2] != test.target[1::2]).all()


# ------------------------------------------------------------------ lesson 09's layer with RoPE
def test_an_attention_layer_with_rope_is_the_courses_multi_head_attention_with_rope():
    torch = pytest.importorskip("torch")
    from lessons_lib.lab import models

    torch.manual_seed(0)
    layer = models.AttentionLayer(12, 2, rope=True).double().eval()
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    with torch.no_grad():
        out, weights = layer(x, torch.ones(2, 5, dtype=torch.bool))
        normed = layer.norm(x).numpy()
    w_q, w_k, w_v = (w.T for w in layer.w_qkv.weight.detach().numpy().reshape(3, 12, 12))
    w_o = layer.w_o.weight.detach().numpy().T
    ours, ours_weights = ll.multi_head_attention(normed, w_q, w_k, w_v, w_o, 2, rope=True)
    np.testing.assert_allclose(weights.numpy(), ours_weights, atol=1e-12)
    np.testing.assert_allclose(out.numpy(), x.numpy() + ours, atol=1e-12)
    with pytest.raises(ValueError, match="d_head = 3"):
        models.AttentionLayer(6, 2, rope=True)


# ------------------------------------------------------------------ training: the notebook's verdicts
@pytest.fixture(scope="module")
def comparison():
    return ll.compare_positions(seed=0)


@pytest.mark.training
def test_without_positions_the_model_is_blind_to_order(comparison):
    run = comparison.runs["none"]
    assert run.mirror_gap < lab.CHANCE
    assert run.test_accuracy == 0.5                      # one of each mirrored pair: exactly half
    assert "blind to order" in run.verdict and "coin toss" in run.verdict


@pytest.mark.training
@pytest.mark.parametrize("kind", ["sinusoidal", "rope"])
def test_with_sinusoids_or_rope_the_model_learns_which_came_first(comparison, kind):
    run = comparison.runs[kind]
    assert run.test_accuracy >= lab.LEARNED and "learned which came first" in run.verdict
    assert run.losses[-20:].mean() < 0.1 * run.losses[:20].mean()


@pytest.mark.training
def test_the_verdicts_carry_no_digit_a_machine_could_change(comparison):
    text = comparison.verdicts()
    assert text.count("\n") == 2 and "90%" in text
    assert not any(ch.isdigit() for ch in text.replace("90%", ""))
    assert "held-out accuracy" in comparison.measured()


@pytest.mark.training
def test_training_is_deterministic_for_a_seed():
    data = ll.make_order_data(200, 40, seed=1)
    a, b = (ll.train_order_model("rope", data, steps=20, seed=1) for _ in range(2))
    np.testing.assert_array_equal(a.losses, b.losses)
