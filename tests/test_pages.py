"""The report pages have one writer: articlekit/review/pages.py renders
build/audit.html and build/matrix.html from Jinja2 templates
(articlekit/review/templates/) with autoescaping, from data the audit and
the matrix compute. So whatever a value holds (an error message quoting
`</td>`, a label with `<script>`, an id with a quote) shows as text and
never changes the page's structure; no other module of articlekit/review
writes an HTML tag; and the templates and stylesheets are code of the steps
that write the pages, so editing one rebuilds them.
"""

import ast
import copy
import re
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest

from articlekit.article.bind import bind
from articlekit.core.jsonio import read_json
from articlekit.data.baseline import load_baseline
from articlekit.data.values import merge
from articlekit.review import audit as auditlib
from articlekit.review import matrix as matrixlib
from articlekit.review import pages
from articlekit.workflow.codegraph import package_files

REVIEW = Path(pages.__file__).parent
FIXTURES = Path(__file__).parent / "fixtures" / "audit"

# Each would end a cell, start a script, or add an attribute if it reached the page as markup.
HOSTILE = [
    "</td><td>x</td>",
    "<script>alert(1)</script>",
    '" onmouseover="alert(1)',
    "' onfocus='alert(2)",
    "</table></details><b>bold</b>",
    "&amp; &lt;",
]


def poisoned(data, keep=("status",)):
    """`data` with every string given all of HOSTILE as its tail (a status
    is left alone: it decides where a row goes, and is one of a few words)."""
    tail = " ".join(HOSTILE)

    def walk(value, key=None):
        if isinstance(value, str) and key not in keep:
            return value + tail
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        return value

    return walk(copy.deepcopy(data))


class Page(HTMLParser):
    """A page as a browser parses it: its elements, attributes, text, and tables."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes, self.text, self.tables = [], [], [], []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]
        if tag == "table":
            self.tables.append({"head": 0, "rows": []})
        elif tag == "th" and self.tables:
            self.tables[-1]["head"] += 1
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append(0)
        elif tag == "td" and self.tables:
            self.tables[-1]["rows"][-1] += 1

    def handle_data(self, data):
        self.text.append(data)


def assert_shown_as_text(html):
    page = Page(html)
    assert "script" not in page.tags
    assert not [name for name in page.attributes if name.startswith("on")]
    text = "".join(page.text)
    for hostile in HOSTILE:
        assert hostile in text, f"{hostile!r} is not shown as text"
    assert page.tables
    for table in page.tables:
        assert table["rows"][0] == 0  # the head's row
        assert set(table["rows"][1:]) == {table["head"]}, "a value broke a row's cells"
    return page


@pytest.fixture
def report():
    return auditlib.audit(
        load_baseline(FIXTURES / "baseline.yaml"),
        read_json(FIXTURES / "values.json"),
        read_json(FIXTURES / "bindings.json"),
    )


def test_the_audit_page_shows_markup_in_any_value_as_text(report):
    hostile = poisoned(report)
    assert hostile["failed_claims"] and hostile["other_bindings"]  # every table of the page is drawn
    assert_shown_as_text(auditlib.to_html(hostile))


ARTICLE = """\
Matmul says: {{< value errors.msg >}}.
The largest difference is {{< value parity.diff fmt=".1e" expect="< 1e-12" >}}.
Built with NumPy {{< value environment.numpy >}}.

