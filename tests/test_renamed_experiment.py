"""A new author renames the skeleton's experiment (issue 27, friction 8):
the script, its config entry and the article's keys, but not the baseline's
example entry, which still names the old key. The build stops with one
message at that entry's `key:` line in baseline/published.yaml (not under
the article's name), naming the entry and the fix: the key follows the
renamed experiment, with the experiment's key it means. The baseline's own
copy of its numbers (published.<id>, which the values carry for the
article to print) is never offered: binding the edition to itself would
hide the number.

Also here: what the skeleton's environment files install is portable: no
path of the machine that wrote them, when its articlekit came from
somewhere other machines reach (an index here; tests/test_origin.py has
every source).
"""

import re
import shutil
from pathlib import Path

import pytest

from articlekit.article.bind import BindError, bind, files_of
from articlekit.data.baseline import load_baseline
from articlekit.skeleton.new import new_article
from tests.test_author_mistakes import assert_said, built, snakemake  # noqa: F401  (built: the module's fixture)

ROOT = Path(__file__).resolve().parent.parent
ARTICLE = "{{< departures >}}\n\n{{< provenance >}}\n"


def renamed(folder, old="harmonic", new="harmonics", baseline_too=False):
    """What an author does to rename the experiment: the file, the config, the article's keys."""
    (folder / f"experiments/{old}.py").rename(folder / f"experiments/{new}.py")
    paths = ["experiments/" + new + ".py", "config.yaml", "article/index.qmd"]
    for path in paths + (["baseline/published.yaml"] if baseline_too else []):
        path = folder / path
        path.write_text(re.sub(rf"\b{old}\b", new, path.read_text(encoding="utf-8")), encoding="utf-8")


def key_line(path, key):
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.strip() == f"key: {key}")


def values_after_the_rename():
    """What values.json holds once the renamed experiment ran: its keys, the
    listings', and the baseline's copy of the edition's number."""

    def source(experiment):
        return {
            "artifact": f"results/{experiment}.json",
            "script": f"experiments/{experiment}.py",
            "experiment": experiment,
        }

    values = {
        "harmonics.value": 7.485470860550345,
        "harmonics.gap": 4.99e-4,
        "harmonics.approximation": 7.48497,
        "listings.harmonics.imports": "import math",
        "published.harmonic.value": 7.485470860550345,
    }
    sources = {key: source(key.split(".")[0]) for key in values}
    return {"values": values, "sources": sources, "versions": {}}


def test_a_baseline_key_left_behind_is_one_problem_at_its_key_line_with_the_key_it_follows(tmp_path):
    new_article(tmp_path / "a")
    published = tmp_path / "a/baseline/published.yaml"
    with pytest.raises(BindError) as err:
        bind("article/index.qmd", ARTICLE, values_after_the_rename(), True, load_baseline(published))
    (problem,) = err.value.problems
    assert problem.startswith(f"{published}:{key_line(published, 'harmonic.value')}: entry 'harmonic.value': ")
    assert "no experiment 'harmonic' gave this build values" in problem
    assert "write `key: harmonics.value` there" in problem
    assert "an entry's `key:` follows its experiment when that is renamed" in problem
    assert "published.harmonic.value" not in problem  # the edition's own copy is no fix
    # and it is reported under the baseline's name, not the article's
    assert files_of(err.value.problems, "article/index.qmd") == [str(published)]
    # docs/authoring.md shows this message, as it is (up to its "...")
    shown = next(
        line
        for line in (ROOT / "docs/authoring.md").read_text().splitlines()
        if line.startswith("baseline/published.yaml:") and "harmonic.value" in line
    )
    assert problem.replace(str(published), "baseline/published.yaml").startswith(shown.removesuffix(" ..."))


def test_a_key_misspelt_within_an_experiment_is_offered_its_closest_key_not_the_editions_copy(tmp_path):
    new_article(tmp_path / "a")
    published = tmp_path / "a/baseline/published.yaml"
    published.write_text(published.read_text().replace("key: harmonic.value", "key: harmonics.valeu"))
    with pytest.raises(BindError) as err:
        bind("article/index.qmd", ARTICLE, values_after_the_rename(), True, load_baseline(published))
    (problem,) = err.value.problems
    assert "experiment 'harmonics' made no value 'harmonics.valeu'" in problem
    assert "`key: harmonics.value`" in problem and "published.harmonic" not in problem


def test_the_headers_file_is_the_file_of_each_problem():
    problems = [
        "article/index.qmd:3: unknown key 'x'",
        "baseline/published.yaml:17: entry 'y': ...",
        "article/index.qmd:9: claim 'z > 1' failed",
        "article/index.qmd: no provenance table",
    ]
    assert files_of(problems, "article/index.qmd") == ["article/index.qmd", "baseline/published.yaml"]


@pytest.mark.slow
def test_renaming_the_experiment_but_not_the_baseline_stops_on_one_message_naming_its_line_and_fix(
    server,
    built,  # noqa: F811 (the fixture)
    tmp_path,
):
    """Through the real build, as the author meets it."""
    article = tmp_path / "my-article"
    shutil.copytree(built, article, symlinks=True)
    renamed(article)
    published = article / "baseline/published.yaml"
    run = snakemake(server, article)
    assert_said(
        run,
        "bind: 1 problem(s) in baseline/published.yaml:",
        f"baseline/published.yaml:{key_line(published, 'harmonic.value')}: entry 'harmonic.value': ",
        "write `key: harmonics.value` there",
    )
    assert "problem(s) in article/index.qmd" not in run.output
    assert "published.harmonic.value" not in run.output

    # the fix the message names, and the build goes through
    published.write_text(published.read_text().replace("key: harmonic.value", "key: harmonics.value"))
    again = snakemake(server, article)
    assert again.code == 0, again.output[-4000:]


# ---- the environment files are portable -----------------------------------------------


@pytest.fixture
def from_an_index(monkeypatch):
    """articlekit as an index installs it (no direct_url.json): this
    checkout's own source is a folder of this machine, which the
    requirement then names, by design (tests/test_origin.py)."""
    from articlekit import __version__
    from articlekit.skeleton import origin

    monkeypatch.setattr(origin, "of_this_articlekit", lambda: origin.from_direct_url(None, __version__))


def test_the_skeleton_names_no_path_of_the_machine_that_wrote_it(tmp_path, from_an_index):
    folder = tmp_path / "my-article"
    written = new_article(folder)
    local = {str(ROOT), str(Path.home()), str(tmp_path), str(folder.resolve())}
    for relative in written:
        text = (folder / relative).read_text(encoding="utf-8")
        assert not [path for path in local if path in text], f"{relative} names a path of this machine"
        # no absolute path at all in what installs the article
        if relative.name in ("environment.yml", "requirements.txt"):
            lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
            assert not [line for line in lines if re.search(r"(^|\s)(/|~/|[A-Za-z]:\\)", line)], relative


def test_conda_and_pip_install_the_same_list_and_the_authors_articlekit(tmp_path, from_an_index):
    import yaml

    from articlekit import __version__

    folder = tmp_path / "a"
    new_article(folder)
    environment = yaml.safe_load((folder / "environment.yml").read_text())
    pip = next(item["pip"] for item in environment["dependencies"] if isinstance(item, dict))
    assert pip == ["-r requirements.txt"]  # one list for both routes, relative to the file
    requirements = [
        line
        for line in (folder / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert requirements == [f"articlekit=={__version__}"]
    assert "pip install -e" in (folder / "requirements.txt").read_text()  # how to use a checkout instead
