"""articlekit.experiment.measure: the interval of a median, per-round
ratios, interleaved rounds and thread limits, on synthetic samples and
synthetic timers driven by a fake clock. No real timing is asserted here
(speed targets are benchmarks', docs/benchmarks.md)."""

import math
import random

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from articlekit.experiment import measure
from articlekit.experiment.measure import MeasureError, compare


class FakeClock:
    """A clock that moves only when a synthetic call says it took time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def timer(self, seconds):
        """A zero-argument call that takes seconds() of this clock."""

        def call():
            self.now += seconds()

        return call


# ---- the interval of a median (order statistics) ------------------------------------


def test_six_samples_are_the_fewest_for_a_95_percent_interval_and_it_spans_them_all():
    assert measure.minimum_rounds() == 6
    interval = measure.median_interval([3.0, 1.0, 2.0, 6.0, 5.0, 4.0])
    assert (interval["low"], interval["estimate"], interval["high"]) == (1.0, 3.5, 6.0)
    assert interval["coverage"] == 1 - 2 / 2**6


def test_too_few_samples_are_refused_saying_how_many_are_needed():
    with pytest.raises(MeasureError, match="5 samples cannot give a 95% interval.*at least 6"):
        measure.median_interval([1.0, 2.0, 3.0, 4.0, 5.0])


@pytest.mark.parametrize("n", [6, 9, 20, 41, 100])
def test_the_interval_is_the_narrowest_pair_of_order_statistics_that_covers_95_percent(n):
    samples = [float(i) for i in range(1, n + 1)]  # x(i) = i
    interval = measure.median_interval(samples)
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
        (i := measure.median_interval(rng.lognormal(0.0, 0.5, size=41).tolist()))["low"] <= 1.0 <= i["high"]
        for _ in range(trials)
    )
    assert 0.94 <= covered / trials <= 0.995


def test_the_same_samples_always_give_the_same_interval():
    samples = [random.Random(1).random() for _ in range(25)]
    assert measure.median_interval(samples) == measure.median_interval(list(reversed(samples)))


def test_a_nan_sample_is_refused():
    with pytest.raises(MeasureError, match="NaN"):
        measure.median_interval([1.0] * 5 + [math.nan])


# ---- per-round ratios ---------------------------------------------------------------


def test_drift_that_slows_both_contenders_alike_cancels_in_the_per_round_ratio():
    """A loaded machine slows a whole round: the ratio of the round stays put."""
    rng = np.random.default_rng(8)
    slowdown = rng.uniform(1.0, 4.0, size=21)  # each round 1x to 4x slower
    loop, matrix = (5.0 * slowdown).tolist(), (1.0 * slowdown).tolist()
    speedup = measure.ratio(loop, matrix)
    assert speedup["estimate"] == pytest.approx(5.0)
    assert speedup["low"] == pytest.approx(5.0) and speedup["high"] == pytest.approx(5.0)
    assert len(speedup["ratios"]) == 21


def test_ratios_need_one_sample_of_each_per_round():
    with pytest.raises(ValueError):
        measure.ratio([1.0] * 6, [1.0] * 7)


# ---- interleaved rounds ---------------------------------------------------------------


def test_interleaved_rounds_rotate_the_order_and_take_one_sample_each_per_round():
    order, clock = [], iter(range(10**6))

    def call(name):
        return lambda: order.append(name)

    calls = {name: call(name) for name in ("a", "b", "c")}
    out = measure.interleaved(calls, rounds=6, warmup=1, sample_ms=1, clock=lambda: next(clock) / 1e3)
    assert all(len(out[n]["samples_ms"]) == len(out[n]["wall_samples_ms"]) == 6 for n in "abc")
    timed = order[3:]  # after one warm-up call each
    firsts = [timed[i] for i in range(0, len(timed), len(timed) // 6)]
    assert firsts == ["a", "b", "c", "a", "b", "c"]


def test_a_sample_holds_enough_calls_to_fill_sample_ms():
    ticks = iter(range(0, 10**9, 2))  # every call takes 2 ms on this fake clock
    clock = lambda: next(ticks) / 1e3  # noqa: E731
    assert measure.calls_per_sample(lambda: None, warmup=3, sample_ms=20, clock=clock) == 10


# ---- compare: a known ratio on synthetic timers --------------------------------------


def test_a_constant_ratio_comes_back_exactly_and_the_times_are_the_timers():
    clock = FakeClock()
    result = compare(
        {"slow": clock.timer(lambda: 6e-3), "fast": clock.timer(lambda: 2e-3)},
        baseline="slow",
        rounds=7,
        warmup=2,
        sample_ms=10,
        clock=clock,
    )
    speedup = result["ratios"]["fast"]
    assert (speedup["estimate"], speedup["low"], speedup["high"]) == pytest.approx((3.0, 3.0, 3.0))
    assert len(speedup["ratios"]) == 7 and set(result["ratios"]) == {"fast"}  # no ratio of the baseline to itself
    assert result["times"]["slow"]["estimate"] == pytest.approx(6.0)  # ms per call
    assert result["times"]["fast"]["calls_per_sample"] == 5  # 10 ms of 2 ms calls
    assert len(result["times"]["fast"]["samples_ms"]) == 7


@pytest.mark.parametrize("true_ratio", [0.5, 3.0, 40.0])
def test_the_interval_covers_a_known_ratio_under_noise_and_drift(true_ratio):
    """Each call's time is lognormal noise on its true time, and each round
    runs slower or faster as a whole (a loaded machine): the interval of
    the per-round ratio holds the true one about as often as it promises."""
    rng = np.random.default_rng(19)
    covered, trials = 0, 150
    for _ in range(trials):
        clock, load = FakeClock(), [1.0]

        def slower():
            load[0] = rng.uniform(1.0, 3.0)  # each sample of the baseline starts a new load level
            return 1e-3 * true_ratio * load[0] * rng.lognormal(0.0, 0.2)

        result = compare(
            {"base": clock.timer(slower), "other": clock.timer(lambda: 1e-3 * load[0] * rng.lognormal(0.0, 0.2))},
            baseline="base",
            rounds=9,
            warmup=1,
            sample_ms=0.5,
            clock=clock,
        )
        r = result["ratios"]["other"]
        covered += r["low"] <= true_ratio <= r["high"]
        assert r["low"] <= r["estimate"] <= r["high"]
    assert covered / trials >= 0.9


def test_the_same_timers_on_the_same_clock_give_the_same_result():
    def run():
        clock, rng = FakeClock(), random.Random(5)
        return compare(
            {"a": clock.timer(lambda: rng.uniform(1e-3, 2e-3)), "b": clock.timer(lambda: rng.uniform(3e-3, 5e-3))},
            baseline="b",
            rounds=11,
            clock=clock,
        )

    def by_the_clock(result):  # the wall clock's samples, beside them, are the real machine's
        return result["ratios"], {
            name: {k: v for k, v in t.items() if k != "wall_samples_ms"} for name, t in result["times"].items()
        }

    first, second = run(), run()
    assert by_the_clock(first) == by_the_clock(second)


def test_without_a_baseline_there_are_times_and_no_ratios():
    clock = FakeClock()
    result = compare({"only": clock.timer(lambda: 1e-3)}, rounds=6, clock=clock)
    assert result["ratios"] == {} and result["times"]["only"]["estimate"] == pytest.approx(1.0)


def test_the_protocol_is_recorded_with_the_result():
    clock = FakeClock()
    protocol = compare({"a": clock.timer(lambda: 1e-3)}, rounds=6, clock=clock, sample_ms=2)["protocol"]
    assert {key: protocol[key] for key in ("rounds", "sample_ms", "threads", "confidence")} == {
        "rounds": 6,
        "sample_ms": 2,
        "threads": 1,
        "confidence": 0.95,
    }
    assert protocol["clock"].endswith("FakeClock") or "FakeClock" in protocol["clock"]
    assert all(pool["threads"] == 1 for pool in protocol["pools"])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rounds": 5}, r"rounds=5 cannot give a 95% interval; take at least 6"),
        ({"baseline": "nope"}, r"baseline 'nope' is not a contender; contenders: a"),
        ({"threads": 0}, r"threads=0; give at least 1"),
    ],
)
def test_settings_that_cannot_work_are_refused_before_any_timing(kwargs, message):
    calls = []
    with pytest.raises(MeasureError, match=message):
        compare({"a": lambda: calls.append(1)}, **kwargs)
    assert calls == []


def test_a_contender_that_is_not_a_call_is_named():
    with pytest.raises(MeasureError, match=r"b not callable; pass zero-argument calls, e.g. lambda: f\(x\)"):
        compare({"a": lambda: None, "b": 42})


def test_the_real_clocks_are_chosen_by_the_thread_count():
    import time

    assert measure.default_clock(1) is time.thread_time
    assert measure.default_clock(4) is time.perf_counter


# ---- thread control -------------------------------------------------------------------


def test_inside_the_limit_every_pool_and_each_setter_holds_n_threads_and_the_old_counts_come_back():
    before = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    other_pool = {"threads": 7}
    setter = (lambda: other_pool["threads"], lambda n: other_pool.update(threads=n))
    with measure.limited_threads(1, [setter]):
        assert all(p["num_threads"] == 1 for p in threadpool_info())
        assert other_pool["threads"] == 1
        assert all(pool["threads"] == 1 for pool in measure.pools())
    assert {p["filepath"]: p["num_threads"] for p in threadpool_info()} == before
    assert other_pool["threads"] == 7


def test_compare_times_inside_the_limit():
    seen, clock = [], FakeClock()

    def call():
        seen.append(max(p["num_threads"] for p in threadpool_info()))
        clock.now += 1e-3

    compare({"a": call}, rounds=6, warmup=1, sample_ms=1, clock=clock)
    assert seen and set(seen) == {1}


# ---- between runs ------------------------------------------------------------------------


def test_the_estimate_between_runs_is_their_median_and_every_run_is_kept():
    between = measure.between_runs([9.0, 11.0, 10.0, 10.5, 9.5])
    assert between["estimate"] == 10.0 and between["runs"] == [9.0, 11.0, 10.0, 10.5, 9.5]
    assert between["low"] < 9.0 and between["high"] > 11.0  # wider than the runs: it holds one more
    assert between["spread"] == pytest.approx(0.2) and between["coverage"] == 0.95
    assert set(between) == set(measure.BETWEEN_RUNS_FIELDS)


def test_the_interval_is_students_t_on_the_logarithms_of_the_runs():
    runs = [9.0, 11.0, 10.0, 10.5, 9.5]
    logs = np.log(runs)
    t_4 = 2.7764451051977934  # the 97.5 % point of Student's t with 4 degrees of freedom (tables: 2.776)
    half = t_4 * logs.std(ddof=1) * math.sqrt(1 + 1 / len(runs))
    between = measure.between_runs(runs)
    assert (between["low"], between["high"]) == pytest.approx(
        (math.exp(logs.mean() - half), math.exp(logs.mean() + half))
    )


@pytest.mark.parametrize("n", [3, 5])
def test_one_more_run_lands_inside_about_95_percent_of_the_time(n):
    """The interval printed is a prediction interval for one more run: drawn
    from n runs of a lognormal machine, it holds a fresh run about 95 % of
    the time (an interval for the median of the runs would hold far fewer)."""
    rng = np.random.default_rng(20261201)
    trials = 2000
    held = sum(
        (b := measure.between_runs(rng.lognormal(2.0, 0.1, size=n).tolist()))["low"]
        <= rng.lognormal(2.0, 0.1)
        <= b["high"]
        for _ in range(trials)
    )
    assert 0.935 <= held / trials <= 0.965


def test_the_median_of_a_rerun_of_all_the_runs_lands_inside_more_often_still():
    """What `articlekit reproduce` compares: a rerun's median, which scatters
    less than one run, so the interval holds it well above 95 % of the time."""
    rng = np.random.default_rng(7)
    trials = 1000
    held = sum(
        (b := measure.between_runs(rng.lognormal(2.0, 0.1, size=5).tolist()))["low"]
        <= float(np.median(rng.lognormal(2.0, 0.1, size=5)))
        <= b["high"]
        for _ in range(trials)
    )
    assert held / trials >= 0.98


def test_a_run_far_from_the_others_is_named_and_runs_that_agree_rarely_are():
    agreeing = measure.between_runs([10.0, 10.2, 9.9, 10.1, 10.05])
    assert agreeing["outliers"] == []
    loaded = measure.between_runs([10.0, 10.2, 6.0, 10.1, 10.05])  # run 3 shared the machine
    assert loaded["outliers"] == [3]
    rng = np.random.default_rng(11)
    trials = 1000
    flagged = sum(
        bool(measure.between_runs(rng.lognormal(0.0, 0.05, size=5).tolist())["outliers"]) for _ in range(trials)
    )
    assert flagged / trials <= 0.06  # about one build in twenty at most, by design


# ---- the rule for an outlying run, fixed before the data ------------------------------------

# Eleven runs of a quiet machine and one that shared it: the case the rule is for.
QUIET_AND_ONE_SHARED = [8.5, 8.7, 8.4, 8.6, 8.8, 8.45, 4.81, 8.55, 8.65, 8.35, 8.75]


def test_an_outlying_run_is_set_aside_by_the_rule_and_the_interval_comes_from_the_others():
    kept_all = measure.between_runs(QUIET_AND_ONE_SHARED)
    ruled = measure.between_runs(QUIET_AND_ONE_SHARED, set_aside_at_most=2)
    assert kept_all["outliers"] == ruled["outliers"] == ruled["set_aside"] == [7]
    assert kept_all["set_aside"] == [] and kept_all["beyond_rule"] is False  # no rule, no run left out
    assert ruled["beyond_rule"] is False
    others = QUIET_AND_ONE_SHARED[:6] + QUIET_AND_ONE_SHARED[7:]
    assert ruled["estimate"] == float(np.median(others))
    assert (ruled["low"], ruled["high"]) == pytest.approx(measure.prediction_interval(others))
    # the run stays in the record, and the extremes still show it
    assert ruled["runs"] == QUIET_AND_ONE_SHARED and ruled["smallest"] == 4.81 and ruled["largest"] == 8.8
    width = (ruled["high"] - ruled["low"]) / ruled["estimate"]
    assert width < 0.2 < 0.75 < (kept_all["high"] - kept_all["low"]) / kept_all["estimate"]


def test_two_runs_far_out_together_do_not_hide_each_other():
    """Each of runs 1 and 5 widens the interval the other is held to, so
    neither is an outlier run by run; the rule's forward search takes the
    farthest first and finds both."""
    runs = [2.50, 1.50, 1.55, 1.56, 2.60, 1.54, 1.547, 1.52, 1.521, 1.492, 1.514]
    ruled = measure.between_runs(runs, set_aside_at_most=2)
    assert ruled["outliers"] == [] and ruled["set_aside"] == [1, 5]
    others = [x for i, x in enumerate(runs, 1) if i not in (1, 5)]
    assert (ruled["low"], ruled["high"]) == pytest.approx(measure.prediction_interval(others))


@pytest.mark.parametrize("value", [0.1, 0.19916923809523834, 7.3, 1234.5678])
def test_runs_that_differ_only_by_rounding_are_never_outside_one_another(value):
    """Runs that agree to the last digits, as copies of one run do, give an
    interval of width zero: rounding in exp(log x) must not put one of them
    outside it, whatever the value's last bits."""
    runs = [value, value, value * (1 + 2e-16), value, value * (1 - 2e-16), value]
    for at_most in (0, 1, 2, 3):
        between = measure.between_runs(runs, set_aside_at_most=at_most)
        assert between["outliers"] == between["set_aside"] == [] and between["beyond_rule"] is False


