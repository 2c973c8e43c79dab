"""What the workflow module reads from the config, decided in one place
(articlekit/workflow/settings.py), checked without running Snakemake."""

import importlib.metadata
import platform
from pathlib import Path

import pytest

from articlekit.data.config import check_config
from articlekit.data.publishing import Publishing, parse
from articlekit.workflow import FOLDER, settings, snakefile
from tests.workspace import PROJECT_ROOT
from tests.workspace import merged_config

CONFIG = {
    "strict": True,
    "experiments": {
        "scaling": {"figures": {"sweep": "figures/scaling-sweep.svg"}, "libraries": ["numpy"]},
        "timing": {"libraries": ["numpy", "torch"], "threads": "all", "mem_mb": 1000, "runtime": 15},
        "environment": None,
    },
    "publishing": {
        "libraries": {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"},
        "release_label": ["numpy", "torch"],
    },
    "scaling": {"d_k": [16], "seed": 7},
    "timing": {"T": 32},
}


PUBLISHING = parse(CONFIG["publishing"])


def by_name(config=CONFIG):
    return {e.name: e for e in settings.experiments(config)}


def test_the_module_is_the_snakefile_above_its_rules_and_schemas():
    assert Path(snakefile()) == FOLDER / "Snakefile"
    assert {"common.smk", "experiments.smk", "article.smk", "audit.smk", "matrix.smk"} <= {
        p.name for p in (FOLDER / "rules").glob("*.smk")
    }
    assert (FOLDER / "schemas" / "schema.yaml").is_file()
    assert not list(FOLDER.glob("*.smk")) and not list(FOLDER.glob("*.yaml"))


def test_an_entry_gets_defaults_for_what_it_leaves_out():
    environment = by_name()["environment"]
    assert (environment.figures, environment.libraries, environment.threads) == ({}, (), 1)
    assert (environment.mem_mb, environment.runtime) == (settings.DEFAULT_MEM_MB, settings.DEFAULT_RUNTIME_MIN)
    assert environment.json == "results/environment.json"


def test_entries_keep_the_configs_order():
    assert list(by_name()) == ["scaling", "timing", "environment"]


def test_params_are_the_experiments_section_as_plain_data():
    # plain data, never a function of threads: Snakemake leaves such a
    # "derived" params function out of its rerun trigger
    experiments = by_name()
    assert experiments["scaling"].params(CONFIG) == {"d_k": [16], "seed": 7}
    assert experiments["timing"].params(CONFIG) == {"T": 32}
    assert experiments["environment"].params(CONFIG) == {}


def test_an_entry_with_runs_is_that_many_artifacts_combined_into_its_own():
    config = {
        **CONFIG,
        "experiments": {**CONFIG["experiments"], "timing": {**CONFIG["experiments"]["timing"], "runs": 3}},
    }
    timing, scaling = by_name(config)["timing"], by_name(config)["scaling"]
    assert timing.repeated and not scaling.repeated and scaling.runs == 1
    assert timing.run_jsons == [f"results/runs/timing/run-{i}.json" for i in (1, 2, 3)]
    assert timing.run_pattern == "results/runs/timing/run-{run}.json"
    assert timing.json == "results/timing.json"  # what everything downstream reads, as before
    assert timing.params(config) == {"T": 32}  # the runs share the experiment's params: an edit reruns them all


def test_only_every_core_jobs_learn_their_count_and_apart_from_the_params():
    experiments = by_name()
    assert experiments["timing"].threads_argument(4) == "--threads 4"
    assert experiments["scaling"].threads_argument(1) == ""


def test_every_job_is_told_the_limits_it_was_given_to_check_its_sizes_against():
    from types import SimpleNamespace

    resources = SimpleNamespace(mem_mb=2000, runtime=30)  # what a profile may set instead of the entry's
    assert by_name()["scaling"].limits_argument(resources) == "--mem-mb 2000 --runtime 30"


def test_recorded_libraries_are_publishings_then_the_entrys_own_without_python():
    config = {**CONFIG, "experiments": {"fit": {"libraries": ["scipy", "numpy"]}}}
    assert settings.recorded_libraries(PUBLISHING, by_name(config)["fit"]) == ["numpy", "torch", "scipy"]
    assert settings.recorded_libraries(Publishing(), by_name(config)["fit"]) == ["scipy", "numpy"]


def test_a_version_override_stands_in_for_the_installed_one():
    overrides = settings.version_overrides({"versions": {"torch": 9.9, "numpy": "3.0"}})
    assert overrides == {"torch": "9.9", "numpy": "3.0"}
    versions = settings.installed_versions(["numpy", "torch", "no-such-library"], overrides)
    assert versions == {"numpy": "3.0", "torch": "9.9", "no-such-library": None}
    assert settings.installed_versions(["numpy"]) == {"numpy": importlib.metadata.version("numpy")}


@pytest.mark.parametrize("given", [["torch"], "9.9", {"torch": [1]}])
def test_a_malformed_override_says_how_to_write_it(given):
    with pytest.raises(ValueError, match=r"write a mapping of library to version, e.g. --config versions="):
        settings.version_overrides({"versions": given})


def test_the_auto_release_label_names_the_publishing_libraries_and_their_versions():
    versions = {"numpy": "2.4.6", "torch": None}
    assert settings.release_label(CONFIG, PUBLISHING, versions) == "numpy-2.4.6_torch-none"
    assert settings.release_label({**CONFIG, "release_label": "first-edition"}, PUBLISHING, versions) == "first-edition"
    assert settings.release_label({}, Publishing(), {}) == f"python-{platform.python_version()}"


@pytest.mark.parametrize("given, read", [("false", False), ("True", True), (True, True), (1, 1)])
def test_strict_from_the_command_line_is_read_as_yaml_would(given, read):
    # 1 stays 1: the schema then refuses it, naming the key
    assert settings.strict({"strict": given}) == read


def test_listing_sources_come_from_publishing():
    publishing = parse({"listings": {"attention": {"source": "experiments/attention.py", "functions": ["f"]}}})
    assert settings.listing_sources(publishing) == ["experiments/attention.py"]
    assert settings.listing_sources(Publishing()) == []


def test_the_shipped_configurations_match_the_modules_schema():
    for name in ("config.yaml", "config/test.yaml"):
        config = merged_config(PROJECT_ROOT, ("config.yaml",) if name == "config.yaml" else ("config.yaml", name))
        check_config(config, FOLDER / "schemas" / "schema.yaml", [PROJECT_ROOT / name])


@pytest.mark.parametrize(
    "entry, complaint",
    [
        ({"threads": "many"}, "experiments.fit.threads"),
        ({"figures": {"json": "figures/x.svg"}}, "experiments.fit.figures"),
        ({"figures": {"plot": "figures/x.png"}}, "does not match"),
        ({"library": ["numpy"]}, "'library' was unexpected"),
        ({"runs": 0}, "experiments.fit.runs"),
        ({"runs": "five"}, "experiments.fit.runs"),
    ],
)
def test_a_bad_experiment_entry_is_named(entry, complaint, tmp_path):
    config = {"experiments": {"fit": entry}}
    with pytest.raises(ValueError, match=complaint):
        check_config(config, FOLDER / "schemas" / "schema.yaml")


def test_a_missing_library_is_named_with_what_to_install_and_what_still_builds(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an article without requirements.txt or environment.yml
    message = settings.missing_library(CONFIG, PUBLISHING, "torch")
    assert message == (
        "PyTorch is not installed, and the experiments timing import it (their libraries: in "
        "config experiments:). Install it with `pip install torch`. The experiments that do "
        "without it still build, e.g. `snakemake --cores 2 results/scaling.json`."
    )
    (tmp_path / "requirements.txt").write_text("torch\n")
    assert "Install it with `pip install -r requirements.txt`." in settings.missing_library(CONFIG, PUBLISHING, "torch")
