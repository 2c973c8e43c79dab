"""A figure says its quantities in the words the prose uses, never by a value's key.

save_figure (articlekit/experiment/artifacts.py) reads the drawn figure's
visible text (axis labels, titles, legend entries, tick labels,
annotations) and refuses one that shows a key (figure_text.check_words): a
lowercase dotted path of three parts or more, or a dotted key of the
experiment's own values. The message names the figure, where the text is,
the text and the fix. The seed sweep's figure (figures/robustness-<key>.svg)
labels its x-axis with the words config robustness.labels gives the key,
else the key made into words.
"""

import json
from pathlib import Path

import pytest

from articlekit.article import seed_figure
from articlekit.article.seed_keys import seed_figures
from articlekit.experiment.artifacts import pyplot, run_experiment, save_figure
from articlekit.experiment.figure_text import KeyInFigure, keys_in
from articlekit.workflow.plan import build
from tests.workspace import merged_config

ROOT = Path(__file__).resolve().parent.parent
KEY = "scaling.dk64.unscaled.max_weight"


@pytest.fixture
def plt():
    plt = pyplot()
    yield plt
    plt.close("all")


def line(plt, **labels):
    """A small line plot, labelled in words unless told otherwise."""
    fig, ax = plt.subplots()
    ax.plot([16, 64, 512], [0.2, 0.6, 0.97], "o-", label=labels.get("legend", "unscaled"))
    ax.set(
        xscale="log",
        xlabel=labels.get("xlabel", "$d_k$"),
        ylabel=labels.get("ylabel", "largest weight"),
        title=labels.get("title", "Largest softmax weight"),
    )
    ax.legend()
    return fig, ax


# ---- the check ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where, labels",
    [
        ("x-axis label", {"xlabel": KEY}),
        ("y-axis label", {"ylabel": "scaling.dk64.unscaled.effective_terms"}),
        ("title", {"title": f"{KEY} across d_k"}),
        ("legend entry", {"legend": "robustness.scaling.dk64.unscaled.max_weight.median"}),
    ],
)
def test_a_key_in_a_label_title_or_legend_is_refused_naming_the_figure_and_its_text(tmp_path, plt, where, labels):
    fig, _ = line(plt, **labels)
    path = tmp_path / "figures" / "scaling-sweep.svg"
    with pytest.raises(KeyInFigure) as refused:
        save_figure(fig, path)
    text = next(iter(labels.values()))
    message = str(refused.value)
    assert str(path) in message and f"its {where} reads {text!r}" in message
    assert "in the words the prose uses" in message
    assert not path.exists() and not list(path.parent.iterdir())  # nothing written, no temporary left


def test_a_key_in_an_annotation_a_colour_bar_or_a_tick_label_is_refused_too(tmp_path, plt):
    fig, ax = plt.subplots()
    image = ax.imshow([[0.1, 0.9], [0.5, 0.5]])
    ax.set_xticks([0, 1], ["example.causal.weights", "key 1"])
    ax.text(0, 0, "see mask_convention.reversed.max_abs_diff", fontsize=8)
    fig.colorbar(image, ax=ax, label="example.causal.max_masked_weight")
    with pytest.raises(KeyInFigure) as refused:
        save_figure(fig, tmp_path / "heatmap.svg")
    message = str(refused.value)
    assert "its tick label reads 'example.causal.weights'" in message
    assert "its text reads 'see mask_convention.reversed.max_abs_diff'" in message
    assert "its colour bar label reads 'example.causal.max_masked_weight'" in message


def test_a_figure_in_words_is_written(tmp_path, plt):
    """Words, mathtext, numbers and code named on purpose are not keys."""
    fig, ax = line(plt, legend="nn.MultiheadAttention, torch.nn.functional.Softmax")
    ax.text(16, 0.5, "np.max, x.max(), numpy 2.2.6, e.g. 0.97", fontsize=8)
    fig.suptitle("Largest weight and effective number of keys")
    save_figure(fig, tmp_path / "words.svg")
    assert (tmp_path / "words.svg").exists()


