"""incremental: the preview's page, rendered chunk by chunk, is the page
`articlekit render` makes of the same text, and an edit sends only the
edited chunk through Pandoc again."""

import copy
from pathlib import Path

import pytest

from articlekit.render import page as rendermod
from articlekit.article.bind import bind
from articlekit.render.incremental import IncrementalPage, split_body
from articlekit.core.jsonio import read_json, write_json
from articlekit.render.project import split_front_matter
from articlekit.render.renderers import RenderError
from tests.test_render import make_article

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parent.parent

SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20">'
    '<rect id="r" width="40" height="20" fill="#36c"/></svg>\n'
)

# What rendering apart could get wrong, each once: figures numbered across
# sections, code blocks numbered across sections (cbN), a key printed in
# two sections and once as a paragraph of its own (value.lua gives its
# at- id to that one), math, a callout, a level-3 heading in the contents.
MORE = """
## Figures and math {#figures}

![A first figure, with $x^2$ in its caption.](../figures/one.svg){#fig-one}

Display math: $$\\sum_{i=1}^{n} w_i = 1$$

### A subsection

::: {.callout-note title="A callout"}
Its text, with {{< value demo.params.n_tokens >}} tokens.
:::

## More code and figures

```python
print("second section")
```

```text
not highlighted
```

```python
print("third block")
```

![A second figure.](../figures/two.svg){#fig-two}

{{< value demo.arrow >}}

## Closing words

The end, with {{< value demo.dk64.unscaled.max_weight fmt=".6f" >}} once more.
"""


def full_render(article, document, out):
    bindings = out / "bindings.json"
    write_json(bindings, document)
    rendermod.render(article, bindings, "pandoc", out / "full.html")
    return (out / "full.html").read_text(encoding="utf-8")


class Project:
    def __init__(self, folder):
        self.folder = folder
        self.article, self.values = make_article(folder / "article")
        text = self.article.read_text(encoding="utf-8")
        at = text.index("## Where every number comes from")
        self.article.write_text(text[:at] + MORE.lstrip("\n") + "\n" + text[at:], encoding="utf-8")
        (folder / "figures").mkdir()
        for name in ("one.svg", "two.svg"):  # where a rule would write them
            (folder / "figures" / name).write_text(SVG, encoding="utf-8")
        self.page = IncrementalPage(self.article, folder / "pieces")
        self.out = folder / "out"
        self.out.mkdir()

    def document(self):
        return bind(str(self.article), self.article.read_text(encoding="utf-8"), self.values, True)

    def edit(self, old, new):
        text = self.article.read_text(encoding="utf-8")
        assert old in text
        self.article.write_text(text.replace(old, new, 1), encoding="utf-8")

    def both(self):
        """-> (the incremental page, the full render) of the text as it is now."""
        document = self.document()
        return self.page.render(document), full_render(self.article, document, self.out)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return Project(tmp_path_factory.mktemp("incremental"))


def test_the_page_is_the_full_render_of_the_same_text(project):
    incremental, full = project.both()
    assert not project.page.fallback
    assert len(split_body(split_front_matter(project.article.read_text(encoding="utf-8"))[1]).chunks) >= 6
    assert incremental == full
    # what rendering apart would have changed, rendered as one render does
    assert "Figure\u00a02: A second figure." in incremental
    assert 'id="cb4"' in incremental and 'id="cb6"' in incremental  # the text block (cb5) counts too
    assert incremental.count('id="at-v-demo-arrow"') == 1
    # the key's first place in document order holds its id, as the bound document gives it
    first = incremental.index('href="#v-demo-arrow"')
    assert incremental.index('id="at-v-demo-arrow"') < incremental.index(">", first)
    assert 'href="#a-subsection"' in incremental  # the contents list the level-3 heading


def test_a_prose_edit_renders_only_its_chunk_again(project):
    project.both()
    project.edit("The end, with", "The very end, with")
    incremental, full = project.both()
    assert project.page.rendered == 1
    assert "The very end, with" in incremental
    assert incremental == full


