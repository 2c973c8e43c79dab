"""The plan is one frozen object, built from the config by plain Python
(articlekit/workflow/plan.py), and what must run at plan time runs from it
(articlekit/workflow/plantime.py).

These tests build plans from dicts, in a folder of their own, with a
stand-in for the machine: no Snakemake, no subprocess, no file written, no
exit hook. What a plan says is what the rules read: the experiments with
their params, the paths, the renderer and its versions, the release label,
the seed sweep's chunks and the version matrix's cells.
"""

import atexit
import dataclasses
import json
import subprocess
import sys
import textwrap

import pytest
import yaml

from articlekit.render import formats
from articlekit.workflow import plan as plans
from articlekit.workflow import plantime
from articlekit.workflow.plan import PlanError, build


class Machine:
    """What plan.build asks the machine, answered from a dict."""

    def __init__(self, versions=None, renderer="pandoc", renderers=None):
        self.versions = {"numpy": "2.4.6", "torch": "2.13.0", "typst": "0.13.1", **(versions or {})}
        self.chosen = renderer
        self.renderers = {"pandoc": "3.8.2.1", "quarto": "1.9.38", **(renderers or {})}

    def library_version(self, library):
        return self.versions.get(library)

    def renderer(self, choice):
        return self.chosen if choice == "auto" else choice

    def renderer_version(self, name):
        return self.renderers.get(name)


