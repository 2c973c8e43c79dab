"""A claim's status is said one way, by articlekit.core.status, on every page.

One article makes three claims about measured values: one holds, one fails
(none of its interval clears the bound) and one is inconclusive (its
interval straddles the bound). Each page then shows the inconclusive claim
as inconclusive and the failed one as failed: the article's marks and its
provenance table (HTML, markdown and PDF), the render's terminal warning,
the preview's banner, the audit, the diff and the matrix. No module but
core/status.py spells a status's word or mark.
"""

import html
import io
import re
import tokenize
from contextlib import redirect_stderr
from pathlib import Path

import pypdf
import pytest
import yaml

from articlekit.article import bind as bindmod
from articlekit.article.bind import bind
from articlekit.core.jsonio import read_json, write_json
from articlekit.core.status import FAILS, HOLDS, INCONCLUSIVE, STATUS, binding_mark
from articlekit.data.baseline import load_baseline
from articlekit.data.values import merge
from articlekit.render import page as rendermod
from articlekit.render.checks import failed_claim_warnings
from articlekit.render.renderers import RenderError
from articlekit.render.formats import pdf as pdfmod
from articlekit.render.preview import Preview
from articlekit.review import matrix as matrixlib
from articlekit.review.audit import audit, summary_line, to_html, to_markdown
from articlekit.review.diff import compare
from articlekit.review.release import release
from articlekit.review.snapshot import load_snapshot
from tests.fixture_bibliography import copy_article_files

ROOT = Path(__file__).resolve().parent.parent

ARTICLE = """# Claims

Undecided: {{< value timing.undecided.estimate fmt=".1f" expect="> 1" >}} times.
Slower: {{< value timing.slower.estimate fmt=".1f" expect="> 1" >}} times.
Faster: {{< value timing.faster.estimate fmt=".1f" expect="> 1" >}} times.
Checked, not printed: {{< claim timing.undecided.estimate expect="between 1 and 2" >}}

```text
ratio {{< value timing.undecided.estimate fmt=".1f" expect="> 1" >}}
ratio {{< value timing.slower.estimate fmt=".1f" expect="> 1" >}}
```

Source: {{< source timing.undecided.estimate >}}, {{< source timing.slower.estimate >}}.

{{< provenance >}}
"""

UNDECIDED, SLOWER, FASTER = "timing.undecided.estimate", "timing.slower.estimate", "timing.faster.estimate"
RED, AMBER = b"0.6039216 0.10980392 0.10980392 scn", b"0.5411765 0.3254902 0 scn"  # #9a1c1c, #8a5300


