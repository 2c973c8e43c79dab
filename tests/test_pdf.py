"""pdf: the article through Pandoc's Typst writer and the typst package
prints the same bound values as the HTML, code in monospace, figures as
vectors, the provenance table as an appendix and failed claims in sight."""

import os
import json
import re
import shutil
import subprocess
from pathlib import Path

import pypdf
import pytest

from articlekit.render.formats import pdf as pdfmod
from articlekit.article.bind import bind
from articlekit.core.jsonio import read_json, write_json
from articlekit.render.checks import expected_literal_shortcodes
from tests.test_render import make_article

pytestmark = pytest.mark.workflow

SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">
<rect x="10" y="10" width="380" height="180" fill="none" stroke="black"/>
<path d="M 10 190 L 200 40 L 390 120" stroke="#1f77b4" fill="none" stroke-width="3"/></svg>"""

# a figure, a claim that fails (strict = false), an error message longer
# than the column and a table as wide as the provenance one
EXTRA = r"""
## Extras

![A vector figure.](../figures/demo.svg)

The weight is {{< value demo.dk64.unscaled.max_weight fmt=".6f" expect="> 0.99" >}} here.
Scaled by $1/\sqrt{d_k}$, the scores keep a unit spread.

```text
ValueError: {{< value demo.arrow >}} matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)
```

Source: {{< source demo.arrow >}}.
"""


def typographic_plain(text):
    """Text as compared between the bindings and the PDF: Typst sets a
    minus sign for a hyphen before a digit and curly quotes for straight
    ones, and lines break anywhere (zero-width spaces in the appendix)."""
    text = text.replace("\u2212", "-").replace("\u200b", "")
    text = text.replace("\u2018", "'").replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pdf--_x_") / "article"
    article, values = make_article(folder)
    (folder.parent / "figures").mkdir()  # beside the article's folder, where a rule writes it
    (folder.parent / "figures" / "demo.svg").write_text(SVG, encoding="utf-8")
    article.write_text(article.read_text(encoding="utf-8").replace("## Code", EXTRA + "\n## Code", 1), encoding="utf-8")
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, strict=False))
    out = folder / "build" / "article.pdf"
    pdfmod.render_pdf(article, bindings, out)
    return read_json(bindings), out, pypdf.PdfReader(out)


def test_every_printed_value_is_in_the_pdf(built):
    bindings, _, reader = built
    text = typographic_plain("".join(page.extract_text() for page in reader.pages))
    printed = [b["text"] for b in bindings["bindings"].values() if b["printed"]]
    assert printed
    missing = [t for t in printed if typographic_plain(t) not in text]
    assert not missing
    # only the fixture's escaped and shortcodes="false" ones print as shortcodes
    source = Path(bindings["article"]).read_text(encoding="utf-8")
    assert text.count("{{<") == expected_literal_shortcodes(source)


def test_failed_claim_is_marked_in_print(built):
    bindings, _, reader = built
    failed = [b for b in bindings["bindings"].values() if b["claim"] and not b["claim"]["holds"]]
    assert failed  # the fixture's "> 0.99"
    text = "".join(page.extract_text() for page in reader.pages)
    assert "⚠ claim failed: > 0.99" in text
    # set in the mark's red, #9a1c1c
    content = b"".join(page.get_contents().get_data() for page in reader.pages)
    assert b"0.6039216 0.10980392 0.10980392 scn" in content


def test_code_and_error_messages_are_monospace(built):
    _, _, reader = built
    fonts = {}

    def visit(text, cm, tm, font, size):
        if text.strip() and font:
            fonts.setdefault(str(font.get("/BaseFont")), []).append(text)

    for page in reader.pages:
        page.extract_text(visitor_text=visit)
    # highlighted code arrives token by token: compare without spaces
    mono = typographic_plain("".join(t for name, texts in fonts.items() if "Mono" in name for t in texts))
    assert "withgufuncsignature" in mono
    assert "print(f" in mono


def test_tex_math_is_typeset(built):
    _, _, reader = built
    text = "".join(page.extract_text() for page in reader.pages)
    assert "𝑑𝑘" in text and "√" in text  # math italic d, k and a radical: Typst math, not the TeX source
    assert "sqrt" not in text


def test_the_figure_stays_a_vector(built):
    _, _, reader = built
    images = [img for page in reader.pages for img in page.images]
    assert images == []  # an SVG drawn as paths, not a raster
    # the SVG's own path, drawn with PDF moveto/lineto operators
    content = b"".join(page.get_contents().get_data() for page in reader.pages)
    assert b"10 190 m 200 40 l 390 120 l" in content


def test_provenance_is_a_supplement_after_the_body_in_landscape(built):
    """The body ends before the supplement: its pages are labelled S1, S2,
    ... after the body's 1, 2, ..., and the provenance table is its S1."""
    _, _, reader = built
    labels = reader.page_labels
    body = [label for label in labels if not label.startswith("S")]
    supplement = [label for label in labels if label.startswith("S")]
    assert body and supplement and labels == body + supplement
    assert body == [str(n) for n in range(1, len(body) + 1)]
    assert supplement == [f"S{n}" for n in range(1, len(supplement) + 1)]
    first = reader.pages[len(body)]
    assert "Supplementary material" in first.extract_text() and "S1." in first.extract_text()
    assert all("Supplementary material" not in page.extract_text() for page in reader.pages[: len(body)])
    box = first.mediabox
    assert box.width > box.height


