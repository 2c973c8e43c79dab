"""The scripts a Quarto user's `quarto render` and `quarto preview` run
around each render (articlekit.render.quarto_hooks, quarto_bind), without
Quarto: they read what Quarto hands project scripts
($QUARTO_PROJECT_INPUT_FILES, ..._OUTPUT_FILES, the Quarto project's folder
as the working directory), and the Quarto command above them from its
command line. With the real Quarto: tests/test_quarto.py.

The pre-render binds a prose edit in its own process, byte for byte as rule
bind would, and runs Snakemake when anything else a rule reads changed (an
experiment, the config, the baseline), so no value it hands the page is
older than its inputs; under `quarto preview` a failure becomes a page that
shows it, under `quarto render` an exit 1.
"""

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from articlekit.article.bound import bound_markdown
from articlekit.article.prose_guard import ProseError
from articlekit.core.text import md_code
from articlekit.render import prose_pieces, quarto_bind
from articlekit.render.extension import BOUND_POINTER
from articlekit.render.quarto_hooks import BOUND_DOCUMENT, LANDING_PAGE, PROFILE, is_landing_page
from articlekit.render.quarto_route import inert_for_quarto
from articlekit.skeleton.new import new_article

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parent.parent
# Where tests run the hooks from, with the input Quarto would name: the
# project's folder, where Quarto runs them for `quarto render` there and in
# article/ alike (one project).
FROM_PROJECT = ("", "article/index.qmd")


def hook(name, project, env, where="", launcher=None):
    """The hook as Quarto runs it; under `launcher` (a Quarto command, e.g.
    "preview"): started by a stand-in process whose command line is Quarto's."""
    command = [sys.executable, "-m", "articlekit", "quarto", name]
    if launcher:
        command = [sys.executable, str(ROOT / "tests/standin/quarto.js"), launcher, *command]
    return subprocess.run(
        command,
        cwd=project / where,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=900,
    )


def article_project(tmp_path):
    (tmp_path / "article").mkdir()
    (tmp_path / "Snakefile").write_text("# the module\n")
    (tmp_path / "config.yaml").write_text("strict: true\n")
    (tmp_path / "article/index.qmd").write_text("A value: {{< value k.x >}}, and {{{< value k.y >}}} shown as is.\n")
    (tmp_path / "article/example.qmd").write_text("Another document.\n")
    return tmp_path


def test_the_pre_render_refuses_a_document_the_build_does_not_bind(tmp_path):
    project = article_project(tmp_path)
    done = hook("pre-render", project, {"QUARTO_PROJECT_INPUT_FILES": "article/example.qmd"})
    assert done.returncode == 1
    assert "example.qmd is not the article this project builds (article/index.qmd" in done.stderr
    assert "quarto render index.qmd" in done.stderr
    assert not (project / "article/_extensions").exists()  # refused before it installed or built anything


@pytest.mark.parametrize("launcher", [None, "preview"])
def test_a_style_sheet_outside_the_project_stops_quartos_own_render_before_anything_is_bound(tmp_path, launcher):
    """Quarto embeds the style sheets _quarto.yml names: a file of the
    machine (here an absolute path) would be on the page, so the
    pre-render stops, under `quarto preview` too, naming the sheet."""
    (tmp_path / "project").mkdir()
    project = article_project(tmp_path / "project")
    secret = tmp_path / "secret.css"  # beside the project, not in it
    secret.write_text("/* the machine's secret */\n", encoding="utf-8")
    (project / "_quarto.yml").write_text(f"format:\n  html:\n    css: {secret}\n", encoding="utf-8")
    done = hook("pre-render", project, {"QUARTO_PROJECT_INPUT_FILES": "article/index.qmd"}, launcher=launcher)
    assert done.returncode == 1
    assert f"{secret}: the style sheet lies outside the project's folder" in done.stderr
    assert not (project / "build").exists()  # nothing bound, nothing written for Quarto to read


