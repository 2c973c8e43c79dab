"""A figure is checked once, by the one function every format reads it
through (articlekit.article.figures.figure_file, checked_figure), so that
what the page refuses the PDF, Word and JATS refuse too:

- an SVG is plain UTF-8 SVG that names nothing outside itself: no href but
  a fragment (#id) or, in an <image>, a PNG or JPEG written into it; no CSS
  url() but a fragment's, no @import; no script, event handler,
  foreignObject, frame, animation, processing instruction, entity or DTD
  but SVG's own; gzip bytes under an .svg name are refused, where Typst
  would unpack them for the PDF past every check;
- a raster's bytes are what its name says (PNG, JPEG, GIF, WebP);
- no figure is larger than MAX_FIGURE_BYTES;
- matplotlib's own SVG and PNG pass, as save_figure writes them;
- a figure's path in config.yaml (experiments.NAME.figures) lies inside
  the project's figures/ folder, refused at the config's check otherwise.
"""

import base64
import gzip
import io
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from articlekit.article import figures
from articlekit.article.figures import MAX_FIGURE_BYTES, FigureError, FigureLink, checked_figure, figure_file
from articlekit.data.config import ConfigError, check_config, check_syntax
from articlekit.experiment.artifacts import pyplot, save_figure
from articlekit.render.renderers import RenderError
from tests.workspace import PROJECT_ROOT, copy_environment

MODULE_SCHEMA = PROJECT_ROOT / "articlekit/workflow/schemas/schema.yaml"
ARTICLE = "article/index.qmd"
LINE = 12

HEAD = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="20">'
PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(20)


def svg(body, head=HEAD):
    return f"{head}{body}</svg>\n"


def b64(data):
    return base64.b64encode(data).decode("ascii")


@pytest.fixture
def project(tmp_path):
    """A build's folder: figures/ and a config.yaml whose experiment
    `scaling` draws figures/sweep.svg."""
    (tmp_path / "figures").mkdir()
    (tmp_path / "config.yaml").write_text("experiments:\n  scaling:\n    figures: {sweep: figures/sweep.svg}\n")
    return tmp_path


def written(project, content, name="sweep.svg"):
    path = project / "figures" / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return f"figures/{name}"


def refusal(project, content, name="sweep.svg"):
    """The message figure_file refuses the figure with."""
    with pytest.raises(FigureError) as caught:
        figure_file(project, written(project, content, name), ARTICLE, LINE)
    return str(caught.value)


# ---- SVGs that name something outside themselves -------------------------------------

OUTSIDE_PNG = "../../../x.png"
SVG_IN_PNG = b64(svg('<image href="/etc/passwd"/>').encode())

