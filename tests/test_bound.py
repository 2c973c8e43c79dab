"""The bound document: every shortcode resolved once, by Python, for every format.

`articlekit bind` writes build/article.bound.md (articlekit.article.bound);
the page, its markdown, the PDF, Word and JATS are all rendered from it, and
each format's Lua (render/filters/bound.lua) only decides how a bound span
looks there. These tests hold the bound text to what each shortcode prints,
and the filter to what each format shows of it.
"""

import json
import re
import subprocess

import pytest

from articlekit.article.bound import BoundError, bound_markdown
from articlekit.article.shortcodes import ShortcodeSyntaxError
from articlekit.render.luafilters import BOUND_FILTER
from articlekit.render.renderers import pandoc_path

pytestmark = pytest.mark.unit


def binding(key, text, claim=None, expect=""):
    anchor = "v-" + key.replace(".", "-")
    return {
        "key": key,
        "text": text,
        "expect": expect,
        "anchor": anchor,
        "title": f"{key} = {text} (experiments/x.py)",
        "claim": claim,
    }


FAILED = {
    "holds": False,
    "status": "fails",
    "message": "value 0.5: claim '> 2' fails",
    "mark": {"text": "⚠ claim failed", "class": "claim-failed"},
}
HELD = {"holds": True, "status": "holds", "message": "holds"}

DOCUMENT = {
    "bindings": {
        "a.b||": binding("a.b", "1.5"),
        "a.c|.2f|> 2": binding("a.c", "0.50", FAILED, "> 2"),
        "a.d||== 1": binding("a.d", "1", HELD, "== 1"),
        "a.e||": binding("a.e", "x | *y* <z>"),
    },
    "provenance_md": "| Key | Value |\n|:--|:--|\n| [`a.b`]{#v-a-b} | 1\\.5 |\n",
    "departures_md": "- moved: [1\\.5](#v-a-b \"a.b\"){.bound-value}\n",
}


def test_a_value_becomes_a_link_to_its_row_with_its_id_on_the_first_place_only():
    text = "First {{< value a.b >}}, again {{< value a.b >}}.\n"
    bound = bound_markdown(text, DOCUMENT)
    first, again = bound.split(", again ")
    assert first == 'First [1\\.5](#v-a-b "a.b = 1.5 (experiments/x.py)"){#at-v-a-b .bound-value}'
    assert again == '[1\\.5](#v-a-b "a.b = 1.5 (experiments/x.py)"){.bound-value}.\n'


def test_markup_in_a_value_or_its_title_stays_text():
    bound = bound_markdown("{{< value a.e >}}\n", DOCUMENT)
    assert bound.startswith("[x \\| \\*y\\* \\<z\\>](#v-a-e ")
    assert '"a.e = x \\| *y* <z> (experiments/x.py)"' in bound  # a pipe would end a table's cell


def test_a_claim_that_fails_carries_its_mark_and_one_that_holds_an_empty_checked_span():
    bound = bound_markdown('{{< value a.c fmt=".2f" expect="> 2" >}} {{< claim a.d expect="== 1" >}}\n', DOCUMENT)
    assert (
        '{#at-v-a-c .bound-value} [⚠ claim failed\\: \\> 2]{claim-mark="claim-failed" title="value 0.5: claim' in bound
    )
    assert bound.rstrip().endswith('[]{.claim-checked data-claim="a.d == 1"}')


def test_in_code_a_shortcode_becomes_its_plain_text():
    bound = bound_markdown('```\nx = {{< value a.e >}}\ny = {{< value a.c fmt=".2f" expect="> 2" >}}\n```\n', DOCUMENT)
    assert bound == "```\nx = x | *y* <z>\ny = 0.50  ⚠ claim failed: > 2\n```\n"


def test_code_true_prints_the_text_as_code_fenced_past_its_backticks():
    document = {"bindings": {"k||": binding("k", "a `b` c")}}
    assert bound_markdown("{{< value k code=true >}}\n", document).startswith("[``a `b` c``](#v-k ")


def test_the_tables_become_divs_the_filter_knows_and_an_escaped_shortcode_prints_as_written():
    bound = bound_markdown("{{< provenance >}}\n\n{{< departures >}}\n\nSay {{{< value a.b >}}}.\n", DOCUMENT)
    assert bound.startswith("::: {.provenance .column-screen-inset}\n| Key | Value |")
    assert "::: {.bound-departures}\n- moved:" in bound
    assert bound.endswith("Say \\{\\{\\< value a\\.b \\>\\}\\}.\n")


def test_a_shortcode_the_bindings_lack_is_named_at_its_line():
    with pytest.raises(BoundError, match=r"^index.qmd:3: no binding for key 'a.zz' in \{\{< value a.zz >\}\}"):
        bound_markdown("A\n\n{{< value a.zz >}}\n", DOCUMENT, "index.qmd")
    with pytest.raises(ShortcodeSyntaxError):
        bound_markdown("{{< value a.b\n", DOCUMENT)


def test_meta_in_code_is_refused_for_its_value_is_the_renderers():
    with pytest.raises(BoundError, match=r"index.qmd:1: .* move it into the prose"):
        bound_markdown("`{{< meta renderer >}}`\n", DOCUMENT, "index.qmd")


# --- a value is data where it lands: no value closes the code it sits in ------------