def test_the_index_page_that_leads_to_the_article_is_rendered_but_not_one_that_shows_a_value(tmp_path):
    """index.md, the page Quarto needs to preview the project's folder, is
    let through (it binds nothing: the refusal below comes later, from the
    missing values); the same page showing a value is refused at once."""
    project = article_project(tmp_path)
    (project / LANDING_PAGE).write_text("The article is at [article/index.html](article/index.html).\n")
    done = hook("pre-render", project, {"QUARTO_PROJECT_INPUT_FILES": f"{LANDING_PAGE}\narticle/index.qmd"})
    assert "is not the article this project builds" not in done.stderr
    (project / LANDING_PAGE).write_text("A value: {{< value k.x >}}.\n")
    done = hook("pre-render", project, {"QUARTO_PROJECT_INPUT_FILES": f"{LANDING_PAGE}\narticle/index.qmd"})
    assert done.returncode == 1
    assert f"{LANDING_PAGE} is not the article this project builds" in done.stderr


def test_the_post_render_removes_a_page_of_raw_shortcodes_and_says_what_to_run(tmp_path):
    project = article_project(tmp_path)
    out = project / "article"  # where Quarto writes the page: beside its text
    (out / "index.html").write_text("<p>A value: {{&lt; value k.x &gt;}}, and {{&lt; value k.y &gt;}}</p>")
    done = hook("post-render", project, {"QUARTO_PROJECT_OUTPUT_FILES": "article/index.html"})
    assert done.returncode == 1
    assert "1 shortcode(s) were not resolved" in done.stderr and "the value extension did not run" in done.stderr
    assert "_quarto-author.yml" in done.stderr
    assert not (out / "index.html").exists()


def test_the_pages_quarto_writes_beside_the_texts_are_not_inputs_of_a_rule(tmp_path):
    """With no output-dir, Quarto's own render writes each format's page
    beside its text (article/index.html, article/index.md, index.html for
    the landing page, X_files/): none of them may count as a changed input,
    or every save's page would send the next save through Snakemake. Any
    other new file still counts."""
    project = article_project(tmp_path)
    (project / LANDING_PAGE).write_text("The article is [here](article/index.html).\n")
    article = project / "article/index.qmd"
    before = quarto_bind.input_files(project, article)
    for page in ("article/index.html", "article/index.md", "article/example.html", "index.html"):
        (project / page).write_text("<p>a page</p>\n")
    (project / "article/index_files/libs").mkdir(parents=True)
    (project / "article/index_files/libs/quarto.js").write_text("// a page's library\n")
    assert quarto_bind.input_files(project, article) == before
    (project / "article/notes.txt").write_text("read by a rule, for all the pre-render knows\n")
    assert "article/notes.txt" in quarto_bind.input_files(project, article)


def test_the_post_render_keeps_a_bound_page(tmp_path):
    project = article_project(tmp_path)
    out = project / "article"
    (out / "index.html").write_text("<p>A value: 42, and {{&lt; value k.y &gt;}} shown as is.</p>")  # escaped one
    done = hook("post-render", project, {"QUARTO_PROJECT_OUTPUT_FILES": "article/index.html"})
    assert done.returncode == 0, done.stderr
    assert (out / "index.html").exists()


def test_outside_a_project_the_pre_render_says_where_to_run_it(tmp_path):
    (tmp_path / "article").mkdir()
    (tmp_path / "article/index.qmd").write_text("Text.\n")
    done = hook("pre-render", tmp_path, {"QUARTO_PROJECT_INPUT_FILES": "index.qmd"})
    assert done.returncode == 1
    assert "no articlekit project in" in done.stderr and "Snakefile and config.yaml" in done.stderr


