"""A new author's first article, as docs/authoring.md walks it: the
skeleton from `python -m articlekit new`, then the guide's own blocks
written into it by script (an experiment that declares its parameters
beside its code, with a figure and a timing through
articlekit.experiment.measure, its config entry, a section with a
pipe table of bound cells, a claim, a timing claim and a listing, and a
baseline), built with Pandoc and then with the real Quarto, and read back
from the built pages.

So the guide's examples are true (each block is what this test writes)
and the library serves an article it has never seen. One build per
renderer, small sizes; Quarto is found as tests/test_quarto.py finds it
(REQUIRE_QUARTO=1 turns its skip into a failure); the table's look is read
in the browser when there is one (tests/test_browser.py's fixture).
"""

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from articlekit.core.jsonio import read_json
from tests.test_browser import browser  # noqa: F401  (the fixture: headless Chromium, REQUIRE_BROWSER)
from tests.test_examples import snakemake
from tests.test_quarto import require_quarto

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "authoring.md"
# <!-- new-article: ACTION PATH [before "LINE"] --> and the fenced block after it
STEP = re.compile(
    r'<!-- new-article: (write|merge|insert) (\S+)(?: before "([^"]+)")? -->\n'
    r"(```|~~~)[^\n]*\n(.*?)\n\4\n",
    re.S,
)


def guide_steps():
    """(action, path, anchor, text) of each block the guide tells the author to write."""
    steps = [(m.group(1), m.group(2), m.group(3), m.group(5) + "\n") for m in STEP.finditer(GUIDE.read_text("utf-8"))]
    assert [(a, p) for a, p, _, _ in steps] == [
        ("write", "experiments/darts.py"),
        ("merge", "config.yaml"),
        ("insert", "article/index.qmd"),
        ("merge", "baseline/published.yaml"),
    ], "docs/authoring.md's walk-through lost a step"
    return steps


def merged(mine, theirs):
    """theirs added to mine: mappings merged key by key, lists extended."""
    for key, value in theirs.items():
        if isinstance(value, dict) and isinstance(mine.get(key), dict):
            merged(mine[key], value)
        elif isinstance(value, list) and isinstance(mine.get(key), list):
            mine[key] = mine[key] + value
        else:
            mine[key] = value
    return mine


def follow(folder, action, path, anchor, text):
    target = folder / path
    if action == "write":
        assert not target.exists(), f"{path} is the skeleton's: the guide would overwrite it"
        target.write_text(text, encoding="utf-8")
    elif action == "merge":
        data = merged(yaml.safe_load(target.read_text(encoding="utf-8")), yaml.safe_load(text))
        target.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    else:
        prose = target.read_text(encoding="utf-8")
        assert prose.count(anchor) == 1, f"{path} has no single line {anchor!r} to insert before"
        target.write_text(prose.replace(anchor, text + "\n" + anchor), encoding="utf-8")


@pytest.fixture(scope="module")
def article(tmp_path_factory):
    """The walk-through followed in a fresh skeleton, built with Pandoc."""
    folder = tmp_path_factory.mktemp("first") / "pi"
    subprocess.run(
        [sys.executable, "-m", "articlekit", "new", str(folder)], check=True, cwd=ROOT, capture_output=True, text=True
    )
    for step in guide_steps():
        follow(folder, *step)
    snakemake(folder, "--config", "renderer=pandoc")
    return folder


def bindings(folder):
    return read_json(folder / "build/bindings.json")


def printed(folder):
    """{lookup id: the text the page prints} of every bound value (a claim prints nothing)."""
    return {lookup: b["text"] for lookup, b in bindings(folder)["bindings"].items() if b["printed"]}


