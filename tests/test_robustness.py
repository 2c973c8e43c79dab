"""Seed robustness: every seeded experiment over many seeds, many seeds per
process, each chunk of seeds a job of its own; a seed whose run raises is
counted with its error; a killed sweep resumes from the chunks it had not
written; the summary's keys are values the article can bind.

The sweep's runner is articlekit/experiment/sweep.py, its summary (what the
article binds: spreads, the article's seed's percentile, shares of seeds with
their Wilson intervals) articlekit/article/robustness.py, its figure
articlekit/article/seed_figure.py, its page articlekit/review/robustness.py,
its rules articlekit/workflow/rules/robustness.smk.
"""

import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import snakemake_fork
from articlekit.core import keys
from articlekit.core.status import FAILS, HOLDS
from articlekit.data.config import ConfigError, check_config
from articlekit.data.values import merge
from articlekit.article import robustness, seed_figure, seed_keys
from articlekit.experiment import sweep
from articlekit.review import robustness as robustness_page
from tests.child_processes import popen
from articlekit.workflow.settings import chunk_ranges
from tests.workspace import PROJECT_ROOT, copy_environment, copy_project

# ---- the runner ------------------------------------------------------------------------


def test_the_seeds_are_derived_from_the_articles_and_a_larger_sweep_extends_a_smaller():
    assert sweep.sweep_seeds(7, 0, 3) == [8, 9, 10]
    chunks = chunk_ranges(10, 4)  # the plan's chunks (articlekit/workflow/settings.py)
    assert chunks == [(0, 4), (4, 4), (8, 2)]
    assert [s for first, count in chunks for s in sweep.sweep_seeds(7, first, count)] == sweep.sweep_seeds(7, 0, 10)
    assert sweep.sweep_seeds(7, 0, 10)[:3] == sweep.sweep_seeds(7, 0, 3)
    assert 7 not in sweep.sweep_seeds(7, 0, 100)  # the article's own seed is the build's, not the sweep's
    with pytest.raises(ValueError, match="must be an integer"):
        sweep.sweep_seeds("7", 0, 1)


def test_a_seed_whose_run_raises_is_recorded_with_its_error_and_the_others_still_run():
    def run(params):
        if params["seed"] % 2:
            raise FloatingPointError(f"odd seed {params['seed']}")
        return {"x": params["seed"] * params["scale"]}

    records = sweep.run_seeds(run, {"seed": 0, "scale": 10}, [1, 2, 3, 4])
    assert [r["seed"] for r in records] == [1, 2, 3, 4]  # none dropped
    assert [r.get("values") for r in records] == [None, {"x": 20}, None, {"x": 40}]
    assert records[0]["error"] == "FloatingPointError: odd seed 1"
    assert "odd seed 1" in records[0]["traceback"]


# ---- the summary -----------------------------------------------------------------------

ARTICLE = """The toy's x is {{< value toy.x fmt=".2f" expect="> 3" >}} and its
label {{< value toy.label >}}; y is {{< claim toy.y expect="< toy.x" >}}close.
Its size {{< value toy.params.size >}} is a parameter, and the sweep's
{{< value robustness.toy.x.median expect="> 0" >}} and
{{< value robustness.toy.x.p05 expect="< toy.x" >}} are about the sweep.
"""


def toy_chunk(seeds, failing=()):
    return {
        "experiment": "toy",
        "script": "experiments/toy.py",
        "params": {"size": 3},
        "versions": {},
        "seeds": [
            {"seed": s, "error": "ValueError: bad seed"}
            if s in failing
            else {"seed": s, "values": {"x": float(s), "y": 4.0, "label": "same"}}
            for s in seeds
        ],
    }


def toy_report(chunks, flag_share=0.2):
    sweep_data = robustness.collect(chunks)
    values = merge(
        [
            (
                "results/toy.json",
                {
                    "experiment": "toy",
                    "script": "experiments/toy.py",
                    "params": {"seed": 100, "size": 3},
                    "values": {"x": 5.0, "y": 4.0, "label": "same"},
                },
            )
        ]
    )["values"]
    shortcodes = robustness.article_shortcodes("article.qmd", ARTICLE)
    return robustness.build(sweep_data, values, shortcodes, {"flag_share": flag_share})