def test_the_shipped_gitignores_hold_the_lines_quarto_would_append():
    """Quarto appends `/.quarto/` and `**/*.quarto_ipynb` to the .gitignore
    of the project it renders unless a line of it is exactly that
    (quarto-cli src/project/project-gitignore.ts): every folder with a
    _quarto.yml that we ship has them, so the author's file is never edited;
    `/_*.local` once a _*.local file is there, `/env/` once a virtual
    environment is (a pyvenv.cfg or conda-meta in env/)."""
    skeleton = ROOT / "articlekit/skeleton/article"
    ignores = {folder: folder / ".gitignore" for folder in (ROOT, ROOT / "examples/summation")}
    ignores[skeleton] = skeleton / "gitignore"
    for folder, ignore in ignores.items():
        assert (folder / "_quarto.yml").is_file(), folder
        lines = [line.strip() for line in ignore.read_text(encoding="utf-8").splitlines()]
        assert {"/.quarto/", "**/*.quarto_ipynb", "/_*.local", "/env/"} <= set(lines), ignore
        assert {"/_extensions/articlekit/", "/_extensions/.articlekit-*/"} <= set(lines), ignore


SHIPPED_PROJECTS = (ROOT, ROOT / "articlekit/skeleton/article", ROOT / "examples/summation")


def test_one_quarto_project_renders_the_article_and_its_index_page_with_the_hooks():
    """The project's _quarto.yml is the only one (a project in article/ too
    would make `quarto preview` in the project's folder render each save
    twice); its author profile holds the hooks."""
    for folder in SHIPPED_PROJECTS:
        config = yaml.safe_load((folder / "_quarto.yml").read_text(encoding="utf-8"))
        assert config["project"]["render"] == ["article/index.qmd", LANDING_PAGE]
        assert config["profile"]["default"] == PROFILE
        author = yaml.safe_load((folder / f"_quarto-{PROFILE}.yml").read_text(encoding="utf-8"))["project"]
        assert author["pre-render"] == "python -m articlekit quarto pre-render"
        assert author["post-render"] == "python -m articlekit quarto post-render"
        # the page beside its text: with an output-dir, Quarto walks every
        # file of the project (hidden folders, virtual environments) each time
        # it reads the project, on every save under `quarto preview`
        assert "output-dir" not in author, folder
        assert not list((folder / "article").glob("_quarto*.yml")), folder
        assert is_landing_page(folder, LANDING_PAGE), folder


def test_the_plan_facts_cover_every_read_of_the_articles_text_in_the_workflow():
    """The fast path binds without Snakemake only while what the plan reads
    from the article's text (beyond the rules' inputs) is as it was: each
    such read in articlekit/workflow must be one that quarto_bind.plan_facts
    covers, or that fast path could bind against values made for another plan."""
    covered = {
        "": "validation only",
        "settings.cited_experiments": "the word robustness",
        "figure_links": "figures",
        "article_shortcodes": "robustness",
        # the sweep summary's message for an article that does not parse: bind stops on it first
        "_unparsed": "robustness",
        "seed_figures": "figures",
        "scan": "validation only",
    }
    reads = []
    # The plan reads the article in Python (plan.py's _article_text, wiring.py's
    # read_text(plan.article)); the rules read it through the plan.
    workflow = ROOT / "articlekit/workflow"
    for path in sorted([*workflow.rglob("*.smk"), *workflow.glob("*.py")]):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"open\(\s*ARTICLE|Path\(\s*ARTICLE\s*\)\.read", text), path
        reads += [
            (path.name, m.group(1) or "")
            for m in re.finditer(r"(?:([\w.]+)\((?:ARTICLE,\s*)?)?read_text\((?:ARTICLE|plan\.article)\)", text)
        ]
        # what the plan computes from the text it read once (_article_text)
        reads += [
            (path.name, m.group(1))
            for m in re.finditer(r"([\w.]+)\((?:article,\s*)?text\b", text)
            if path.name == "plan.py" and m.group(1) not in {"scan", "_article_text", "_shortcodes"}
        ]  # scan(text): validation
    assert reads and {name for _, name in reads} <= set(covered), reads


# --- a new article's pre-render, bound through Snakemake once, then in-process ------------