def test_when_more_runs_disagree_than_the_rule_allows_every_run_is_kept():
    runs = [8.5, 8.7, 4.8, 8.6, 8.8, 8.45, 4.81, 8.55, 4.9, 8.35, 8.75]
    ruled = measure.between_runs(runs, set_aside_at_most=2)  # three far out, two allowed
    assert ruled["set_aside"] == [] and ruled["beyond_rule"] is True
    assert ruled["estimate"] == float(np.median(runs))
    assert (ruled["low"], ruled["high"]) == pytest.approx(measure.prediction_interval(runs))


def test_the_rule_costs_runs_that_agree_little_of_their_coverage():
    """Set aside by the rule, a run of an agreeing machine takes the interval
    with it: from eleven such runs, one more still lands inside more than
    92 % of the time (95 % without the rule), and the rule acts in fewer
    than one build in ten."""
    rng = np.random.default_rng(20261206)
    trials = 2000
    ruled = [
        measure.between_runs(rng.lognormal(2.0, 0.1, size=11).tolist(), set_aside_at_most=2) for _ in range(trials)
    ]
    held = sum(b["low"] <= rng.lognormal(2.0, 0.1) <= b["high"] for b in ruled)
    assert 0.92 <= held / trials <= 0.96
    assert sum(bool(b["set_aside"]) for b in ruled) / trials < 0.1