HOSTILE = {
    # the issue's: Typst followed it into the PDF
    "image href climbing out": (
        svg(f'<image href="{OUTSIDE_PNG}" width="4" height="4"/>'),
        f'<image href="{OUTSIDE_PNG}">',
    ),
    "image xlink:href to a file": (svg('<image xlink:href="file:///etc/passwd"/>'), 'xlink:href="file:///etc/passwd"'),
    "image href to the network": (svg('<image href="https://example.org/p.png"/>'), 'href="https://example.org/p.png"'),
    "image href, absolute path": (svg('<image href="/home/me/secret.png"/>'), 'href="/home/me/secret.png"'),
    "use of another file's symbol": (svg('<use href="other.svg#a"/>'), '<use href="other.svg#a">'),
    "feImage of a file": (svg('<filter id="f"><feImage href="x.png"/></filter>'), '<feImage href="x.png">'),
    "a link out": (
        svg('<a href="https://example.org/"><rect width="4" height="4"/></a>'),
        '<a href="https://example.org/">',
    ),
    "an SVG as data": (
        svg(f'<image href="data:image/svg+xml;base64,{SVG_IN_PNG}"/>'),
        "<image href=\"data:image/svg+xml",
    ),
    # a renderer sniffs the bytes: this "PNG" is an SVG that names /etc/passwd
    "an SVG labelled data:image/png": (svg(f'<image href="data:image/png;base64,{SVG_IN_PNG}"/>'), "data:image/png"),
    "a PNG as data, but on <use>": (svg(f'<use href="data:image/png;base64,{b64(PNG_BYTES)}"/>'), "<use href="),
    "xml:base": (svg('<g xml:base="https://example.org/"><rect/></g>'), 'xml:base="https://example.org/"'),
    "url() in a style attribute": (svg('<rect style="fill: url(x.svg#g)"/>'), "url(x.svg#g) in <rect style=...>"),
    "url() in a presentation attribute": (
        svg('<rect filter="url(/tmp/f.svg#f)"/>'),
        "url(/tmp/f.svg#f) in <rect filter=...>",
    ),
    "url() of data in CSS": (svg('<rect style="fill: url(data:image/svg+xml,x)"/>'), "url(data:image/svg+xml,x)"),
    "url() in a style element": (
        svg("<style>rect { fill: url(http://x.org/p.svg#g) }</style>"),
        "url(http://x.org/p.svg#g) in <style>",
    ),
    "@import in a style element": (svg('<style>@import "x.css";</style>'), "@import x.css in <style>"),
    "@import url()": (svg("<style>@import url(x.css);</style>"), "url(x.css) in <style>"),
    "an escaped url()": (svg("<style>rect { fill: \\75 rl(x.png) }</style>"), "url(x.png) in <style>"),
    "a CDATA style": (svg("<style><![CDATA[rect { fill: url(x.svg#g) }]]></style>"), "url(x.svg#g) in <style>"),
    "image-set()": (svg('<style>rect { fill: image-set("x.png" 1x) }</style>'), "image-set(x.png) in <style>"),
    "foreignObject": (
        svg('<foreignObject><p xmlns="http://www.w3.org/1999/xhtml">x</p></foreignObject>'),
        "<foreignObject>",
    ),
    "script": (svg("<script>fetch('x')</script>"), "<script>"),
    "script inside metadata": (svg("<metadata><script>fetch('x')</script></metadata>"), "<script>"),
    "an event attribute": (svg('<rect onload="fetch(1)"/>'), '<rect onload="fetch(1)">'),
    "an event attribute on the root": (svg("", head=HEAD.replace(">", ' onclick="x()">', 1)), 'onclick="x()"'),
    "an HTML iframe": (svg('<iframe xmlns="http://www.w3.org/1999/xhtml" src="x.html"/>'), "<iframe>"),
    "embed": (svg('<embed src="x.pdf"/>'), "<embed>"),
    "object": (svg('<object data="x.svg"/>'), "<object>"),
    "an element of another vocabulary": (
        svg('<x:include xmlns:x="http://www.w3.org/2001/XInclude" href="y"/>'),
        "an element outside SVG",
    ),
    "an animation setting href": (
        svg('<image href="#a"><set attributeName="href" to="/etc/passwd"/></image>'),
        "<set>",
    ),
    "xml-stylesheet": ('<?xml-stylesheet href="x.css" type="text/css"?>\n' + svg(""), '<?xml-stylesheet href="x.css"'),
    "a processing instruction inside": (svg('<?xml-stylesheet href="x.css"?>'), "<?xml-stylesheet"),
    "an external entity": (
        '<!DOCTYPE svg [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n' + svg("<text>&e;</text>"),
        "<!ENTITY>",
    ),
    "entities, the billion laughs": (
        '<!DOCTYPE svg [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;">]>\n' + svg("<text>&b;</text>"),
        "<!ENTITY>",
    ),
    "a DOCTYPE with declarations": (
        "<!DOCTYPE svg [<!ATTLIST svg x CDATA 'y'>]>\n" + svg(""),
        "a DOCTYPE with declarations",
    ),
    "another DTD": ('<!DOCTYPE svg SYSTEM "file:///etc/passwd">\n' + svg(""), "the DOCTYPE"),
}