def pre_render(project, where=FROM_PROJECT, launcher=None, **env):
    return hook(
        "pre-render",
        project,
        {
            "QUARTO_PROJECT_INPUT_FILES": where[1],
            quarto_bind.SNAKEMAKE_ARGS: "--config strict=false renderer=pandoc",
            **env,
        },
        where=where[0],
        launcher=launcher,
    )


def bound(project, key):
    """{fmt: the text the page prints} for each binding of key."""
    bindings = yaml.safe_load((project / quarto_bind.PAGE_BINDINGS).read_text(encoding="utf-8"))["bindings"]
    return {b["fmt"]: b["text"] for b in bindings.values() if b["key"] == key}


@pytest.fixture(scope="module")
def skeleton(tmp_path_factory):
    """A new article whose pre-render ran once: Snakemake made its values."""
    project = tmp_path_factory.mktemp("hooks") / "my-article"
    new_article(project)
    done = pre_render(project)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "no Snakemake run recorded yet" in done.stderr and "made by Snakemake" in done.stderr
    assert (project / quarto_bind.PAGE_BINDINGS).read_bytes() == (project / quarto_bind.BINDINGS).read_bytes()
    return project


@pytest.fixture
def article(skeleton):
    """The article's text, to edit; put back after."""
    path = skeleton / "article/index.qmd"
    original = path.read_text(encoding="utf-8")
    yield path
    path.write_text(original, encoding="utf-8")


@pytest.mark.slow
def test_a_prose_edit_is_bound_without_snakemake_byte_for_byte_as_bind_binds_it(skeleton, article):
    text = article.read_text(encoding="utf-8")
    article.write_text(
        text.replace("Every number in this article", "Each number in this article")
        + "\nAnd again: {{< value harmonic.params.n >}} terms.\n",
        encoding="utf-8",
    )
    done = pre_render(skeleton, FROM_PROJECT)  # the project's own _quarto.yml, as `quarto render` there runs it
    assert done.returncode == 0, done.stderr[-3000:]
    assert "without Snakemake (only article/index.qmd's text changed" in done.stderr
    assert "Building DAG" not in done.stderr + done.stdout
    reference = skeleton / "build/reference.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "bind",
            "article/index.qmd",
            "--values",
            "build/values.json",
            "--strict",
            "false",
            "--baseline",
            "baseline/published.yaml",
            "--out",
            str(reference),
        ],
        cwd=skeleton,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert (skeleton / quarto_bind.PAGE_BINDINGS).read_bytes() == reference.read_bytes()
    assert bound(skeleton, "harmonic.params.n") == {",": "1,000", "": "1000"}
    metadata = yaml.safe_load((skeleton / "build/quarto-project-metadata.yml").read_text(encoding="utf-8"))
    # a code span: Pandoc reads metadata as Markdown, and gives the path back whole
    assert metadata["value-bindings"] == md_code(str(skeleton / quarto_bind.PAGE_BINDINGS))
    # the project's _quarto.yml holds the settings and Quarto reads them
    # itself: not handed over again (a format list would be joined twice)
    assert "format" not in metadata
    assert "value-unbound" not in metadata


@pytest.mark.slow
def test_an_article_laid_out_the_old_way_gets_its_own_projects_settings_handed_over(skeleton, tmp_path):
    """The layout before one project: article/ a Quarto project of its own,
    with the page's settings, below the project's. Quarto renders the
    article through article/'s project, so the project folder's pre-render
    hands those settings over, paths made absolute."""
    old = tmp_path / "old"
    shutil.copytree(skeleton, old, symlinks=True)
    (old / "article/_quarto.yml").write_text(
        "project:\n  type: default\nformat:\n  html:\n    css: old.css\n    html-math-method: mathml\n",
        encoding="utf-8",
    )
    (old / "article/old.css").write_text("p { margin: 0; }\n", encoding="utf-8")
    done = pre_render(old, FROM_PROJECT)
    assert done.returncode == 0, done.stderr[-3000:]
    # and the way out said: one project, as `articlekit new` lays it out
    assert "article/_quarto.yml makes article/ a Quarto project of its own" in done.stderr
    assert "renders each save twice. Keep one project" in done.stderr
    metadata = yaml.safe_load((old / "build/quarto-project-metadata.yml").read_text(encoding="utf-8"))
    assert metadata["format"]["html"]["html-math-method"] == "mathml"
    assert metadata["format"]["html"]["css"] == [str((old / "article/old.css").resolve())]


