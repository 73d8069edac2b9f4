"""The latent cache's size (notebook 14): MLA keeps d_c + d_rope numbers per token and layer, and the
calculator gives DeepSeek's published configurations beside MHA, GQA and MQA and beside the figures of
DeepSeek-V2's paper (MLA's cache "equivalent to GQA with only 2.25 groups"; a 93.3% smaller cache than
DeepSeek 67B's, with V2's cache at the paper's 6 bits per number).
"""

from __future__ import annotations

import pytest

import lessons_lib as ll


def test_the_latent_cache_has_no_heads_and_no_factor_two():
    assert ll.latent_cache_bytes(61, 512, 64, 1) == 61 * 576 * 2
    assert ll.latent_cache_bytes(1, 512, 64, 10, batch=3, dtype="float32") == 576 * 10 * 3 * 4
    # lesson 12's calculator, the same bytes when a "head" of width (d_c + d_rope) / 2 is kept twice
    assert ll.latent_cache_bytes(2, 6, 2, 5) == ll.kv_cache_bytes(2, 1, 4, 5)


def test_deepseek_v3s_cache_per_token_beside_mha_gqa_and_mqa():
    rows = {row["attention"].split(" ")[0]: row for row in ll.cache_per_token(ll.DEEPSEEK_V3)}
    assert rows["latent"]["numbers"] == 576 and rows["latent"]["bytes"] == 1152
    assert rows["multi-head"]["numbers"] == 2 * 128 * 128 and rows["multi-head"]["times"] == pytest.approx(
        32768 / 576)
    assert rows["grouped-query"]["numbers"] == 2 * 8 * 128
    assert rows["multi-query"]["times"] == pytest.approx(256 / 576)     # MQA keeps less than MLA


def test_deepseek_v2s_paper_figures():
    assert ll.equivalent_gqa_groups(ll.DEEPSEEK_V2) == 2.25
    v2 = ll.DEEPSEEK_V2
    assert v2.d_c == 4 * v2.d_head and 2 * v2.d_rope == v2.d_head        # d_c = 4·d_h, d_h^R = d_h / 2
    deployed = ll.v2_against_67b(bits=6)
    assert round(100 * deployed["reduction"], 1) == 93.3                 # the paper's "reduced by 93.3%"
    assert deployed["67b_bytes"] == 2 * 95 * 8 * 128 * 2
    assert round(100 * ll.v2_against_67b(bits=16)["reduction"], 1) == 82.2


@pytest.mark.parametrize("call, words", [
    (lambda: ll.latent_cache_bytes(61, 0, 64, 1), "d_c must be at least 1"),
    (lambda: ll.latent_cache_bytes(61, 512, 64, 1, dtype="bf16"), "dtype must name how each cached number"),
    (lambda: ll.cache_per_token(groups=0), "groups must be at least 1"),
])
def test_bad_input_is_refused_by_name(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_the_absorbed_order_does_fewer_multiplications_for_a_new_token():
    counts = ll.absorption_counts(ll.DEEPSEEK_V3, 4096)
    h, d, r, c = 128, 128, 64, 512
    assert counts["absorbed"] == h * d * c + 4096 * h * (c + r) + 4096 * h * c + h * c * d
    assert counts["naive"] > 100 * counts["absorbed"]     # rebuilding 4,096 tokens' keys and values dominates
    one = ll.absorption_counts(ll.DEEPSEEK_V3, 1)       # one cached token: folding W_UK and W_UV costs more
    assert one["naive"] < one["absorbed"]


def test_sparse_attention_does_top_k_keys_of_work_and_the_indexer_every_key():
    short, long = ll.sparse_counts(1024), ll.sparse_counts(131072)
    assert short["sparse"] == short["dense"]                   # fewer keys than top_k: nothing left out
    assert long["dense"] == 64 * long["sparse"]                # 131,072 / 2,048
    assert long["indexer"] == 131072 * 64 * 128 and long["indexer"] < long["dense"]


def test_measuring_the_orders_gives_a_time_per_context():
    found = ll.measure_orders((8, 16), repeats=1)
    assert set(found) == {8, 16} and all(t > 0 for pair in found.values() for t in pair)