@pytest.mark.parametrize(
    "text, keys",
    [
        (KEY, [KEY]),
        (f"median of {KEY}.", [KEY]),
        ("parity.d_k[1].max_abs_diff", ["parity.d_k[1].max_abs_diff"]),
        ("largest weight, unscaled ($d_k$ = 64)", []),
        ("torch.nn.MultiheadAttention", []),  # code: it has a capital
        ("np.linalg", []),  # two parts: code, or a key the experiment names (below)
        ("1.2.3 and v2.1.0", []),  # versions
    ],
)
def test_a_key_is_a_lowercase_dotted_path_of_three_parts_or_more(text, keys):
    assert keys_in(text) == keys


def test_a_two_part_key_is_refused_when_it_is_one_of_the_values(tmp_path, plt):
    """The experiment's own dotted keys are known: parity.max_abs_diff_overall
    has two parts, which the pattern alone lets pass."""
    assert keys_in("worst: parity.max_abs_diff_overall") == []
    assert keys_in("worst: parity.max_abs_diff_overall", ["parity.max_abs_diff_overall"]) == [
        "parity.max_abs_diff_overall"
    ]
    fig, _ = line(plt, ylabel="parity.max_abs_diff_overall")
    with pytest.raises(KeyInFigure, match="y-axis label reads 'parity.max_abs_diff_overall'"):
        save_figure(fig, tmp_path / "parity.svg", keys=["parity.max_abs_diff_overall"])


def test_an_experiment_whose_figure_shows_one_of_its_keys_fails_in_one_sentence(tmp_path, monkeypatch, capsys):
    """run_experiment knows the values plot() draws: a figure that labels an
    axis with one of their keys stops the experiment, writing nothing, with
    the figure and the text named (no traceback: the fix is the author's)."""
    monkeypatch.chdir(tmp_path)

    def plot(values, params, figures):
        fig, ax = pyplot().subplots()
        ax.bar([0], [values["speedup"]])
        ax.set_ylabel("probe.speedup")
        save_figure(fig, figures["f"])

    argv = ["--params", "{}", "--json", "results/probe.json", "--figure", "f=figures/probe-f.svg"]
    with pytest.raises(SystemExit) as stopped:
        run_experiment("probe", lambda params: {"speedup": 2.0}, plot, argv=argv)
    assert stopped.value.code == 1
    said = capsys.readouterr().err
    assert "probe: figures/probe-f.svg: its y-axis label reads 'probe.speedup'" in said and "Traceback" not in said
    assert not (tmp_path / "results/probe.json").exists() and not (tmp_path / "figures/probe-f.svg").exists()


# ---- this article's figures --------------------------------------------------------------


@pytest.mark.workflow  # runs the experiment on its test sizes (tests/tiers.py)
@pytest.mark.parametrize("name, figure", [("scaling", "sweep"), ("example", "heatmaps"), ("multihead", "heads")])
def test_the_articles_figures_pass_the_check(tmp_path, params, name, figure):
    module = __import__(f"experiments.{name}", fromlist=["run", "plot"])
    p = params(name)
    path = tmp_path / f"{name}-{figure}.svg"
    module.plot(module.run(p), p, {figure: str(path)})
    assert path.exists()


@pytest.mark.workflow  # runs the experiment on its test sizes (tests/tiers.py)
def test_the_scaling_figure_names_the_effective_number_of_keys_as_the_prose_does(tmp_path, params):
    from experiments import scaling

    p = params("scaling")
    path = tmp_path / "scaling-sweep.svg"
    scaling.plot(scaling.run(p), p, {"sweep": str(path)})
    svg = path.read_text(encoding="utf-8")
    assert f"Effective number of keys (of {p['n_keys']})" in svg and "Effective terms" not in svg


class Machine:
    """What plan.build asks the machine: NumPy installed, Pandoc the renderer."""

    def library_version(self, library):
        return {"numpy": "2.4.6"}.get(library)

    def renderer(self, choice):
        return "pandoc"

    def renderer_version(self, name):
        return "3.8.2.1"


# ---- the seed sweep's figure -------------------------------------------------------------


