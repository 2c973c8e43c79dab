"""The page check: a page that loads anything it does not embed, or lacks an
option _quarto.yml asks for, never becomes build/article.html.

Unit tests on small pages, one per kind of offender, then the render: a bad
page stops it and the old build/article.html stays.
"""

import base64
import hashlib
import re
import urllib.parse
from pathlib import Path

import pytest
import yaml

from articlekit.render import page as rendermod
from articlekit.article.bind import bind
from articlekit.core.jsonio import write_json
from articlekit.render import pagecheck
from articlekit.render.formats import html as html_format
from articlekit.render.pandoc_route import pandoc_page
from articlekit.render.renderers import RenderError
from articlekit.render.pagecheck import PAGE_POLICY, POLICY_META, PageError, add_policy, check_page
from tests.test_render import bind_and_render, make_article

OPTIONS = {"embed-resources": True, "toc": True, "html-math-method": "mathml"}
QUARTO_YML = Path("article/_quarto.yml")
SVG = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>'


def page(body, head="", toc=True):
    """A page as both renderers make it: everything inline or a data: URL."""
    nav = '<nav id="TOC" role="doc-toc"><ul><li><a href="#one">One</a></li></ul></nav>' if toc else ""
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>t</title>\n'
        f'<style>body {{ font-family: serif; background: url("data:image/png;base64,AAAA"); }}</style>\n'
        f'<script src="data:application/javascript;base64,{base64.b64encode(OWN_SCRIPT).decode()}"></script>\n'
        f"{head}</head>\n<body>\n{nav}\n"
        f'<h2 id="one">One</h2>\n<p>The sum <math display="inline"><mi>x</mi></math>, '
        f'<a href="https://example.org/paper">a paper</a>, <a href="other.html">a sibling page</a>, '
        f'<a href="#one">a section</a>.</p>\n'
        f'<img src="data:image/svg+xml;base64,{base64.b64encode(SVG.encode()).decode()}" alt="figure">\n'
        f"{body}\n</body></html>\n"
    )


# The one script page() carries, as a renderer's own would be: its digest is
# among the renderer's (own_scripts).
OWN_SCRIPT = b"1;"
OWN = frozenset({hashlib.sha256(OWN_SCRIPT).hexdigest()})


def check(tmp_path, html, options=OPTIONS, own_scripts=OWN, policy=True):
    path = tmp_path / "page.html"
    path.write_text(html, encoding="utf-8")
    if policy:
        add_policy(path)
    check_page(path, options, QUARTO_YML, out="build/article.html", own_scripts=own_scripts)


def refused(tmp_path, html, options=OPTIONS, own_scripts=OWN, policy=True):
    with pytest.raises(PageError) as failed:
        check(tmp_path, html, options, own_scripts, policy)
    return str(failed.value)


# --- the page's own lock: its Content-Security-Policy ------------------------------


def test_the_policy_lets_the_page_load_only_what_it_embeds():
    directives = dict(d.strip().split(" ", 1) for d in PAGE_POLICY.split(";"))
    assert directives["default-src"] == "'none'"
    assert all("data:" == src or src.startswith("'") for value in directives.values() for src in value.split())
    assert "http:" not in PAGE_POLICY and "'self'" not in PAGE_POLICY and "*" not in PAGE_POLICY


@pytest.mark.parametrize(
    "how, change",
    [
        ("without it", lambda text: text.replace(POLICY_META, "")),
        ("a looser one", lambda text: text.replace("default-src 'none'", "default-src *")),
        ("not first in the head", lambda text: text.replace(POLICY_META, "<title>x</title>" + POLICY_META)),
        ("a second one, later", lambda text: text.replace("</head>", POLICY_META.replace("'none'", "*") + "</head>")),
    ],
)
def test_a_page_without_its_own_policy_first_in_its_head_is_refused(tmp_path, how, change):
    path = tmp_path / "page.html"
    path.write_text(page(""), encoding="utf-8")
    add_policy(path)
    html = change(path.read_text(encoding="utf-8"))
    assert "Content-Security-Policy as the first element" in refused(tmp_path, html, policy=False), how


def test_the_policy_keeps_every_line_where_it_was(tmp_path):
    path = tmp_path / "page.html"
    path.write_text(page(""), encoding="utf-8")
    before = path.read_text(encoding="utf-8").splitlines()
    add_policy(path)
    after = path.read_text(encoding="utf-8").splitlines()
    assert len(after) == len(before) and after[1] == before[1].replace("<head>", "<head>" + POLICY_META)