def test_each_claim_is_judged_for_every_seed_and_its_failing_seeds_are_listed():
    report = toy_report([("a.json", toy_chunk([1, 2, 3, 4, 5])), ("b.json", toy_chunk([6, 7, 8, 9, 10], failing=[9]))])
    claims = {(c["key"], c["expect"]): c for c in report["claims"]}
    # the claim about the sweep itself, and the parameter, are not the sweep's to judge
    assert set(claims) == {("toy.x", "> 3"), ("toy.y", "< toy.x")}
    x = claims[("toy.x", "> 3")]
    assert x["at_seed"] == HOLDS and x["ran"] == 9
    assert x["failing_seeds"] == [1, 2, 3] and x["holds_fraction"] == 6 / 9
    assert x["flagged"]  # holds at the article's seed, fails for a third of the seeds: more than 20 %
    y = claims[("toy.y", "< toy.x")]  # a key operand is read from the same seed's run
    assert y["failing_seeds"] == [1, 2, 3, 4]
    assert not toy_report([("a.json", toy_chunk([4, 5, 6, 7, 8]))], flag_share=0.5)["claims"][0]["flagged"]


def test_a_claim_on_a_fixed_draw_is_listed_apart_with_no_share_and_the_declaration_is_checked():
    """A part of an experiment drawn from a seed of its own (config
    robustness.fixed) gives every seed the build's value: "holds for 100 %
    of the seeds" would be one draw counted a hundred times, so the sweep
    lists such a claim apart, with the reason, instead of giving it a share.
    A value that is merely the same for every seed (an exact zero) is not
    excused: only the declaration lists a claim apart, and a declaration
    that a seed contradicts stops the summary."""
    article = (
        ARTICLE
        + 'A fixed draw: {{< value toy.fixed.x expect="> 1" >}}; a zero {{< value toy.zero expect="== 0.0" >}}.\n'
    )

    def report(fixed_value):
        chunks = [("a.json", toy_chunk([1, 2, 3, 4, 5]))]
        for seed in chunks[0][1]["seeds"]:
            seed["values"].update({"fixed": {"x": fixed_value(seed["seed"])}, "zero": 0.0})
        values = merge(
            [
                (
                    "results/toy.json",
                    {
                        "experiment": "toy",
                        "script": "experiments/toy.py",
                        "params": {"seed": 100, "size": 3},
                        "values": {"x": 5.0, "y": 4.0, "label": "same", "fixed": {"x": 2.0}, "zero": 0.0},
                    },
                )
            ]
        )["values"]
        return robustness.build(
            robustness.collect(chunks),
            values,
            robustness.article_shortcodes("article.qmd", article),
            {"flag_share": 0.2, "fixed": {"toy.fixed": "drawn from toy.params.other_seed"}},
        )

    fixed = report(lambda seed: 2.0)
    assert ("toy.fixed.x", "> 1") not in {(c["key"], c["expect"]) for c in fixed["claims"]}
    assert ("toy.zero", "== 0.0") in {(c["key"], c["expect"]) for c in fixed["claims"]}
    assert [(c["key"], c["expect"], c["at_seed"], c["why"]) for c in fixed["unvaried"]] == [
        ("toy.fixed.x", "> 1", HOLDS, "drawn from toy.params.other_seed")
    ]
    assert fixed["values"]["sweep"]["unvaried"] == 1
    for page in (robustness_page.to_markdown(fixed), robustness_page.to_html(fixed)):
        assert "Claims the seeds do not reach" in page and "other_seed" in page
    with pytest.raises(robustness.RobustnessError, match="seed 1 gives toy.fixed.x another value"):
        report(lambda seed: 2.0 + seed)