@pytest.mark.parametrize("at_most", [-1, 3])
def test_a_rule_that_would_leave_fewer_than_three_runs_is_refused(at_most):
    with pytest.raises(MeasureError, match=rf"set_aside_at_most={at_most} with 5 runs.*0 to 2"):
        measure.between_runs([10.0, 10.2, 9.9, 10.1, 10.05], set_aside_at_most=at_most)


def test_two_runs_have_a_spread_but_no_run_can_be_held_against_the_others():
    between = measure.between_runs([10.0, 12.0])
    assert between["outliers"] == [] and between["low"] < 10.0 < 12.0 < between["high"]


@pytest.mark.parametrize(
    "runs, message",
    [
        ([10.0], r"1 run gives no spread between runs; take at least 2"),
        ([10.0, -1.0], r"must be a positive number"),
        ([10.0, math.nan], r"must be a positive number"),
    ],
)
def test_runs_that_cannot_give_an_interval_are_refused(runs, message):
    with pytest.raises(MeasureError, match=message):
        measure.between_runs(runs)


def test_a_run_is_loaded_when_its_load_average_exceeds_the_cpus_it_may_use():
    assert measure.loaded([1.5, 2.5], cpus=2) is True
    assert measure.loaded([1.5, 2.0], cpus=2) is False
    assert measure.loaded(0.4, cpus=1) is False


def test_runs_that_agree_to_the_last_digit_give_an_interval_that_still_holds_their_value():
    between = measure.between_runs([0.1, 0.1, 0.1])
    assert between["low"] <= between["estimate"] == 0.1 <= between["high"]
    assert between["high"] - between["low"] < 1e-16