@pytest.mark.parametrize("content, found", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_svg_that_names_anything_outside_itself_is_refused_with_what_it_holds(project, content, found):
    message = refusal(project, content)
    assert found in message
    assert message.startswith(f"{ARTICLE}:{LINE}: the figure figures/sweep.svg ")


# ---- bytes that are not plain UTF-8 SVG ---------------------------------------------

PLAIN = svg('<rect width="4" height="4" fill="url(#g)"/>')

NOT_SVG_TEXT = {
    # the issue's: the page's check read nothing, Typst unpacked it for the PDF
    "gzip (svgz) named .svg": (gzip.compress(svg(f'<image href="{OUTSIDE_PNG}"/>').encode()), "gzip-compressed"),
    "UTF-16": (PLAIN.encode("utf-16"), "not UTF-8"),
    "a PNG named .svg": (PNG_BYTES, "not UTF-8"),
    "Latin-1 declared": ('<?xml version="1.0" encoding="ISO-8859-1"?>\n' + PLAIN, 'encoding="ISO-8859-1"'),
    "HTML, not SVG": ("<html><body><img src='x.png'/></body></html>", "the root element <html>"),
    "an svg with no namespace": ("<svg><rect/></svg>", "the root element <svg>"),
    "not well-formed": (HEAD + "<rect>", "not well-formed"),
    "empty": (b"", "not well-formed"),
}


@pytest.mark.parametrize("content, found", NOT_SVG_TEXT.values(), ids=NOT_SVG_TEXT.keys())
def test_an_svg_that_is_not_plain_utf8_svg_text_is_refused(project, content, found):
    assert found in refusal(project, content)


def test_a_plain_svg_with_fragments_passes(project):
    content = svg(
        '<defs><linearGradient id="g"/><path id="m" d="M 0 0 L 1 1"/></defs>'
        '<style>*{stroke-linejoin: round} rect { fill: url(#g) }</style>'
        f'<use xlink:href="#m"/><use href="#m"/><image href="data:image/png;base64,{b64(PNG_BYTES)}"/>'
        '<image xlink:href="data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ=="/><rect clip-path="url(#g)"/>'
    )
    assert figure_file(project, written(project, content), ARTICLE, LINE) == str(project / "figures/sweep.svg")


# ---- what the experiments write: matplotlib's SVG and PNG ----------------------------


def line_plot():
    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([8, 64, 512], [0.2, 0.6, 0.97], "o-", label="unscaled")
    ax.set(xscale="log", xlabel="$d_k$", ylabel="largest weight", title="Largest weight & <more>")
    ax.annotate("0.97", (512, 0.97), xytext=(64, 0.9), arrowprops={"arrowstyle": "->"})
    ax.text(10, 0.5, "a note", bbox={"boxstyle": "round"})
    ax.legend()
    return fig


def heatmap():
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2)
    image = left.imshow(np.random.default_rng(1).random((8, 8)))  # written as a data:image/png <image>
    fig.colorbar(image, ax=left, label="weight")
    right.scatter(*np.random.default_rng(2).random((2, 200)), rasterized=True)  # likewise
    return fig


@pytest.mark.parametrize("draw", [line_plot, heatmap])
def test_matplotlib_svg_as_save_figure_writes_it_passes_and_keeps_its_alt_text(project, draw):
    save_figure(draw(), project / "figures/sweep.svg", alt="The headline")
    target, payload = checked_figure(project, "figures/sweep.svg", ARTICLE, LINE)
    assert payload == Path(target).read_bytes()
    assert figures.alt_text(payload, "image/svg+xml").startswith("The headline.")


def test_the_heatmap_svg_does_embed_its_pixels_as_a_png(project):
    """What the PNG exception is for (else the test above proves nothing)."""
    save_figure(heatmap(), project / "figures/sweep.svg")
    assert b'xlink:href="data:image/png;base64,' in (project / "figures/sweep.svg").read_bytes()


@pytest.mark.parametrize("fmt, name", [("png", "sweep.png"), ("jpeg", "sweep.jpg")])
def test_matplotlib_raster_figures_pass(project, fmt, name):
    buffer = io.BytesIO()
    line_plot().savefig(buffer, format=fmt)
    figure_file(project, written(project, buffer.getvalue(), name), ARTICLE, LINE)


