"""The prose puts nothing on the page that loads, runs or embeds a file.

Each hostile line is read the way the build reads the article (`articlekit
parse`, Pandoc's tree) and must be refused there, before any renderer runs,
with the article's file:line and what to write instead; the tree is never
written. The safe list (comments, bare <br> <wbr> <sub> <sup> <kbd> <mark>
<small>) and ordinary Markdown pass. Then the figures: a link into figures/
is embedded from the file a rule wrote, and a figure that is a symbolic
link (or lies under one) is refused with its line, by the render and the
PDF alike, before anything is written.
"""

import base64
import os
import re
import shutil
import subprocess

import pytest

from articlekit.article.prose_guard import ProseError
from articlekit.core.jsonio import write_json
from articlekit.render import page as rendermod
from articlekit.render.formats.pdf import render_pdf
from articlekit.render.renderers import RenderError
from articlekit.render.source import write_ast
from tests.test_render import make_article

pytestmark = pytest.mark.workflow

BEFORE = "# A heading\n\nA first paragraph.\n\n"

# the hostile text (on line 5 of the article) -> what the refusal must say
HOSTILE = {
    "an image of a local file": ('<img src="/etc/passwd">', '<img src="/etc/passwd">', "![caption](../figures/"),
    "a script of a local file": ('<script src="/etc/hostname"></script>', "<script src=", "runs no script"),
    "an inline script": ('<script>fetch("http://127.0.0.1:9/")</script>', "<script>fetch(", "runs no script"),
    "an onerror handler": ('<img src=x onerror="fetch(1)">', "<img src=x onerror=", "![caption](../figures/"),
    "an iframe srcdoc": ('<iframe srcdoc="<b>x</b>"></iframe>', "<iframe srcdoc=", "runs no script"),
    "a background attribute": (
        '<table background="http://127.0.0.1:9/b.png"><tr><td>x</td></tr></table>',
        "<table background=",
        "pipe table",
    ),
    "a base": ('<base href="http://127.0.0.1:9/">', "<base href=", "runs no script"),
    "a meta refresh": (
        '<meta http-equiv="refresh" content="0; url=http://127.0.0.1:9/">',
        "<meta http-equiv=",
        "runs no script",
    ),
    "an alternate style sheet": (
        '<link rel="alternate stylesheet" href="http://127.0.0.1:9/a.css">',
        "<link rel=",
        "runs no script",
    ),
    "a CDN script": ('<script src="https://cdn.example.org/x.js"></script>', "<script src=", "runs no script"),
    "a CSS image-set() in a style element": (
        "<style>p { background: image-set('http://127.0.0.1:9/i.png' 1x) }</style>",
        "<style>",
        "runs no script",
    ),
    "a raw HTML block": (
        '```{=html}\n<object data="/etc/passwd"></object>\n```',
        '<object data="/etc/passwd">',
        "runs no script",
    ),
    "a raw inline": ('`<img src="/etc/passwd">`{=html}', '<img src="/etc/passwd">', "![caption](../figures/"),
    "raw Typst, which would reach the PDF": ('`#image("/etc/passwd")`{=typst}', "raw typst markup", "PDF"),
    "a comment that a browser ends early": (
        "<!-- a --!> <img src=/etc/passwd> -->",
        "<img src=/etc/passwd>",
        "![caption](../figures/",
    ),
    "an empty comment, which hides nothing from a browser": (
        "<!--> <img src=/etc/passwd> -->",
        "<img src=/etc/passwd>",
        "![caption](../figures/",
    ),
    "a safe tag with an attribute": ('<sub onclick="fetch(1)">2</sub>', '<sub onclick="fetch(1)">', "H~2~O"),
    # Markdown that names a file or runs code without raw HTML
    "an image of a local file in Markdown": ("![x](/etc/passwd)", "the image /etc/passwd is not a figure", "figures/"),
    "an image from the network": ("![x](http://127.0.0.1:9/x.png)", "the image http://127.0.0.1:9/x.png", "figures/"),
    "an image outside figures/": ("![x](../secret.svg)", "the image ../secret.svg", "figures/"),
    "an image that climbs out of figures/": (
        "![x](../figures/../../etc/x.svg)",
        "the image ../figures/../../etc/x.svg",
        "figures/",
    ),
    "an attribute handler": ("[x]{onmouseover=\"fetch(1)\"}", "onmouseover=\"fetch(1)\" is not allowed", "runs code"),
    "a div Pandoc reads as its own": (
        '<div onclick="fetch(1)">\nx\n</div>',
        'onclick="fetch(1)" is not allowed',
        "remove it",
    ),
    "an image's srcset attribute": ("![x](../figures/a.svg){srcset=\"/etc/passwd 2x\"}", "srcset=", "may only be"),
    "a style that loads": ("[x]{style=\"background: url(/etc/passwd)\"}", "style=", "style.css"),
    # a style that loads through a custom property, past any CSS reading of one attribute
    "a style that loads by a variable": (
        "[x]{style=\"background-image:image-set(var(--u) 1x)\"}",
        "style=",
        "style.css",
    ),
    "a style that only colours": ("[x]{style=\"color: #333\"}", "style=", "style.css"),
    # articlekit's own attribute, typed by hand to paste raw Typst into the PDF
    "a claim mark that is not articlekit's": (
        "[x]{claim-mark='claim-failed\", [])X #read(\"/etc/passwd\") Y #claim-mark(\"claim-failed'}",
        "claim-mark=",
        "articlekit writes claim-mark itself, only as claim-failed or claim-inconclusive",
    ),
    "a javascript: link": ("[x](javascript:fetch(1))", "scheme javascript:", "https://"),
    "a link behind a control character": ("[x](&#1;javascript:fetch(1))", "control character", "https://"),
    "a link whose scheme is an entity": ("[x](&#x6A;avascript:fetch(1))", "scheme javascript:", "https://"),
    "a file: link": ("[x](file:///etc/passwd)", "scheme file:", "https://"),
    "a data: link": ("[x](data:text/html,<script>1</script>)", "scheme data:", "https://"),
    "a link that climbs out of the build": ("[x](../../etc/passwd)", "outside the build's folder", "https://"),
    "a link to another host without a scheme": ("[x](//127.0.0.1:9/a)", "outside the build's folder", "https://"),
    "an identifier that is not a name": ('<span id="a b&quot;x">x</span>', "not a plain name", "letters"),
    "a metadata block in the body": (
        '---\nheader-includes: <script src="/etc/hostname"></script>\n---',
        "a YAML metadata block in the body sets 'header-includes'",
        "front matter",
    ),
}