def test_a_failed_seed_is_counted_not_dropped():
    report = toy_report([("a.json", toy_chunk([1, 2, 3], failing=[2]))])
    assert report["values"]["sweep"] == {
        "seeds": 3,
        "runs": 3,
        "failed_runs": 1,
        "claims": 2,
        "flagged": 2,
        "unvaried": 0,
    }
    [toy] = report["experiments"]
    assert (toy["ran"], toy["failed"]) == (2, 1)
    assert toy["failures"][0]["seed"] == 2 and toy["failures"][0]["error"] == "ValueError: bad seed"
    assert "seed 2: ValueError: bad seed" in robustness_page.to_markdown(report)
    assert "seed 2: ValueError: bad seed" in robustness_page.to_html(report)


def test_each_printed_value_has_its_value_at_the_articles_seed_its_median_and_range():
    report = toy_report([("a.json", toy_chunk(list(range(1, 21))))])
    x = next(r for r in report["printed"] if r["key"] == "toy.x")
    assert x["at_seed"] == 5.0 and x["seeds"] == 20
    assert (x["p05"], x["median"], x["p95"]) == tuple(np.percentile(np.arange(1.0, 21.0), [5, 50, 95]))
    label = next(r for r in report["printed"] if r["key"] == "toy.label")
    assert label["differs"] == 0  # text: how many seeds print something else
    assert "toy.params.size" not in {r["key"] for r in report["printed"]}
    assert robustness_page.seed_plot(x, report).startswith("data:image/svg+xml;base64,")
    assert robustness_page.seed_plot(label, report) is None


def test_where_the_articles_seed_falls_among_the_seeds_is_its_percentile_rank():
    """percentile_at_seed: the share of the sweep's seeds whose value is
    below the article's seed's, a tie counting half (scipy's "mean" kind)."""
    report = toy_report([("a.json", toy_chunk(list(range(1, 21))))])
    x = next(r for r in report["printed"] if r["key"] == "toy.x")
    assert x["percentile_at_seed"] == (4 + 0.5) / 20  # 1..4 below the article's 5.0, the seed 5 tied
    assert report["values"]["toy.x"]["percentile_at_seed"] == x["percentile_at_seed"]
    assert robustness.percentile_rank([1.0, 2.0, 3.0], 10.0) == 1.0
    assert robustness.percentile_rank([1.0, 2.0, 3.0], 0.0) == 0.0
    assert robustness.percentile_rank([4.0, 4.0], 4.0) == 0.5
    assert "at the 22nd percentile of the seeds" in robustness_page.to_markdown(report)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10_000), data=st.data())
def test_a_share_of_seeds_comes_with_its_wilson_score_interval(n, data):
    """The interval's ends are the shares p at which the score statistic
    (k/n - p) / sqrt(p (1 - p) / n) is +-z: Wilson's definition, solved here
    numerically, not by the module's closed form."""
    k = data.draw(st.integers(0, n))
    low, high = robustness.wilson_interval(k, n)
    z = NormalDist().inv_cdf(0.975)
    assert 0 <= low <= k / n <= high <= 1
    for end in (low, high):
        if 0 < end < 1:
            assert abs((k / n - end) / math.sqrt(end * (1 - end) / n)) == pytest.approx(z, rel=1e-6)
    assert (low == 0) == (k == 0) and (high == 1) == (k == n)  # 0 and n seeds: one end only is certain


def test_a_claims_share_is_bindable_with_its_interval_and_the_flagged_claims_by_name():
    report = toy_report([("a.json", toy_chunk([1, 2, 3, 4, 5])), ("b.json", toy_chunk([6, 7, 8, 9, 10]))])
    values = merge([("build/robustness.json", report)])["values"]
    assert keys.lookup(values, "robustness.toy.x.holds_fraction") == 0.7
    low, high = (
        keys.lookup(values, "robustness.toy.x.holds_fraction_low"),
        keys.lookup(values, "robustness.toy.x.holds_fraction_high"),
    )
    assert (low, high) == robustness.wilson_interval(7, 10)
    assert keys.lookup(values, "robustness.toy.x.flagged_claims") == ["> 3"]
    assert keys.lookup(values, "robustness.toy.y.flagged_claims") == ["< toy.x"]
    assert keys.lookup(values, "robustness.params.confidence") == robustness.CONFIDENCE
    # which seeds a share speaks of, to name them in the prose
    assert keys.lookup(values, "robustness.experiments.toy.first_seed") == 1
    assert keys.lookup(values, "robustness.experiments.toy.last_seed") == 10
    claim = next(c for c in report["claims"] if c["key"] == "toy.x")
    assert (claim["holds_fraction_low"], claim["holds_fraction_high"]) == (low, high)
    assert f"70.0% of 10 (95% interval {low:.1%} to {high:.1%})" in robustness_page.to_markdown(report)


