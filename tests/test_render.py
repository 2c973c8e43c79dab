"""render: the real value.lua, run by Pandoc through a filter that calls it
the way Quarto does, turns the fixture article into HTML and markdown."""

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from articlekit.render import page as rendermod
from articlekit.render import pagecheck
from articlekit.render import renderers
from articlekit.render.formats import gfm as gfm_format
from articlekit.render.formats import html as html_format
from articlekit.render.project import PAGE_CSS, quarto_options
from articlekit.render.renderers import RenderError
from articlekit.render.source import write_ast
from articlekit.article.bind import bind
from articlekit.core.fmt import format_value
from articlekit.core.jsonio import read_json, write_json
from articlekit.core.workfiles import owner_tag
from articlekit.article.bound import bound_markdown
from articlekit.article.shortcodes import scan
from articlekit.core.keys import lookup
from articlekit.data.values import merge
from tests.fixture_bibliography import copy_article_files

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "article"
VALUE_LUA = ROOT / "articlekit" / "render" / "quarto" / "_extensions" / "value" / "value.lua"


def make_article(folder, text=None):
    """The fixture article, with the project's _quarto.yml and stylesheet
    beside it; the extension comes from the package, as for any article."""
    shutil.copytree(FIXTURE, folder)
    copy_article_files(folder, ("style.css", ".gitignore", "references.bib"))
    if text is not None:
        (folder / "index.qmd").write_text(text, encoding="utf-8")
    values = merge((p, read_json(p)) for p in sorted((folder / "results").glob("*.json")))
    return folder / "index.qmd", values


def bind_and_render(folder, text=None, strict=True):
    article, values = make_article(folder, text)
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, strict))
    html_out, md_out = folder / "build" / "article.html", folder / "build" / "article.md"
    rendermod.render(article, bindings, "pandoc", html_out, md_out)
    return values, html_out.read_text(encoding="utf-8"), md_out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    # a folder name Pandoc's markdown would mangle (-- is a dash, _x_ emphasis)
    folder = tmp_path_factory.mktemp("render--_x_") / "article"
    values, page, md = bind_and_render(folder)
    return values, page, md, (folder / "index.qmd").read_text(encoding="utf-8")


class BoundValues(HTMLParser):
    """Text of every <a class="bound-value">, in document order."""

    def __init__(self):
        super().__init__()
        self.texts, self._in = [], False

    def handle_starttag(self, tag, attrs):
        if tag == "a" and "bound-value" in (dict(attrs).get("class") or ""):
            self._in = True
            self.texts.append("")

    def handle_endtag(self, tag):
        self._in = self._in and tag != "a"

    def handle_data(self, data):
        if self._in:
            self.texts[-1] += data


def test_every_shortcode_is_resolved(rendered):
    _, page, md, source = rendered
    # only the escaped one and the one in a shortcodes="false" block survive
    assert page.count("{{&lt;") == 2 and "{{<" not in page
    assert md.count("{{") == 2


def test_each_bound_number_is_format_of_its_json_value(rendered):
    values, page, _, source = rendered
    expected = [
        format_value(lookup(values["values"], sc.args[0]), sc.kwargs.get("fmt", ""))
        for sc in scan(source)
        if sc.name == "value" and sc.context == "prose" and not sc.escaped
    ]
    parser = BoundValues()
    parser.feed(page)
    assert [" ".join(t.split()) for t in parser.texts] == [" ".join(e.split()) for e in expected]
    assert "0.921946" in parser.texts and "92.19%" in parser.texts


def test_bound_numbers_link_to_their_provenance_row_with_a_tooltip(rendered):
    _, page, _, _ = rendered
    # the first place the prose prints a key carries the id the audit links to (at-...)
    assert (
        '<a href="#v-demo-dk64-unscaled-max-weight" id="at-v-demo-dk64-unscaled-max-weight" class="bound-value" '
        'title="demo.dk64.unscaled.max_weight = 0.9219460123456789 (experiments/demo.py); '
        'recompute: python -m articlekit reproduce demo.dk64.unscaled.max_weight">0.921946</a>'
    ) in page
    assert page.count('id="at-v-demo-dk64-unscaled-max-weight"') == 1
    # the key may wrap after a dot, never inside a name
    assert (
        '<span id="v-demo-dk64-unscaled-max-weight"><code>demo.<wbr>dk64.<wbr>unscaled.<wbr>max_weight</code></span>'
    ) in page
    assert "<code>experiments/<wbr>demo.py</code>" in page  # a path after a slash only