def values_doc(undecided=(0.9, 1.1, 1.3)):
    """Timing ratios as (low, estimate, high): one interval straddles 1, one is below it, one above."""
    ratios = {"undecided": undecided, "slower": (0.4, 0.5, 0.6), "faster": (4.0, 5.0, 6.0)}
    envelope = {
        "experiment": "timing",
        "script": "experiments/timing.py",
        "params": {},
        "values": {name: {"estimate": e, "low": lo, "high": hi} for name, (lo, e, hi) in ratios.items()},
    }
    return merge([("results/timing.json", envelope)])


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The article bound with strict=false, its bindings written, its values too."""
    folder = tmp_path_factory.mktemp("status") / "article"
    folder.mkdir()
    copy_article_files(folder)
    article = folder / "index.qmd"
    article.write_text(ARTICLE, encoding="utf-8")
    values = values_doc()
    write_json(folder / "build" / "values.json", values)
    doc = bind(str(article), ARTICLE, values, strict=False)
    write_json(folder / "build" / "bindings.json", doc)
    return article, values, doc, folder / "build" / "bindings.json"


def claim_of(doc, key):
    return next(b["claim"] for b in doc["bindings"].values() if b["key"] == key and b["expect"] == "> 1")


# ---- bind: what the page is to show -----------------------------------------------------


def test_each_binding_carries_its_status_and_the_mark_the_page_shows(project):
    _, _, doc, _ = project
    assert claim_of(doc, UNDECIDED)["status"] == INCONCLUSIVE
    assert claim_of(doc, UNDECIDED)["mark"] == {"text": "⚠ claim inconclusive", "class": "claim-inconclusive"}
    assert claim_of(doc, SLOWER)["mark"] == {"text": "⚠ claim failed", "class": "claim-failed"}
    assert "mark" not in claim_of(doc, FASTER)  # a claim that holds: nothing beside its number
    assert [binding_mark(s) for s in (HOLDS, FAILS, INCONCLUSIVE)] == [
        None,
        claim_of(doc, SLOWER)["mark"],
        claim_of(doc, UNDECIDED)["mark"],
    ]


def test_the_provenance_table_shows_each_status_in_its_row(project):
    _, _, doc, _ = project
    rows = {
        key: line
        for line in doc["provenance_md"].splitlines()
        for key in (UNDECIDED, SLOWER, FASTER)
        if f"`{key}`" in line
    }
    assert "\\> 1 \\? inconclusive" in rows[UNDECIDED] and "✗" not in rows[UNDECIDED]
    assert "\\> 1 ✗ fails" in rows[SLOWER]
    assert "\\> 1 ✓ |" in rows[FASTER]


def test_binds_summary_counts_the_inconclusive_claims_apart(project, tmp_path):
    article, _, _, bindings = project
    err = io.StringIO()
    with redirect_stderr(err):
        assert (
            bindmod.main(
                [
                    str(article),
                    "--values",
                    str(bindings.parent / "values.json"),
                    "--strict",
                    "false",
                    "--out",
                    str(tmp_path / "bindings.json"),
                ]
            )
            == 0
        )
    summary = err.getvalue().splitlines()[-1]
    assert ", 2 failed (shown as warnings: strict=false), 3 inconclusive (shown as warnings" in summary
    assert f"claim '{UNDECIDED} > 1' is inconclusive (it neither holds nor fails)" in err.getvalue()


# ---- the article: HTML, markdown, the render's warning -------------------------------------


@pytest.fixture(scope="module")
def rendered(project):
    article, _, _, bindings = project
    html_out, md_out = bindings.parent / "article.html", bindings.parent / "article.md"
    rendermod.render(article, bindings, "pandoc", html_out, md_out)
    return html_out.read_text(encoding="utf-8"), md_out.read_text(encoding="utf-8")


@pytest.mark.workflow
def test_the_article_marks_an_inconclusive_claim_as_inconclusive_and_a_failed_one_as_failed(rendered):
    page, md = rendered
    assert re.search(
        r'>1\.1</a> <span class="claim-inconclusive" title="[^"]*inconclusive[^"]*">'
        r"⚠ claim inconclusive: &gt; 1</span>",
        page,
    )
    assert re.search(
        r'>0\.5</a> <span class="claim-failed" title="[^"]*does not hold[^"]*">'
        r"⚠ claim failed: &gt; 1</span>",
        page,
    )
    assert '<span class="claim-inconclusive"' in page.split("Checked, not printed:")[1].split("</p>")[0]
    assert ".claim-inconclusive {" in page  # its own colour (page.css)
    assert "1.1 **⚠ claim inconclusive: \\> 1**" in md and "0.5 **⚠ claim failed: \\> 1**" in md
    # inside code, where no markup can go, the same words
    assert "ratio 1.1  ⚠ claim inconclusive: > 1\nratio 0.5  ⚠ claim failed: > 1" in md
    assert md.count("claim failed") == 2  # the slower claim, in prose and in code: nowhere else


@pytest.mark.workflow
def test_the_renders_warning_says_inconclusive_or_failed(project, rendered):
    _, _, _, bindings = project
    warnings = failed_claim_warnings(bindings)
    assert len(warnings) == 5  # two places print each claim that does not hold, and the claim shortcode
    assert any(f"claim '{UNDECIDED} > 1' is inconclusive: value 1.1 (interval 0.9 to 1.3)" in w for w in warnings)
    assert any(f"claim '{UNDECIDED} between 1 and 2' is inconclusive" in w for w in warnings)
    slower = [w for w in warnings if SLOWER in w]
    assert len(slower) == 2 and all(f"claim '{SLOWER} > 1' failed: value 0.5" in w for w in slower)


@pytest.mark.workflow
def test_a_stale_bindings_file_with_an_unmarked_failed_claim_stops_the_render(project, tmp_path):
    article, _, doc, _ = project
    stale = read_json(project[3])
    for b in stale["bindings"].values():
        if b["claim"]:
            b["claim"].pop("mark", None)
    write_json(tmp_path / "bindings.json", stale)
    with pytest.raises(RenderError, match="carries no mark to show.*rerun python -m articlekit bind"):
        rendermod.render(article, tmp_path / "bindings.json", "pandoc", tmp_path / "a.html", tmp_path / "a.md")


# ---- the preview's banner ------------------------------------------------------------------


@pytest.mark.workflow
def test_the_previews_banner_says_inconclusive_or_failed(project, tmp_path):
    article, _, _, bindings = project
    preview = Preview(article, bindings.parent / "values.json", tmp_path / "preview", strict=False)
    try:
        preview.rebuild()
        page = preview.served_page().decode("utf-8")
    finally:
        preview.close()
    banner = page.split('id="preview-banner"', 1)[1].split("</div>", 1)[0]
    assert html.escape(f"⚠ {article}:3: claim '{UNDECIDED} > 1' is inconclusive: value 1.1") in banner
    assert html.escape(f"claim '{SLOWER} > 1' failed: value 0.5") in banner
    assert "⚠ claim inconclusive: &gt; 1" in page  # the page under the banner


# ---- the PDF ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pdf(project):
    article, _, _, bindings = project
    out = bindings.parent / "article.pdf"
    pdfmod.render_pdf(article, bindings, out)
    reader = pypdf.PdfReader(out)
    text = "".join(page.extract_text() for page in reader.pages).replace("\u2212", "-")
    content = b"".join(page.get_contents().get_data() for page in reader.pages)
    return text, content


@pytest.mark.workflow
def test_the_pdf_prints_each_mark_in_its_own_colour(pdf):
    text, content = pdf
    assert "1.1 ⚠ claim inconclusive: > 1" in text and "0.5 ⚠ claim failed: > 1" in text
    assert "ratio 1.1 ⚠ claim inconclusive: > 1" in re.sub(r" +", " ", text)  # in code too
    assert RED in content and AMBER in content


@pytest.mark.workflow
def test_the_pdf_marks_an_inconclusive_claim_only_in_amber(project, tmp_path):
    """Built again with the undecided claim failing instead: amber is gone."""
    article, _, _, _ = project
    doc = bind(str(article), ARTICLE, values_doc(undecided=(0.2, 0.3, 0.4)), strict=False)
    write_json(tmp_path / "bindings.json", doc)
    pdfmod.render_pdf(article, tmp_path / "bindings.json", tmp_path / "article.pdf")
    reader = pypdf.PdfReader(tmp_path / "article.pdf")
    content = b"".join(page.get_contents().get_data() for page in reader.pages)
    assert RED in content and AMBER not in content
    assert "claim inconclusive" not in "".join(page.extract_text() for page in reader.pages)


# ---- the audit ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def audited(project, tmp_path_factory):
    _, values, doc, _ = project
    path = tmp_path_factory.mktemp("baseline") / "published.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "edition": {"title": "t", "source": "s", "date": "2026-01-01", "versions": {"python": "3.11"}},
                "entries": [
                    {
                        "id": "timing.undecided",
                        "class": "exact",
                        "published": "1.1",
                        "value": 1.1,
                        "key": UNDECIDED,
                        "fmt": ".1f",
                        "where": {"section": "s", "quote": "q"},
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    return audit(load_baseline(path), values, doc)


def test_the_audit_counts_an_inconclusive_claim_apart_from_the_failed_ones(audited):
    # one entry per place a claim is made: the slower claim twice, the undecided ones three times
    assert audited["summary"]["claims_failed"] == 2
    assert audited["summary"]["claims_checked"] == 6
    assert summary_line(audited).endswith("2 of 6 claims failed, 3 inconclusive")


def test_the_audit_markdown_says_inconclusive_or_failed(audited):
    md = to_markdown(audited)
    assert "| claims failed | claims inconclusive |" in md and "| 2 of 6 | 3 of 6 |" in md
    assert "## Claims that fail or are inconclusive" in md
    assert re.search(rf"index.qmd:3: `{UNDECIDED}` expect `> 1` \? inconclusive: value 1.1", md)
    assert re.search(rf"index.qmd:4: `{SLOWER}` expect `> 1` ✗ fails: value 0.5", md)
    (row,) = [line for line in md.splitlines() if line.startswith("| reproduced | timing.undecided |")]
    assert "? inconclusive &gt; 1; ? inconclusive between 1 and 2" in row and "✗" not in row
    others = [line for line in md.splitlines() if line.startswith(f"| `{SLOWER}` |")]
    assert ["✗ fails &gt; 1" in line for line in others] == [True, False]  # the claim, then {{< source >}}


def test_the_audit_page_says_inconclusive_or_failed(audited):
    page = to_html(audited)
    assert '<span class="badge inconclusive">? inconclusive &gt; 1</span>' in page
    assert '<span class="badge fails">✗ fails &gt; 1</span>' in page
    assert '<span class="badge fails">?' not in page  # never in the failed colour
    assert ".inconclusive{" in page  # its own colour (report.css)
    assert "Claims that fail or are inconclusive</h2>" in page
    assert '<span class="badge inconclusive">claims inconclusive</span><b>3 / 6</b>' in page
    assert '<span class="badge fails">claims failed</span><b>2 / 6</b>' in page


# ---- the diff -------------------------------------------------------------------------------------


def test_the_diff_reports_a_claim_gone_from_failed_to_inconclusive(project, tmp_path):
    _, values, doc, _ = project
    old = values_doc(undecided=(0.2, 0.3, 0.4))
    path = release("r1", old, bind(str(project[0]), ARTICLE, old, strict=False), {}, tmp_path / "releases")
    snapshot = load_snapshot(path)
    changed = {
        c["expect"] + " " + c["key"]: (c["release"], c["build"]) for c in compare(snapshot, values, doc)["claims"]
    }
    assert changed == {
        f"> 1 {UNDECIDED}": ("fails", "inconclusive"),
        f"between 1 and 2 {UNDECIDED}": ("fails", "inconclusive"),
    }


def test_a_releases_readme_counts_the_inconclusive_claims_apart(project, tmp_path):
    _, values, doc, _ = project
    path = release("r1", values, doc, {}, tmp_path / "releases")
    assert "6 claims (2 failed, 3 inconclusive)" in (path.parent / "README.md").read_text(encoding="utf-8")


# ---- the matrix ------------------------------------------------------------------------------------


def column(label, undecided):
    return {
        "label": label,
        "pins": [f"numpy=={label}"],
        "installed": True,
        "log": "x.log",
        "versions": {},
        "failed": [],
        "shared": [],
        "bindings": bind("index.qmd", ARTICLE, values_doc(undecided=undecided), strict=False),
    }


@pytest.fixture(scope="module")
def matrix():
    # environment a: the undecided ratio clears the bound; b: it straddles it
    return matrixlib.build([column("a", (4.0, 5.0, 6.0)), column("b", (0.9, 1.1, 1.3))])


def test_the_matrix_counts_an_inconclusive_claim_apart_from_the_failed_ones(matrix):
    a, b = matrix["environments"]
    # a: "between 1 and 2" fails on 5.0 there
    assert (a["claims_held"], a["claims_failed"], a["claims_inconclusive"]) == (2, 2, 0)
    assert (b["claims_held"], b["claims_failed"], b["claims_inconclusive"]) == (1, 1, 2)
    (row,) = [r for r in matrix["rows"] if r["key"] == UNDECIDED and r["expect"] == "> 1"]
    assert [r for r in row["reasons"] if "claim" in r] == [
        "b: claim '> 1' is inconclusive (value 1.1 (interval 0.9 to 1.3): claim '> 1' is inconclusive: "
        "the interval straddles its bound)"
    ]


def test_the_matrix_markdown_says_inconclusive_or_failed(matrix):
    md = matrixlib.to_markdown(matrix)
    assert "| Claims held | Claims failed | Claims inconclusive |" in md
    (row,) = [line for line in md.splitlines() if f"`{UNDECIDED}` `.1f`" in line][:1]
    assert "| `5.0` ✓ | `1.1` ? inconclusive |" in row and "✗" not in row
    (slower,) = [line for line in md.splitlines() if f"`{SLOWER}` `.1f`" in line][:1]
    assert "| `0.5` ✗ fails | `0.5` ✗ fails |" in slower


def test_the_matrix_page_says_inconclusive_or_failed(matrix):
    page = matrixlib.to_html(matrix)
    assert re.search(r'<code>1\.1</code> <span class="badge inconclusive" title="[^"]*">\? inconclusive</span>', page)
    assert re.search(r'<code>0\.5</code> <span class="badge fails" title="[^"]*">✗ fails</span>', page)
    assert ".inconclusive{" in page  # its own colour
    assert "<dt>claims inconclusive</dt><dd>2</dd>" in page


# ---- one owner -------------------------------------------------------------------------------------

# What only core/status.py may spell: a status's sign, the article's marks, a
# status word in capitals, a string that is a status word, a claim's status
# in a sentence ("claim '{key}' failed"), and, in the Lua filters, the marks'
# classes. ("holds" and "failed" alone are also field names of the documents.)
MARKS = re.compile(r"[✓✗]|⚠ claim|\?\s*inconclusive", re.I)
CAPITALS = re.compile(r"\b(FAILED|FAILS|INCONCLUSIVE)\b")
A_STATUS_WORD = re.compile(r"^(fails|inconclusive|is inconclusive|does not hold)$")
IN_A_SENTENCE = re.compile(r"\}'\s*(failed|fails|is inconclusive|does not hold)\b")
LUA_CLASS = re.compile(r"claim-(failed|inconclusive)")
QUOTED = re.compile(r'"((?:\\.|[^"\\\n])*)"|\'((?:\\.|[^\'\\\n])*)\'')


def python_strings(path):
    """(line, text) of each string literal of a module, its prefix and quotes
    removed; an f-string's replacement fields are searched for the literals
    inside them, and dropped from its text."""
    with path.open("rb") as f:
        for token in tokenize.tokenize(f.readline):
            if token.type == tokenize.STRING:
                raw = re.sub(r"""^[a-zA-Z]*("{3}|'{3}|"|')|("{3}|'{3}|"|')$""", "", token.string)
                fields = re.findall(r"\{[^{}]*\}", raw) if re.match(r"^[rRbB]*[fF]", token.string) else []
                yield (
                    token.start[0],
                    raw,
                    [
                        re.sub(r"\{[^{}]*\}", "", raw) if fields else raw,
                        *(m[0] or m[1] for field in fields for m in QUOTED.findall(field)),
                    ],
                )