@pytest.mark.slow
def test_a_prose_edit_hands_quarto_the_bound_document_of_that_very_text(skeleton, article):
    """What Quarto renders in the text's place (the bound engine): the text
    bound, as the build's Quarto route writes it, and the pointer beside
    each copy of the extensions naming the text and its md5."""
    text = article.read_text(encoding="utf-8").replace("Every number in this article", "Every figure in this article")
    article.write_text(text, encoding="utf-8")
    done = pre_render(skeleton, FROM_PROJECT)
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads((skeleton / quarto_bind.PAGE_BINDINGS).read_text(encoding="utf-8"))
    expected = inert_for_quarto(bound_markdown(text, document, "article/index.qmd"))
    assert (skeleton / BOUND_DOCUMENT).read_text(encoding="utf-8") == expected
    assert "Every figure in this article" in expected and "{{< value" not in expected
    for folder in (skeleton / "article", skeleton):  # the article's copy, the project's own
        pointer = json.loads((folder / BOUND_POINTER).read_text(encoding="utf-8"))
        assert pointer == {
            "source": str(article.resolve()),
            "md5": hashlib.md5(text.encode("utf-8")).hexdigest(),
            "bound": str(skeleton / BOUND_DOCUMENT),
        }


@pytest.mark.slow
def test_a_cross_reference_is_checked_against_every_piece_while_only_the_edited_one_is_read(skeleton, article):
    """The prose check of a save reads only the pieces it changed, citations
    and all, and still checks each @fig- reference against the figures of
    the whole text, at its line in the article."""
    text = article.read_text(encoding="utf-8")
    figure = "(../figures/harmonic-partial-sums.svg)"
    assert figure in text.split("\n## ")[0]  # the first piece shows it; the reference goes in the last
    edited = text.replace(figure, figure + "{#fig-first}").rstrip("\n")
    edited += "\n\nAs @fig-first shows, and as [@vaswani2017] says.\n"
    pieces = prose_pieces.pieces(Path("article/index.qmd"), edited)[1]
    assert len(pieces) > 2  # the citation does not keep the text whole
    prose_pieces.check_changed(skeleton, Path("article/index.qmd"), edited)
    assert prose_pieces.check_changed(skeleton, Path("article/index.qmd"), edited) == 0  # nothing new to read
    slip = edited.replace("As @fig-first shows", "As @fig-frist shows")
    read = None
    with pytest.raises(ProseError) as refused:
        read = prose_pieces.check_changed(skeleton, Path("article/index.qmd"), slip)
    line = slip[: slip.index("@fig-frist")].count("\n") + 1
    assert f"article/index.qmd:{line}: the reference @fig-frist names no figure" in str(refused.value)
    assert "fig-first" in str(refused.value)
    assert read is None
    # mended: only the piece the slip changed is read again
    assert prose_pieces.check_changed(skeleton, Path("article/index.qmd"), edited) == 1


@pytest.mark.slow
def test_a_second_pre_render_of_the_same_save_binds_nothing(skeleton, article):
    """`quarto preview` runs the pre-render more than once for one save: the
    second finds the text, and all it reads, as when the bindings were made,
    and leaves them be; a bindings file changed by hand is made again."""
    text = article.read_text(encoding="utf-8")
    article.write_text(text.replace("Every number in this article", "All numbers in this article"), encoding="utf-8")
    first = pre_render(skeleton)
    assert first.returncode == 0 and "without Snakemake" in first.stderr, first.stderr[-3000:]
    page = skeleton / quarto_bind.PAGE_BINDINGS
    made = (page.read_bytes(), page.stat().st_mtime_ns)
    again = pre_render(skeleton)
    assert again.returncode == 0 and "nothing to bind: article/index.qmd's text" in again.stderr, again.stderr
    assert (page.read_bytes(), page.stat().st_mtime_ns) == made
    page.write_text(page.read_text(encoding="utf-8").replace("1,000", "2,000"), encoding="utf-8")
    mended = pre_render(skeleton)
    assert "without Snakemake" in mended.stderr and page.read_bytes() == made[0]


