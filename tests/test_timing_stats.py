"""The timing experiment's statistics, on synthetic samples: the interval of a
median, per-round ratios, and thread control. No timing is asserted here."""

import math
import os
import random

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info

from experiments import timing


# ---- the interval of a median (order statistics) ------------------------------------


def test_six_samples_are_the_fewest_for_a_95_percent_interval_and_it_spans_them_all():
    assert timing.minimum_rounds() == 6
    interval = timing.median_interval([3.0, 1.0, 2.0, 6.0, 5.0, 4.0])
    assert (interval["low"], interval["estimate"], interval["high"]) == (1.0, 3.5, 6.0)
    assert interval["coverage"] == 1 - 2 / 2**6


def test_too_few_samples_are_refused_saying_how_many_are_needed():
    with pytest.raises(ValueError, match="5 samples cannot give a 95% interval.*at least 6"):
        timing.median_interval([1.0, 2.0, 3.0, 4.0, 5.0])


@pytest.mark.parametrize("n", [6, 9, 20, 41, 100])
def test_the_interval_is_the_narrowest_pair_of_order_statistics_that_covers_95_percent(n):
    samples = [float(i) for i in range(1, n + 1)]  # x(i) = i
    interval = timing.median_interval(samples)
    k = int(interval["low"])
    assert interval["high"] == n + 1 - k  # symmetric ranks

    def coverage(rank):
        return 1 - 2 * sum(math.comb(n, i) for i in range(rank)) / 2**n

    assert interval["coverage"] == pytest.approx(coverage(k)) and coverage(k) >= 0.95
    assert k == n // 2 or coverage(k + 1) < 0.95  # one rank narrower would not do


def test_the_interval_covers_the_true_median_about_95_percent_of_the_time():
    """Skewed, heavy-tailed samples, like timings: lognormal with median e^0 = 1."""
    rng = np.random.default_rng(20261130)
    trials = 2000
    covered = sum(
        (i := timing.median_interval(rng.lognormal(0.0, 0.5, size=41).tolist()))["low"] <= 1.0 <= i["high"]
        for _ in range(trials)
    )
    assert 0.94 <= covered / trials <= 0.995


def test_the_same_samples_always_give_the_same_interval():
    samples = [random.Random(1).random() for _ in range(25)]
    assert timing.median_interval(samples) == timing.median_interval(list(reversed(samples)))


def test_a_nan_sample_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        timing.median_interval([1.0] * 5 + [math.nan])


# ---- per-round ratios ---------------------------------------------------------------


def test_drift_that_slows_both_contenders_alike_cancels_in_the_per_round_ratio():
    """A loaded machine slows a whole round: the ratio of the round stays put."""
    rng = np.random.default_rng(8)
    slowdown = rng.uniform(1.0, 4.0, size=21)  # each round 1x to 4x slower
    loop, matrix = (5.0 * slowdown).tolist(), (1.0 * slowdown).tolist()
    speedup = timing.ratio(loop, matrix)
    assert speedup["estimate"] == pytest.approx(5.0)
    assert speedup["low"] == pytest.approx(5.0) and speedup["high"] == pytest.approx(5.0)
    assert len(speedup["ratios"]) == 21


def test_ratios_need_one_sample_of_each_per_round():
    with pytest.raises(ValueError):
        timing.ratio([1.0] * 6, [1.0] * 7)


def test_interleaved_rounds_rotate_the_order_and_take_one_sample_each_per_round():
    order, clock = [], iter(range(10**6))

    def call(name):
        return lambda: order.append(name)

    calls = {name: call(name) for name in ("a", "b", "c")}
    out = timing.interleaved(calls, rounds=6, warmup=1, sample_ms=1, clock=lambda: next(clock) / 1e3)
    assert all(len(out[n]["samples_ms"]) == len(out[n]["wall_samples_ms"]) == 6 for n in "abc")
    timed = order[3:]  # after one warm-up call each
    firsts = [timed[i] for i in range(0, len(timed), len(timed) // 6)]
    assert firsts == ["a", "b", "c", "a", "b", "c"]


def test_a_sample_holds_enough_calls_to_fill_sample_ms():
    ticks = iter(range(0, 10**9, 2))  # every call takes 2 ms on this fake clock
    clock = lambda: next(ticks) / 1e3  # noqa: E731
    assert timing.calls_per_sample(lambda: None, warmup=3, sample_ms=20, clock=clock) == 10


# ---- thread control -------------------------------------------------------------------


def test_inside_the_limit_every_pool_reports_one_thread_and_the_old_counts_come_back():
    before = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    torch_before = torch.get_num_threads()
    with timing.limited_threads(1):
        assert all(p["num_threads"] == 1 for p in threadpool_info())
        assert torch.get_num_threads() == 1
        reported = timing.pools()
        assert {p["library"] for p in reported} >= {"openblas", "torch"}
        assert all(p["threads"] == 1 for p in reported)
    assert {p["filepath"]: p["num_threads"] for p in threadpool_info()} == before
    assert torch.get_num_threads() == torch_before


def test_the_run_never_gives_a_pool_more_threads_than_the_cpus_it_may_use(params):
    p = params("timing") | {"threads": 512, "sweep_T": [8], "loop_max_T": 8, "T": 8, "d": 4}
    with kept_torch_threads():
        v = timing.run(p)
    available = len(os.sched_getaffinity(0))
    threads = v["threads"]
    assert threads["requested"] == 512 and threads["available"] == available
    assert threads["all_cores"] == v["main"]["all_cores"]["threads"] == available
    assert all(pool["threads"] <= available for pool in threads["pools_all_cores"])
    assert threads["widest_pool_one_thread"] == 1 == v["protocol"]["threads"]
    assert all(pool["threads"] == 1 for pool in threads["pools_one_thread"])


class kept_torch_threads:
    def __enter__(self):
        self.threads = torch.get_num_threads()

    def __exit__(self, *exc):
        torch.set_num_threads(self.threads)