def lua_strings(text):
    for match in QUOTED.finditer(text):
        literal = match.group(1) or match.group(2) or ""
        yield text.count("\n", 0, match.start()) + 1, literal, [literal]


def spellings(path):
    """(line, what) for each status word or mark the file spells."""
    text = path.read_text(encoding="utf-8")
    found = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in MARKS.finditer(text)]
    for line, raw, texts in python_strings(path) if path.suffix == ".py" else lua_strings(text):
        if IN_A_SENTENCE.search(raw) or any(CAPITALS.search(t) or A_STATUS_WORD.match(t) for t in texts):
            found.append((line, raw))
    if path.suffix == ".lua":
        found += [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in LUA_CLASS.finditer(text)]
    return found


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_no_module_but_core_status_spells_a_status_word_or_mark():
    owner = ROOT / "articlekit" / "core" / "status.py"
    code = [p for suffix in ("*.py", "*.lua", "*.typ") for p in (ROOT / "articlekit").rglob(suffix) if p != owner]
    assert len(code) > 40
    found = [f"{p.relative_to(ROOT)}:{line}: {what!r}" for p in sorted(code) for line, what in spellings(p)]
    assert found == [], "status words and marks belong to articlekit/core/status.py:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "spelled",
    [  # the spellings core/status.py replaced
        'mark = "✓" if holds else ("? inconclusive" if undecided else "✗ FAILED")',
        '''f"{'is inconclusive' if c.get('status') == 'inconclusive' else 'failed'}: {c['message']}"''',
        '''f"{b['claim']['expect']}: {'holds' if b['claim']['holds'] else 'FAILS'}"''',
        """problems.append(f"{where}: claim '{key} {expect}' failed: value")""",
        'local text = "⚠ claim " .. verdict(b) .. ": " .. b.expect',
        'return b.claim.status == "inconclusive" and "inconclusive" or "failed"',
        'pandoc.Attr("", { "claim-failed" })',
    ],
)
def test_the_check_finds_a_status_spelled_elsewhere(tmp_path, spelled):
    path = tmp_path / ("x.py" if spelled.startswith(("mark", "f", "'", "problems")) else "x.lua")
    path.write_text(spelled + "\n", encoding="utf-8")
    assert spellings(path)


def test_the_table_names_every_status_of_the_claims():
    assert set(STATUS) == {HOLDS, FAILS, INCONCLUSIVE}
    assert len({s.word for s in STATUS.values()}) == len({s.mark for s in STATUS.values()}) == 3
    assert len({s.page_class for s in STATUS.values()}) == 3  # None for holds, one class each otherwise
    assert [STATUS[s].shown for s in (HOLDS, FAILS, INCONCLUSIVE)] == ["✓", "✗ fails", "? inconclusive"]