@pytest.mark.slow
def test_raw_html_in_a_prose_edit_is_refused_as_the_build_refuses_it(skeleton, article):
    """The in-process bind skips Snakemake, not rule parse_article's prose
    check: an <img src> (which Quarto's embedding would follow to any file)
    stops `quarto render` with the check's file:line; the clean text saved
    again after it is the one the bindings were made from, and binds nothing."""
    text = article.read_text(encoding="utf-8")
    assert pre_render(skeleton).returncode == 0  # the clean text bound, whatever ran before
    slip = '<img src="/etc/hostname">'
    article.write_text(
        text.replace("\n## Where this build", f"\nA picture: {slip}\n\n## Where this build", 1), encoding="utf-8"
    )
    line = text[: text.index("\n## Where this build")].count("\n") + 2
    rendering = pre_render(skeleton, launcher="render")
    assert rendering.returncode == 1, rendering.stderr[-3000:]
    assert "Building DAG" not in rendering.stderr + rendering.stdout  # refused without Snakemake
    assert re.search(rf"parse: article/index\.qmd:{line}: .*raw HTML", rendering.stderr), rendering.stderr[-3000:]
    assert "quarto pre-render: the article's values, bindings or lint could not be made" in rendering.stderr
    previewing = pre_render(skeleton, launcher="preview")
    assert previewing.returncode == 0, previewing.stderr[-3000:]
    banner = (skeleton / "build/quarto-problems.html").read_text(encoding="utf-8")
    assert re.search(rf"article/index\.qmd:{line}: .*raw HTML", html.unescape(banner)), banner
    article.write_text(text, encoding="utf-8")
    again = pre_render(skeleton, launcher="render")
    assert again.returncode == 0 and "nothing to bind" in again.stderr, again.stderr[-3000:]
    assert not (skeleton / "build/quarto-project-metadata.yml").read_text(encoding="utf-8").count("value-unbound")


@pytest.mark.slow
def test_under_quarto_preview_a_typed_number_is_shown_on_the_page_not_a_blank_error(skeleton, article):
    text = article.read_text(encoding="utf-8")
    article.write_text(
        text.replace("\n## Where this build", "\nThe answer is 42.\n\n## Where this build", 1), encoding="utf-8"
    )
    line = text[: text.index("\n## Where this build")].count("\n") + 2
    rendering = pre_render(skeleton, launcher="render")
    assert rendering.returncode == 1
    assert f"article/index.qmd:{line}: numeral '42'" in rendering.stderr
    assert "quarto pre-render: the article's values, bindings or lint could not be made" in rendering.stderr
    previewing = pre_render(skeleton, launcher="preview")
    assert previewing.returncode == 0, previewing.stderr[-3000:]
    metadata = yaml.safe_load((skeleton / "build/quarto-project-metadata.yml").read_text(encoding="utf-8"))
    assert metadata["value-unbound"] == "mark"
    banner = Path(metadata["format"]["html"]["include-before-body"][0]).read_text(encoding="utf-8")
    assert 'id="preview-banner"' in banner and "`quarto render` would stop here" in banner
    assert f"article/index.qmd:{line}: numeral &#x27;42&#x27;" in banner
    assert "bound with strict=false" in banner
    assert not (skeleton / "article" / BOUND_POINTER).exists()  # the shortcodes, marked, not a bound document
    # the lint's advice quotes a shortcode; the banner's is no unresolved one for the post-render
    assert "print it with {&#123;&lt; value KEY" in banner and "{{" not in banner