def article_with(tmp_path, line5):
    article, _ = make_article(tmp_path / "article", BEFORE + line5 + "\n\nThe end.\n")
    return article


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_prose_is_refused_when_the_article_is_read(tmp_path, case):
    text, named, instead = HOSTILE[case]
    article = article_with(tmp_path, text)
    tree = tmp_path / "build" / "article.ast.json"
    with pytest.raises(ProseError) as refused:
        write_ast(article, tree)
    message = str(refused.value)
    line = 6 if case in ("a metadata block in the body", "a raw HTML block") else 5  # inside its fence
    assert message.startswith(f"{article}:{line}: "), message
    assert named in message and instead in message, message
    assert not tree.exists() and not list(tree.parent.glob(".parse-*"))


@pytest.mark.parametrize(
    "raw, safe",
    [
        ("<!-- a note -->", True),
        ("<br />", True),
        ("</sub>", True),
        ("<KBD>", True),
        ("<!-->", False),
        ("<!--->", False),
        ("<!-- a --!> <img src=x> -->", False),
        ("<br onclick=x>", False),
        ("<sub class=x>", False),
        ("</br>", False),
        ("<script>", False),
    ],
)
def test_what_the_safe_list_holds(raw, safe):
    """Comments a browser ends where Pandoc does, and the bare safe tags;
    not a comment that ends early (what follows it is live in a browser)."""
    from articlekit.article.prose_guard import is_safe_raw

    assert is_safe_raw("html", raw) is safe
    assert not is_safe_raw("typst", "<br>")


def test_the_parse_command_names_the_line_and_exits_1(tmp_path, capsys):
    from articlekit.render import parse

    article = article_with(tmp_path, '<img src="/etc/passwd">')
    # the bound article is the article itself: it binds no value
    assert parse.main([str(article), "--bound", str(article), "--out", str(tmp_path / "tree.json")]) == 1
    assert f"parse: {article}:5: raw HTML <img src=\"/etc/passwd\"> is not allowed" in capsys.readouterr().err


@pytest.mark.parametrize(
    "safe",
    [
        "H<sub>2</sub>O and x<sup>2</sup>, <kbd>Ctrl</kbd>, <mark>this</mark>, <small>that</small>, a<br>b<wbr>c<br/>",
        "<!-- a note to the authors -->",
        "A [link](https://example.org){.external title=\"a paper\"}, a [span]{.cited lang=en}, `code`.",
        "::: {.callout-note title=\"A note\" collapse=\"true\"}\nText.\n:::",
        "A [link](audit.html#a-row) to a file of the build, [mail](mailto:a@b.org), [a place](#sec).",
        "[a note]{#note-1 .aside lang=\"de-CH\" dir=\"ltr\"} and [code]{width=\"80%\"}",
    ],
)
def test_the_safe_list_and_plain_markdown_pass(tmp_path, safe):
    article = article_with(tmp_path, safe)
    write_ast(article, tmp_path / "tree.json")
    assert (tmp_path / "tree.json").exists()