# An experiment's string that tries to close whatever holds it and write live
# markdown after it: fences of both kinds, longer than the article's, inline
# backticks, a blank line, a comment's end, articlekit's own attribute.
ESCAPING = "ok\n`````\n\n[x]{claim-mark=\"claim-failed\"} <img src=/etc/passwd>\n\n~~~~~~\n```` `` ` -->\n\n# Head"
HOLDERS = {
    "a backtick fence": "```text\nv = {{< value e.m >}}\n```\n\nAfter.\n",
    "a tilde fence": "~~~\n{{< value e.m >}}\n~~~\n\nAfter.\n",
    "a long fence": "````python\n{{< value e.m >}}\n````\n\nAfter.\n",
    "inline code": "Inline `{{< value e.m >}}` and after.\n",
    "inline code of two backticks": "Inline ``a ` {{< value e.m >}}`` and after.\n",
    "an HTML comment": "<!-- {{< value e.m >}} -->\n\nAfter.\n",
    "prose": "Prose {{< value e.m >}} and after.\n",
    "prose as code": "Prose {{< value e.m code=true >}} and after.\n",
}


def tree_of(markdown):
    done = subprocess.run(
        [pandoc_path(), "-f", "markdown", "-t", "json"], input=markdown, capture_output=True, text=True
    )
    return json.loads(done.stdout)


def live(node, found=None):
    """What the tree holds outside code and comments that a value could
    have written: raw HTML, headings, spans with attributes."""
    found = [] if found is None else found
    if isinstance(node, dict):
        kind = node.get("t")
        if kind in ("CodeBlock", "Code"):
            return found
        if kind == "RawBlock" and node["c"][1].startswith("<!--") and node["c"][1].rstrip().endswith("-->"):
            if node["c"][1].count("-->") == 1:  # one whole comment, nothing after it
                return found
        if kind in ("RawInline", "RawBlock", "Header") or (kind == "Span" and node["c"][0][2]):
            found.append(kind)
        for child in node.values():
            live(child, found)
    elif isinstance(node, list):
        for item in node:
            live(item, found)
    return found


@pytest.mark.workflow
@pytest.mark.parametrize("holder", HOLDERS)
def test_a_value_cannot_close_what_holds_it(holder):
    document = {"bindings": {"e.m||": binding("e.m", ESCAPING)}}
    tree = tree_of(bound_markdown(HOLDERS[holder], document))
    assert live(tree) == [], holder
    # and the text after the value is still the article's, in the same paragraph or block
    assert "After" in json.dumps(tree) or "after" in json.dumps(tree)


@pytest.mark.workflow
def test_in_a_fenced_block_the_value_keeps_its_lines_and_the_fence_grows_past_them():
    document = {"bindings": {"e.m||": binding("e.m", "a\n`````\nb")}}
    bound = bound_markdown("```text\n{{< value e.m >}}\n```\n", document)
    assert bound == "``````text\na\n`````\nb\n``````\n"
    (block,) = tree_of(bound)["blocks"]
    assert block["t"] == "CodeBlock" and block["c"][1] == "a\n`````\nb"


def test_a_fence_the_values_do_not_reach_is_left_as_written():
    assert bound_markdown("```\n{{< value a.b >}}\n```\n", DOCUMENT) == "```\n1.5\n```\n"


# --- the filter: one bound document, each format's own look -----------------------


def pandoc(markdown, to, *metadata):
    cmd = [pandoc_path(), "-f", "markdown", "-t", to, "--wrap", "none", "--lua-filter", str(BOUND_FILTER)]
    for item in metadata:
        cmd += ["-M", item]
    return subprocess.run(cmd, input=markdown, capture_output=True, text=True, check=True).stdout


SAMPLE = (
    'It is {{< value a.c fmt=".2f" expect="> 2" >}} and {{< value a.b >}}{{< claim a.d expect="== 1" >}}; '
    "by {{< meta renderer >}}.\n\n{{< provenance >}}\n"
)


@pytest.mark.workflow
def test_the_page_keeps_links_marks_and_checked_claims():
    html = pandoc(bound_markdown(SAMPLE, DOCUMENT), "html", "renderer=Pandoc 3")
    assert '<a href="#v-a-c" id="at-v-a-c" class="bound-value"' in html
    assert (
        '<span class="claim-failed" title="value 0.5: claim &#39;&gt; 2&#39; fails">⚠ claim failed: &gt; 2</span>'
        in html
    )
    assert '<span class="claim-checked" data-claim="a.d == 1"></span>' in html
    assert "by Pandoc 3." in html
    assert '<div class="provenance column-screen-inset">' in html and "<code>a.<wbr>b</code>" in html


@pytest.mark.workflow
def test_the_markdown_for_diffs_keeps_the_numbers_and_drops_links_and_anchors():
    md = pandoc(bound_markdown(SAMPLE, DOCUMENT), "gfm", "renderer=Pandoc 3")
    assert md.startswith("It is 0.50 **⚠ claim failed: \\> 2** and 1.5; by Pandoc 3.")
    assert "#v-" not in md and "<div" not in md and "<span" not in md
    assert re.search(r"^\| `a\.b` +\| 1\.5 +\|$", md, re.M)


@pytest.mark.workflow
def test_word_and_jats_keep_the_links_when_their_module_asks():
    native = pandoc(bound_markdown(SAMPLE, DOCUMENT), "native", "bound-links=keep")
    assert '( "at-v-a-c" , [ "bound-value" ] , [] )' in native  # the link, its id and class kept
    assert '( "v-a-b" , [] , [] )' in native  # the provenance row's anchor stays, for the links to land on


def test_the_filter_is_the_one_every_pandoc_format_runs_first():
    from articlekit.render import pandoc_route

    assert pandoc_route.filter_files()[0] == BOUND_FILTER
    assert json.dumps([str(p) for p in pandoc_route.filter_files()]).count("quarto_shortcodes") == 0