# ---- rasters are what their names say -----------------------------------------------

RASTER_OK = {
    "sweep.png": PNG_BYTES,
    "sweep.jpg": b"\xff\xd8\xff\xe0" + bytes(20),
    "sweep.jpeg": b"\xff\xd8\xff\xdb" + bytes(20),
    "sweep.gif": b"GIF89a" + bytes(20),
    "sweep.webp": b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(20),
}


@pytest.mark.parametrize("name", RASTER_OK)
def test_a_raster_whose_bytes_match_its_name_passes(project, name):
    figure_file(project, written(project, RASTER_OK[name], name), ARTICLE, LINE)


@pytest.mark.parametrize(
    "name, content, found",
    [
        ("sweep.png", svg(f'<image href="{OUTSIDE_PNG}"/>'), "not a PNG image (they start 3c 73 76 67"),
        ("sweep.jpg", PNG_BYTES, "not a JPEG image"),
        ("sweep.gif", PNG_BYTES, "not a GIF image"),
        ("sweep.webp", b"RIFF\x10\x00\x00\x00AVI " + bytes(20), "not a WebP image"),
        ("sweep.pdf", b"%PDF-1.7\n", "a file named .pdf"),
    ],
)
def test_a_raster_whose_bytes_are_something_else_is_refused(project, name, content, found):
    assert found in refusal(project, content, name)


# ---- the size limit -----------------------------------------------------------------


def test_a_figure_larger_than_the_limit_is_refused_with_the_limit(project):
    padding = "<!-- " + "x" * MAX_FIGURE_BYTES + " -->"
    message = refusal(project, svg(padding))
    assert f"{ARTICLE}:{LINE}: the figure figures/sweep.svg " in message
    assert f"is {len(svg(padding))} bytes, more than the 5 MB a figure may be (MAX_FIGURE_BYTES" in message
    assert "rasterized=True" in message


def test_a_figure_at_the_limit_passes(project):
    body = svg("<!--  -->")
    content = body.replace("<!--  -->", "<!-- " + "x" * (MAX_FIGURE_BYTES - len(body)) + " -->")
    assert len(content) == MAX_FIGURE_BYTES
    figure_file(project, written(project, content), ARTICLE, LINE)


# ---- the message --------------------------------------------------------------------


def test_the_message_names_the_line_the_figure_its_experiment_what_it_holds_and_the_fix(project):
    content = '<?xml version="1.0"?>\n' + HEAD + f'\n<g>\n<image href="{OUTSIDE_PNG}"/>\n</g></svg>'
    message = refusal(project, content)
    assert message.startswith(
        f"{ARTICLE}:{LINE}: the figure figures/sweep.svg (drawn by the experiment scaling: "
        f"experiments.scaling.figures.sweep in config.yaml) holds, at its line 4, <image href=\"{OUTSIDE_PNG}\">: "
        "a reference to something outside the figure, which a renderer reads into the article"
    )
    assert (
        "save_figure, which writes a self-contained SVG, then rerun its rule (snakemake --forcerun scaling)" in message
    )


def test_a_figure_no_experiment_declares_is_named_alone(project):
    message = refusal(project, svg("<script/>"), "other.svg")
    assert "the figure figures/other.svg holds" in message and "rebuild it (snakemake)" in message


# ---- every format reads its figures through the check ------------------------------

EVIL = svg(f'<image href="{OUTSIDE_PNG}" width="4" height="4"/>')


def job(project):
    shown = [FigureLink(LINE, "../figures/sweep.svg", "figures/sweep.svg")]
    (project / "article").mkdir()
    (project / ARTICLE).write_text("![x](../figures/sweep.svg)\n")
    work = project / "work"
    work.mkdir()
    return SimpleNamespace(figures=shown, article=project / ARTICLE, workdir=work, root=project, extra={})


