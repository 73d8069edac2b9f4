"""Bad input to generation (notebook 12) gets the course's words, naming the argument, never numpy's:
heads that cannot share keys and values, a cache whose d_head or dtype differs from the new token's, a cache
longer than its window, a step past a cache's capacity, negative sizes and a misspelled dtype in the memory
calculator."""

from __future__ import annotations

import numpy as np
import pytest

import lessons_lib as ll

ONE = np.ones((1, 4))
HEADS = np.ones((2, 1, 4))
X = np.ones((3, 8))


def _full(capacity: int) -> ll.KVCache:
    cache = ll.KVCache(capacity=capacity)
    for _ in range(capacity):
        cache.append(ONE, ONE)
    return cache


@pytest.mark.parametrize("call, error, words", [
    (lambda: ll.kv_head_of(6, 4), ValueError,
     "n_heads = 6 is not a multiple of n_kv_heads = 4: every key/value head serves a group of n_heads / "
     "n_kv_heads query heads, and that must be a whole number. With 6 query heads, n_kv_heads can be "
     "1, 2, 3, 6."),
    (lambda: ll.kv_head_of(2, 4), ValueError, "There are more key/value heads than query heads"),
    (lambda: ll.repeat_kv(np.ones((4, 3, 2)), 6), ValueError,
     "kv of shape (4, 3, 2) holds n_kv_heads = 4 key/value heads (its axis −3): n_heads = 6 is not a "
     "multiple"),
    (lambda: ll.repeat_kv(np.ones((3, 2)), 6), ValueError,
     "kv must have shape (..., n_kv_heads, seq_len, d_head)"),
    (lambda: ll.grouped_query_attention(X, np.eye(8), np.ones((8, 6)), np.ones((8, 6)), np.eye(8), 4, 3),
     ValueError, "n_heads = 4 is not a multiple of n_kv_heads = 3"),
    (lambda: ll.grouped_query_attention(X, np.eye(8), np.ones((8, 6)), np.ones((8, 4)), np.eye(8), 4, 2),
     ValueError, "W_K has shape (8, 6), but it must be (8, 4)"),
    (lambda: ll.decode_step(ONE, ONE[:, :3], ONE[:, :3], ll.KVCache(np.ones((2, 4)), np.ones((2, 4)))),
     ValueError, "the new key has d_head = 3 but the cache holds keys of d_head = 4"),
    (lambda: ll.decode_step(ONE, ONE.astype(np.float32), ONE.astype(np.float32),
                            ll.KVCache(np.ones((2, 4)), np.ones((2, 4)))), ValueError,
     "the new key is float32 but the cache holds float64 keys: one cache holds one kind of number"),
    (lambda: ll.decode_step(HEADS, np.ones((3, 1, 4)), np.ones((3, 1, 4)),
                            ll.KVCache(np.ones((2, 2, 4)), np.ones((2, 2, 4)))), ValueError,
     "whose leading axes (3,) (batch, heads) differ from the cache's (2,)"),
    (lambda: ll.KVCache(np.ones((10, 4)), np.ones((10, 4)), window=4), ValueError,
     "the cache given holds 10 tokens, but a window of 4 keeps at most 4"),
    (lambda: ll.KVCache(np.ones((7, 4)), np.ones((7, 4)), window=4, sinks=2), ValueError,
     "a window of 4 with 2 sinks keeps at most 6"),
    (lambda: _full(3).append(ONE, ONE), ValueError,
     "the token at position 3 does not fit: the cache holds 3 of its capacity of 3 tokens"),
    (lambda: ll.decode_step(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)), _full(3)), ValueError,
     "A step past the cache's capacity"),
    (lambda: ll.KVCache(capacity=4, window=2), ValueError, "give a cache either a capacity"),
    (lambda: ll.KVCache(sinks=2), ValueError, "Give window=... too"),
    (lambda: ll.KVCache(window=0), ValueError, "window must be at least 1"),
    (lambda: ll.KVCache(np.ones((2, 4))), ValueError, "give keys and values together"),
    (lambda: ll.decode_step(np.ones((2, 4)), ONE, ONE, ll.KVCache()), ValueError,
     "q brings 2 new tokens but k brings 1"),
    (lambda: ll.decode_step(ONE, ONE, ONE, "cache"), TypeError, "cache must be a KVCache"),
    (lambda: ll.sink_window_mask(5, 2, sinks=-1), ValueError, "sinks must be 0 or more"),
    (lambda: ll.kv_cache_bytes(-3, 8, 128, 4096), ValueError, "layers must be at least 1; got -3"),
    (lambda: ll.kv_cache_bytes(32, 8, 128, 0), ValueError, "tokens must be at least 1; got 0"),
    (lambda: ll.kv_cache_bytes(32, 8, 128, 4096, batch=-1), ValueError, "batch must be at least 1; got -1"),
    (lambda: ll.kv_cache_bytes(32, 8, 128, 4096, dtype="bfloat61"), ValueError,
     "dtype must name how each cached number is stored, one of float32 (4 bytes), bfloat16 (2 bytes), "
     "float16 (2 bytes), float8 (1 byte); got 'bfloat61'. Did you mean 'bfloat16'?"),
    (lambda: ll.kv_cache_bytes(32, 8, 128, 4096, dtype=np.float16), ValueError, "dtype must name how each"),
    (lambda: ll.kv_cache_memory("Llama-3-8B", n_kv_heads=5), ValueError, "n_heads = 32 is not a multiple of"),
    (lambda: ll.kv_cache_memory("Llama 3"), ValueError, "preset must be one of 'GPT-2 small', 'Llama-3-8B'"),
    (lambda: ll.kv_cache_memory(d_head=-64), ValueError, "d_head must be at least 1; got -64"),
])
def test_bad_generation_input_gets_the_courses_words(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert words in str(raised.value), str(raised.value)


def test_a_refused_step_leaves_the_cache_as_it_was():
    cache = ll.KVCache(np.ones((2, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError):
        ll.decode_step(ONE, ONE[:, :3], ONE[:, :3], cache)
    assert cache.length == 2 and cache.next_position == 2
    full = _full(2)
    with pytest.raises(ValueError):
        full.append(np.ones((3, 4)), np.ones((3, 4)))
    assert full.length == 2 and full.next_position == 2
