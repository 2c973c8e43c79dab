"""An experiment lives in its script: its parameters (schema, default,
meaning) and the meaning of its result keys are declared there, read by
the workflow without importing it, merged under config.yaml, and written
out as the reference (`python -m articlekit keys`)."""

import subprocess
import sys
import textwrap

import pytest

from articlekit.data.config import ConfigError, check_article_config, merged_config
from articlekit.data.reference import main as keys_main
from articlekit.data.reference import reference
from articlekit.experiment.declared import DeclarationError, declarations, declared_experiments
from tests.workspace import PROJECT_ROOT

SCRIPT = '''\
"""A made-up experiment."""

import numpy as np  # never imported by the plan

PARAMETERS = {
    "n": {"type": "integer", "minimum": 1, "default": 100, "description": "how many draws"},
    "sizes": {
        "type": "array",
        "items": {"type": "integer", "minimum": 1},
        "default": [1, 2],
        "description": "the widths",
    },
    "seed": {"type": "integer", "minimum": 0, "description": "the seed: no default, the config sets it"},
}
RESULT_KEYS = {"draws.mean": "the mean of the draws", "draws.at{n}": "the draw at width {n}, one per `sizes`"}
'''


def project(tmp_path, script=SCRIPT, config="experiments:\n  draws: {}\ndraws:\n  seed: 3\n"):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments/draws.py").write_text(script)
    (tmp_path / "config.yaml").write_text(config)
    return tmp_path


def test_the_declarations_are_read_from_the_source_without_importing_it(tmp_path):
    root = project(tmp_path)
    found = declarations(root / "experiments/draws.py")
    assert found.defaults == {"n": 100, "sizes": [1, 2]}
    assert list(found.result_keys) == ["draws.mean", "draws.at{n}"]
    assert found.lines[("draws", "n")] == 6 and found.lines[("draws", "sizes", 1)] == 10


def test_the_config_overrides_the_defaults_key_by_key_and_names_the_script_for_a_default(tmp_path):
    root = project(tmp_path, config="experiments:\n  draws: {}\ndraws:\n  seed: 3\n  n: 5\n")
    config, sources = merged_config([root / "config.yaml"], root)
    assert config["draws"] == {"n": 5, "sizes": [1, 2], "seed": 3}
    assert sources == [str(root / "experiments/draws.py"), str(root / "config.yaml")]
    override = root / "small.yaml"
    override.write_text("draws:\n  sizes: [0]\n")
    config, sources = merged_config([root / "config.yaml", override], root)
    with pytest.raises(ConfigError) as caught:
        check_article_config(config, root / "none.yaml", sources, ["draws"], declared_experiments(["draws"], root))
    assert f"{override}:2: draws.sizes.0: 0 is less than the minimum of 1" in str(caught.value)


def test_a_parameter_without_a_default_must_be_given_and_a_new_one_declared(tmp_path):
    root = project(tmp_path, config="experiments:\n  draws: {}\ndraws:\n  m: 3\n")
    config, sources = merged_config([root / "config.yaml"], root)
    with pytest.raises(ConfigError) as caught:
        check_article_config(config, root / "none.yaml", sources, ["draws"], declared_experiments(["draws"], root))
    message = str(caught.value)
    assert "'seed' is a required property" in message
    assert f"{root / 'config.yaml'}:4: draws.m: Additional properties are not allowed" in message
    assert (
        "declare it in" in message and "experiments/draws.py's PARAMETERS, with its default and description" in message
    )


def test_a_default_that_breaks_its_own_schema_is_named_at_its_line_in_the_script(tmp_path):
    root = project(tmp_path, script=SCRIPT.replace('"default": 100', '"default": 0'))
    config, sources = merged_config([root / "config.yaml"], root)
    with pytest.raises(ConfigError) as caught:
        check_article_config(config, root / "none.yaml", sources, ["draws"], declared_experiments(["draws"], root))
    assert f"{root / 'experiments/draws.py'}:6: draws.n: 0 is less than the minimum of 1 (how many draws)" in str(
        caught.value
    )


@pytest.mark.parametrize(
    "bad, complaint",
    [
        ('PARAMETERS = {"n": 100}', ":1: PARAMETERS['n'] is a int; write its JSON Schema as a dict"),
        ('PARAMETERS = {"n": {"default": 1}}', ":1: PARAMETERS['n'] has no description"),
        ("PARAMETERS = dict(n=1)", ":1: PARAMETERS is computed, and the workflow reads it without running"),
        ('RESULT_KEYS = {"other.x": "a value"}', ":1: RESULT_KEYS: 'other.x' is not a key of this experiment's"),
    ],
)
def test_a_declaration_that_cannot_be_read_is_named_with_its_line_and_the_fix(tmp_path, bad, complaint):
    path = tmp_path / "draws.py"
    path.write_text(bad + "\n")
    with pytest.raises(DeclarationError, match=None) as caught:
        declarations(path)
    assert complaint in str(caught.value)


def test_a_script_without_declarations_takes_its_parameters_from_the_config(tmp_path):
    root = project(
        tmp_path, script="def run(params):\n    return {}\n", config="experiments:\n  draws: {}\ndraws:\n  n: 3\n"
    )
    config, sources = merged_config([root / "config.yaml"], root)
    assert config["draws"] == {"n": 3} and sources == [str(root / "config.yaml")]
    text = reference(config, sources, root)
    assert "not declared in its script; config.yaml's section `draws:` gives them (`n`)" in text


def test_the_reference_lists_every_parameter_and_key_with_its_meaning(tmp_path):
    root = project(tmp_path, config="experiments:\n  draws: {}\ndraws:\n  seed: 3\n  n: 5\n")
    config, sources = merged_config([root / "config.yaml"], root)
    text = reference(config, sources, root)
    assert "| `n` | `100` (this config: `5`) | integer ≥ 1 | how many draws |" in text
    assert "| `seed` | none: the config must set it | integer ≥ 0 |" in text
    assert "| `draws.at{n}` | the draw at width {n}, one per `sizes` |" in text


def test_this_article_s_reference_has_every_experiment_s_parameters_and_keys(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(PROJECT_ROOT)
    assert keys_main(["--out", str(tmp_path / "keys.md")]) == 0
    text = (tmp_path / "keys.md").read_text(encoding="utf-8")
    config, _ = merged_config(["config.yaml"])
    found = declared_experiments(config["experiments"])
    for name, declared in found.items():
        assert f"## {name} — `experiments/{name}.py`" in text
        assert all(f"| `{key}` |" in text for key in declared.parameters)
        assert all(f"| `{key}` |" in text for key in declared.result_keys)


def test_the_plan_reads_the_declarations_without_importing_numpy(tmp_path):
    code = textwrap.dedent(
        """
        import sys
        from articlekit.data.config import merged_config
        merged_config(["config.yaml"])
        assert "numpy" not in sys.modules and "torch" not in sys.modules, sorted(sys.modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