def test_the_page_and_word_refuse_the_figure(project):
    from articlekit.render.figuredata import embedded_figures

    written(project, EVIL)
    with pytest.raises(RenderError, match="holds, at its line 1, <image href="):
        embedded_figures(job(project))  # html.write and docx.write, both renderers


def test_the_pdf_refuses_the_figure_before_typst_reads_it(project):
    from articlekit.render.formats import pdf

    written(project, EVIL)
    this = job(project)
    tree = this.workdir / "article.ast.json"
    tree.write_text("{}")
    with pytest.raises(RenderError, match="holds, at its line 1, <image href="):
        pdf.typst_source(this.article, None, this.workdir, tree, project, shown=this.figures)
    assert not (this.workdir / "article.typ").exists()


def test_the_jats_bundle_refuses_the_figure(project):
    from articlekit.render.formats import jats

    written(project, EVIL)
    with pytest.raises(RenderError, match="holds, at its line 1, <image href="):
        jats.packed_figures(job(project))


def test_the_gzipped_svg_is_refused_by_the_pdf_too(project):
    from articlekit.render.formats import pdf

    written(project, gzip.compress(EVIL.encode()))
    this = job(project)
    tree = this.workdir / "article.ast.json"
    tree.write_text("{}")
    with pytest.raises(RenderError, match="gzip-compressed"):
        pdf.typst_source(this.article, None, this.workdir, tree, project, shown=this.figures)


# ---- figure paths in config.yaml ------------------------------------------------------


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text((PROJECT_ROOT / "config.yaml").read_text())
    return path


def with_figure_path(config_file, figure):
    text = config_file.read_text()
    old = "figures: {sweep: figures/scaling-sweep.svg}"
    assert old in text
    config_file.write_text(text.replace(old, f"figures: {{sweep: {yaml.safe_dump(figure).split(chr(10))[0]}}}", 1))
    return check_syntax(config_file)


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "figure",
    [
        "../evil.svg",  # the issue's: the build wrote one folder above the project
        "/tmp/x.svg",
        "figures/../../x.svg",
        "figures/../config.svg",
        "figures/./x.svg",
        "figures//x.svg",
        "figures/.hidden.svg",
        "results/x.svg",
        "figures\\..\\x.svg",
        "~/x.svg",
        "figures/x.png",
    ],
)
def test_a_figure_path_outside_figures_is_refused_at_the_config_check_with_the_fix(config_file, figure):
    config = with_figure_path(config_file, figure)
    with pytest.raises(ConfigError) as caught:
        check_config(config, MODULE_SCHEMA, [config_file])
    message = str(caught.value)
    line = line_of(config_file, "figures: {sweep:")
    assert f"{config_file}:{line}: experiments.scaling.figures.sweep: {figure!r} does not match" in message
    assert "inside the project's figures/ folder" in message and "write figures/NAME.svg" in message


@pytest.mark.parametrize("figure", ["figures/scaling-sweep.svg", "figures/sub/a_b.c-1.svg"])
def test_a_figure_path_inside_figures_passes(config_file, figure):
    check_config(with_figure_path(config_file, figure), MODULE_SCHEMA, [config_file])


@pytest.mark.workflow
def test_the_plan_stops_at_a_figure_path_above_the_project_before_any_job(tmp_path):
    """Through Snakemake, in the article `articlekit new` writes."""
    from articlekit.skeleton.new import new_article

    folder = tmp_path / "inner" / "my-article"
    new_article(folder)
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("figures/harmonic-partial-sums.svg", "../evil.svg", 1))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "harmonic"],
        cwd=folder,
        env=copy_environment(PROJECT_ROOT),
        capture_output=True,
        text=True,
        timeout=600,
    )
    said = done.stdout + done.stderr
    assert done.returncode != 0
    line = line_of(config, "../evil.svg")
    assert f"config.yaml:{line}: experiments.harmonic.figures.partial_sums: '../evil.svg' does not match" in said
    assert "Traceback" not in said
    assert not (folder.parent / "evil.svg").exists() and not (folder / "results").exists()
    shutil.rmtree(folder)