def test_a_key_the_article_cites_only_through_the_sweep_or_plots_is_summarised_too():
    """robustness.toy.z.median in the prose, toy.w as a figure: neither
    printed itself, both reported (else bind would find no such key)."""
    text = (
        '{{< value robustness.toy.z.median >}} {{< value robustness.toy.rows_1.p95 >}}\n\n'
        '![w over the seeds](../figures/robustness-toy.w.svg)\n'
    )
    chunk = {
        "experiment": "toy",
        "script": "experiments/toy.py",
        "params": {},
        "versions": {},
        "seeds": [{"seed": s, "values": {"z": float(s), "w": -float(s), "rows": [0.0, 2.0 * s]}} for s in (1, 2, 3)],
    }
    values = merge(
        [
            (
                "results/toy.json",
                {
                    "experiment": "toy",
                    "script": "experiments/toy.py",
                    "params": {"seed": 0},
                    "values": {"z": 0.0, "w": 0.0, "rows": [0.0, 0.0]},
                },
            )
        ]
    )["values"]
    shortcodes = robustness.article_shortcodes("article/index.qmd", text)
    assert shortcodes["plotted"] == ["toy.w"]
    report = robustness.build(robustness.collect([("a.json", chunk)]), values, shortcodes, {"flag_share": 0.05})
    assert [r["key"] for r in report["printed"]] == ["toy.z", "toy.rows[1]", "toy.w"]
    assert report["values"]["toy.rows_1"]["p95"] == pytest.approx(np.percentile([2.0, 4.0, 6.0], 95))


def test_the_article_shows_one_value_over_the_seeds_as_a_figure(tmp_path):
    """figures/robustness-<key>.svg: every seed a dot, the article's seed
    marked; a key the sweep has no seeds of is refused, naming the file."""
    report = toy_report([("a.json", toy_chunk(list(range(1, 21))))])
    out = tmp_path / "figures/robustness-toy.x.svg"
    assert seed_figure.main([str(_write(tmp_path / "r.json", report)), "--figure", f"toy.x={out}"]) == 0
    svg = out.read_text()
    assert svg.count('id="line2d_') >= 3 and "seed 100 (the article" in svg and "the 22nd percentile" in svg
    assert seed_figure.seed_figures("article/index.qmd", "![a](../figures/robustness-toy.x.svg)\n") == {
        "figures/robustness-toy.x.svg": "toy.x"
    }
    with pytest.raises(ValueError, match=r"robustness-toy.nope.svg: toy.nope is not a value of a seeded"):
        seed_figure.write_figures(report, {"toy.nope": str(tmp_path / "figures/robustness-toy.nope.svg")})


def _write(path, document):
    path.write_text(json.dumps(document))
    return path


def test_the_summary_reads_the_articles_shortcodes_and_refuses_ones_the_plan_did_not_see(tmp_path):
    article = tmp_path / "index.qmd"
    article.write_text(ARTICLE)
    shortcodes = robustness.article_shortcodes(str(article), ARTICLE)
    digest = seed_keys.shortcodes_digest(shortcodes)
    assert len(digest) == 16 and robustness.read_shortcodes(str(article), digest) == shortcodes
    article.write_text(ARTICLE + '\nIt is {{< value example.x expect="> 0" >}}.\n')  # edited after the plan
    with pytest.raises(robustness.RobustnessError, match="changed after the build was planned; run the build"):
        robustness.read_shortcodes(str(article), digest)


