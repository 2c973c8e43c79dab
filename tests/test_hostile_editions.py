"""Every edition carries only what the build made: one family of hostile
inputs, sent through all five formats, each edition read back by a reader
of its own.

Two ways in, as a hostile contributor has them:

- the prose (PROSE_PROBES): each is refused at the one boundary, the bound
  tree's check (articlekit.article.prose_guard), before any format sees it,
  named by the article's line, whichever format is asked for;
- an experiment's string (HOSTILE_VALUE), printed in prose, in inline code,
  in a fenced block and in a comment: every format renders it inert, as
  text, and no edition holds a byte of a file the build did not make.

The last test removes the boundary and shows the probes then reach the
formats: the boundary, not luck, is what stops them.
"""

import os
import re
from pathlib import Path
import zipfile

import pytest

from articlekit.article.bind import bind
from articlekit.core.jsonio import read_json, write_json
from articlekit.data.values import merge
from articlekit.render import formats
from articlekit.render import page as rendermod
from articlekit.render import source
from articlekit.render.renderers import RenderError
from tests.test_render import make_article

pytestmark = pytest.mark.workflow

# A line of a file on this machine that no build makes: no edition may hold it.
SECRET = open("/etc/passwd", encoding="utf-8").readline().strip()

# An experiment's string that tries every way out of where it lands: a code
# fence and inline code closed early, raw Typst, raw HTML, a javascript:
# link, articlekit's own attribute, a comment's end, XML and a Word field.
HOSTILE_VALUE = (
    'x\n`````\n\n[y]{claim-mark="claim-failed\\", [])#read(\\"/etc/passwd\\")#claim-mark(\\"claim-failed"}'
    ' #read("/etc/passwd") <img src="/etc/passwd"> [z](javascript:alert(1)) --> ]]> <!DOCTYPE a [<!ENTITY e'
    ' SYSTEM "file:///etc/passwd">]> &e; { INCLUDETEXT "/etc/passwd" } `` ` ~~~~~\n\n# heading'
)

ARTICLE = """---
title: "Hostile values"
---

## Prose

The message is {{< value demo.error_message >}} in prose.

Inline: {{< value demo.error_message code=true >}} and after.

```text
{{< value demo.error_message >}}
```

Source: {{< source demo.error_message >}}.

<!-- {{< value demo.error_message >}} -->

The end.

## Where every number comes from

{{< provenance >}}
"""


def hostile_project(folder, article_text=ARTICLE, value=HOSTILE_VALUE):
    """The fixture article with ARTICLE as its text and an experiment whose
    error_message is `value`: -> (article, bindings)."""
    article, _ = make_article(folder, article_text)
    result = folder / "results" / "demo.json"
    data = read_json(result)
    data["values"]["error_message"] = value
    write_json(result, data)
    values = merge((p, read_json(p)) for p in sorted((folder / "results").glob("*.json")))
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, strict=False))
    return article, bindings


# --- each edition, read as its reader reads it ----------------------------------


def page_text(path):
    return path.read_text(encoding="utf-8")


def pdf_text(path):
    from pypdf import PdfReader

    return "\n".join(page.extract_text() for page in PdfReader(path).pages)


def zip_text(path):
    """Every member of a .docx or a JATS bundle, as text, with its name."""
    with zipfile.ZipFile(path) as bundle:
        return "\n".join(f"{name}\n{bundle.read(name).decode('utf-8', 'replace')}" for name in bundle.namelist())


READERS = {"html": page_text, "gfm": page_text, "pdf": pdf_text, "docx": zip_text, "jats": zip_text}


def test_every_format_has_a_reader_here():
    assert set(READERS) == set(formats.names())


def every_edition(article, bindings):
    """{format: its file}: the article rendered in every format on the
    Pandoc route, into build/ beside it under the build's own names."""
    out = {}
    for name in formats.names():
        path = article.parent / "build" / Path(formats.get(name).output).name
        rendermod.render_format(name, article, bindings, path, "pandoc")
        out[name] = path
    return out


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    return every_edition(*hostile_project(tmp_path_factory.mktemp("hostile") / "article"))


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_a_hostile_value_is_text_in_every_edition_and_no_edition_holds_a_file(editions, fmt):
    text = READERS[fmt](editions[fmt])
    assert SECRET not in text
    assert "root:" not in text
    if fmt == "html":
        # the page's own reader: nothing live came of the value
        from articlekit.render.pagecheck import parse_html

        document, _ = parse_html(text)
        assert not [e for e in document.iter("img") if not e.get("src", "").startswith("data:")]
        assert not [e for e in document.iter("a") if "javascript" in e.get("href", "").lower()]
        assert not [e for e in document.iter() if e.get("claim-mark") is not None]
        headings = [e for tag in ("h1", "h2") for e in document.iter(tag)]
        assert not [h for h in headings if "".join(h.itertext()).strip() == "heading"], "the value wrote a heading"
    if fmt in ("docx", "jats"):
        assert "<!ENTITY" not in text.replace("&lt;!ENTITY", "")
    if fmt == "docx":  # a field code is Word's: outside a run's text (w:t), it would be computed
        assert 'INCLUDETEXT "/etc/passwd"' not in re.sub(r"<w:t[^>]*>.*?</w:t>", "", text)