def test_nothing_runs_off_the_page_or_over_other_text(built):
    if not shutil.which("pdftotext"):
        # CI installs poppler-utils and sets REQUIRE_PDFTOTEXT: there the check must run
        if os.environ.get("REQUIRE_PDFTOTEXT") == "1":
            pytest.fail("REQUIRE_PDFTOTEXT=1 but pdftotext (poppler-utils) is not installed")
        pytest.skip("pdftotext (poppler-utils) measures word positions; apt-get install poppler-utils")
    _, out, _ = built
    assert not layout_problems(out)


def layout_problems(pdf):
    """Words past the right margin, and words printed over other words (a
    table cell running into the next, an unbreakable table overprinting
    itself at the foot of a page). Also run on the real article by hand."""
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = re.findall(r'<page width="([\d.]+)" height="[\d.]+">(.*?)</page>', xml, re.S)
    assert pages
    problems = []
    for number, (width, body) in enumerate(pages, 1):
        right = float(width) - 36  # half an inch: the margin is 2.4 cm
        words = [
            (*map(float, box), word)
            for *box, word in re.findall(
                r'xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<', body
            )
        ]
        problems += [f"page {number}: {w[4]!r} past the margin" for w in words if w[2] > right]
        for i, a in enumerate(words):
            for b in words[i + 1 :]:
                dx = min(a[2], b[2]) - max(a[0], b[0])
                dy = min(a[3], b[3]) - max(a[1], b[1])
                if dx > 1 and dy > 0.5 * min(a[3] - a[1], b[3] - b[1]):
                    problems.append(f"page {number}: {a[4]!r} over {b[4]!r}")
    return problems


def test_the_colophon_names_pandoc_and_typst(built):
    _, _, reader = built
    name = pdfmod.renderer_name(pdfmod.pandoc_path())
    assert name.startswith("Pandoc 3") and "Typst" in name
    text = typographic_plain("".join(page.extract_text() for page in reader.pages))
    assert typographic_plain(f"Built by {name}.") in text


def test_a_missing_figure_fails_and_leaves_no_pdf(tmp_path):
    article, values = make_article(tmp_path / "article")
    article.write_text(article.read_text(encoding="utf-8") + "\n![gone](../figures/none.svg)\n", encoding="utf-8")
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, strict=True))
    out = tmp_path / "article.pdf"
    with pytest.raises(pdfmod.RenderError):
        pdfmod.render_pdf(article, bindings, out)
    assert not out.exists()


