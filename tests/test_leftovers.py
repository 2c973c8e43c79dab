"""What an earlier build left that no rule makes any more is said, with whose it was.

A result, log or benchmark named after an experiment's script is that
experiment's, taken out of experiments:; one named after no script is a
rule's this build no longer has (the page's rule was `render` before each
format got its own), never called an experiment.
"""

import pytest

from articlekit.workflow.leftovers import leftovers, report

pytestmark = pytest.mark.unit


def test_a_removed_experiments_files_are_said_to_be_its_with_the_way_back(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments/harmonic.py").write_text("", encoding="utf-8")
    said = report(["results/harmonic.json", "logs/harmonic.log"], ["scaling"], root=tmp_path)
    assert said.startswith("left over from an earlier build (of harmonic, which experiments: in config.yaml no longer")
    assert said.endswith("or declare it again in experiments: to use them")


def test_a_gone_rules_files_are_not_called_an_experiments(tmp_path):
    said = report(["logs/render.log", "benchmarks/out/render.tsv"], ["scaling"], root=tmp_path)
    assert said.startswith("left over from an earlier build (of render, a rule this build no longer has): ")
    assert "experiments:" not in said and "rm logs/render.log benchmarks/out/render.tsv" in said


def test_only_the_files_no_rule_makes_are_leftovers(tmp_path):
    for name in ("logs/render.log", "logs/html.log", "logs/.html.log.tmp"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    assert leftovers(lambda path: path == "logs/html.log", root=tmp_path) == ["logs/render.log"]
    assert report([], []) is None