def test_chunks_that_overlap_or_disagree_are_refused_naming_the_file():
    with pytest.raises(robustness.RobustnessError, match=r"b.json: seed 2 of toy is in two chunks"):
        robustness.collect([("a.json", toy_chunk([1, 2])), ("b.json", toy_chunk([2, 3]))])
    with pytest.raises(robustness.RobustnessError, match=r"c.json: not a sweep chunk"):
        robustness.collect([("c.json", {"experiment": "toy"})])


def test_the_reports_keys_are_values_the_article_can_bind():
    report = toy_report([("a.json", toy_chunk([1, 2, 3, 4, 5, 6]))])
    values = merge([("build/robustness.json", report)])["values"]
    assert keys.lookup(values, "robustness.toy.x.median") == 3.5
    assert keys.lookup(values, "robustness.toy.x.holds_fraction") == 0.5
    assert keys.lookup(values, "robustness.toy.x.failing_seeds") == [1, 2, 3]
    assert keys.lookup(values, "robustness.toy.y.holds_fraction") == 2 / 6
    assert keys.lookup(values, "robustness.sweep.failed_runs") == 0
    assert keys.lookup(values, "robustness.params.seeds") == 6
    # a key into a list is spelled with underscores, a plain dotted key
    assert robustness.bindable_key("example.causal.visible_per_row[2]") == "example.causal.visible_per_row_2"


def test_every_key_the_page_offers_to_bind_is_one_the_article_can_bind():
    """robustness.<key> itself is a group: the page offers its median (or,
    for a text, how many seeds differ) and names the sibling fields, each a
    value bind finds."""
    report = toy_report([("a.json", toy_chunk([1, 2, 3, 4, 5, 6]))])
    values = merge([("build/robustness.json", report)])["values"]
    offered = {r["key"]: robustness_page.bind_as(r) for r in report["printed"]}
    assert (
        offered["toy.x"][0] == "robustness.toy.x.median" and offered["toy.label"][0] == "robustness.toy.label.differs"
    )
    for key, siblings in offered.values():
        keys.lookup(values, key)
        for field in siblings.split(", "):
            keys.lookup(values, key.rsplit(".", 1)[0] + field)
    page = robustness_page.to_html(report).replace("<wbr>", "")  # a key may break at its dots
    markdown = robustness_page.to_markdown(report)
    assert all(key in page and key in markdown for key, _ in offered.values())


# ---- the config --------------------------------------------------------------------------

MODULE_SCHEMA = PROJECT_ROOT / "articlekit/workflow/schemas/schema.yaml"


@pytest.mark.parametrize(
    "section, message",
    [
        ("robustness: {seeds: 0}", r"robustness.seeds: 0 is less than the minimum of 1"),
        ("robustness: {seeds: 10, chunks: 2}", r"robustness.chunks: Additional properties are not allowed"),
        ("robustness: {seeds: 10, flag_share: 2}", r"robustness.flag_share: 2 is greater than the maximum of 1"),
    ],
)
def test_a_bad_robustness_section_is_refused_with_its_line(tmp_path, section, message):
    path = tmp_path / "config.yaml"
    path.write_text(f"strict: true\n{section}\n")
    with pytest.raises(ConfigError, match=f"{re.escape(str(path))}:2: {message}"):
        check_config(yaml.safe_load(path.read_text()), MODULE_SCHEMA, [path])


# ---- the workflow: a copy of the project ---------------------------------------------------

FAST = ["--configfile", "config/test.yaml", "config/sweep.yaml"]
# Two numpy experiments, three chunks of two seeds each: small, and chunked.
SWEEP = {
    "robustness": {
        "seeds": 6,
        "chunk": 2,
        "exclude": {
            name: "left out to keep the test small"
            for name in ("timing", "parity", "mask_convention", "errors", "multihead")
        },
    }
}
# example's run raises for a seed divisible by 3 (the article's seed, 20261012, is not)
FLAKY = '''

_run = run


def run(params):
    if params["seed"] % 3 == 0:
        raise FloatingPointError(f"seed {params['seed']} is divisible by 3")
    return _run(params)
'''