CALLOUTS = (
    '::: {.aside .callout-warning title="Second class"}\nInside.\n:::\n\n'
    '::: {.callout-notes title="No such kind"}\nOutside.\n:::\n'
)


def test_the_pdf_boxes_the_callouts_the_page_draws_and_no_other_div(tmp_path):
    """One definition of a callout (filters/callouts.lua), as Quarto's: a
    class callout-KIND of its five kinds, wherever it stands among the classes."""
    from articlekit.render import page as rendermod

    article, values = make_article(tmp_path / "article", CALLOUTS)
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), CALLOUTS, values, strict=True))
    rendermod.render(article, bindings, "pandoc", tmp_path / "a.html", tmp_path / "a.md")
    page = (tmp_path / "a.html").read_text(encoding="utf-8")
    assert page.count('class="callout callout-') == 1 and 'class="callout callout-warning"' in page
    (tmp_path / "work").mkdir()
    typ = pdfmod.typst_source(article, bindings, tmp_path / "work").read_text(encoding="utf-8")
    boxes = re.findall(r'stroke: \(left: 2\.5pt \+ rgb\("#\w+"\)\)\)\[\n(.*?)\n\]', typ, re.S)  # tinted, titled
    assert len(boxes) == 1 and "Second class" in boxes[0] and "Inside." in boxes[0] and "Outside" not in boxes[0]


def test_the_typst_source_written_from_the_articles_tree_is_the_one_read_from_the_article(built, tmp_path):
    """The PDF's Typst source is written from the tree `articlekit parse`
    reads once from the bound article (build/article.ast.json), the same as
    when the PDF binds and reads the article itself."""
    from articlekit.article.bound import bound_markdown
    from articlekit.render.source import write_ast

    _, out, _ = built
    folder = out.parent.parent
    article, bindings = folder / "index.qmd", folder / "build" / "bindings.json"
    bound = tmp_path / "article.bound.md"
    bound.write_text(
        bound_markdown(article.read_text(encoding="utf-8"), json.loads(bindings.read_text(encoding="utf-8"))),
        encoding="utf-8",
    )
    tree = tmp_path / "article.ast.json"
    write_ast(article, tree, bound=bound)
    (tmp_path / "read").mkdir()
    (tmp_path / "tree").mkdir()
    read = pdfmod.typst_source(article, bindings, tmp_path / "read")
    from_tree = pdfmod.typst_source(article, bindings, tmp_path / "tree", ast=tree)
    assert from_tree.read_text(encoding="utf-8") == read.read_text(encoding="utf-8")


def test_a_forged_tree_with_raw_typst_is_refused_before_typst_reads_it_and_leaves_no_pdf(tmp_path):
    """The PDF is written from build/article.ast.json, a file anyone can
    edit after `articlekit parse` checked it: the render checks the tree it
    is given once more, and a raw Typst block there (which could make the
    PDF embed any file Typst can read) stops it at the article's line."""
    from articlekit.article.bound import bound_markdown
    from articlekit.render.source import write_ast
    from articlekit.render.renderers import pandoc_path

    article, values = make_article(tmp_path / "article")
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, strict=True))
    bound = tmp_path / "article.bound.md"
    bound.write_text(bound_markdown(article.read_text(encoding="utf-8"), read_json(bindings)), encoding="utf-8")
    tree = tmp_path / "article.ast.json"
    write_ast(article, tree, bound=bound)  # checked: the article itself is fine
    raw = subprocess.run(
        [pandoc_path(), "--from", "markdown", "--to", "json"],
        input='```{=typst}\n#image("/etc/passwd")\n```\n',
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    forged = json.loads(tree.read_text(encoding="utf-8"))
    forged["blocks"] += json.loads(raw)["blocks"]
    tree.write_text(json.dumps(forged), encoding="utf-8")
    out = tmp_path / "article.pdf"
    with pytest.raises(pdfmod.RenderError, match="raw typst"):
        pdfmod.render_pdf(article, bindings, out, ast=tree)
    assert not out.exists()
