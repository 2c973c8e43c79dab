"""publishing: what articlekit knows about one article comes from its
config's `publishing:` section, checked once, with neutral defaults."""

import argparse
import json
from pathlib import Path

import pytest
import yaml

from articlekit.data.config import ConfigError, check_config
from articlekit.data.publishing import Publishing, PublishingError, add_argument, from_json, matches, parse
from tests.workspace import merged_config

ROOT = Path(__file__).resolve().parent.parent


def test_without_a_section_nothing_is_article_specific():
    for neutral in (parse(None), parse({}), from_json(None), from_json("")):
        assert neutral == Publishing()
        assert dict(neutral.libraries) == {"python": "Python"}
        assert neutral.release_label == () and neutral.volatile == () and neutral.machine == ()
        assert dict(neutral.listings) == {}
        assert not neutral.is_volatile("timing.main.speedup")
        assert (
            neutral.error_measures,
            neutral.single_precision,
            neutral.spread,
            neutral.per_build,
            neutral.where_run,
            neutral.built_at,
        ) == ((), (), (), (), (), None)
        for key in (
            "parity.sdpa.max_abs_diff",
            "parity.float32.sdpa.max_abs_diff",
            "timing.main.torch.samples_ms",
            "environment.build_date",
            "timing.hostname",
        ):
            assert not (
                neutral.is_error_measure(key)
                or neutral.is_single_precision(key)
                or neutral.is_spread(key)
                or neutral.is_per_build(key)
                or neutral.is_where_run(key)
            ), key


@pytest.mark.parametrize("config", ["config.yaml", "config/test.yaml"])
def test_the_shipped_configs_parse_into_this_articles_settings(config):
    section = merged_config(ROOT, ("config.yaml",) if config == "config.yaml" else ("config.yaml", config))[
        "publishing"
    ]
    article = from_json(json.dumps(section))
    assert list(article.libraries) == ["python", "numpy", "torch"]
    assert article.release_label == ("numpy", "torch")
    assert article.is_volatile("timing.main.speedup") and not article.is_volatile("parity.sdpa.max_abs_diff")
    assert article.listings["attention"].source == "experiments/attention.py"
    assert "softmax" in article.listings["attention"].functions
    assert article.is_error_measure("parity.sdpa.max_abs_diff") and article.is_error_measure(
        "example.row_sum_max_deviation"
    )
    assert article.is_error_measure("example.fill_minus_1e9.max_abs_diff_vs_inf")
    assert not article.is_error_measure("example.weights")
    assert article.is_single_precision("parity.float32.sdpa.max_abs_diff") and not article.is_single_precision(
        "parity.sdpa.max_abs_diff"
    )
    assert article.is_spread("timing.main.torch.samples_ms") and article.is_spread("timing.load.before")
    assert not article.is_spread("timing.main.torch.median_ms.estimate") and not article.is_spread(
        "timing.sweep.loop.median_ms"
    )
    assert article.is_per_build("environment.build_date") and not article.is_per_build("environment.cpu_model")
    assert article.is_where_run("timing.hostname") and article.built_at == "environment.build_time_utc"


def test_the_test_config_judges_as_the_article_does():
    """config/test.yaml builds the same article small: its rules are config.yaml's."""
    sections = [
        merged_config(ROOT, files)["publishing"] for files in (("config.yaml",), ("config.yaml", "config/test.yaml"))
    ]
    assert sections[0] == sections[1]


@pytest.mark.parametrize(
    "pattern, key, matched",
    [
        ("*max_err*", "fit.max_err", True),
        ("*max_err*", "fit.x.max_err_rel", True),
        ("bench.*.samples", "bench.a.samples", True),
        ("bench.*.samples", "bench.a.b.samples", True),  # * crosses dots
        ("bench.*.samples", "bench.a.samples_ms", False),  # the whole key must match
        ("bench.*.samples", "xbench.a.samples", False),
        ("a.b", "axb", False),  # a dot is a dot
        ("a+b[0]", "a+b[0]", True),  # nothing but * is special
        ("a+b[0]", "aab0", False),
        ("environment.date", "environment.date", True),  # no *: that key alone
        ("environment.date", "environment.date_utc", False),
    ],
)
def test_a_key_pattern_is_the_key_with_star_for_any_run_of_characters(pattern, key, matched):
    assert matches((pattern,), key) is matched
    assert parse({"spread": [pattern]}).is_spread(key) is matched