@pytest.mark.parametrize("fmt", ["html", "pdf", "docx"])
def test_the_value_is_printed_whole_as_data(editions, fmt):
    """Inert, not dropped: the reader sees what the experiment wrote."""
    text = " ".join(READERS[fmt](editions[fmt]).split())
    for piece in ('#read("/etc/passwd")', "javascript:alert(1)", "INCLUDETEXT"):
        assert piece in text.replace("&quot;", '"'), piece


# --- the prose: refused at the boundary, by its line, for every format ---------------

# probe -> what the refusal names (each on line 7 of its article)
PROSE_PROBES = {
    "raw Typst through articlekit's own attribute": (
        "[x]{claim-mark='claim-failed\", [])X #read(\"/etc/passwd\").slice(0, 40) Y #claim-mark(\"claim-failed'}",
        "claim-mark=",
    ),
    "a network load assembled from custom properties": (
        "::: {style=\"--u:'http://127.0.0.1:9/a'\"}\n[x]{style=\"background-image:image-set(var(--u) 1x)\"}\n:::",
        "style=",
    ),
    "a link behind a control character": ("[x](&#1;javascript:alert(1))", "control character"),
    "a link whose scheme is an entity": ("[x](&#x6A;avascript:alert(1))", "scheme javascript:"),
    "raw HTML that reads a file": ('<img src="/etc/passwd">', "raw HTML"),
    # Quarto's own span for a shortcode, which Quarto would run on its route
    "a shortcode span for Quarto to run": (
        '[[]{.quarto-shortcode__-param data-value="env" data-raw="env"}]{.quarto-shortcode__ data-raw="x"}',
        "Quarto's mark of a shortcode",
    ),
    "raw OpenXML": ('`<w:fldSimple w:instr="INCLUDETEXT /etc/passwd"/>`{=openxml}', "raw openxml"),
    "raw JATS": ('`<ext-link xlink:href="file:///etc/passwd"/>`{=jats}', "raw jats"),
}


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_hostile_prose_is_refused_at_the_boundary_for_every_format(tmp_path, fmt):
    for case, (probe, named) in PROSE_PROBES.items():
        folder = tmp_path / re.sub(r"\W+", "-", case) / "article"
        text = ARTICLE.replace("The end.", probe, 1)
        line = text.splitlines().index(probe.splitlines()[0]) + 1
        article, bindings = hostile_project(folder, text)
        out = folder / "build" / f"out.{fmt}"
        with pytest.raises(RenderError) as refused:
            rendermod.render_format(fmt, article, bindings, out, "pandoc")
        message = str(refused.value)
        assert message.startswith(f"{article}:{line}: ") and named in message, f"{case}: {message}"
        assert ".render-" not in message and f".{fmt}-" not in message, message  # never a work folder
        assert not out.exists() and not [p for p in out.parent.iterdir() if p.name.startswith(".")]


def test_without_the_boundary_the_probes_reach_the_formats(tmp_path, monkeypatch):
    """The control: with the bound tree's check replaced by one that only
    collects figures, a probe gets into an edition. What stops it in the
    tests above is the boundary."""
    from articlekit.article import prose_guard

    def figures_only(tree, text, article, article_dir, shortcodes=False):
        return []

    monkeypatch.setattr(source, "check_tree", figures_only)  # where check_prose looks it up
    probe = PROSE_PROBES["a network load assembled from custom properties"][0]
    article, bindings = hostile_project(tmp_path / "article", ARTICLE.replace("The end.", probe, 1))
    out = tmp_path / "article" / "build" / "article.html"
    rendermod.render_format("html", article, bindings, out, "pandoc")  # the page check alone lets it by
    assert "http://127.0.0.1:9/a" in out.read_text(encoding="utf-8")
    assert prose_guard.check_tree is not figures_only


def test_a_value_past_its_limit_is_refused_naming_the_experiment(tmp_path):
    from articlekit.article.bind import MAX_VALUE_TEXT, BindError

    with pytest.raises(BindError) as refused:
        hostile_project(tmp_path / "article", value="x" * (MAX_VALUE_TEXT + 1))
    assert "demo.error_message" in str(refused.value) and "experiment demo" in str(refused.value)


# --- the Quarto route: Quarto runs shortcodes again, in code and attributes --------


def test_on_the_quarto_route_a_value_cannot_run_a_quarto_shortcode(tmp_path, monkeypatch):
    """Quarto resolves {{< env NAME >}} in inline code, code blocks and
    attribute values of what it renders; an experiment's message holding
    one must print it, not the machine's environment."""
    from tests.test_quarto import require_quarto

    monkeypatch.setenv("PATH", require_quarto()["PATH"])
    secret = "probe-" + os.urandom(6).hex()
    monkeypatch.setenv("ARTICLEKIT_PROBE_SECRET", secret)
    value = "before {{< env ARTICLEKIT_PROBE_SECRET >}} after"
    text = ARTICLE.replace("<!-- {{< value demo.error_message >}} -->\n\n", "")
    article, bindings = hostile_project(tmp_path / "article", text, value)
    out = tmp_path / "article" / "build" / "article.html"
    assert rendermod.render_format("html", article, bindings, out, "quarto").startswith("Quarto")
    page = out.read_text(encoding="utf-8")
    assert secret not in page
    assert (
        page.count("{{&lt; env ARTICLEKIT_PROBE_SECRET &gt;}}") + page.count("{{< env ARTICLEKIT_PROBE_SECRET >}}") >= 3
    )
