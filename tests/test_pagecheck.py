"""The page check: a page that loads anything it does not embed, or lacks an
option _quarto.yml asks for, never becomes build/article.html.

Unit tests on small pages, one per kind of offender, then the render: a bad
page stops it and the old build/article.html stays.
"""

import base64
import re
import urllib.parse
from pathlib import Path

import pytest
import yaml

from articlekit.render import page as rendermod
from articlekit.article.bind import bind
from articlekit.core.jsonio import write_json
from articlekit.render.pagecheck import PageError, check_page
from tests.test_render import bind_and_render, make_article

OPTIONS = {"embed-resources": True, "toc": True, "html-math-method": "mathml"}
QUARTO_YML = Path("article/_quarto.yml")
SVG = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>'


def page(body, head="", toc=True):
    """A page as both renderers make it: everything inline or a data: URL."""
    nav = '<nav id="TOC" role="doc-toc"><ul><li><a href="#one">One</a></li></ul></nav>' if toc else ""
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>t</title>\n'
            f'<style>body {{ font-family: serif; background: url("data:image/png;base64,AAAA"); }}</style>\n'
            f'<script src="data:application/javascript;base64,{base64.b64encode(b"1;").decode()}"></script>\n'
            f"{head}</head>\n<body>\n{nav}\n"
            f'<h2 id="one">One</h2>\n<p>The sum <math display="inline"><mi>x</mi></math>, '
            f'<a href="https://example.org/paper">a paper</a>, <a href="other.html">a sibling page</a>, '
            f'<a href="#one">a section</a>.</p>\n'
            f'<img src="data:image/svg+xml;base64,{base64.b64encode(SVG.encode()).decode()}" alt="figure">\n'
            f"{body}\n</body></html>\n")


def check(tmp_path, html, options=OPTIONS):
    path = tmp_path / "page.html"
    path.write_text(html, encoding="utf-8")
    check_page(path, options, QUARTO_YML, out="build/article.html")


def refused(tmp_path, html, options=OPTIONS):
    with pytest.raises(PageError) as failed:
        check(tmp_path, html, options)
    return str(failed.value)


def test_a_self_contained_page_with_its_options_passes(tmp_path):
    check(tmp_path, page(""))


def test_plain_hyperlinks_anywhere_are_fine(tmp_path):
    check(tmp_path, page('<p><a href="/etc/notes.html">local</a> <a href="http://example.org">web</a></p>'))


LOCAL = {
    "Quarto's libs folder": ('<script src="index_files/libs/clipboard/clipboard.min.js"></script>',
                             '<script src="index_files/libs/clipboard/clipboard.min.js">'),
    "a style sheet by absolute path": ('<link href="/home/a/articlekit/render/page.css" rel="stylesheet">',
                                       '<link href="/home/a/articlekit/render/page.css">'),
    "a figure by relative path": ('<img src="../figures/sweep.svg">', '<img src="../figures/sweep.svg">'),
    "a file: URL": ('<img src="file:///tmp/figure.png">', '<img src="file:///tmp/figure.png">'),
    "an image set": ('<img src="data:image/png;base64,AAAA" srcset="data:image/png;base64,AAAA 1x, big.png 2x">',
                     '<img srcset="big.png">'),
    "an embedded object": ('<object data="notes.pdf"></object>', '<object data="notes.pdf">'),
    "a url() in a style attribute": ('<div style="background: url(paper.png)">x</div>',
                                     "url(paper.png) in <div style=...>"),
    "an @import in a style element": ('<style>@import "theme.css";</style>', "@import theme.css in <style>"),
}