def test_a_heading_edit_renders_its_chunk_and_the_contents_again(project):
    project.both()  # the pieces as the text is now, whatever the module's other tests left
    project.edit("## Closing words", "## Closing remarks")
    incremental, full = project.both()
    assert project.page.rendered == 2  # the chunk, and the page around it with its table of contents
    assert 'id="toc-closing-remarks"' in incremental
    assert incremental == full


def test_a_new_value_renders_the_chunks_that_print_it_and_the_provenance_table(project):
    before = copy.deepcopy(project.values)
    project.both()
    try:
        project.values["values"]["demo.params.n_tokens"] += 1
        incremental, full = project.both()
        # "Numbers in prose", the callout's chunk, the provenance table
        assert project.page.rendered == 3
        assert incremental == full
    finally:
        project.values.clear()
        project.values.update(before)


def test_a_style_edit_renders_the_page_around_the_chunks_again(project):
    project.both()
    style = project.folder / "article" / "style.css"
    style.write_text(style.read_text(encoding="utf-8") + "\n.edited-by-the-test { color: red; }\n", encoding="utf-8")
    incremental, full = project.both()
    assert project.page.rendered == 1
    assert ".edited-by-the-test" in incremental and incremental == full


def test_raw_html_in_a_piece_is_refused_with_the_articles_line(tmp_path):
    """The preview's pieces are checked as the build checks the article: a
    raw <img> in a later section is named by the article's own line, and no
    piece is rendered from it."""
    project = Project(tmp_path)
    project.edit("The end, with", '<img src="/etc/passwd">\n\nThe end, with')
    line = next(
        n
        for n, text in enumerate(project.article.read_text(encoding="utf-8").splitlines(), 1)
        if text.startswith("<img")
    )
    with pytest.raises(RenderError, match=rf"index\.qmd:{line}: raw HTML <img src=\"/etc/passwd\">"):
        project.page.render(project.document())


def test_the_body_splits_only_where_the_parse_cannot_change(project):
    body = (
        "Intro.\n\n```python\n\n## not a heading: code\n```\n\n::: {.note}\n\n## inside a div\n\n:::\n\n"
        "## A heading\n\nText\n## not after a blank line\n\n{{< provenance >}}\n\nAfter.\n"
    )
    layout = split_body(body)
    assert "".join(layout.chunks) == body
    assert [c.splitlines()[0] for c in layout.chunks] == [
        "Intro.",
        "```python",
        "",
        "## A heading",
        "{{< provenance >}}",
        "",
    ]
    assert layout.headings == ["## A heading"]


@pytest.mark.parametrize(
    "body",
    [
        "Text[^1].\n\n[^1]: A note.\n",
        "A [link][ref].\n\n[ref]: https://example.org\n",
        "A setext heading\n----------------\n",
    ],
)
def test_document_wide_constructs_keep_the_body_whole(body):
    assert split_body(body) is None


def test_headings_two_chunks_would_name_alike_render_the_page_whole(tmp_path):
    project = Project(tmp_path)
    project.edit("## Closing words", "## Code")  # as an earlier section: Pandoc names it code-1
    incremental, full = project.both()
    assert project.page.fallback
    assert 'id="code-1"' in incremental and incremental == full


@pytest.mark.slow  # reads the built_project fixture's values
def test_the_real_article_renders_the_same_in_pieces(tmp_path, built_project):
    article = built_project / "article" / "index.qmd"
    from articlekit.data.baseline import load_baseline

    document = bind(
        str(article),
        article.read_text(encoding="utf-8"),
        read_json(built_project / "build" / "values.json"),
        False,
        load_baseline(built_project / "baseline" / "published.yaml"),
    )
    page = IncrementalPage(article, tmp_path / "pieces")
    assert page.render(document) == full_render(article, document, tmp_path)
    # in pieces unless it cites or cross-references (numbers and a reference
    # list that span the document: rendered whole, slower, never different)
    from articlekit.render.incremental import _DOCUMENT_WIDE

    assert page.fallback == bool(_DOCUMENT_WIDE.search(article.read_text(encoding="utf-8")))
