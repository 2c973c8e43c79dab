"""The timing is measured between runs: independent processes, combined.

What a reader relies on: the article's ratio is the median of the runs and
its interval holds one more run; a run that disagrees with the others is
named, in the artifact, in the sentence the article prints and on the
terminal; a loaded run is marked; the machine and the load of every run
are recorded; and the step that combines runs (run_experiment --combine,
articlekit/experiment/runs.py) refuses runs that are not replicates of one
measurement. The runs here are synthetic, or tiny real runs whose times
are not asserted.
"""

import copy
import json
import logging

import pytest

from articlekit.core.jsonio import read_json
from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure, write_artifact
from experiments import timing

TINY = {
    "T": 8,
    "d": 4,
    "sweep_T": [8],
    "loop_max_T": 8,
    "warmup": 1,
    "rounds": 6,
    "sweep_rounds": 6,
    "sample_ms": 0.5,
    "seed": 0,
    "threads": 1,
}


@pytest.fixture(scope="module")
def one_run():
    """One real run's values (tiny sizes): the shape every run has."""
    import torch

    threads = torch.get_num_threads()
    try:
        return timing.run(TINY)
    finally:
        torch.set_num_threads(threads)


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def runs_with_ratios(one_run, ratios, loaded=()):
    """Copies of one run whose headline ratio is each of `ratios` (the loop's
    time scaled to match), loaded where the run's number is in `loaded`."""
    runs = []
    for i, ratio in enumerate(ratios, 1):
        run = copy.deepcopy(one_run)
        speedup = run["main"]["speedup"]
        scale = ratio / speedup["estimate"]
        for key in ("estimate", "low", "high"):
            speedup[key] *= scale
        run["main"]["loop"]["median_ms"]["estimate"] *= scale
        run["load"] = {"before": [3.0 if i in loaded else 0.5] * 3, "after": [0.5] * 3, "loaded": i in loaded}
        runs.append(run)
    return runs


# ---- combine: what results/timing.json holds --------------------------------------------


def test_the_printed_ratio_is_the_median_of_the_runs_with_the_interval_for_one_more(one_run):
    combined = timing.combine(runs_with_ratios(one_run, [9.0, 10.0, 11.0, 10.5, 9.5]), TINY)
    speedup = combined["main"]["speedup"]
    assert speedup["estimate"] == pytest.approx(10.0)
    assert speedup["runs"] == pytest.approx([9.0, 10.0, 11.0, 10.5, 9.5])
    assert speedup["low"] < 9.0 and speedup["high"] > 11.0
    assert speedup["run_low"][0] < 9.0 < speedup["run_high"][0]  # each run's own interval beside it
    assert combined["runs"] == {
        "count": 5,
        "agree": True,
        "set_aside": [],
        "set_aside_elsewhere": [],
        "note": ("No run lies outside the interval the other runs predict: they agree within their spread."),
    }
    assert combined["protocol"]["interval"].startswith("prediction interval for one more run")
    assert combined["protocol"]["within_run_interval"] == "order statistics of the median"
    # every time and ratio of the article is a value between runs
    for impl in timing.METHODS:
        assert set(combined["main"][impl]["median_ms"]) >= {"estimate", "low", "high", "runs", "outliers"}
    for key in timing.RATIOS:
        assert len(combined["main"][key]["runs"]) == 5


def with_neighbours(runs, busy_run, others_cpu_s=1.5):
    """The runs, each with a record of what the machine did beside it; run
    `busy_run` (from 1) shared it with a compiler."""
    for i, run in enumerate(runs, 1):
        busy = i == busy_run
        run["neighbours"] = {
            "seconds": 0.6,
            "cpu_share": {"busy": 0.9 if busy else 0.5, "idle": 0.1 if busy else 0.5, "iowait": 0.0, "steal": 0.0},
            "others_cpu_s": others_cpu_s if busy else 0.05,
            "others": [{"command": "cc1", "cpu_s": others_cpu_s}] if busy else [],
            "mhz_before": 2600.0,
            "mhz_after": 2600.0,
        }
    return runs