def test_code_block_shortcodes_are_resolved_with_quotes_stripped(rendered):
    _, _, md, _ = rendered
    assert 'print(f"{dk}: 0.921946")' in md
    assert "for dk in [16 64 512]:" in md
    assert "def softmax(x, axis=-1):\n    \"\"\"Softmax.\"\"\"" in md  # a multi-line listing
    assert "Inline code: `5.4`." in md


def test_a_value_with_markup_characters_renders_as_text(rendered):
    _, page, md, _ = rendered
    assert "a -&gt; b &lt;c&gt; &amp; *d*" in page  # prose and provenance: escaped text
    assert "<c>" not in page and "&#8594;" not in page and "→" not in page
    assert "# a -> b <c> & *d*" in md  # inside code: verbatim


def test_the_provenance_table_is_present(rendered):
    _, page, md, _ = rendered
    assert "<th" in page and "Claims checked" in page
    assert re.search(
        r"\| `demo\.parity\.max_abs_diff` \| 2\.220446049250313e-16 \| [^|]* \| \\< 1e-12 ✓ \| "
        r"`[^`]*results/demo\.json` \| `experiments/demo\.py` \|",
        md,
    )


def test_the_colophon_names_the_renderer(rendered):
    _, page, md, _ = rendered
    version = renderers.tool_version(renderers.pandoc_path())
    assert f"Built by Pandoc {version}." in md


def test_the_html_is_self_contained_with_the_stylesheet(rendered):
    _, page, _, _ = rendered
    assert "a.bound-value" in page  # article/style.css embedded
    assert '<link rel="stylesheet"' not in page and "<title>" in page


def test_a_failed_claim_in_non_strict_mode_shows_a_visible_warning(tmp_path):
    text = 'Reversed: {{< value demo.parity.reversed_diff fmt=".2f" expect="< 1e-12" >}}.\n\n{{< provenance >}}\n'
    _, page, md = bind_and_render(tmp_path / "article", text, strict=False)
    assert re.search(r'>3\.67</a> <span class="claim-failed" title="[^"]*">⚠ claim failed: &lt; 1e-12</span>', page)
    assert "3.67 **⚠ claim failed: \\< 1e-12**" in md


def test_a_key_missing_from_the_bindings_fails_the_render_naming_it(tmp_path):
    article, values = make_article(tmp_path / "article")
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, True))
    article.write_text(article.read_text(encoding="utf-8") + "\nNew: {{< value demo.timing.loop_ms >}}\n")
    html_out = tmp_path / "out" / "article.html"
    with pytest.raises(RenderError, match=r"no binding for key 'demo.timing.loop_ms'"):
        rendermod.render(article, bindings, "pandoc", html_out, tmp_path / "out" / "article.md")
    assert not html_out.exists()  # nothing half-written