def test_versions_are_shown_by_their_display_names_in_the_configured_order():
    article = parse({"libraries": {"torch": "PyTorch", "python": "Python"}})
    assert (
        article.versions_text({"python": "3.11.7", "torch": "2.13.0", "numpy": "2.4.6"})
        == "PyTorch 2.13.0, Python 3.11.7"
    )
    assert article.versions_text({"python": None}) == ""


def test_a_release_label_names_the_configured_libraries_and_a_missing_one_as_none():
    article = parse(
        {"libraries": {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"}, "release_label": ["numpy", "torch"]}
    )
    assert article.label_for({"numpy": "2.4.6", "torch": "2.13.0+cpu"}) == "numpy-2.4.6_torch-2.13.0+cpu"
    assert article.label_for({"numpy": "2.4.6", "torch": None}) == "numpy-2.4.6_torch-none"


def test_the_section_cannot_be_changed_once_parsed():
    article = parse({"libraries": {"python": "Python"}})
    with pytest.raises(AttributeError):
        article.volatile = ("timing.",)
    with pytest.raises(TypeError):
        article.libraries["numpy"] = "NumPy"


@pytest.mark.parametrize(
    "section, says",
    [
        ({"librarys": {}}, "unknown key(s) librarys; the keys are libraries, release_label"),
        ({"libraries": ["numpy"]}, "publishing.libraries: expected a mapping of library to display name"),
        ({"libraries": {"numpy": ""}}, "publishing.libraries.numpy: expected the name readers know it by"),
        ({"release_label": ["numpy"]}, "publishing.release_label: numpy not in publishing.libraries"),
        ({"volatile": "timing."}, "publishing.volatile: expected a list of key prefixes"),
        ({"machine": ["a", "a"]}, "publishing.machine: a listed more than once"),
        ({"listings": {"code": {"source": "code.py"}}}, "publishing.listings.code: expected {source: PATH, functions"),
        (
            {"listings": {"code": {"source": "code.txt", "functions": ["f"]}}},
            "publishing.listings.code.source: expected the path of a Python file",
        ),
        (
            {"listings": {"code": {"source": "code.py", "functions": []}}},
            "publishing.listings.code.functions: name at least one function",
        ),
        ({"listings": {"my-code": {"source": "code.py", "functions": ["f"]}}}, "'my-code' cannot name a listing"),
        ({"error_measures": "*_error"}, "publishing.error_measures: expected a list of key patterns (* for any run"),
        ({"single_precision": [3]}, "publishing.single_precision: expected a list of key patterns"),
        ({"spread": ["*"]}, "publishing.spread: '*' would match every key; name the keys it is for"),
        ({"per_build": ["a.date", "a.date"]}, "publishing.per_build: a.date listed more than once"),
        ({"where_run": ["*.host "]}, "publishing.where_run: '*.host ' starts or ends with a space"),
        ({"built_at": ["environment.time"]}, "publishing.built_at: expected one key of values.json"),
        ({"built_at": "environment.*"}, "publishing.built_at: expected one key of values.json"),
    ],
)
def test_a_bad_section_names_the_key_and_the_fix(section, says):
    with pytest.raises(PublishingError) as caught:
        parse(section)
    assert says in str(caught.value)


def test_the_command_line_argument_refuses_a_bad_section_with_its_message(capsys):
    parser = argparse.ArgumentParser(prog="cmd")
    add_argument(parser)
    assert parser.parse_args([]).publishing == Publishing()
    assert parser.parse_args(["--publishing", '{"volatile": ["timing."]}']).publishing.volatile == ("timing.",)
    for bad, says in (
        ("{not json", "--publishing: not JSON"),
        ('{"release_label": ["torch"]}', "torch not in publishing.libraries"),
    ):
        with pytest.raises(SystemExit) as stopped:
            parser.parse_args(["--publishing", bad])
        assert stopped.value.code == 2 and says in capsys.readouterr().err


def test_the_modules_schema_places_a_bad_publishing_key_at_its_line(tmp_path):
    """The config's first check (articlekit/workflow/schemas/schema.yaml) knows every
    publishing key, so a slip is named with its file and line before any job runs."""
    config_file = tmp_path / "config.yaml"
    config_file.write_text(
        "experiments: {a: {}}\npublishing:\n  volatile: [bench.]\n  error_measure: [\"*_err\"]\n"
        "  spread: \"bench.*.q1\"\n",
        encoding="utf-8",
    )
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    with pytest.raises(ConfigError) as caught:
        check_config(config, ROOT / "articlekit" / "workflow" / "schemas" / "schema.yaml", [config_file])
    said = str(caught.value)
    assert "config.yaml:4: publishing.error_measure:" in said
    assert "config.yaml:5: publishing.spread: 'bench.*.q1' is not of type 'array'" in said