def test_an_outlying_run_is_set_aside_by_the_rule_named_and_read_against_its_record(one_run, capsys):
    ratios = [10.0, 10.1, 6.0, 9.9, 10.05, 10.2, 9.95, 10.15, 9.85, 10.1, 9.9]
    combined = timing.combine(with_neighbours(runs_with_ratios(one_run, ratios), busy_run=3), TINY)
    speedup = combined["main"]["speedup"]
    assert speedup["outliers"] == speedup["set_aside"] == combined["runs"]["set_aside"] == [3]
    assert combined["protocol"]["set_aside_at_most"] == 2  # one run in five, of eleven
    assert speedup["estimate"] == pytest.approx(10.025) and speedup["low"] > 9.0  # the others' interval
    assert combined["runs"]["agree"] is False
    note = combined["runs"]["note"]
    assert note.startswith("run 3 (6.00) lies outside the interval the other runs predict, and the rule stated")
    assert "the ratio and its interval are the other 10 runs'. A rerun may land where it did." in note
    # what the record holds, beside the other runs, and no cause
    assert "other processes used 1.50 CPU-seconds while its 0.60 s of rounds ran (cc1 1.50 s)" in note
    assert "against a median of 0.05 s for all the runs" in note
    assert "the hypervisor took 0% of the machine's CPU time; the clock read 2600 MHz" in note
    assert note.endswith("The record holds these, not a cause.")
    assert f"timing: warning: {note}" in capsys.readouterr().err


def test_when_more_runs_disagree_than_the_rule_allows_every_run_is_kept_and_the_note_warns(one_run, capsys):
    runs = runs_with_ratios(one_run, [10.0, 10.1, 6.0, 9.9])  # four runs: the rule may set none aside
    combined = timing.combine(runs, TINY)
    speedup = combined["main"]["speedup"]
    assert combined["protocol"]["set_aside_at_most"] == 0
    assert speedup["outliers"] == [3] and speedup["set_aside"] == [] and combined["runs"]["agree"] is False
    note = combined["runs"]["note"]
    assert note.startswith("⚠ The runs disagree: run 3 (6.00) lies outside the interval the other runs predict")
    assert "every run is kept" in note
    assert f"timing: warning: {note}" in capsys.readouterr().err


def test_three_runs_far_out_together_are_more_than_the_rule_sets_aside(one_run):
    ratios = [10.0, 10.1, 6.0, 9.9, 10.05, 6.1, 10.2, 6.05, 9.95, 10.0, 10.1]
    combined = timing.combine(runs_with_ratios(one_run, ratios), TINY)
    speedup = combined["main"]["speedup"]
    assert speedup["set_aside"] == [] and speedup["beyond_rule"] is True and combined["runs"]["agree"] is False
    assert combined["runs"]["note"].startswith(
        "⚠ The runs disagree: more runs lie outside the interval the others predict, more than the rule"
    )


def test_the_rule_never_leaves_fewer_than_three_runs():
    assert [timing.set_aside_at_most(n) for n in (2, 3, 4, 5, 9, 10, 11, 20)] == [0, 0, 0, 1, 1, 2, 2, 4]


def test_a_loaded_run_is_marked_and_the_load_before_and_after_is_kept(one_run):
    runs = runs_with_ratios(one_run, [10.0, 10.1, 9.9], loaded=(2,))
    combined = timing.combine(runs, TINY)
    load = combined["load"]
    assert load["loaded_runs"] == [2] and load["loaded_count"] == 1
    assert load["runs_before"] == [0.5, 3.0, 0.5] and load["before"] == [0.5] * 3
    assert load["cpus"] == one_run["threads"]["available"]


def test_the_machine_is_the_runs_and_a_run_elsewhere_is_said(one_run):
    runs = runs_with_ratios(one_run, [10.0, 10.1, 9.9])
    combined = timing.combine(runs, TINY)
    assert combined["machine"]["cpu_model"] == one_run["machine"]["cpu_model"]
    assert combined["machine"]["same_for_all_runs"] is True
    runs[1]["machine"] = {**runs[1]["machine"], "hostname": "node-2"}
    runs[1]["hostname"] = "node-2"
    combined = timing.combine(runs, TINY)
    assert combined["machine"]["same_for_all_runs"] is False
    assert combined["hostname"] == f"{one_run['hostname']}, node-2"


def test_both_spellings_of_the_loop_are_timed_and_compute_the_same(one_run):
    main = one_run["main"]
    assert main["loop_methods"]["median_ms"]["estimate"] > 0
    assert main["spelling_max_abs_diff"] == 0.0  # the same arithmetic in the same order
    assert set(timing.RATIOS) <= set(main) and main["spelling_speedup"]["estimate"] > 0
    assert one_run["load"]["loaded"] in (True, False) and len(one_run["load"]["before"]) == 3
    assert one_run["machine"]["cores"] >= 1