def test_a_self_contained_page_with_its_options_passes(tmp_path):
    check(tmp_path, page(""))


def test_plain_hyperlinks_anywhere_are_fine(tmp_path):
    check(tmp_path, page('<p><a href="/etc/notes.html">local</a> <a href="http://example.org">web</a></p>'))


LOCAL = {
    "Quarto's libs folder": (
        '<script src="index_files/libs/clipboard/clipboard.min.js"></script>',
        '<script src="index_files/libs/clipboard/clipboard.min.js">',
    ),
    "a style sheet by absolute path": (
        '<link href="/home/a/articlekit/render/page.css" rel="stylesheet">',
        '<link href="/home/a/articlekit/render/page.css">',
    ),
    "a figure by relative path": ('<img src="../figures/sweep.svg">', '<img src="../figures/sweep.svg">'),
    "a file: URL": ('<img src="file:///tmp/figure.png">', '<img src="file:///tmp/figure.png">'),
    "an image set": (
        '<img src="data:image/png;base64,AAAA" srcset="data:image/png;base64,AAAA 1x, big.png 2x">',
        '<img srcset="big.png">',
    ),
    "a url() in a style attribute": (
        '<div style="background: url(paper.png)">x</div>',
        "url(paper.png) in <div style=...>",
    ),
    "an @import in a style element": ('<style>@import "theme.css";</style>', "@import theme.css in <style>"),
}

NETWORK = {
    "MathJax from a CDN": (
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js"></script>',
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js">',
    ),
    "a protocol-relative script": (
        '<script src="//cdnjs.cloudflare.com/polyfill.js"></script>',
        '<script src="//cdnjs.cloudflare.com/polyfill.js">',
    ),
    "a style sheet": (
        '<link rel="stylesheet" href="http://fonts.example.org/css?family=Serif">',
        '<link href="http://fonts.example.org/css?family=Serif">',
    ),
    "a font in a style element": (
        "<style>@font-face { font-family: F; src: url('https://fonts.example.org/f.woff2'); }</style>",
        "url(https://fonts.example.org/f.woff2) in <style>",
    ),
    "an @import url() in a style element": (
        '<style>@import url("https://example.org/theme.css");</style>',
        "url(https://example.org/theme.css) in <style>",
    ),
    "an image": ('<img src="https://example.org/logo.png">', '<img src="https://example.org/logo.png">'),
    "an @import inside an embedded style sheet": (
        '<link rel="stylesheet" href="data:text/css,' + urllib.parse.quote('@import url(https://x.org/a.css);') + '">',
        "url(https://x.org/a.css) in <link href=",
    ),
    "an image inside an embedded SVG": (
        '<img src="data:image/svg+xml;base64,'
        + base64.b64encode(
            b'<svg xmlns="http://www.w3.org/2000/svg"><image href="https://x.org/p.png"/></svg>'
        ).decode()
        + '">',
        '<image href="https://x.org/p.png"> inside <img src=',
    ),
}


@pytest.mark.parametrize("case", LOCAL)
def test_a_local_file_the_page_does_not_embed_is_refused(tmp_path, case):
    tag, named = LOCAL[case]
    message = refused(tmp_path, page(tag))
    assert message.startswith("build/article.html: the page is not self-contained: ")
    assert named in message and "loads a local file it does not embed" in message
    assert f"embed-resources: true` under format: html: in {QUARTO_YML}" in message  # the fix


@pytest.mark.parametrize("case", NETWORK)
def test_a_script_style_font_or_image_from_the_network_is_refused(tmp_path, case):
    tag, named = NETWORK[case]
    message = refused(tmp_path, page(tag))
    assert named in message and "loads from the network" in message
    assert f"html-math-method: mathml` under format: html: in {QUARTO_YML}" in message  # the fix


def test_the_first_offender_is_named_with_its_line_and_the_count_of_the_rest(tmp_path):
    tags = "\n".join(
        [
            '<script src="index_files/libs/quarto-html/quarto.js"></script>',
            '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js"></script>',
            '<link href="index_files/libs/bootstrap/bootstrap.min.css" rel="stylesheet">',
        ]
    )
    html = page("", head=tags)
    line = next(n for n, text in enumerate(html.splitlines(), 1) if "quarto.js" in text)
    message = refused(tmp_path, html)
    assert f'<script src="index_files/libs/quarto-html/quarto.js"> (line {line}) loads a local file' in message
    assert "and 2 more reference(s) do too" in message