def test_bind_fails_on_a_misspelt_key_with_file_line_and_suggestions(tmp_path):
    article, values = make_article(tmp_path / "article", "A\n\nB {{< value demo.arrrow >}}\n")
    write_json(tmp_path / "values.json", values)
    out = tmp_path / "bindings.json"
    done = subprocess.run(
        [
            "python",
            "-m",
            "articlekit",
            "bind",
            str(article),
            "--values",
            str(tmp_path / "values.json"),
            "--strict",
            "true",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 1 and not out.exists()
    assert f"{article}:3: unknown key 'demo.arrrow'; closest: demo.arrow" in done.stderr


def test_auto_picks_quarto_only_when_it_is_on_path(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert renderers.choose("auto") == "pandoc"
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/quarto")
    assert renderers.choose("auto") == "quarto"
    assert renderers.choose("pandoc") == "pandoc"


# --- the extension: the package's, never a copy ------------------------------


def test_the_copy_a_quarto_users_render_installs_is_never_read_by_the_build(tmp_path):
    """_extensions/articlekit/ (articlekit.render.extension) is the packaged
    extension again, maybe older: the Pandoc route, the PDF and the preview
    read the package's; `articlekit render` brings the copy up to date."""
    from articlekit.render import extension

    (tmp_path / "_quarto.yml").write_text("project:\n  type: default\n")
    assert extension.install(tmp_path) and extension.is_current(tmp_path)
    assert not extension.install(tmp_path)  # current: left as it is
    copy = tmp_path / "_extensions" / "articlekit" / "value" / "value.lua"
    assert copy.read_bytes() == VALUE_LUA.read_bytes()
    copy.write_text("-- an older articlekit's\n")
    assert not extension.is_current(tmp_path)
    extension.refresh_if_installed(tmp_path)
    assert copy.read_bytes() == VALUE_LUA.read_bytes()
    assert [p.name for p in (tmp_path / "_extensions").iterdir()] == ["articlekit"]  # no staging left


def test_the_extension_ships_as_package_data():
    """pyproject.toml's package-data names it, so a wheel of articlekit has it."""
    from tests.test_layout import shipped_data_files

    shipped = shipped_data_files()
    assert VALUE_LUA in shipped and VALUE_LUA.parent / "_extension.yml" in shipped


def test_value_lua_also_accepts_plain_string_arguments(tmp_path, rendered):
    """Quarto's current code passes argument values as strings, its docs say
    inlines: value.lua stringifies either."""
    values, _, _, source = rendered
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind("index.qmd", source, values, True))
    driver = tmp_path / "driver.lua"
    driver.write_text(f"""
local shortcodes = dofile({json.dumps(str(VALUE_LUA))})
function Pandoc(doc)
  local meta = {{ ["value-bindings"] = {json.dumps(str(bindings))} }}
  local r = shortcodes.value({{ "demo.dk64.unscaled.max_weight" }}, {{ fmt = ".6f" }}, meta, {{}}, "inline")
  local t = shortcodes.value({{ '"demo.dk64.unscaled.max_weight"' }}, {{ fmt = '".2%"' }}, meta, {{}}, "text")
  return pandoc.Pandoc({{ pandoc.Para(r), pandoc.Para({{ pandoc.Str(t) }}) }})
end
""")
    done = subprocess.run(
        [renderers.pandoc_path(), "-f", "markdown", "-t", "html", "--lua-filter", str(driver)],
        input="",
        capture_output=True,
        text=True,
        check=True,
    )
    assert 'class="bound-value"' in done.stdout and ">0.921946</a>" in done.stdout
    assert "<p>92.19%</p>" in done.stdout


# --- the lookup id: Python defines it, value.lua builds the same -----------------


def probe_bindings(ids):
    """A bindings document keyed by Python's lookup ids in which each binding
    prints its own id: as its text (T), its key (K) and, with a claim, its
    expect (E). value.lua stops on an id it builds that is not there."""

    def binding(ident):
        claimed = bool(ident.split("|", 2)[2])
        return {
            "key": f"⟦K {ident}⟧",
            "text": f"⟦T {ident}⟧",
            "expect": f"⟦E {ident}⟧",
            "anchor": "v-probe",
            "title": "",
            "claim": {"holds": False, "status": "fails", "message": "", "mark": {"text": "", "class": "probe"}}
            if claimed
            else None,
        }

    return {"bindings": {ident: binding(ident) for ident in ids}, "provenance_md": "", "departures_md": ""}


def printed_ids(sc):
    """What value.lua prints, outside HTML, for one shortcode of the probe:
    a value its text, then its claim's mark; a claim its mark (in code, with
    the key); a source its key."""
    ident, claimed = sc.lookup_id, bool(sc.lookup_parts[2])
    if sc.name == "value":
        return [f"T {ident}"] + ([f"E {ident}"] if claimed else [])
    if sc.name == "claim":
        return ([f"K {ident}"] if sc.context != "prose" else []) + [f"E {ident}"]
    return [f"K {ident}"] if sc.name == "source" else []


def test_relative_paths_work_as_the_rule_passes_them(tmp_path, monkeypatch):
    article, values = make_article(tmp_path / "article")
    write_json(
        tmp_path / "build" / "bindings.json",
        bind("article/index.qmd", article.read_text(encoding="utf-8"), values, True),
    )
    monkeypatch.chdir(tmp_path)
    assert (
        rendermod.main(
            [
                "article/index.qmd",
                "--bindings",
                "build/bindings.json",
                "--renderer",
                "pandoc",
                "--html",
                "build/article.html",
                "--md",
                "build/article.md",
            ]
        )
        == 0
    )
    assert (tmp_path / "build" / "article.html").stat().st_size > 0


def test_a_missing_figure_fails_the_render(tmp_path):
    text = "![A figure no rule made](../figures/nope.svg)\n"
    with pytest.raises(RenderError, match="nope.svg"):
        bind_and_render(tmp_path / "article", text)


STANDIN = Path(__file__).parent / "standin"  # a `quarto` that writes files where Quarto does


def quarto_standin(tmp_path, monkeypatch, **env):
    """The fixture article bound, and the stand-in quarto first on PATH."""
    article, values = make_article(tmp_path / "article")
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, True))
    monkeypatch.setenv("PATH", f"{STANDIN}:{os.environ['PATH']}")
    monkeypatch.setenv("QUARTO_STANDIN_LOG", str(tmp_path / "calls"))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    # the stand-in writes no table, and a page of one line, without a <head>
    # for its policy (what these tests read is where Quarto ran and wrote)
    monkeypatch.setattr(html_format, "check_page_structure", lambda *args: None)
    monkeypatch.setattr(pagecheck, "add_policy", lambda page: None)
    monkeypatch.setattr(pagecheck, "check_page", lambda *args, **kwargs: None)
    monkeypatch.setattr(gfm_format, "check_markdown_structure", lambda *args: None)
    return article, bindings