class Table(HTMLParser):
    """The header and body cells' text of each <table> of a page."""

    def __init__(self):
        super().__init__()
        self.tables, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"th": [], "td": []})
        elif tag in ("th", "td") and self.tables:
            self.cell = (tag, [])

    def handle_data(self, data):
        if self.cell:
            self.cell[1].append(data)

    def handle_endtag(self, tag):
        if self.cell and tag == self.cell[0]:
            self.tables[-1][tag].append("".join(self.cell[1]).strip())
            self.cell = None


def darts_table(html):
    parser = Table()
    parser.feed(html)
    tables = [t for t in parser.tables if t["th"] == ["darts", "estimate", "error"]]
    assert len(tables) == 1, f"the darts table is not on the page once: {[t['th'] for t in parser.tables]}"
    return tables[0]["td"]


def expected_cells(folder):
    values = read_json(folder / "results/darts.json")["values"]
    sizes = read_json(folder / "results/darts.json")["params"]["sizes"]
    return [
        cell
        for n, estimate, error in zip(sizes, values["estimates"], values["errors"])
        for cell in (f"{n:,}", f"{estimate:.4f}", f"{error:.1e}")
    ]


def test_the_guides_article_builds_with_every_value_bound_and_every_claim_held(article):
    md = (article / "build/article.md").read_text(encoding="utf-8")
    assert "{{<" not in md
    for lookup, text in printed(article).items():
        assert text in md, lookup
    claims = {c["key"]: c for c in bindings(article)["claims"]}
    assert {"darts.estimate", "darts.errors", "darts.speedup.estimate"} <= set(claims)
    assert all(c["status"] == "holds" for c in claims.values()), claims


def test_the_timing_is_a_measured_value_whose_claim_is_judged_on_its_interval(article):
    speedup = read_json(article / "results/darts.json")["values"]["speedup"]
    assert speedup["low"] <= speedup["estimate"] <= speedup["high"]
    assert len(speedup["ratios"]) == 9  # the guide's rounds, one ratio a round
    (claim,) = [c for c in bindings(article)["claims"] if c["key"] == "darts.speedup.estimate"]
    assert claim["expect"] == "> 5" and speedup["low"] > 5  # holds: the whole interval clears it
    assert f"{speedup['estimate']:.0f} times as fast" in (article / "build/article.md").read_text(encoding="utf-8")


def test_the_pipe_tables_cells_are_the_bound_values(article):
    html = (article / "build/article.html").read_text(encoding="utf-8")
    assert darts_table(html) == expected_cells(article)
    assert 'class="bound-value" title="darts.estimates[0] = ' in html  # cells link to their provenance


def test_the_listing_is_the_function_that_ran_and_the_figure_is_on_the_page(article):
    md = (article / "build/article.md").read_text(encoding="utf-8")
    assert "def estimate_pi(n, rng):" in md and "def estimate_pi_one_by_one" not in md
    html = (article / "build/article.html").read_text(encoding="utf-8")
    assert "data:image/svg+xml" in html and "beside one over the square root of that number" in html
    assert (article / "figures/darts-error.svg").stat().st_size > 0


def test_the_audit_and_the_departures_say_what_the_baseline_classes_promise(article):
    audit = read_json(article / "build/audit.json")
    assert audit["summary"]["moved_unexpectedly"] == audit["summary"]["key_missing"] == 0
    status = {row["id"]: row["status"] for row in audit["entries"]}
    assert status["darts.estimate"] == "reproduced"  # noise: the same digits, from the same seed
    assert status["darts.darts"] == "moved as expected"  # revised, with its reason
    assert status["darts.speedup"] in ("moved as expected", "reproduced")  # a timing: machines differ
    md = (article / "build/article.md").read_text(encoding="utf-8")
    departures = md.split("## Where this build departs from the published edition", 1)[1].split("\n## ", 1)[0]
    assert "**Change** (Pi from darts): the edition printed “10,000”; this build: 100,000." in departures
    assert "ten times fewer darts" in departures
    assert "darts.speedup" not in departures and "3.1587" not in departures  # no reason: nothing to list