def config(**more):
    base = {
        "strict": True,
        "experiments": {
            "scaling": {"figures": {"sweep": "figures/scaling-sweep.svg"}, "libraries": ["numpy"]},
            "timing": {"libraries": ["numpy", "torch"], "threads": "all", "runs": 3, "mem_mb": 1000, "runtime": 15},
            "environment": None,
        },
        "publishing": {
            "libraries": {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"},
            "release_label": ["numpy", "torch"],
        },
        "scaling": {"d_k": [16], "seed": 7},
        "timing": {"T": 32},
    }
    return {**base, **more}


@pytest.fixture
def article(tmp_path, monkeypatch):
    """An article's folder, the working folder, holding only its prose."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "article").mkdir()
    (tmp_path / "article/index.qmd").write_text("Some prose, with no value bound.\n", encoding="utf-8")
    return tmp_path


def write_config(folder, text):
    path = folder / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# ---- plain Python, and nothing else -----------------------------------------------


def test_a_plan_is_built_without_snakemake_a_subprocess_a_write_or_an_exit_hook(article, monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError(f"the plan's build did more than read: {args[:1]}")

    monkeypatch.setattr(subprocess, "run", refused)
    monkeypatch.setattr(subprocess, "Popen", refused)
    monkeypatch.setattr(atexit, "register", refused)
    before = sorted(str(p) for p in article.rglob("*"))
    for name in [m for m in sys.modules if m == "snakemake" or m.startswith("snakemake.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "snakemake", None)  # an import of it fails

    plan = build(
        config(
            robustness={"seeds": 10},
            matrix={"environments": [{"label": "old", "pins": ["numpy==1.26.4", "torch==2.2.2"]}], "exclude": []},
        ),
        [],
        Machine(),
    )

    assert plan.experiment_names == ("scaling", "timing", "environment")
    assert sorted(str(p) for p in article.rglob("*")) == before


def test_a_plan_is_frozen_and_keeps_its_own_copy_of_the_config(article):
    given = config()
    plan = build(given, [], Machine())
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.article = "elsewhere.qmd"
    given["scaling"]["seed"] = 8
    given["experiments"]["new"] = {}
    assert json.loads(plan.params_json(plan.experiment("scaling"))) == {"d_k": [16], "seed": 7}
    assert "new" not in plan.experiment_names


# ---- experiments --------------------------------------------------------------------


def test_each_experiment_keeps_its_entry_its_params_and_the_configs_order(article):
    plan = build(config(), [], Machine())
    scaling, timing, environment = plan.experiments
    assert (scaling.name, scaling.json, scaling.figures) == (
        "scaling",
        "results/scaling.json",
        {"sweep": "figures/scaling-sweep.svg"},
    )
    assert plan.params_json(scaling) == '{"d_k": [16], "seed": 7}'
    assert plan.params_json(environment) == "{}"
    assert timing.takes_every_core and timing.repeated
    assert list(timing.run_jsons) == [f"results/runs/timing/run-{i}.json" for i in (1, 2, 3)]
    assert plan.figure_arguments(scaling) == "--figure sweep=figures/scaling-sweep.svg"
    assert plan.library_arguments(timing) == "--library numpy --library torch"
    assert plan.experiment_rule_names == (
        "scaling",
        "timing",
        "environment",
        "scaling_combine",
        "timing_combine",
        "environment_combine",
    )


def test_the_installed_versions_enter_the_rules_and_name_the_release(article):
    plan = build(config(), [], Machine())
    assert plan.library_versions(plan.experiment("timing")) == {"numpy": "2.4.6", "torch": "2.13.0"}
    assert plan.library_versions(plan.experiment("environment")) == {}
    assert plan.release_label == "numpy-2.4.6_torch-2.13.0"
    assert build(config(release_label="first"), [], Machine()).release_label == "first"


def test_a_library_not_installed_is_said_with_what_to_install_and_what_still_builds(article):
    plan = build(config(), [], Machine(versions={"torch": None}))
    assert plan.library_versions(plan.experiment("timing")) == {"numpy": "2.4.6", "torch": "not installed"}
    said = plan.missing_library(plan.experiment("timing"))
    assert said.startswith("PyTorch is not installed, and the experiments timing import it")
    assert "`snakemake --cores 2 results/scaling.json`" in said
    assert plan.missing_library(plan.experiment("scaling")) is None
    assert list(plan.missing_libraries) == ["torch"]


# ---- the article, its renderer and the paths --------------------------------------------


def test_the_renderer_auto_stands_for_and_the_versions_the_render_rules_take(article):
    quarto = build(config(), [], Machine(renderer="quarto")).renderer
    assert quarto == plans.Renderer(name="quarto", version="1.9.38", pandoc_version="3.8.2.1", typst_version="0.13.1")
    pandoc = build(config(renderer="pandoc"), [], Machine(renderer="quarto")).renderer
    assert (pandoc.name, pandoc.version, pandoc.pandoc_version) == ("pandoc", "3.8.2.1", "3.8.2.1")
    missing = build(config(), [], Machine(renderers={"pandoc": None}, versions={"typst": None})).renderer
    assert (missing.version, missing.typst_version) == ("not installed", "not installed")


def test_one_rule_per_format_the_config_chooses_each_with_the_versions_of_what_writes_it(article):
    default = build(config(), [], Machine(renderer="quarto"))
    assert [(f.name, f.output, f.quarto) for f in default.formats] == [
        (name, formats.get(name).output, formats.get(name).quarto) for name in formats.DEFAULT
    ]
    html, pdf = (next(f for f in default.formats if f.name == name) for name in ("html", "pdf"))
    assert default.format_tools(html) == "quarto 1.9.38"
    assert default.format_tools(pdf) == "pandoc 3.8.2.1, typst 0.13.1"
    assert pdf.caption == str(plans.RULES_DIR / "report/article-pdf.rst") and html.caption is None
    chosen = build(config(publishing={**config()["publishing"], "formats": ["gfm"]}), [], Machine())
    assert [f.name for f in chosen.formats] == ["gfm"]
    assert chosen.format_tools(chosen.formats[0]) == "pandoc 3.8.2.1"  # renderer pandoc: Pandoc writes it


def test_a_format_with_no_module_is_refused_at_its_config_line(article):
    path = write_config(
        article,
        """\
        publishing:
          formats: [html, odt]
        """,
    )
    with pytest.raises(PlanError) as refused:
        build(yaml.safe_load(path.read_text(encoding="utf-8")), [str(path)], Machine())
    assert str(refused.value).startswith("config.yaml:2: publishing.formats: no format 'odt'; the formats are ")
    assert ", ".join(formats.names()) in str(refused.value)


def test_the_paths_every_rule_agrees_on_and_the_articles_own_files(article):
    (article / "article/style.css").write_text("p {}\n", encoding="utf-8")
    (article / "article/_extensions/mine").mkdir(parents=True)
    (article / "article/_extensions/mine/mine.lua").write_text("-- a filter\n", encoding="utf-8")
    (article / "environment.yml").write_text("name: x\n", encoding="utf-8")
    plan = build(config(), [], Machine())
    assert (plan.article, plan.article_dir, plan.baseline) == (
        "article/index.qmd",
        "article",
        "baseline/published.yaml",
    )
    assert (plan.values, plan.bindings, plan.ledger) == (
        "build/values.json",
        "build/bindings.json",
        ".snakemake/articlekit/ledger.json",
    )
    assert plan.article_style == ("article/style.css",)
    assert plan.extension == ("article/_extensions/mine/mine.lua",)
    assert plan.conda_env == str(article / "environment.yml")
    assert plan.report_front_page == str(plans.FOLDER / "rules/report/workflow.rst")
    assert plan.results == ("results/scaling.json", "results/timing.json", "results/environment.json")


def test_listings_add_their_artifact_and_hand_over_only_their_own_section(article):
    publishing = {
        **config()["publishing"],
        "listings": {"attention": {"source": "experiments/attention.py", "functions": ["attention"]}},
    }
    plan = build(config(publishing=publishing), [], Machine())
    assert plan.listing_sources == ("experiments/attention.py",)
    assert plan.results[-1] == "results/listings.json"
    assert json.loads(plan.listings_publishing_json) == {"listings": publishing["listings"]}
    assert json.loads(plan.publishing_json) == publishing


def test_an_article_that_does_not_read_as_text_is_refused_at_its_line(article):
    (article / "article/index.qmd").write_bytes(b"Fine.\nNot \xff fine.\n")
    with pytest.raises(PlanError, match=r"article/index.qmd:2"):
        build(config(), [], Machine())


# ---- the seed sweep ----------------------------------------------------------------


def test_the_sweep_runs_the_seeded_experiments_in_chunks_of_its_seeds(article):
    plan = build(config(robustness={"seeds": 120, "chunk": 50}), [], Machine())
    sweep = plan.sweep
    assert sweep.experiments == ("scaling",)  # the one whose params have an integer seed
    assert sweep.chunk_ranges == ((0, 50), (50, 50), (100, 20))
    assert sweep.chunks == tuple(f"results/robustness/scaling/chunk-{i}.json" for i in range(3))
    assert sweep.seed_arguments("2") == "--first 100 --count 20"
    assert sweep.wildcard == "scaling"
    assert json.loads(sweep.settings_json)["unseeded"] == ["timing", "environment"]
    assert not plan.cites_robustness and plan.robustness_values == []
    assert build(config(), [], Machine()).sweep is None


def test_an_article_that_binds_the_sweep_gets_its_outputs_its_figures_and_its_claims(article):
    (article / "article/index.qmd").write_text(
        "Across seeds {{< value robustness.scaling.x.median >}}.\n\n![spread](../figures/robustness-scaling.x.svg)\n",
        encoding="utf-8",
    )
    plan = build(config(robustness={"seeds": 10}), [], Machine())
    assert plan.cites_robustness and plan.robustness_values == ["build/robustness.json"]
    assert dict(plan.sweep.figures) == {"figures/robustness-scaling.x.svg": "scaling.x"}
    assert plan.sweep.figure_arguments == "--figure scaling.x=figures/robustness-scaling.x.svg"
    assert json.loads(plan.sweep.shortcodes_json)["printed"] == ["robustness.scaling.x.median"]
    assert plan.sweep.outputs[-4:] == [
        "build/robustness.json",
        "build/robustness.md",
        "build/robustness.html",
        "figures/robustness-scaling.x.svg",
    ]
    with pytest.raises(PlanError, match="binds robustness.* keys, but the config has no robustness: section"):
        build(config(), [], Machine())


def test_an_article_whose_shortcodes_do_not_parse_stops_the_sweeps_summary_at_its_line(article):
    """The summary may be the first job to run, before lint and bind: it
    says what they would, at the article's line."""
    (article / "article/index.qmd").write_text(
        "Across seeds {{< value robustness.scaling.x.median >}}.\n\nBroken {{< value a.b\n", encoding="utf-8"
    )
    unparsed = json.loads(build(config(robustness={"seeds": 10}), [], Machine()).sweep.shortcodes_json)["unparsed"]
    assert unparsed.startswith("article/index.qmd:3: shortcode '{{< value a.b' is never closed")


def test_a_sweep_that_names_no_experiment_is_refused_at_its_line(article):
    path = write_config(
        article,
        """\
        experiments:
          scaling: {}
        robustness:
          seeds: 10
          exclude:
            nothing: "no such experiment"
        scaling: {seed: 7}
        """,
    )
    given = yaml.safe_load(path.read_text(encoding="utf-8"))
    with pytest.raises(PlanError, match=r"config.yaml:6: robustness.exclude names 'nothing'"):
        build(given, [path], Machine())


# ---- the version matrix ----------------------------------------------------------------


def test_the_matrix_is_each_experiment_not_excluded_in_each_environment(article):
    path = write_config(
        article,
        """\
        matrix:
          environments:
            - {label: old, pins: ["numpy==1.26.4", "torch==2.2.2"], python: "3.11"}
            - {label: new, pins: ["numpy==2.4.6", "torch==2.13.0"]}
          exclude: [environment]
        """,
    )
    matrix = {
        "environments": [
            {"label": "old", "pins": ["numpy==1.26.4", "torch==2.2.2"], "python": "3.11"},
            {"label": "new", "pins": ["numpy==2.4.6", "torch==2.13.0"]},
        ],
        "exclude": ["environment"],
    }
    grid = build(config(matrix=matrix), [path], Machine()).matrix
    assert grid.labels == ("old", "new")
    assert grid.cells == (("old", "scaling"), ("old", "timing"), ("new", "scaling"), ("new", "timing"))
    assert grid.shared == ("results/environment.json",)
    assert grid.locks == ("results/matrix/old/requirements.lock", "results/matrix/new/requirements.lock")
    assert grid.entry_arguments("old") == "--pin numpy==1.26.4 --pin torch==2.2.2 --python 3.11"
    assert grid.entry_arguments("new") == "--pin numpy==2.4.6 --pin torch==2.13.0"
    assert grid.python_where_argument("old") == "--where 'config.yaml:3: matrix.environments[0].python'"
    assert grid.python_where_argument("new") == ""


def test_a_matrix_the_schema_cannot_judge_is_refused_with_the_fix(article):
    matrix = {"environments": [{"label": "old", "pins": ["numpy==1.26.4"]}], "exclude": []}
    with pytest.raises(PlanError, match=r"pins no torch: add e.g. 'torch==<version>'"):
        build(config(matrix=matrix), [], Machine())


# ---- what runs at plan time, from the plan ---------------------------------------------


def test_a_footprint_larger_than_the_entry_declares_is_refused_before_any_job(article):
    (article / "experiments").mkdir()
    (article / "experiments/big.py").write_text(
        textwrap.dedent("""\
        def footprint(p):
            return {"bytes": {"n": 8 * p["n"]}, "seconds": {"n": 0}}
        """),
        encoding="utf-8",
    )
    plan = build({"experiments": {"big": {"mem_mb": 100}}, "big": {"n": 10**12}}, [], Machine())
    with pytest.raises(PlanError, match=r"big.n = 1000000000000: the big experiment would hold an estimated 8 TB"):
        plantime.check_footprints(plan)
    plantime.check_footprints(build({"experiments": {"big": {"mem_mb": 100}}, "big": {"n": 10}}, [], Machine()))


def test_a_footprint_check_that_passed_is_remembered_until_the_source_or_an_entry_changes(article, tmp_path):
    from articlekit.experiment import footprint
    from articlekit.workflow import codegraph
    from articlekit.workflow.plancache import PlanMemory

    (article / "experiments").mkdir()
    source = article / "experiments/big.py"
    source.write_text('def footprint(p):\n    return {"bytes": {"n": 8 * p["n"]}, "seconds": {"n": 0}}\n')
    checked = []
    real = footprint.check_plan

    def counted(name, *args, **kwargs):
        checked.append(name)
        return real(name, *args, **kwargs)

    footprint.check_plan = counted
    try:
        memory = PlanMemory(tmp_path / "plan.json")
        small = build({"experiments": {"big": {"mem_mb": 100}}, "big": {"n": 10}}, [], Machine())
        plantime.check_footprints(small, memory)
        plantime.check_footprints(small, memory)
        assert checked == ["big"]  # the second plan recalled the first's pass
        # a larger entry is checked again, and refused
        huge = build({"experiments": {"big": {"mem_mb": 100}}, "big": {"n": 10**12}}, [], Machine())
        with pytest.raises(PlanError, match="8 TB"):
            plantime.check_footprints(huge, memory)
        # so is an edited source, for the same entry that passed
        source.write_text(source.read_text().replace("8 * p", "8 * 10**12 * p"))
        codegraph.file_digest.cache_clear()  # the next plan is a new process: it reads the file anew
        with pytest.raises(PlanError, match="80 TB"):
            plantime.check_footprints(small, memory)
        assert checked == ["big", "big", "big"]
    finally:
        footprint.check_plan = real


def test_a_checkout_that_cannot_be_written_is_said_in_a_sentence(article, monkeypatch):
    plantime.check_writable(".")

    def read_only(dir):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(plantime.tempfile, "TemporaryFile", read_only)
    with pytest.raises(
        PlanError, match=f"{article} is not writable \\(Permission denied\\).*cp -r . /some/writable/folder"
    ):
        plantime.check_writable(".")


@pytest.mark.parametrize("name", ["draft {2}", "v}", "{b"])
def test_a_project_path_with_a_brace_is_said_in_a_sentence_before_snakemake_reads_it(tmp_path, monkeypatch, name):
    """Snakemake takes a brace in the project's path for a wildcard, and
    fails on it with a traceback ("The name '2' is unknown", "bad
    character in group name"): the plan stops first, naming the path."""
    folder = tmp_path / name / "my-article"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    with pytest.raises(PlanError, match="the project's path holds a brace.*Rename the folder") as refused:
        plantime.check_folder_name(".")
    assert str(refused.value).startswith(f"{folder}: ")


def test_any_other_character_in_the_project_path_passes(tmp_path, monkeypatch):
    folder = tmp_path / "Über räume [a] $x$ %20 'q' \"d\" #1 -_v2_ --it's ..." / "my-article"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    plantime.check_folder_name(".")


def test_the_config_check_names_every_violation_and_is_remembered_when_it_passed(article):
    from articlekit.workflow.plancache import PlanMemory

    path = write_config(
        article,
        """\
        experiments:
          scaling: {}
        bogus: 1
        """,
    )
    memory = PlanMemory(article / "memory.json")
    given = {"experiments": {"scaling": {}}, "bogus": 1}
    with pytest.raises(PlanError, match=r"config.yaml:3: bogus"):
        plantime.check_config(given, [str(path)], "Snakefile", memory)
    assert memory.results == {}
    plantime.check_config({"experiments": {"scaling": {}}}, [str(path)], "Snakefile", memory)
    assert len(memory.results) == 1


def test_the_command_lines_strict_and_versions_are_read_before_the_schemas_see_the_config():
    checked, overrides = plantime.normalised({"strict": "false", "versions": {"torch": 9.9}, "x": {}})
    assert checked == {"strict": False, "x": {}} and overrides == {"torch": "9.9"}
    with pytest.raises(PlanError, match="write a mapping of library to version"):
        plantime.normalised({"versions": "9.9"})


def test_the_machine_is_asked_only_through_this_machine(monkeypatch):
    from articlekit.render import renderers

    monkeypatch.setattr(renderers, "version", lambda name: f"{name} 1.0")
    machine = plantime.ThisMachine({"torch": "9.9"})
    assert machine.library_version("torch") == "9.9"
    assert machine.library_version("no-such-distribution-here") is None
    assert machine.renderer("pandoc") == "pandoc" and machine.renderer_version("quarto") == "quarto 1.0"
    with pytest.raises(PlanError, match="expected one of auto, quarto, pandoc"):
        machine.renderer("word")


def test_the_plan_is_built_once_per_invocation_by_the_modules_common_rules():
    """One build() call, in rules/common.smk, before any rule: every rule reads that PLAN."""
    sources = {
        path.name: path.read_text(encoding="utf-8")
        for path in [plans.FOLDER / "Snakefile", *sorted(plans.RULES_DIR.glob("*.smk"))]
    }
    calls = {name: text.count("plans.build(") for name, text in sources.items()}
    assert calls == {name: (1 if name == "common.smk" else 0) for name in sources}
    assert sources["Snakefile"].index('include: "rules/common.smk"') < sources["Snakefile"].index("rule all")
