"""The experiments of notebook 12 compute what the lesson says: generation step by step equals recomputing,
the counts of work and memory follow their formulas, a window with sinks keeps the outputs of a head with a
sink close to full attention and one without them does not, pooling key/value heads is grouped-query
attention, and evicting lesson 09's trained sink costs it its silence. Measurements are run for their shape
and their verdict's wording (never a speed bound): the timings are the learner's own run."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll
from lessons_lib.lab import generation


def test_generating_with_the_cache_is_recomputing_below_1e_12_and_counts_the_work():
    trace = ll.trace_generation()
    assert trace.tokens[:7] == ["The", "cat", "sat", "on", "the", "mat", "."] and trace.n == 12
    assert trace.difference() < 1e-12
    assert np.allclose(np.triu(trace.weights, 1), 0) and np.allclose(trace.weights.sum(-1), 1)
    assert [trace.dot_products(t, cached=True) for t in range(4)] == [1, 2, 3, 4]
    assert [trace.dot_products(t, cached=False) for t in range(4)] == [1, 3, 6, 10]
    assert trace.projections(5, cached=True) == 1 and trace.projections(5, cached=False) == 6
    with pytest.raises(ValueError, match="step must be from 0 to 11"):
        trace.dot_products(12, cached=True)


def test_every_agreement_of_the_lesson_is_below_1e_12():
    found = ll.cache_agreement()
    assert len(found) == 4 and all(value < 1e-12 for value in found.values())


def test_the_work_counted_grows_as_the_formulas_say():
    flops = ll.generation_flops(1024, 768, 12)
    assert flops.cached.shape == flops.recomputed.shape == (1024,)
    assert flops.cached[0] == flops.recomputed[0]                 # the first token: nothing to reuse
    assert (np.diff(flops.recomputed) > np.diff(flops.cached)).all()
    assert 400 < flops.ratio < 700 and "1,024 tokens" in flops.sentence()
    gqa = ll.generation_flops(1024, 768, 12, n_kv_heads=4)
    assert gqa.cached.sum() < flops.cached.sum()                  # fewer key and value projections


@pytest.mark.slow
def test_the_decode_measurement_has_its_shape_and_a_verdict_either_way():
    times = ll.measure_decode((64, 128, 256), d_model=32, n_heads=2, steps=2, repeats=1)
    assert times.cached.shape == (3,) and (times.cached > 0).all() and (times.recomputed > 0).all()
    verdict = times.verdicts()
    assert "time per token ∝ context^" in verdict and ("gap" in verdict or "more the cache saves" in verdict
                                                        or "measure again" in verdict)
    assert "recomputing took" in verdict and str(times).splitlines()[0].split()[0] == "context"


@pytest.mark.slow
def test_the_prefill_decode_measurement_says_what_holds_everywhere_and_what_this_run_saw():
    run = ll.measure_prefill_decode(256, chunk=16, n_heads=2, d_head=32, repeats=1)
    decode, prefill = run.intensity
    assert decode == 0.5 and prefill == 8.0                      # float32: 4 operations per 8 bytes read
    assert "Decode does 0.5 operation per byte" in run.arithmetic()
    assert "does 8 per byte, 16× as many: one per query" in run.arithmetic()
    assert "bound by reading memory" in run.verdict() or "measure again" in run.verdict()


def test_the_verdicts_follow_the_numbers_they_are_given():
    clear = generation.DecodeTimes(np.array([256, 512, 1024]), np.array([1e-3, 1.1e-3, 1.3e-3]),
                                   np.array([1e-2, 4e-2, 1.6e-1]), 128, 4)
    assert "the more the cache saves" in clear.verdicts()
    assert "recomputing took 123× as long" in clear.verdicts()
    same = np.array([1e-3, 2e-3])
    assert "measure again" in generation.DecodeTimes(np.array([256, 512]), same, same, 8, 2).verdicts()
    bound = generation.PrefillDecode(8192, 256, 8, 128, 2 * 8 * 8192 * 128 * 4, prefill_s=0.05,
                                     decode_s=0.004, read_s=0.004)
    assert "it is bound by reading memory, not by arithmetic" in bound.verdict()
    busy = generation.PrefillDecode(8192, 256, 8, 128, 2 * 8 * 8192 * 128 * 4, prefill_s=0.05, decode_s=0.04,
                                    read_s=0.004)
    assert "measure again" in busy.verdict()


def test_a_window_without_sinks_loses_what_a_window_with_them_keeps():
    run = ll.window_experiment(48, window=8, sinks=2)
    past = slice(10, None)
    assert run.weights["full"][past, 0].mean() > 0.3             # the head's sink
    alone, kept = (run.difference(n)[past].mean() for n in ("window", "window + sinks"))
    assert kept < alone / 2
    assert not run.weights["window"][20, :12].any() and run.weights["window + sinks"][20, :2].all()
    assert "Past the first 10 tokens" in run.sentence()


def test_pooling_key_value_heads_is_grouped_query_attention():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 4 * 3))
    pooled = ll.pool_kv_heads(w, 4, 2)
    np.testing.assert_allclose(pooled[:, :3], (w[:, :3] + w[:, 3:6]) / 2)
    np.testing.assert_allclose(pooled[:, 3:], (w[:, 6:9] + w[:, 9:12]) / 2)
    np.testing.assert_array_equal(ll.pool_kv_heads(w, 4, 4), w)
    layer = {"w_q": rng.standard_normal((8, 12)), "w_k": w, "w_v": rng.standard_normal((8, 12)),
             "w_o": rng.standard_normal((12, 8)), "n_heads": 4}
    x = rng.standard_normal((5, 8))
    same = ll.gqa_conversion(x, layer, 4)
    assert same.relative < 1e-12 and "close" in same.verdict()
    one = ll.gqa_conversion(x, layer, 1, causal=True)
    assert one.weights.shape == (4, 5, 5) and one.relative > 0
    assert ll.convert_to_gqa(layer, 2)["w_k"].shape == (8, 6)
    with pytest.raises(TypeError, match="it lacks n_heads"):
        ll.convert_to_gqa({"w_q": 1, "w_k": 1, "w_v": 1, "w_o": 1}, 2)
    assert ll.conversion_verdict(0.01).startswith("close") and ll.conversion_verdict(0.9).startswith("far")


@pytest.mark.training
def test_lesson_09s_model_with_pooled_heads_is_measured_not_changed():
    run = ll.train_coref_model(steps=60, snapshot_every=30, progress=False)
    before = ll.accuracy(run.model, run.data.test)
    found = ll.pool_model_kv_heads(run, 1)
    assert found["before"] == before and ll.accuracy(run.model, run.data.test) == before
    k_rows = found["model"].layers[0].w_qkv.weight[32:64].detach().numpy()
    np.testing.assert_allclose(k_rows[:16], k_rows[16:], atol=1e-6)   # the two heads share one key


@pytest.mark.training
def test_evicting_lesson_09s_sink_costs_the_dummy_it_its_silence():
    run = ll.train_sink_head(steps=300, seed=0)
    found = ll.evict_sink(run)
    assert found.weight_on_sink > 0.5 and found.weight_on_words > 0.99
    assert found.error_evicted > 10 * found.error_kept and "-fold" in found.sentence()
    assert "error with <s>" in found.measured()
    with pytest.raises(TypeError, match="train_sink_head"):
        ll.evict_sink(object())


@pytest.mark.parametrize("after, words", [(0.59, "loses more than 40 points"),
                                          (0.95, "loses more than 4 points"), (0.985, "keeps its answers")])
def test_the_pooled_verdict_says_the_drop_it_was_given_and_why_inside_each_layer(after, words):
    verdict = generation.pooled_verdict({"before": 0.998, "after": after, "n_heads": 2, "n_kv_heads": 1})
    assert words in verdict and "coin toss" not in verdict
    if after < 0.9:
        assert "the two heads of a layer" in verdict