@pytest.mark.parametrize(
    "typed, message",
    [
        ('seed: "2026x"', "darts.seed: '2026x' is not of type 'integer'"),
        (
            "rounds: 3",
            "darts.rounds: 3 is less than the minimum of 6 (measure.compare needs 6 rounds for a 95 % interval)",
        ),
    ],
)
def test_the_scripts_declarations_stop_a_mistyped_or_too_small_parameter_at_its_line(article, tmp_path, typed, message):
    """seed: "2026x" failed in the job (TypeError: SeedSequence expects int)
    and rounds: 3 in measure.compare (MeasureError), neither at its line.
    The guide's config.yaml has no section darts: (its script's PARAMETERS
    give every default): the mistake is in the override an author adds."""
    import shutil

    copy = tmp_path / "pi"
    shutil.copytree(article, copy, symlinks=True)
    config = copy / "config.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\ndarts:" not in text, "the guide's config.yaml sets darts: again; its script's PARAMETERS hold them"
    config.write_text(f"{text.rstrip()}\n\ndarts:\n  {typed}\n", encoding="utf-8")
    line = config.read_text(encoding="utf-8").splitlines().index(f"  {typed}") + 1
    results = (copy / "results/darts.json").read_bytes()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        ["snakemake", "--cores", "2", "--config", "renderer=pandoc"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0
    assert done.stderr.rstrip().endswith(f"config.yaml:{line}: {message}"), done.stderr[-3000:]
    assert (copy / "results/darts.json").read_bytes() == results  # stopped before any job


@pytest.mark.browser
def test_on_pandocs_page_the_tables_header_cells_stand_apart(article, browser):  # noqa: F811
    """The header cells ran together: Pandoc's page had no table style."""
    page = article / "build/article.html"
    assert 'id="quarto-content"' not in page.read_text(encoding="utf-8"), "Quarto's page, not Pandoc's"
    browser.get(page.as_uri())
    cells = browser.execute_script("""
        const table = [...document.querySelectorAll('table')]
            .find(t => t.querySelector('th') && t.querySelector('th').textContent.trim() === 'darts');
        const em = parseFloat(getComputedStyle(table).fontSize);
        return [...table.querySelectorAll('th')].map(th => {
            const style = getComputedStyle(th);
            return {padding: (parseFloat(style.paddingLeft) + parseFloat(style.paddingRight)) / em,
                    rule: parseFloat(style.borderBottomWidth)}; });""")
    assert len(cells) == 3
    # padding beside each header text (Chromium's own is a pixel), and a rule under the header row
    assert all(cell["padding"] >= 1.0 for cell in cells), cells
    assert all(cell["rule"] > 0 for cell in cells), cells


@pytest.mark.quarto
def test_with_quarto_the_same_article_shows_the_same_values_and_claims(article, tmp_path):
    """In a copy of its own: built with Quarto, the module's article would
    give the tests after it Quarto's page where they read Pandoc's."""
    import shutil

    pandoc_md = (article / "build/article.md").read_text(encoding="utf-8")
    env = require_quarto()
    article = Path(shutil.copytree(article, tmp_path / "pi", symlinks=True))
    snakemake(article, "--config", "renderer=quarto", env=env)
    html = (article / "build/article.html").read_text(encoding="utf-8")
    assert 'id="quarto-content"' in html, "not Quarto's page"
    assert "{{<" not in html and "{{&lt;" not in html
    for lookup, text in printed(article).items():
        if not lookup.startswith("listings."):  # a listing is highlighted: its text is split into tokens
            assert text in html or text.replace("'", "&#39;") in html, lookup
    assert darts_table(html) == expected_cells(article)
    assert all(c["status"] == "holds" for c in bindings(article)["claims"])
    md = (article / "build/article.md").read_text(encoding="utf-8")
    for line in ("def estimate_pi(n, rng):", "**Change** (Pi from darts)"):
        assert line in md and line in pandoc_md