def test_a_missing_table_of_contents_is_refused_when_asked_for(tmp_path):
    message = refused(tmp_path, page("", toc=False))
    assert message.startswith(f"build/article.html: the page has no table of contents, which {QUARTO_YML} asks for")
    assert 'a component starting with "."' in message  # the likely cause, and the fix after it
    check(tmp_path, page("", toc=False), {**OPTIONS, "toc": False})  # not asked: fine


def test_a_page_without_headings_needs_no_table_of_contents(tmp_path):
    html = page("", toc=False).replace('<h2 id="one">One</h2>', "")
    check(tmp_path, html)
    # nor one whose headings are all deeper than toc-depth
    check(tmp_path, page("", toc=False).replace("h2", "h4"), {**OPTIONS, "toc-depth": 3})


MATHJAX_SPAN = r'<p><span class="math inline">\(x^2\)</span></p>'


def test_math_left_as_tex_for_a_script_is_refused(tmp_path):
    message = refused(tmp_path, page(MATHJAX_SPAN))
    assert '(<span class="math inline">, line' in message and "not MathML" in message
    assert f"the renderer did not apply html-math-method: mathml from {QUARTO_YML}" in message


def test_math_tex_with_another_method_asked_for_says_to_ask_for_mathml(tmp_path):
    for asked, said in ((None, "the default method (MathJax)"), ("katex", "katex"), ({"method": "mathjax"}, "mathjax")):
        options = {key: value for key, value in OPTIONS.items() if key != "html-math-method"}
        if asked:
            options["html-math-method"] = asked
        message = refused(tmp_path, page(MATHJAX_SPAN), options)
        assert f"{QUARTO_YML} asks for {said}; set `html-math-method: mathml` under format: html:" in message


def test_the_quarto_page_of_a_hidden_folder_is_refused_at_its_first_script(tmp_path):
    """The page Quarto 1.9.38 wrote in a folder under a hidden one (its head,
    shortened): the first reference into index_files/libs/ is named."""
    head = "\n".join(
        [
            '<script src="index_files/libs/clipboard/clipboard.min.js"></script>',
            '<script src="index_files/libs/quarto-html/quarto.js" type="module"></script>',
            '<link href="index_files/libs/bootstrap/bootstrap-icons.css" rel="stylesheet">',
            '<script src="https://cdnjs.cloudflare.com/polyfill/v3/polyfill.min.js?features=es6"></script>',
            '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js" type="text/javascript"></script>',
            '<link rel="stylesheet" href="/tmp/x/.hidden/project/articlekit/render/page.css">',
        ]
    )
    message = refused(tmp_path, page(MATHJAX_SPAN, head=head, toc=False))
    assert '<script src="index_files/libs/clipboard/clipboard.min.js">' in message
    assert "and 5 more reference(s)" in message


# --- every way a page can load, navigate or run, each refused -----------------------

SVG_PAGE = "data:image/svg+xml;base64," + base64.b64encode(SVG.encode()).decode()