{{< provenance >}}
"""


def column(label, numpy, msg, diff):
    artifacts = [
        (
            "environment.json",
            {
                "experiment": "environment",
                "script": "experiments/environment.py",
                "versions": {"numpy": numpy},
                "values": {"numpy": numpy},
            },
        ),
        ("errors.json", {"experiment": "errors", "script": "experiments/errors.py", "values": {"msg": msg}}),
        ("parity.json", {"experiment": "parity", "script": "experiments/parity.py", "values": {"diff": diff}}),
    ]
    return {
        "label": label,
        "pins": [f"numpy=={numpy}"],
        "installed": True,
        "log": "x.log",
        "versions": {"numpy": numpy},
        "failed": [],
        "shared": [],
        "bindings": bind("index.qmd", ARTICLE, merge(artifacts), strict=False),
    }


def test_the_matrix_page_shows_markup_in_any_value_as_text():
    columns = [
        column("a</td>", "2.4.6", "shapes </td><td>differ <script>", 1e-16),
        column("b<script>", "1.26.4", "mismatch", 1e-3),
        {
            "label": "c",
            "pins": ["numpy==1.0"],
            "installed": False,
            "log": "c.log",
            "versions": {},
            "failed": [{"experiment": "(install)", "reason": "no wheel", "log": "c.log"}],
            "shared": [],
            "bindings": None,
        },
    ]
    matrix = matrixlib.build(columns)
    assert matrix["differing"] == 2  # a text changed, a claim fails: both tables are drawn
    # every text the matrix holds (reasons quote the values) made hostile too
    page = assert_shown_as_text(
        matrixlib.to_html(poisoned(matrix, keep=("label", "status")))
    )  # labels key the cells, a status the marks
    assert "shapes </td><td>differ <script>" in "".join(page.text)


def test_a_field_the_page_names_and_its_data_lacks_is_an_error(report):
    data = auditlib.page_data(report)
    del data["cited"]
    with pytest.raises(jinja2.UndefinedError, match="cited"):
        pages.html_page("audit.html", **data)


# ---- no HTML outside the page writer -------------------------------------------------

ELEMENTS = (
    "a abbr article aside b blockquote body br button caption code col colgroup dd details div dl dt "
    "em figure footer form h1 h2 h3 h4 h5 h6 head header hr html i iframe img input label li link main "
    "meta nav ol option p pre script section select small span strong style sub summary sup table "
    "tbody td textarea tfoot th thead title tr u ul wbr"
).split()
# An HTML element's opening or closing tag; a placeholder in a path (releases/<label>/) is not one.
TAG = re.compile(r"(?<![\w/])</?(?:%s)(?=[\s>/]|$)" % "|".join(ELEMENTS), re.I)


def html_in_strings(path):
    """(line, text) of each string constant in the file, docstrings aside,
    that holds an HTML tag (in an f-string, its literal parts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and TAG.search(node.value)
    )


def test_the_tag_finder_finds_tags_in_strings_and_f_strings(tmp_path):
    source = tmp_path / "m.py"
    source.write_text('x = f\'<td class="v">{1}\'\ny = "</span>"\nz = "releases/<label>/snapshot.json, a < b"\n')
    assert [line for line, _ in html_in_strings(source)] == [1, 2]


@pytest.mark.parametrize("module", sorted(p.name for p in REVIEW.glob("*.py") if p.name != "pages.py"))
def test_no_module_of_review_but_the_page_writer_writes_html(module):
    found = html_in_strings(REVIEW / module)
    assert not found, (
        f"articlekit/review/{module} writes HTML in Python ({found[:3]}): give the values to "
        "a template under articlekit/review/templates/ and render it with pages.html_page"
    )


# ---- the templates are code of the steps that write pages ------------------------------


@pytest.mark.parametrize("step", ["audit", "matrix", "diff"])
def test_the_templates_and_stylesheets_are_code_of_each_report_step(step):
    """A rule's code inputs are its import graph and the data files its
    modules name: an edited template or stylesheet rebuilds the pages."""
    code = package_files(f"articlekit.review.{step}", article_root=REVIEW.parents[1])
    page_files = sorted(
        path.relative_to(REVIEW.parents[1]).as_posix() for path in [*REVIEW.glob("templates/*"), *REVIEW.glob("*.css")]
    )
    assert page_files and set(page_files) <= set(code), sorted(set(page_files) - set(code))


def test_every_page_template_is_built_on_the_base_page():
    for template in sorted((REVIEW / "templates").glob("*.html")):
        if template.name not in ("page.html", "macros.html"):
            assert '{% extends "page.html" %}' in template.read_text(encoding="utf-8"), template.name