def test_the_quarto_path_runs_quarto_in_the_articles_folder(tmp_path, monkeypatch):
    """Quarto writes a bare --output name into its working directory, not
    beside the input: run from anywhere else, the render would not find it."""
    article, bindings = quarto_standin(tmp_path, monkeypatch, QUARTO_STANDIN_VERSION="1.9.38")
    before = set(os.listdir(article.parent))
    monkeypatch.chdir(tmp_path)
    name = rendermod.render(article, bindings, "auto", tmp_path / "out" / "a.html", tmp_path / "out" / "a.md")
    assert name == "Quarto 1.9.38"
    # each format's render asks Quarto's version, then renders
    html_call, scripts_call, md_call = [c for c in (tmp_path / "calls").read_text().splitlines() if c != "--version"]
    # Quarto renders the bound document (every shortcode resolved by bind), written beside the article
    assert re.match(r"render render-\S+-bound-html\.qmd --to html --output render-", html_call)
    assert re.match(r"render render-\S+-bound-gfm\.qmd --to gfm --output render-", md_call)
    # the page that says which scripts are Quarto's own (the page check's)
    assert re.match(r"render render-\S+-scripts\.qmd --to html --output render-", scripts_call)
    assert "-M renderer:Quarto 1.9.38" in html_call
    # _quarto.yml's settings handed over, for a Quarto that would not read them (a hidden folder)
    assert html_call.split()[-2] == md_call.split()[-2] == "--metadata-file"
    # no shortcode is left for Quarto to look up: no bindings file, no shortcode extension
    assert "value-bindings" not in html_call and "shortcodes:" not in html_call
    assert re.fullmatch(r"rendered html of render-\S+-bound-html\.qmd\n", (tmp_path / "out" / "a.html").read_text())
    assert re.fullmatch(r"rendered gfm of render-\S+-bound-gfm\.qmd\n", (tmp_path / "out" / "a.md").read_text())
    # nothing left in the article's folder but Quarto's scratch folder, which
    # the article's own .gitignore (committed, as Quarto would write it) names
    assert set(os.listdir(article.parent)) - before == {".quarto"}
    assert "/.quarto/" in (article.parent / ".gitignore").read_text().splitlines()


def test_quarto_is_handed_the_projects_settings_with_articlekits_style_sheet_first(tmp_path):
    """Where Quarto reads _quarto.yml too, it joins the lists without repeats
    and a top-level css goes before the format's: the page is the same
    either way (tests/test_quarto.py builds both)."""
    (tmp_path / "_quarto.yml").write_text(
        "project:\n  type: default\nlang: en\nformat:\n  html:\n    toc: true\n    css: style.css\n"
        "    html-math-method: mathml\n  gfm:\n    wrap: preserve\n",
        encoding="utf-8",
    )
    handed = quarto_options(tmp_path, tmp_path)
    assert handed == {
        "lang": "en",
        "css": [str(PAGE_CSS)],
        "format": {
            "html": {"toc": True, "css": ["style.css"], "html-math-method": "mathml"},
            "gfm": {"wrap": "preserve"},
        },
    }
    # an article below its project: the sheet is named from the article's folder
    (tmp_path / "article").mkdir()
    assert quarto_options(tmp_path, tmp_path / "article")["format"]["html"]["css"] == ["../style.css"]