NETWORK = {
    "MathJax from a CDN": ('<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js"></script>',
                           '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js">'),
    "a protocol-relative script": ('<script src="//cdnjs.cloudflare.com/polyfill.js"></script>',
                                   '<script src="//cdnjs.cloudflare.com/polyfill.js">'),
    "a style sheet": ('<link rel="stylesheet" href="http://fonts.example.org/css?family=Serif">',
                      '<link href="http://fonts.example.org/css?family=Serif">'),
    "a font in a style element": ("<style>@font-face { font-family: F; src: url('https://fonts.example.org/f.woff2'); }"
                                  "</style>", "url(https://fonts.example.org/f.woff2) in <style>"),
    "an @import url() in a style element": ('<style>@import url("https://example.org/theme.css");</style>',
                                            "url(https://example.org/theme.css) in <style>"),
    "an image": ('<img src="https://example.org/logo.png">', '<img src="https://example.org/logo.png">'),
    "a frame": ('<iframe src="https://example.org/embed"></iframe>', '<iframe src="https://example.org/embed">'),
    "an @import inside an embedded style sheet": (
        '<link rel="stylesheet" href="data:text/css,' + urllib.parse.quote('@import url(https://x.org/a.css);') + '">',
        "url(https://x.org/a.css) in <link href="),
    "an image inside an embedded SVG": (
        '<img src="data:image/svg+xml;base64,' + base64.b64encode(
            b'<svg xmlns="http://www.w3.org/2000/svg"><image href="https://x.org/p.png"/></svg>').decode() + '">',
        '<image href="https://x.org/p.png"> inside <img src='),
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
    tags = "\n".join(['<script src="index_files/libs/quarto-html/quarto.js"></script>',
                      '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js"></script>',
                      '<link href="index_files/libs/bootstrap/bootstrap.min.css" rel="stylesheet">'])
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
    head = "\n".join([
        '<script src="index_files/libs/clipboard/clipboard.min.js"></script>',
        '<script src="index_files/libs/quarto-html/quarto.js" type="module"></script>',
        '<link href="index_files/libs/bootstrap/bootstrap-icons.css" rel="stylesheet">',
        '<script src="https://cdnjs.cloudflare.com/polyfill/v3/polyfill.min.js?features=es6"></script>',
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js" type="text/javascript"></script>',
        '<link rel="stylesheet" href="/tmp/x/.hidden/project/articlekit/render/page.css">',
    ])
    message = refused(tmp_path, page(MATHJAX_SPAN, head=head, toc=False))
    assert '<script src="index_files/libs/clipboard/clipboard.min.js">' in message
    assert "and 5 more reference(s)" in message


# --- the render: a refused page is never written --------------------------------


def test_a_page_that_loads_a_local_file_stops_the_render_and_keeps_the_old_page(tmp_path):
    values, good, _ = bind_and_render(tmp_path / "article")
    html_out, md_out = tmp_path / "article" / "build" / "article.html", tmp_path / "article" / "build" / "article.md"
    article = tmp_path / "article" / "index.qmd"
    # raw HTML Pandoc's --embed-resources leaves as it is
    article.write_text(article.read_text(encoding="utf-8") + '\n<object data="notes.pdf"></object>\n',
                       encoding="utf-8")
    with pytest.raises(rendermod.RenderError, match=re.escape('<object data="notes.pdf">')) as failed:
        rendermod.render(article, tmp_path / "article" / "build" / "bindings.json", "pandoc", html_out, md_out)
    assert str(failed.value).startswith(f"{html_out}: the page is not self-contained")
    assert html_out.read_text(encoding="utf-8") == good  # the old page, whole
    assert not list(html_out.parent.glob(".render-*"))  # no work folder left


def test_the_render_checks_against_the_articles_own_quarto_yml(tmp_path, monkeypatch):
    """The options come from the _quarto.yml the render reads, found from the
    article's folder up."""
    article, values = make_article(tmp_path / "article")
    quarto_yml = article.parent / "_quarto.yml"
    quarto_yml.write_text(quarto_yml.read_text(encoding="utf-8").replace("toc: true", "toc: false"), encoding="utf-8")
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, True))
    seen = []
    monkeypatch.setattr(rendermod, "check_page", lambda page, options, where, out: seen.append((options, where)))
    rendermod.render(article, bindings, "pandoc", tmp_path / "out" / "a.html", tmp_path / "out" / "a.md")
    assert seen == [(yaml.safe_load(quarto_yml.read_text(encoding="utf-8"))["format"]["html"], quarto_yml)]
    assert seen[0][0]["toc"] is False
