"""Lesson 08's block sizes: the shape of the time-ratio curve is this run's, printed by the cell that measures
it (``BlockSizes.trend``), because a busy machine bends it (issue 40, item 6: on a learner's run it fell until
block 512 and rose at 1024 and 2048, where the prose said it falls as the blocks grow)."""

from __future__ import annotations

from lessons_lib.lab.cost import BlockSizes, Measurement


def _measured(seconds_by_block: dict[int, float], naive: float = 1.0) -> BlockSizes:
    def measurement(method, seconds, block=None):
        return Measurement(method, 2048, 64, "float32", seconds, 1_000_000, 0, "tracemalloc",
                           block_size=block)

    return BlockSizes(measurement("naive numpy", naive),
                      [measurement("tiled numpy", s, b) for b, s in seconds_by_block.items()])


def test_the_trend_reads_out_every_block_and_names_the_fastest():
    blocks = _measured({64: 2.4, 128: 1.6, 512: 0.9, 1024: 1.1, 2048: 1.3})
    assert blocks.trend() == ("On this run the tiled time ÷ the naive time was 2.40 at block 64, 1.60 at "
                              "128, 0.90 at 512, 1.10 at 1024, 1.30 at 2048: lowest at block 512.")


def test_the_trend_follows_the_run_not_a_shape_decided_before():
    falling = _measured({64: 3.0, 256: 2.0, 1024: 1.0})
    rising = _measured({64: 1.0, 256: 2.0, 1024: 3.0})
    assert falling.trend().endswith("lowest at block 1024.")
    assert rising.trend().endswith("lowest at block 64.")


def test_lowest_at_the_block_that_is_the_whole_matrix_says_tiles_bought_no_time():
    """Issue 55: a learner's run printed "lowest at block 2048" beside a caption saying that at block 2048 the
    one tile is the whole matrix; the sentence now says what that means for that run."""
    untiled = _measured({64: 2.4, 512: 1.1, 2048: 0.95})
    assert untiled.trend().endswith("lowest at block 2048, where the one tile is the whole 2,048 × 2,048 "
                                    "matrix. On this run, at this N, tiles bought memory (the right panel), "
                                    "not time.")
    assert _measured({64: 2.4, 512: 0.9, 2048: 0.95}).trend().endswith("lowest at block 512.")