def test_the_colophon_and_the_plan_read_one_quarto_version(tmp_path):
    """A Quarto release records its version in share/version beside bin/:
    read there, no process started (the plan asks on every snakemake call)."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "share").mkdir()
    quarto = tmp_path / "bin" / "quarto"
    quarto.write_text("#!/bin/sh\necho started >> \"$0.log\"\necho 0.0.0\n", encoding="utf-8")
    quarto.chmod(0o755)
    (tmp_path / "share" / "version").write_text("1.8.25\n", encoding="utf-8")
    assert renderers.quarto_version(quarto) == "1.8.25"
    assert not (tmp_path / "bin" / "quarto.log").exists()
    (tmp_path / "share" / "version").unlink()
    assert renderers.quarto_version(quarto) == "0.0.0"  # else its --version


def test_a_quarto_failure_gives_its_one_message_and_leaves_nothing(tmp_path, monkeypatch):
    message = "value shortcode: no binding for key 'demo.nope'"
    article, bindings = quarto_standin(tmp_path, monkeypatch, QUARTO_STANDIN_FAIL=message)
    before = set(os.listdir(article.parent))
    with pytest.raises(RenderError) as failed:
        rendermod.render(article, bindings, "quarto", tmp_path / "out" / "a.html", tmp_path / "out" / "a.md")
    assert str(failed.value) == f"{article}: quarto failed (exit 1): {message}"  # no traceback, said once
    assert set(os.listdir(article.parent)) - before == {".quarto"}  # index_files/ removed
    assert not (tmp_path / "out" / "a.html").exists()


def test_a_failed_claim_in_non_strict_mode_is_also_printed_on_the_terminal(tmp_path, capsys):
    """A rule sends stderr to its log; the warning goes to stdout too, which
    Snakemake leaves on the terminal."""
    text = 'Reversed: {{< value demo.parity.reversed_diff fmt=".2f" expect="< 1e-12" >}}.\n\n{{< provenance >}}\n'
    article, values = make_article(tmp_path / "article", text)
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), text, values, False))
    assert (
        rendermod.main(
            [
                str(article),
                "--bindings",
                str(bindings),
                "--renderer",
                "pandoc",
                "--html",
                str(tmp_path / "a.html"),
                "--md",
                str(tmp_path / "a.md"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith(f"WARNING: {article}:1: claim 'demo.parity.reversed_diff < 1e-12' failed: ")
    assert out.rstrip().endswith("(strict=false: the article shows it beside the number)")


def test_pandoc_writes_callouts_and_figures_as_quarto_does(tmp_path):
    """build/article.md is diffed between builds, so both renderers write it
    in one form: Quarto's (GitHub alert callouts, numbered figure captions)."""
    text = (
        '::: {.callout-note title="In short"}\nA note.\n:::\n\n'
        '![A plot.](../figures/plot.svg){#fig-plot}\n\n{{< provenance >}}\n'
    )
    article, values = make_article(tmp_path / "article", text)
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "plot.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), text, values, True))
    rendermod.render(article, bindings, "pandoc", tmp_path / "a.html", tmp_path / "a.md")
    md, page = (tmp_path / "a.md").read_text(), (tmp_path / "a.html").read_text()
    assert "> [!NOTE]\n>\n> ### In short\n>\n> A note.\n" in md
    assert '<div id="fig-plot">\n\n![](../figures/plot.svg)\n\nFigure\u00a01: A plot.\n\n</div>' in md
    assert re.search(r'<div class="callout-title-container">\s*In short\s*</div>', page)  # text, not CSS
    assert re.search(r"<figcaption>Figure\u00a01: A plot.</figcaption>", page)


def test_a_value_printed_as_code_keeps_its_link_and_tooltip(rendered):
    _, page, _, _ = rendered
    assert re.search(
        r'<a href="#v-demo-timing-speedup"(?: id="[^"]*")? class="bound-value" title="demo\.timing\.speedup = '
        r'[^"]*"><code>5\.4</code></a>',
        page,
    )


