"""publishing: what articlekit knows about one article comes from its
config's `publishing:` section, checked once, with neutral defaults."""

import argparse
import json
from pathlib import Path

import pytest
import yaml

from articlekit.data.publishing import Publishing, PublishingError, add_argument, from_json, parse

ROOT = Path(__file__).resolve().parent.parent


def test_without_a_section_nothing_is_article_specific():
    for neutral in (parse(None), parse({}), from_json(None), from_json("")):
        assert neutral == Publishing()
        assert dict(neutral.libraries) == {"python": "Python"}
        assert neutral.release_label == () and neutral.volatile == () and neutral.machine == ()
        assert dict(neutral.listings) == {}
        assert not neutral.is_volatile("timing.main.speedup")


@pytest.mark.parametrize("config", ["config.yaml", "config/test.yaml"])
def test_the_shipped_configs_parse_into_this_articles_settings(config):
    section = yaml.safe_load((ROOT / config).read_text(encoding="utf-8"))["publishing"]
    article = from_json(json.dumps(section))
    assert list(article.libraries) == ["python", "numpy", "torch"]
    assert article.release_label == ("numpy", "torch")
    assert article.is_volatile("timing.main.speedup") and not article.is_volatile("parity.sdpa.max_abs_diff")
    assert article.listings["attention"].source == "experiments/attention.py"
    assert "softmax" in article.listings["attention"].functions


def test_versions_are_shown_by_their_display_names_in_the_configured_order():
    article = parse({"libraries": {"torch": "PyTorch", "python": "Python"}})
    assert article.versions_text({"python": "3.11.7", "torch": "2.13.0", "numpy": "2.4.6"}) == \
        "PyTorch 2.13.0, Python 3.11.7"
    assert article.versions_text({"python": None}) == ""


def test_a_release_label_names_the_configured_libraries_and_a_missing_one_as_none():
    article = parse({"libraries": {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"},
                     "release_label": ["numpy", "torch"]})
    assert article.label_for({"numpy": "2.4.6", "torch": "2.13.0+cpu"}) == "numpy-2.4.6_torch-2.13.0+cpu"
    assert article.label_for({"numpy": "2.4.6", "torch": None}) == "numpy-2.4.6_torch-none"


def test_the_section_cannot_be_changed_once_parsed():
    article = parse({"libraries": {"python": "Python"}})
    with pytest.raises(AttributeError):
        article.volatile = ("timing.",)
    with pytest.raises(TypeError):
        article.libraries["numpy"] = "NumPy"


@pytest.mark.parametrize("section, says", [
    ({"librarys": {}}, "unknown key(s) librarys; the keys are libraries, release_label"),
    ({"libraries": ["numpy"]}, "publishing.libraries: expected a mapping of library to display name"),
    ({"libraries": {"numpy": ""}}, "publishing.libraries.numpy: expected the name readers know it by"),
    ({"release_label": ["numpy"]}, "publishing.release_label: numpy not in publishing.libraries"),
    ({"volatile": "timing."}, "publishing.volatile: expected a list of key prefixes"),
    ({"machine": ["a", "a"]}, "publishing.machine: a listed more than once"),
    ({"listings": {"code": {"source": "code.py"}}}, "publishing.listings.code: expected {source: PATH, functions"),
    ({"listings": {"code": {"source": "code.txt", "functions": ["f"]}}},
     "publishing.listings.code.source: expected the path of a Python file"),
    ({"listings": {"code": {"source": "code.py", "functions": []}}},
     "publishing.listings.code.functions: name at least one function"),
    ({"listings": {"my-code": {"source": "code.py", "functions": ["f"]}}}, "'my-code' cannot name a listing"),
])
def test_a_bad_section_names_the_key_and_the_fix(section, says):
    with pytest.raises(PublishingError) as caught:
        parse(section)
    assert says in str(caught.value)


def test_the_command_line_argument_refuses_a_bad_section_with_its_message(capsys):
    parser = argparse.ArgumentParser(prog="cmd")
    add_argument(parser)
    assert parser.parse_args([]).publishing == Publishing()
    assert parser.parse_args(["--publishing", '{"volatile": ["timing."]}']).publishing.volatile == ("timing.",)
    for bad, says in (("{not json", "--publishing: not JSON"),
                      ('{"release_label": ["torch"]}', "torch not in publishing.libraries")):
        with pytest.raises(SystemExit) as stopped:
            parser.parse_args(["--publishing", bad])
        assert stopped.value.code == 2 and says in capsys.readouterr().err