def snakemake(work, *args, check=True):
    """`snakemake ARGS` on the fast config, forked from Snakemake imported
    once (tests/snakemake_fork.py): its output, both streams, in .stdout."""
    proc = snakemake_fork.run(work, ["--cores", "2", *args, *FAST], copy_environment(work), timeout=900)
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-6000:]}")
    return proc


def job_counts(work, *args):
    """{rule: jobs} of a dry run's Job stats."""
    out = snakemake(work, "--dry-run", *args).stdout
    if "Job stats:" not in out:
        return {}
    table = out.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def write_sweep_config(work, section):
    (work / "config/sweep.yaml").write_text(yaml.safe_dump(section))


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The project with the test's sweep and a flaky example, unbuilt; never
    run in: `project` and `swept` copy it."""
    work = copy_project(tmp_path_factory.mktemp("robustness") / "project")
    write_sweep_config(work, SWEEP)
    with open(work / "experiments/example.py", "a", encoding="utf-8") as f:
        f.write(FLAKY)
    # the adapter must see the wrapped run(): move the entry point below it
    source = (work / "experiments/example.py").read_text()
    entry = 'if __name__ == "__main__":\n    run_experiment("example", run, plot)\n'
    (work / "experiments/example.py").write_text(source.replace(entry, "") + "\n\n" + entry)
    return work


@pytest.fixture
def project(prepared, tmp_path):
    """An unbuilt copy of this test's own, for the plans that count the
    sweep's jobs: in a copy a test had built the sweep in, no chunk is left to
    plan (a KeyError on 'robustness_chunk' under a random order)."""
    return Path(shutil.copytree(prepared, tmp_path / "project", symlinks=True))


@pytest.fixture(scope="module")
def swept(prepared, tmp_path_factory):
    """A copy the module's building tests share: each builds the sweep in it
    (`snakemake robustness`, nothing to do once one has) and leaves it built,
    its article and sweep config as they found them."""
    return Path(shutil.copytree(prepared, tmp_path_factory.mktemp("swept") / "project", symlinks=True))


@pytest.mark.slow
def test_each_chunk_is_a_job_and_ten_thousand_seeds_is_one_config_change(project):
    assert job_counts(project, "robustness")["robustness_chunk"] == 2 * 3
    write_sweep_config(project, {"robustness": {**SWEEP["robustness"], "seeds": 10_000, "chunk": 500}})
    try:
        assert job_counts(project, "robustness")["robustness_chunk"] == 2 * 20
    finally:
        write_sweep_config(project, SWEEP)


@pytest.mark.slow
def test_the_default_build_runs_the_sweep_only_when_the_article_binds_its_keys(project):
    assert job_counts(project)["robustness_chunk"] == 2 * 3
    article = project / "article/index.qmd"
    original = article.read_text()
    paragraphs = original.split("\n\n")
    try:
        # its keys and its figure of a value across the seeds (figures/robustness-<key>.svg)
        article.write_text("\n\n".join(p for p in paragraphs if "robustness." not in p and "robustness-" not in p))
        counts = job_counts(project)
        assert not {"robustness_chunk", "robustness_summary", "robustness_report"} & set(counts)
        assert counts["html"] == 1
    finally:
        article.write_text(original)


@pytest.mark.slow
def test_an_exclude_that_names_no_experiment_is_refused_naming_the_file(project):
    write_sweep_config(project, {"robustness": {"seeds": 2, "exclude": {"timings": "typo"}}})
    try:
        proc = snakemake(project, "--dry-run", "robustness", check=False)
    finally:
        write_sweep_config(project, SWEEP)
    assert proc.returncode != 0
    assert re.search(
        r"config/sweep.yaml:\d+: robustness.exclude names 'timings', which is not an experiment",
        proc.stderr + proc.stdout,
    )


@pytest.mark.slow
def test_a_killed_sweep_resumes_without_recomputing_finished_chunks_and_counts_failed_seeds(swept):
    snakemake(swept, "robustness")  # the experiments' own results, and a whole sweep
    whole = json.loads((swept / "build/robustness.json").read_text())
    chunks = sorted((swept / "results/robustness").glob("*/chunk-*.json"))
    assert len(chunks) == 6
    for chunk in chunks:
        chunk.unlink()

    # killed as SLURM's scancel or a CI timeout kills it, once a chunk's job
    # is done: with one core, when the next chunk's file appears
    env = copy_environment(swept)
    proc = popen(
        ["snakemake", "--cores", "1", "robustness", *FAST],
        cwd=swept,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline, written = time.monotonic() + 300, []
    while len(written) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended before writing two chunks"
        new = [p for p in (swept / "results/robustness").glob("*/chunk-*.json") if p not in written]
        written += sorted(new, key=lambda p: p.stat().st_mtime_ns)
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=120)
    finished = written[0]  # its job was done before the next one wrote anything
    done_at = finished.stat().st_mtime_ns

    rerun = snakemake(swept, "robustness", "--rerun-incomplete")
    assert finished.stat().st_mtime_ns == done_at  # not recomputed
    rerun_chunks = len(re.findall(r"rule robustness_chunk:", rerun.stdout + rerun.stderr))
    assert 0 < rerun_chunks < 6  # only what the killed sweep had not finished
    resumed = json.loads((swept / "build/robustness.json").read_text())
    assert resumed == whole

    # the seeds example raised for are counted, each with its error, and its claims judged on the rest
    example = next(x for x in resumed["experiments"] if x["experiment"] == "example")
    divisible = [s for s in sweep.sweep_seeds(20261012, 0, 6) if s % 3 == 0]
    assert [e["seed"] for e in example["failures"]] == divisible
    assert all(e["error"].startswith("FloatingPointError: seed") for e in example["failures"])
    assert resumed["values"]["sweep"]["failed_runs"] == len(divisible)
    assert resumed["values"]["sweep"]["runs"] == 12
    claim = next(c for c in resumed["claims"] if c["key"] == "example.causal.max_masked_weight")
    assert claim["ran"] == 6 - len(divisible) and claim["at_seed"] == HOLDS
    assert claim["held"] + claim["failed"] + claim["inconclusive"] == claim["ran"]
    assert FAILS not in {c["at_seed"] for c in resumed["claims"]}
    page = (swept / "build/robustness.html").read_text()
    assert f"{len(divisible)} failed" in page and "6 seeds derived" in page.replace("\n", " ")


@pytest.mark.slow
def test_a_prose_edit_reruns_no_part_of_the_sweep_and_a_new_claim_only_its_summary(swept):
    snakemake(swept, "robustness")
    article = swept / "article/index.qmd"
    original = article.read_text()
    try:
        article.write_text(original + "\nA closing sentence without numbers.\n")
        assert set(job_counts(swept, "robustness")) == {"robustness", "total"}
        article.write_text(original + '\nIt is {{< value example.fill_zero.max_masked_weight expect="> 0" >}}.\n')
        planned = job_counts(swept, "robustness")
        assert planned.get("robustness_summary") == 1 and "robustness_chunk" not in planned
        # why, in one short line: the param is a digest of the article's keys and claims, not
        # their list, which Snakemake printed whole, before and now (51,000 characters here)
        plan = snakemake(swept, "--dry-run", "robustness").stdout
        summary_job = plan[plan.index("rule robustness_summary:") :].split("\n\n", 1)[0]
        reason = next(line for line in summary_job.splitlines() if line.strip().startswith("reason:"))
        assert "Params have changed" in reason and len(reason) < 300, reason[:500]
        snakemake(swept, "robustness")
        claims = json.loads((swept / "build/robustness.json").read_text())["claims"]
        assert ["example.fill_zero.max_masked_weight", "> 0"] in [[c["key"], c["expect"]] for c in claims]
    finally:
        article.write_text(original)