@pytest.mark.slow
def test_under_quarto_preview_an_unknown_key_keeps_the_last_bindings_and_names_the_key(skeleton, article):
    text = article.read_text(encoding="utf-8")
    article.write_text(text + "\nA slip: {{< value harmonic.valeu >}}.\n", encoding="utf-8")
    previewing = pre_render(skeleton, launcher="preview")
    assert previewing.returncode == 0, previewing.stderr[-3000:]
    banner = (skeleton / "build/quarto-problems.html").read_text(encoding="utf-8")
    assert "unknown key &#x27;harmonic.valeu&#x27;" in banner
    assert "from the last bindings made" in banner
    assert bound(skeleton, "harmonic.value")  # the page still shows what bound before


@pytest.mark.slow
@pytest.mark.parametrize("edit", ["config", "experiment"])
def test_an_edited_config_or_experiment_runs_snakemake_and_no_value_is_stale(skeleton, edit):
    """The edit changes a value (config: n, overriding the default the
    script declares) or only the code (a comment): either way Snakemake
    runs first, and the page's value is the new one."""
    path = skeleton / ("config.yaml" if edit == "config" else "experiments/harmonic.py")
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(
            original + "\nharmonic:\n  n: 2000\n" if edit == "config" else original + "# an edit\n",
            encoding="utf-8",
        )
        done = pre_render(skeleton)
        assert done.returncode == 0, done.stderr[-3000:]
        assert f"{path.relative_to(skeleton)} changed: running `snakemake build/article.html" in done.stderr
        assert "made by Snakemake" in done.stderr
        assert bound(skeleton, "harmonic.params.n")[","] == ("2,000" if edit == "config" else "1,000")
        again = pre_render(skeleton)  # as `quarto preview` runs it again for the same save
        assert "nothing to bind" in again.stderr, again.stderr[-3000:]
    finally:
        path.write_text(original, encoding="utf-8")
        # the skeleton as every test of the module finds it: bound, and its
        # state recording the files as they are (else the next test's
        # pre-render would run Snakemake for this edit's undoing)
        assert pre_render(skeleton).returncode == 0


# ---- the prose's pieces read while `quarto preview` starts ---------------------------------


@pytest.fixture
def stand_in_snakemake(tmp_path, monkeypatch):
    """A project whose Snakemake is a stand-in that writes the bindings bind
    would (the article and strict it ran with) -> (config, the article's text,
    the texts prose_pieces.remember_all was given)."""
    (tmp_path / "article").mkdir()
    text = "# A title\n\nA sentence.\n"
    (tmp_path / "article/index.qmd").write_text(text, encoding="utf-8")
    writes = "import json, pathlib; p = pathlib.Path('build'); p.mkdir(exist_ok=True); "
    writes += "(p / 'bindings.json').write_text(json.dumps({'article': 'article/index.qmd', 'strict': False}))"
    monkeypatch.setattr(quarto_bind.Settings, "command", property(lambda self: [sys.executable, "-c", writes]))
    remembered = []
    monkeypatch.setattr(prose_pieces, "remember_all", lambda root, article, text: remembered.append(text))
    return quarto_bind.Settings(tmp_path, (), "article/index.qmd", "baseline/published.yaml"), text, remembered


def test_a_preview_started_through_snakemake_reads_the_prose_pieces_for_the_first_save(stand_in_snakemake):
    """So that the first save reads only the piece it changed, not all of
    them (seconds on the real article): the text Snakemake's parse_article
    checked whole is handed to remember_all."""
    config, text, remembered = stand_in_snakemake
    quarto_bind.bind_with_snakemake(config, text, previewing=True)
    assert remembered == [text]


def test_a_render_or_a_text_edited_while_snakemake_ran_reads_no_pieces_ahead(stand_in_snakemake):
    config, text, remembered = stand_in_snakemake
    quarto_bind.bind_with_snakemake(config, text, previewing=False)  # `quarto render`: no save follows
    quarto_bind.bind_with_snakemake(config, text + "An edit saved meanwhile.\n", previewing=True)
    assert remembered == []
