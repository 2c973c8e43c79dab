"""An article's parameters get their types checked with no schema too
(articlekit.data.config.check_article_config): each experiment's section
that config/schema.yaml does not describe is held to the types config.yaml
gives its values, and a `seed` to what a seed is, before any job, at the
line of the value. End to end, in a skeleton, in tests/test_author_mistakes.py."""

import pytest
import yaml

from articlekit.data.config import ConfigError, check_article_config, inferred_schema


def test_the_types_of_a_section_are_those_its_values_have():
    assert inferred_schema({"n": 3, "x": 0.5, "name": "a", "on": True, "sizes": [1, 2], "mixed": [1, 2.5]}) == {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "name": {"type": "string"},
            "on": {"type": "boolean"},
            "sizes": {"type": "array", "items": {"type": "integer"}},
            "mixed": {"type": "array", "items": {"type": "number"}},
        },
    }


@pytest.fixture
def article(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config").mkdir()
    return tmp_path


def checked(article, text, *overrides, schema=None):
    """check_article_config on config.yaml (text) and each override file, merged as Snakemake merges them."""
    (article / "config.yaml").write_text(text)
    if schema is not None:
        (article / "config/schema.yaml").write_text(schema)
    config, files = yaml.safe_load(text), ["config.yaml"]
    for number, override in enumerate(overrides):
        path = f"config/test{number}.yaml"
        (article / path).write_text(override)
        for section, values in yaml.safe_load(override).items():
            config.setdefault(section, {}).update(values)
        files = [path, *files, path]  # the workflow's order: --configfile, the Snakefile's, --configfile again
    check_article_config(config, "config/schema.yaml", files, sections=["darts"])


CONFIG = "experiments:\n  darts: {}\n\ndarts:\n  sizes: [10, 100]\n  seed: 2026\n  rounds: 9\n"


def test_an_override_of_another_type_is_refused_at_its_line_with_the_type_meant(article):
    with pytest.raises(ConfigError) as caught:
        checked(article, CONFIG, "darts:\n  rounds: nine\n")
    assert str(caught.value) == (
        "the configuration does not match the types config.yaml gives, a seed a whole number (darts: neither "
        "its script's PARAMETERS nor config/schema.yaml describes it):\n"
        "  config/test0.yaml:2: darts.rounds: 'nine' is not of type 'integer'; config.yaml:7 gives it as an "
        "integer, so write an integer"
    )


def test_a_seed_typed_as_text_in_config_yaml_itself_is_refused_at_its_line(article):
    """It failed in the job, TypeError: SeedSequence expects int, and left
    the experiment out of the seed sweep."""
    with pytest.raises(ConfigError) as caught:
        checked(article, CONFIG.replace("seed: 2026", 'seed: "2026x"'))
    assert str(caught.value).endswith(
        "  config.yaml:6: darts.seed: '2026x' is not of type 'integer' (a seed is a whole number, 0 or more: "
        "NumPy's generators take nothing else, and the seed sweep varies only an integer seed)"
    )
    with pytest.raises(ConfigError, match=r"config\.yaml:6: darts\.seed: -1 is less than the minimum of 0 \(a seed"):
        checked(article, CONFIG.replace("seed: 2026", "seed: -1"))


def test_values_of_their_own_types_pass(article):
    checked(article, CONFIG, "darts:\n  rounds: 12\n  sizes: [5]\n")


def test_a_section_the_schema_describes_is_held_to_the_schema_alone(article):
    schema = "type: object\nproperties:\n  darts:\n    type: object\n    properties:\n      seed: {type: string}\n"
    checked(article, CONFIG.replace("seed: 2026", 'seed: "2026x"'), schema=schema)  # the author's word stands
    with pytest.raises(ConfigError, match=r"config\.yaml:6: darts\.seed: 2026 is not of type 'string'"):
        checked(article, CONFIG, schema=schema)