# tag on the page -> (kind of refusal as the message says it, what it names)
TRICKS = {
    # scripts and handlers: run in the reader's browser
    "an inline script": (
        '<script>fetch("http://127.0.0.1:9/x")</script>',
        "runs code the build did not put there",
        "<script holding 'fetch(",
    ),
    "an embedded script that is not the renderer's": (
        f'<script src="data:text/javascript;base64,{base64.b64encode(b"fetch(1)").decode()}"></script>',
        "runs code the build did not put there",
        '<script src="data:text/javascript;base64,',
    ),
    "an onerror handler": (f'<img src="{SVG_PAGE}" onerror="fetch(\'/x\')">', "runs code", '<img onerror="fetch'),
    "an onload on the body's svg": ('<svg onload="fetch(1)"><rect/></svg>', "runs code", '<svg onload='),
    "a javascript: link": ('<a href="javascript:fetch(1)">x</a>', "runs code", '<a href="javascript:fetch(1)">'),
    "an SVG animation that rewrites a link": (
        '<svg><a><set attributeName="href" to="javascript:alert(1)"/><text>x</text></a></svg>',
        "runs code",
        '<set attributeName="href">',
    ),
    "a script inside an SVG": ('<svg><script>fetch(1)</script></svg>', "runs code", "<script holding"),
    # frames and plugins
    "an iframe's srcdoc": (
        '<iframe srcdoc="<img src=http://x/>"></iframe>',
        "embeds another page",
        '<iframe srcdoc="<img src=http://x/>">',
    ),
    "a frame": (
        '<iframe src="https://example.org/embed"></iframe>',
        "embeds another page",
        '<iframe src="https://example.org/embed">',
    ),
    "an embedded object": ('<object data="notes.pdf"></object>', "embeds another page", '<object data="notes.pdf">'),
    "an embed": ('<embed src="/etc/hostname">', "embeds another page", '<embed src="/etc/hostname">'),
    # navigation on its own
    "a base": ('<base href="http://127.0.0.1:9/">', "navigates on its own", '<base href="http://127.0.0.1:9/">'),
    "a meta refresh": (
        '<meta http-equiv="refresh" content="0; url=http://127.0.0.1:9/">',
        "navigates on its own",
        '<meta http-equiv="refresh"',
    ),
    "a form that submits": (
        '<form action="http://127.0.0.1:9/"><button>go</button></form>',
        "navigates on its own",
        '<form action="http://127.0.0.1:9/">',
    ),
    "a button's formaction": ('<form><button formaction="/x">go</button></form>', "navigates", '<button formaction='),
    "a link's ping": ('<a href="#one" ping="http://127.0.0.1:9/">x</a>', "navigates", '<a ping="http://127.0.0.1:9/">'),
    # loads
    "a background attribute": (
        '<table background="http://127.0.0.1:9/bg.png"><tr><td>x</td></tr></table>',
        "loads from the network",
        '<table background="http://127.0.0.1:9/bg.png">',
    ),
    "a video's poster": (
        '<video poster="/etc/hostname"></video>',
        "loads a local file",
        '<video poster="/etc/hostname">',
    ),
    "an alternate style sheet": (
        '<link rel="alternate stylesheet" href="http://127.0.0.1:9/a.css">',
        "loads from the network",
        '<link href="http://127.0.0.1:9/a.css">',
    ),
    "a canonical link (any rel counts)": (
        '<link rel="canonical" href="http://127.0.0.1:9/c">',
        "loads from the network",
        '<link href="http://127.0.0.1:9/c">',
    ),
    "a prefetch": (
        '<link rel="dns-prefetch" href="//example.org">',
        "loads from the network",
        '<link href="//example.org">',
    ),
    "an image-set() with a bare string": (
        '<div style="background-image: image-set(\'http://127.0.0.1:9/i.png\' 1x)">x</div>',
        "loads from the network",
        "image-set(http://127.0.0.1:9/i.png) in <div style=...>",
    ),
    "a url() behind a CSS escape": (
        '<style>p { background: \\75 rl(http://127.0.0.1:9/e.png) }</style>',
        "loads from the network",
        "url(http://127.0.0.1:9/e.png) in <style>",
    ),
    "a url() split by a comment is no url, but an @import after one is": (
        '<style>/* x */ @import "http://127.0.0.1:9/i.css";</style>',
        "loads from the network",
        "@import http://127.0.0.1:9/i.css in <style>",
    ),
    "an @import spelt with an escape": (
        '<style>@im\\port "http://127.0.0.1:9/j.css";</style>',
        "loads from the network",
        "@import http://127.0.0.1:9/j.css in <style>",
    ),
    "an SVG use of another file": (
        '<svg><use href="http://127.0.0.1:9/s.svg#a"/></svg>',
        "loads from the network",
        '<use href="http://127.0.0.1:9/s.svg#a">',
    ),
    "an SVG xlink:href image": (
        '<svg><image xlink:href="/etc/hostname"/></svg>',
        "loads a local file",
        '<image href="/etc/hostname">',
    ),
    "an SVG paint from another file": (
        '<svg><rect fill="url(http://127.0.0.1:9/p.svg#g)"/></svg>',
        "loads from the network",
        "url(http://127.0.0.1:9/p.svg#g) in <rect fill=...>",
    ),
    # what a browser parses differently from a naive parser
    "an image after an empty comment": (
        '<!--><img src="http://127.0.0.1:9/c.png">-->',
        "loads from the network",
        '<img src="http://127.0.0.1:9/c.png">',
    ),
    "an image a style inside an SVG does not hide": (
        '<svg><style><img src="http://127.0.0.1:9/s.png"></style></svg>',
        "loads from the network",
        '<img src="http://127.0.0.1:9/s.png">',
    ),
}


@pytest.mark.parametrize("case", TRICKS)
def test_every_way_a_page_can_load_navigate_or_run_is_refused(tmp_path, case):
    tag, says, named = TRICKS[case]
    message = refused(tmp_path, page(tag))
    assert message.startswith("build/article.html: the page ")
    assert says in message and named in message, message
    assert re.search(r"\(line \d+\)", message) and "; " in message.split(") ", 1)[1]  # its line, then the fix


