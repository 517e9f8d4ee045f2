"""How many prompt tokens the model evaluates between looks at its stop flag.

A warm-up stops only between batches, so a batch is what a user's turn may wait behind: it is
sized from the measured rate to take about `target_s`, whatever the hardware.
"""

from __future__ import annotations

import time

from models.llm_cache import BatchSizer


def test_the_first_batch_is_small_then_batches_take_about_the_target_time() -> None:
    sizer = BatchSizer(target_s=0.15, smallest=16, largest=512)
    assert sizer.size() == 32  # nothing measured yet
    sizer.timed(32, time.perf_counter() - 0.25)  # 128 tokens/s: this CPU
    assert 16 <= sizer.size() <= 20  # 0.15 s at 128 tokens/s is 19 tokens
    for _ in range(10):
        sizer.timed(40, time.perf_counter() - 0.004)  # 10,000 tokens/s: a GPU
    assert sizer.size() == 512  # the largest, however fast


def test_a_slow_batch_shrinks_the_next_one_but_never_below_the_smallest() -> None:
    sizer = BatchSizer(target_s=0.15, smallest=16, largest=512)
    sizer.timed(256, time.perf_counter() - 0.25)  # 1,024 tokens/s
    fast = sizer.size()
    sizer.timed(fast, time.perf_counter() - 5.0)  # the cores were taken meanwhile
    assert sizer.size() < fast
    for _ in range(10):
        sizer.timed(16, time.perf_counter() - 10.0)
    assert sizer.size() == 16


def test_an_empty_or_instant_batch_teaches_nothing() -> None:
    sizer = BatchSizer()
    sizer.timed(0, time.perf_counter() - 1.0)
    sizer.timed(10, time.perf_counter() + 1.0)  # a clock that went backwards
    assert sizer.rate == 0.0 and sizer.size() == 2 * sizer.smallest


def test_a_turn_takes_batches_four_times_longer_than_background_work() -> None:
    sizer = BatchSizer(target_s=0.15, smallest=16, largest=512)
    assert sizer.size(4.0) == 128  # nothing measured yet: twice the larger smallest
    sizer.timed(128, time.perf_counter() - 0.4)  # 320 tokens/s
    assert 40 <= sizer.size() <= 52 and 180 <= sizer.size(4.0) <= 200
    for _ in range(10):
        sizer.timed(64, time.perf_counter() - 5.0)  # the cores were taken
    assert sizer.size() == 16 and sizer.size(4.0) == 64  # never below 64 for a turn


def test_no_batch_leaves_one_token_to_go_alone() -> None:
    # A lone token takes llama.cpp's one-row kernels, which round differently: the same prompt
    # would evaluate to other logits on a machine busy enough to change the split.
    for rate in (0.0, 100.0, 130.0, 213.0, 1_000.0, 1e6):
        sizer = BatchSizer(target_s=0.15, smallest=16, largest=512)
        sizer.rate = rate
        for total in range(1, 1_100):
            pieces, left = [], total
            while left:
                take = sizer.take(left)
                assert 1 <= take <= min(left, 512)
                pieces.append(take)
                left -= take
            assert sum(pieces) == total
            assert total == 1 or min(pieces) >= 2, (rate, total, pieces)