def test_every_problem_is_named_at_once(tmp_path):
    article = article_with(tmp_path, '<img src="/etc/passwd">\n\n<script src="/etc/hostname"></script>')
    with pytest.raises(ProseError) as refused:
        write_ast(article, tmp_path / "tree.json")
    assert [p.split(": ")[0] for p in refused.value.problems] == [f"{article}:5", f"{article}:7"]


def test_the_front_matter_is_checked_as_the_body_is(tmp_path):
    article, _ = make_article(tmp_path / "article", '---\ntitle: "A title <img src=/etc/passwd>"\n---\n\nText.\n')
    with pytest.raises(ProseError, match=re.escape(f"{article}:2: raw HTML <img src=/etc/passwd>")):
        write_ast(article, tmp_path / "tree.json")


# --- figures: embedded by articlekit from the file its rule wrote ----------------------

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>\n'


def figure_article(tmp_path):
    text = BEFORE + "![A figure.](../figures/plot.svg){#fig-plot}\n\n{{< provenance >}}\n"
    article, values = make_article(tmp_path / "article", text)
    from articlekit.article.bind import bind

    bindings = tmp_path / "article" / "build" / "bindings.json"
    write_json(bindings, bind(str(article), text, values, True))
    (tmp_path / "figures").mkdir()
    return article, bindings, tmp_path / "figures" / "plot.svg"


def test_a_figure_is_embedded_from_its_file_and_the_renderer_reads_no_path(tmp_path):
    article, bindings, figure = figure_article(tmp_path)
    figure.write_text(SVG, encoding="utf-8")
    html = tmp_path / "article" / "build" / "article.html"
    rendermod.render(article, bindings, "pandoc", html, html.with_suffix(".md"))
    assert f'src="data:image/svg+xml;base64,{base64.b64encode(SVG.encode()).decode()}"' in html.read_text()
    assert "](../figures/plot.svg)" in html.with_suffix(".md").read_text()  # the markdown keeps the link


@pytest.mark.parametrize("how", ["the figure", "its folder"])
def test_a_figure_that_is_a_symbolic_link_is_refused_with_its_line(tmp_path, how):
    article, bindings, figure = figure_article(tmp_path)
    secret = tmp_path / "secret.svg"
    secret.write_text(SVG.replace("<rect", "<!-- secret --><rect"), encoding="utf-8")
    if how == "the figure":
        os.symlink(secret, figure)
    else:
        (tmp_path / "elsewhere").mkdir()
        os.replace(secret, tmp_path / "elsewhere" / "plot.svg")
        figure.parent.rmdir()
        os.symlink(tmp_path / "elsewhere", figure.parent)
    html = tmp_path / "article" / "build" / "article.html"
    html.write_text("<html>the last good page</html>\n", encoding="utf-8")
    for attempt in (
        lambda: rendermod.render(article, bindings, "pandoc", html, html.with_suffix(".md")),
        lambda: render_pdf(article, bindings, html.with_suffix(".pdf")),
    ):
        with pytest.raises(RenderError) as refused:
            attempt()
        assert str(refused.value).startswith(
            f"{article}:5: the figure figures/plot.svg is, or lies under, a symbolic link"
        ), str(refused.value)
    assert html.read_text(encoding="utf-8") == "<html>the last good page</html>\n"
    assert not html.with_suffix(".pdf").exists()


# --- a failed render under Snakemake: what the reader is left with ----------------------


def test_the_last_good_page_is_kept_and_named_when_a_render_fails(tmp_path, capsys):
    """`articlekit render` keeps each page that passed as build/last-good/
    article.html. Snakemake deletes build/article.html when it starts the
    job: a failed render then says where the last good page is; run by
    hand, the old page stays in place, and the one message is the error."""
    article, bindings, figure = figure_article(tmp_path)
    figure.write_text(SVG, encoding="utf-8")
    html, md = tmp_path / "article" / "build" / "article.html", tmp_path / "article" / "build" / "article.md"
    argv = [str(article), "--bindings", str(bindings), "--renderer", "pandoc", "--html", str(html), "--md", str(md)]
    assert rendermod.main(argv) == 0
    kept = html.parent / "last-good" / "article.html"
    assert kept.read_bytes() == html.read_bytes()
    good = html.read_bytes()
    article.write_text(article.read_text(encoding="utf-8") + '\n<img src="/etc/passwd">\n', encoding="utf-8")
    capsys.readouterr()
    assert rendermod.main(argv) == 1
    said = capsys.readouterr().err
    assert said.startswith(f"render: {article}:") and len(said.splitlines()) == 1  # the old page is in place
    html.unlink()  # what Snakemake does to a job's outputs when it starts it
    assert rendermod.main(argv) == 1
    said = capsys.readouterr().err
    assert (
        f"{html} is gone (Snakemake removes a job's outputs when it starts it); the last page that passed "
        f"its check, rendered "
        in said
        and f"is {kept}" in said
    )
    assert kept.read_bytes() == good and not html.exists()