def seed_report(key=KEY, experiment="scaling"):
    """build/robustness.json with one printed value over 20 seeds."""
    samples = [0.3 + 0.03 * i for i in range(20)]
    row = {
        "key": key,
        "bindable": f"robustness.{key}",
        "experiment": experiment,
        "samples": samples,
        "at_seed": 0.92,
        "article_seed": 0,
        "percentile_at_seed": 0.95,
        "median": 0.6,
        "p05": 0.33,
        "p95": 0.87,
    }
    return {"printed": [row], "experiments": [{"experiment": experiment, "first_seed": 1, "last_seed": 20}]}


def test_the_seed_figure_labels_its_axis_with_the_words_the_config_gives(tmp_path):
    path = tmp_path / f"figures/robustness-{KEY}.svg"
    words = "largest weight, unscaled ($d_k$ = 64)"
    seed_figure.write_figures(seed_report(), {KEY: str(path)}, {KEY: words})
    svg = path.read_text(encoding="utf-8")
    assert "largest weight, unscaled" in svg and KEY not in svg
    # its alt text says the words too, in plain text
    assert "<title>largest weight, unscaled (d_k = 64) for each of 20 seeds" in svg


def test_a_seed_figure_with_no_label_is_labelled_with_its_key_in_words(tmp_path, capsys):
    path = tmp_path / f"figures/robustness-{KEY}.svg"
    seed_figure.write_figures(seed_report(), {KEY: str(path)})
    words = seed_figure.axis_words(KEY, "scaling")
    assert words == "max weight (dk = 64, unscaled)" and keys_in(words, [KEY]) == []
    assert words in path.read_text(encoding="utf-8")
    assert "robustness.labels gives scaling.dk64.unscaled.max_weight no words" in capsys.readouterr().err


def test_a_seed_figure_label_that_is_a_key_is_refused(tmp_path):
    path = tmp_path / "figures/robustness-toy.x.svg"
    with pytest.raises(KeyInFigure, match=r"x-axis label reads 'toy\.x'"):
        seed_figure.write_figures(seed_report("toy.x", "toy"), {"toy.x": str(path)}, {"toy.x": "toy.x"})


def test_the_label_reaches_the_figure_rule_as_an_argument(tmp_path, monkeypatch):
    """config robustness.labels -> the rule's param (an edited label redraws
    the figure); a label of a figure the article does not show is not passed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "article").mkdir()
    (tmp_path / "article/index.qmd").write_text(
        "Across seeds {{< value robustness.scaling.x.median >}}.\n\n![spread](../figures/robustness-scaling.x.svg)\n",
        encoding="utf-8",
    )
    labels = {"scaling.x": "largest weight ($d_k$ = 64)", "scaling.y": "not drawn"}
    config = {
        "experiments": {"scaling": {"figures": {"sweep": "figures/scaling-sweep.svg"}, "libraries": ["numpy"]}},
        "publishing": {"libraries": {"python": "Python", "numpy": "NumPy"}, "release_label": ["numpy"]},
        "scaling": {"d_k": [16], "seed": 7},
        "robustness": {"seeds": 10, "labels": labels},
    }
    plan = build(config, [], Machine())
    assert plan.sweep.figure_arguments == (
        "--figure scaling.x=figures/robustness-scaling.x.svg --label 'scaling.x=largest weight ($d_k$ = 64)'"
    )


@pytest.mark.parametrize("config_file", ["config.yaml", "config/test.yaml"])
def test_every_seed_figure_the_article_shows_has_words_in_the_config(config_file):
    article = "article/index.qmd"
    shown = seed_figures(article, (ROOT / article).read_text(encoding="utf-8")).values()
    labels = merged_config(ROOT, ("config.yaml",) if config_file == "config.yaml" else ("config.yaml", config_file))[
        "robustness"
    ]["labels"]
    assert shown and set(shown) <= set(labels)
    assert all(keys_in(labels[key], [key]) == [] for key in shown)


def test_the_seed_figure_command_takes_labels(tmp_path):
    report = tmp_path / "robustness.json"
    report.write_text(json.dumps(seed_report()), encoding="utf-8")
    path = tmp_path / "seed.svg"
    assert seed_figure.main([str(report), "--figure", f"{KEY}={path}", "--label", f"{KEY}=largest weight"]) == 0
    assert "largest weight" in path.read_text(encoding="utf-8")