@pytest.mark.parametrize(
    "inert",
    [
        '<a href="https://example.org/paper">a paper</a>',  # followed by a reader, or not
        '<svg><defs><linearGradient id="g"/></defs><rect fill="url(#g)"/><use href="#g"/></svg>',  # fragments
        '<style>/* url(http://127.0.0.1:9/commented.png) */ p { color: red }</style>',
        '<p style="background: url(\'data:image/png;base64,AAAA\')">x</p>',
        '<meta http-equiv="content-type" content="text/html; charset=utf-8">',
        '<title>&lt;img src=http://127.0.0.1:9/t.png&gt;</title>',  # text, not a tag
    ],
)
def test_what_loads_nothing_passes(tmp_path, inert):
    check(tmp_path, page(inert))


def test_a_script_is_the_renderers_own_only_by_the_digest_of_its_body(tmp_path):
    """The page's one script passes because its body's digest is listed;
    with nothing listed (Pandoc's page has no script) it is refused, and an
    id or a type copied from the renderer's scripts changes nothing."""
    message = refused(tmp_path, page(""), own_scripts=frozenset())
    assert "runs code the build did not put there" in message and "not one of the renderer's own scripts" in message
    forged = '<script id="quarto-html-after-body" type="application/javascript">fetch(1)</script>'
    assert "<script holding 'fetch(1)'>" in refused(tmp_path, page(forged))


def test_the_renderers_own_scripts_are_read_from_a_page_it_made(tmp_path):
    from articlekit.render.pagecheck import script_digests

    made = tmp_path / "made.html"
    made.write_text(page('<script>var own = 1;</script>'), encoding="utf-8")
    own = script_digests(made)
    assert own == {hashlib.sha256(b"1;").hexdigest(), hashlib.sha256(b"var own = 1;").hexdigest()}
    check(tmp_path, page('<script>var own = 1;</script>'), own_scripts=own)
    assert "fetch" in refused(tmp_path, page('<script>fetch(1)</script>'), own_scripts=own)


# --- the render: a refused page is never written --------------------------------


@pytest.mark.workflow
def test_a_page_that_loads_a_local_file_stops_the_render_and_keeps_the_old_page(tmp_path, monkeypatch):
    """A renderer that puts a script on its page (as Quarto did from a CDN in
    a hidden folder): the page check stops the render, the old page stays."""
    values, good, _ = bind_and_render(tmp_path / "article")
    html_out, md_out = tmp_path / "article" / "build" / "article.html", tmp_path / "article" / "build" / "article.md"
    real = pandoc_page

    def misbehaving(job):
        made = real(job)
        job.produced.write_text(
            job.produced.read_text(encoding="utf-8").replace(
                "</head>", '<script src="https://cdn.example.org/x.js"></script></head>'
            ),
            encoding="utf-8",
        )
        return made

    monkeypatch.setattr(html_format, "pandoc_page", misbehaving)  # where the page looks it up
    article = tmp_path / "article" / "index.qmd"
    with pytest.raises(RenderError, match=re.escape('<script src="https://cdn.example.org/x.js">')) as failed:
        rendermod.render(article, tmp_path / "article" / "build" / "bindings.json", "pandoc", html_out, md_out)
    assert str(failed.value).startswith(f"{html_out}: the page is not self-contained")
    assert html_out.read_text(encoding="utf-8") == good  # the old page, whole
    assert not list(html_out.parent.glob(".render-*"))  # no work folder left


@pytest.mark.workflow
def test_the_render_checks_against_the_articles_own_quarto_yml(tmp_path, monkeypatch):
    """The options come from the _quarto.yml the render reads, found from the
    article's folder up."""
    article, values = make_article(tmp_path / "article")
    quarto_yml = article.parent / "_quarto.yml"
    quarto_yml.write_text(quarto_yml.read_text(encoding="utf-8").replace("toc: true", "toc: false"), encoding="utf-8")
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, True))
    seen = []
    monkeypatch.setattr(pagecheck, "check_page", lambda page, options, where, out, **_: seen.append((options, where)))
    rendermod.render(article, bindings, "pandoc", tmp_path / "out" / "a.html", tmp_path / "out" / "a.md")
    assert seen == [(yaml.safe_load(quarto_yml.read_text(encoding="utf-8"))["format"]["html"], quarto_yml)]
    assert seen[0][0]["toc"] is False