def test_both_figures_are_drawn_from_the_combined_values(one_run, tmp_path):
    combined = timing.combine(runs_with_ratios(one_run, [10.0, 10.1, 9.9], loaded=(1,)), TINY)
    figures = {"sweep": tmp_path / "sweep.svg", "runs": tmp_path / "runs.svg"}
    timing.plot(combined, TINY, figures)
    runs = figures["runs"].read_text()
    assert "a run on a loaded machine" in runs and "interval for one more run" in runs
    assert "median of 3 runs" in figures["sweep"].read_text()


# ---- run_experiment --combine (articlekit/experiment/runs.py) ------------------------


def write_runs(tmp_path, params_of_run, values_of_run=lambda i: {"x": i}):
    paths = []
    for i in (1, 2, 3):
        path = tmp_path / f"runs/demo/run-{i}.json"
        write_artifact(path, "demo", "experiments/demo.py", params_of_run(i), values_of_run(i))
        paths.append(str(path))
    return paths


def combine_demo(tmp_path, paths, combine, plot=None, figures=()):
    argv = [
        "--combine",
        *paths,
        "--json",
        str(tmp_path / "demo.json"),
        "--log",
        str(tmp_path / "demo.log"),
        *[arg for figure in figures for arg in ("--figure", figure)],
    ]
    code = 0
    try:
        run_experiment(
            "demo",
            lambda params: pytest.fail("--combine must not run the experiment"),
            plot,
            argv=argv,
            combine=combine,
        )
    except SystemExit as stopped:
        code = stopped.code
    return code, (tmp_path / "demo.log").read_text()


def test_combine_writes_one_artifact_with_the_runs_params_and_the_figures_from_its_values(tmp_path, restore_logging):
    paths = write_runs(tmp_path, lambda i: {"n": 3})
    seen = {}

    def combine(runs, params):
        seen["params"] = dict(params)
        return {"total": sum(r["x"] for r in runs)}

    def plot(values, params, figures):
        plt = pyplot()
        fig, ax = plt.subplots()
        ax.set_title(f"total {values['total']}")
        save_figure(fig, figures["bar"])
        plt.close(fig)

    code, log = combine_demo(tmp_path, paths, combine, plot, [f"bar={tmp_path / 'bar.svg'}"])
    assert code == 0, log
    artifact = read_json(tmp_path / "demo.json")
    assert artifact["values"] == {"total": 6} and artifact["params"] == {"n": 3} == seen["params"]
    assert "total 6" in (tmp_path / "bar.svg").read_text()
    assert "combining 3 runs" in log


def test_runs_with_other_params_are_refused_naming_the_run_and_the_fix(tmp_path, restore_logging):
    paths = write_runs(tmp_path, lambda i: {"n": 4 if i == 2 else 3})
    code, log = combine_demo(tmp_path, paths, lambda runs, params: {})
    assert code == 1 and not (tmp_path / "demo.json").exists()
    assert f"{paths[1]} ran with other params than {paths[0]} (n: [4] against [3])" in log
    assert "snakemake --cores N --forcerun demo results/demo.json" in log


def test_a_run_of_another_experiment_is_refused(tmp_path, restore_logging):
    paths = write_runs(tmp_path, lambda i: {"n": 3})
    write_artifact(paths[2], "other", "experiments/other.py", {"n": 3}, {})
    code, log = combine_demo(tmp_path, paths, lambda runs, params: {})
    assert code == 1 and f"{paths[2]}: a run of 'other', not of 'demo'" in log


def test_an_experiment_without_combine_says_what_to_add(tmp_path, restore_logging):
    paths = write_runs(tmp_path, lambda i: {"n": 3})
    code, log = combine_demo(tmp_path, paths, None)
    assert code == 1 and "experiments/demo.py has no combine(runs, params)" in log
    assert "run_experiment('demo', run, plot, combine=combine), or set experiments.demo.runs to 1" in log


def test_a_combined_artifact_records_what_reproduce_reruns_it_with(tmp_path, restore_logging):
    """reproduce hands an artifact's params back to the config: the runs'
    params, threads among them (it becomes --cores), and nothing else."""
    paths = write_runs(tmp_path, lambda i: {"n": 3, "threads": 2})
    code, _ = combine_demo(tmp_path, paths, lambda runs, params: {"n_runs": len(runs)})
    assert code == 0
    artifact = json.loads((tmp_path / "demo.json").read_text())
    assert artifact["params"] == {"n": 3, "threads": 2} and artifact["values"] == {"n_runs": 3}
