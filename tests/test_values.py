"""values: results/*.json merged under stable dotted keys, with sources."""

import json
import math
import platform

import pytest

from articlekit.data import values as valuesmod
from articlekit.core.jsonio import read_json
from articlekit.core.keys import UnknownKey, lookup
from articlekit.data.values import merge


def envelope(name, values, params=None):
    return {
        "experiment": name,
        "script": f"experiments/{name}.py",
        "params": params or {},
        "versions": {"python": "3.11"},
        "values": values,
    }


@pytest.fixture
def doc():
    return merge(
        [
            ("results/scaling.json", envelope("scaling", {"dk64": {"unscaled": {"max_weight": 0.92}}}, {"seed": 7})),
            (
                "results/example.json",
                envelope("example", {"weights": [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], "rows": [{"name": "a"}]}),
            ),
        ]
    )


def test_nested_values_flatten_to_dotted_keys_and_params_go_under_params(doc):
    assert doc["values"]["scaling.dk64.unscaled.max_weight"] == 0.92
    assert doc["values"]["scaling.params.seed"] == 7


def test_lists_stay_whole_and_can_be_indexed(doc):
    assert doc["values"]["example.weights"] == [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]
    assert lookup(doc["values"], "example.weights[0]") == [0.1, 0.2, 0.3]
    assert lookup(doc["values"], "example.weights[0][2]") == 0.3
    assert lookup(doc["values"], "example.weights[-1][0]") == 0.4
    assert lookup(doc["values"], "example.rows[0].name") == "a"


def test_every_key_knows_its_artifact_script_and_experiment(doc):
    assert doc["sources"]["scaling.params.seed"] == {
        "artifact": "results/scaling.json",
        "script": "experiments/scaling.py",
        "experiment": "scaling",
    }
    assert doc["versions"] == {"scaling": {"python": "3.11"}, "example": {"python": "3.11"}}


def test_a_missing_key_names_the_closest_existing_keys(doc):
    with pytest.raises(UnknownKey) as err:
        lookup(doc["values"], "scaling.dk64.unscaled.max_weigth")
    assert "unknown key 'scaling.dk64.unscaled.max_weigth'" in str(err.value)
    assert "closest: scaling.dk64.unscaled.max_weight" in str(err.value)


def test_a_group_is_not_a_value_and_the_error_lists_what_is_inside(doc):
    with pytest.raises(UnknownKey, match="closest: scaling.dk64.unscaled.max_weight"):
        lookup(doc["values"], "scaling.dk64")


def test_bad_indexes_say_what_is_there(doc):
    with pytest.raises(ValueError, match="out of range.*has 2 items"):
        lookup(doc["values"], "example.weights[5]")
    with pytest.raises(ValueError, match="not a list"):
        lookup(doc["values"], "scaling.dk64.unscaled.max_weight[0]")
    with pytest.raises(ValueError, match="malformed key"):
        lookup(doc["values"], "example.weights[x]")


def test_the_same_experiment_twice_is_an_error():
    with pytest.raises(ValueError, match="also comes from"):
        merge([("a.json", envelope("x", {})), ("b.json", envelope("x", {}))])


def test_the_command_writes_values_json_with_nan_kept(tmp_path):
    art = tmp_path / "results" / "errors.json"
    art.parent.mkdir()
    art.write_text(json.dumps(envelope("errors", {"ratio": {"$float": "nan"}})))
    out = tmp_path / "build" / "values.json"
    assert valuesmod.main([str(art), "--out", str(out)]) == 0
    assert math.isnan(read_json(out)["values"]["errors.ratio"])


def test_what_the_artifact_api_writes_is_what_values_reads(tmp_path):
    from articlekit.experiment.artifacts import read_artifact, write_artifact

    path = tmp_path / "results/fit.json"
    write_artifact(path, "fit", "experiments/fit.py", params={"seed": 1}, values={"slope": 2.5})
    doc = merge([(path, read_artifact(path))])
    assert doc["values"] == {"fit.slope": 2.5, "fit.params.seed": 1}
    assert doc["versions"]["fit"] == {"python": platform.python_version()}


def test_a_derived_value_is_listed_with_the_keys_it_is_computed_from(tmp_path):
    from articlekit.experiment.artifacts import read_artifact, write_artifact

    path = tmp_path / "results/fit.json"
    write_artifact(
        path,
        "fit",
        "experiments/fit.py",
        params={},
        values={"a": {"err": 1.0}, "b": 3.0, "worst": 3.0},
        derived={"worst": ["a.err", "b"]},
    )
    doc = merge([(path, read_artifact(path))])
    assert doc["derived"] == {"fit.worst": ["fit.a.err", "fit.b"]}
    plain = tmp_path / "results/plain.json"
    write_artifact(plain, "plain", "experiments/plain.py", params={}, values={"x": 1})
    assert "derived" not in read_json(plain), "an envelope without derived values is as it was"
    assert merge([(plain, read_artifact(plain))])["derived"] == {}


@pytest.mark.parametrize(
    "derived, complaint",
    [
        ({"worst": ["a.err", "c"]}, r"derived names 'c', which the artifact's values do not hold"),
        ({"nope": ["b"]}, r"derived names 'nope'"),
        ({"worst": []}, r"'derived' must map a value's path to the paths it is computed from"),
        ({"worst": "b"}, r"'derived' must map"),
    ],
)
def test_a_derived_value_naming_no_value_is_refused_with_the_file(tmp_path, derived, complaint):
    from articlekit.experiment.artifacts import read_artifact

    path = tmp_path / "results/fit.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**envelope("fit", {"a": {"err": 1.0}, "b": 3.0, "worst": 3.0}), "derived": derived}))
    with pytest.raises(ValueError, match=complaint) as raised:
        merge([(path, read_artifact(path))])
    assert str(path) in str(raised.value)


@pytest.mark.parametrize(
    "text, complaint",
    [
        ('{"experiment": "fit", "values": {}}', "no 'script' field"),
        ("[1, 2]", "a list, not an object"),
    ],
)
def test_a_file_that_is_not_an_envelope_is_named_with_the_fix(tmp_path, text, complaint):
    from articlekit.experiment.artifacts import read_artifact

    path = tmp_path / "fit.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"{path}: not an experiment artifact \({complaint}\)\n.*delete it"):
        read_artifact(path)