@pytest.mark.slow
def test_a_symlinked_figure_fails_the_build_and_no_page_carries_its_target(built_project, tmp_path):
    """End to end: an experiment's figure replaced by a link to a file of
    the machine's. The build fails as the bound article is read, with the
    figure's line, before any format's rule starts (and removes its old
    output): the old page stays, and nothing under build/ carries the
    file's bytes."""
    from tests.workspace import TEST_BUILD, copy_environment

    work = tmp_path / "project"
    # with Snakemake's records (.snakemake/), so that only what the link changes reruns
    shutil.copytree(built_project, work, symlinks=True, ignore=shutil.ignore_patterns("locks"))
    secret = tmp_path / "secret.svg"
    secret.write_text(SVG.replace("<rect", "<!-- the machine's secret --><rect"), encoding="utf-8")
    figure = next(iter(sorted((work / "figures").glob("*.svg"))))
    figure.unlink()
    os.symlink(secret, figure)
    # as if its experiment's plot() had made the link: the ledger takes the
    # digest of what its rule left (core/ledger.py reads through the link), so
    # what stops the build is the render's check, not the ledger's
    from articlekit.core.ledger import LEDGER, Ledger, file_digest

    ledger = Ledger.load(work / LEDGER)
    ledger.outputs[f"figures/{figure.name}"]["sha256"] = file_digest(figure)
    ledger.save()
    done = subprocess.run(
        list(TEST_BUILD), cwd=work, env=copy_environment(work), capture_output=True, text=True, timeout=900
    )
    said = done.stdout + done.stderr
    assert done.returncode != 0, said[-3000:]
    assert f"the figure figures/{figure.name} is, or lies under, a symbolic link" in said, said[-4000:]
    assert re.search(rf"article/index\.qmd:\d+: the figure figures/{re.escape(figure.name)}", said)
    assert re.search(r"Error in rule parse_article|rule parse_article", said) and "Error in rule html" not in said
    assert (work / "build" / "article.html").exists()  # the page of the build before the link, kept
    for path in (work / "build").rglob("*"):
        if path.is_file():
            assert b"the machine's secret" not in path.read_bytes(), path
            assert base64.b64encode(secret.read_bytes()) not in path.read_bytes(), path


@pytest.mark.parametrize("how", ["a url() in it", "a symbolic link", "a path out of the project", "an absolute path"])
def test_a_style_sheet_that_loads_a_file_is_refused_before_the_renderer_runs(tmp_path, how):
    """The style sheets are embedded by the renderer: one naming a file, or
    one that is a file of the machine outside the project, would carry that
    file into the page, past the page check."""
    article, bindings, figure = figure_article(tmp_path)
    figure.write_text(SVG, encoding="utf-8")
    sheet = article.parent / "style.css"
    settings = article.parent / "_quarto.yml"
    if how in ("a path out of the project", "an absolute path"):
        secret = tmp_path / "secret.css"
        secret.write_text("/* the machine's secret */\n", encoding="utf-8")
        named = "../secret.css" if how == "a path out of the project" else str(secret)
        text = settings.read_text(encoding="utf-8")
        assert "- style.css\n" in text
        settings.write_text(text.replace("- style.css\n", f"- {named}\n"), encoding="utf-8")
        expected = f"{article.parent / named}: the style sheet lies outside the project's folder"
    elif how == "a url() in it":
        sheet.write_text(
            "body { color: #222; }\n\n/* a comment */ p { background: \\75 rl(/etc/passwd) }\n", encoding="utf-8"
        )
        expected = f"{sheet}:3: url(/etc/passwd) makes the page load a file"
    else:
        (tmp_path / "elsewhere.css").write_text("body { color: #222; }\n", encoding="utf-8")
        sheet.unlink()
        os.symlink(tmp_path / "elsewhere.css", sheet)
        expected = f"{sheet}: the style sheet is, or lies under, a symbolic link"
    html = tmp_path / "article" / "build" / "article.html"
    with pytest.raises(RenderError) as refused:
        rendermod.render(article, bindings, "pandoc", html, html.with_suffix(".md"))
    assert str(refused.value).startswith(expected), str(refused.value)
    assert not html.exists()


def test_an_attribute_is_named_at_its_own_line_not_where_its_name_is_mentioned(tmp_path):
    text = 'A [note]{title="x"}.\n\nProse that mentions style= and `style=` in passing.\n\n[b]{style="color: red"}'
    article = article_with(tmp_path, text)
    with pytest.raises(ProseError) as refused:
        write_ast(article, tmp_path / "tree.json")
    assert [p.split(": ")[0] for p in refused.value.problems] == [f"{article}:9"]