def test_values_in_a_code_block_link_back_through_a_source_line(rendered):
    _, page, md, _ = rendered
    # the key, breakable after each dot on a phone, linked to its provenance row
    assert (
        '<a href="#v-demo-arrow" class="bound-source" title="demo.arrow = a -&gt; b &lt;c&gt; &amp; *d* '
        '(experiments/demo.py); recompute: python -m articlekit reproduce demo.arrow">demo.<wbr>arrow</a>'
    ) in page
    assert "Source: `listings.attention.functions.softmax`." in md


def test_a_killed_renders_folder_goes_even_when_its_pid_came_back(tmp_path):
    """PIDs are reused: a work folder named after this process's pid but a
    different start is a dead render's; this render's own folder stays."""
    pid = os.getpid()
    live = tmp_path / f".render-{owner_tag()}-live"
    reused = tmp_path / f".render-{pid}_1-old"  # the same pid, started at boot: another process
    gone = tmp_path / ".render-999999999-gone"
    killed_pdf = tmp_path / ".pdf-999999999-gone"  # a render clears a killed pdf's folder too
    for folder in (live, reused, gone, killed_pdf):
        folder.mkdir()
    rendermod.remove_stale_render_folders(tmp_path)
    assert live.exists() and not reused.exists() and not gone.exists() and not killed_pdf.exists()


def test_the_page_written_from_the_articles_tree_is_the_page_read_from_the_article(tmp_path):
    """`articlekit parse` reads the bound article (bind's) once for every
    page Pandoc writes; written from that tree, the HTML and the markdown are
    the same bytes as when the render binds and reads the article itself."""
    folder = tmp_path / "article"
    _, read_page, read_md = bind_and_render(folder)
    bound = folder / "build" / "article.bound.md"
    document = json.loads((folder / "build" / "bindings.json").read_text(encoding="utf-8"))
    bound.write_text(bound_markdown((folder / "index.qmd").read_text(encoding="utf-8"), document), encoding="utf-8")
    tree = folder / "build" / "article.ast.json"
    write_ast(folder / "index.qmd", tree, bound=bound)
    html_out, md_out = tmp_path / "from-tree.html", tmp_path / "from-tree.md"
    rendermod.render(folder / "index.qmd", folder / "build" / "bindings.json", "pandoc", html_out, md_out, ast=tree)
    assert html_out.read_text(encoding="utf-8") == read_page
    assert md_out.read_text(encoding="utf-8") == read_md
    assert json.loads(tree.read_text(encoding="utf-8"))["pandoc-api-version"]  # Pandoc's own tree


def test_reading_an_unclosed_shortcode_names_the_articles_file_and_line(tmp_path):
    """The article is read by `parse` before bind may run; its message is
    bind's, "FILE:LINE: ...", so that whichever job fails first, the author
    is sent to the same line."""
    article = tmp_path / "index.qmd"
    article.write_text("---\ntitle: T\n---\n\nFine.\n\nBroken {{< value a.b here.\n", encoding="utf-8")
    with pytest.raises(renderers.RenderError) as failure:
        write_ast(article, tmp_path / "tree.json")
    assert str(failure.value).startswith(f"{article}:7: shortcode '{{{{< value a.b here.' is never closed")
    assert not (tmp_path / "tree.json").exists()


def test_quarto_is_never_handed_a_front_matter_key_that_reads_a_file(tmp_path, monkeypatch):
    """Quarto reads the front matter whole: include-in-header (or css,
    filters, ...) would have it embed a file of the machine's into the page.
    Refused with its line before Quarto runs."""
    article, bindings = quarto_standin(tmp_path, monkeypatch)
    text = article.read_text(encoding="utf-8")
    article.write_text(
        text.replace("---\n", "---\nformat:\n  html:\n    include-in-header: /etc/passwd\n", 1).replace(
            "format:\n  html:\n    toc: true\n", "", 1
        ),
        encoding="utf-8",
    )
    with pytest.raises(
        RenderError, match=re.escape(f"{article}:4: the front matter sets format.html.include-in-header")
    ):
        rendermod.render(article, bindings, "quarto", tmp_path / "out" / "a.html", tmp_path / "out" / "a.md")
    assert not (tmp_path / "calls").exists() or "render" not in (tmp_path / "calls").read_text()
