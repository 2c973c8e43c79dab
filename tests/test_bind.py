"""shortcodes + bind: every shortcode found, resolved, formatted and checked."""

import re
from pathlib import Path

import pytest

from articlekit.article import bind as bindmod
from articlekit.article.bind import BindError, bind
from articlekit.core.fmt import format_value
from articlekit.core.jsonio import read_json, write_json
from articlekit.article.shortcodes import lookup_id, scan, to_quarto_markdown
from articlekit.core.keys import lookup
from articlekit.core.text import short_text
from articlekit.data.values import merge

FIXTURE = Path(__file__).parent / "fixtures" / "article"


@pytest.fixture(scope="module")
def values_doc():
    return merge((p, read_json(p)) for p in sorted((FIXTURE / "results").glob("*.json")))


@pytest.fixture(scope="module")
def article():
    return (FIXTURE / "index.qmd").read_text(encoding="utf-8")


def bind_text(text, values_doc, strict=True):
    return bind("article/index.qmd", text, values_doc, strict)


# --- scanning, as Quarto reads shortcodes -----------------------------------


def test_scan_finds_name_args_kwargs_line_and_context():
    text = 'a\n\nx {{< value k.a fmt=".6f" expect="< 1e-12" >}} y\n\n```python\n{{< value k.b fmt=".2e" >}}\n```\n'
    prose, code = scan(text)
    assert (prose.name, prose.args, prose.kwargs, prose.line, prose.context) == (
        "value",
        ["k.a"],
        {"fmt": ".6f", "expect": "< 1e-12"},
        3,
        "prose",
    )
    assert (code.kwargs, code.line, code.context) == ({"fmt": ".2e"}, 6, "code")
    assert code.raw_args == ["k.b", '".2e"']  # every value as written, quotes kept


def test_quotes_are_optional_and_single_quotes_work():
    (a, b) = scan("{{< value k fmt=.6f >}} {{< value k fmt='.6f' expect='contains \"->\"' >}}")
    assert a.kwargs["fmt"] == b.kwargs["fmt"] == ".6f"
    assert b.kwargs["expect"] == 'contains "->"'


def test_inline_code_comments_front_matter_and_verbatim_blocks_are_told_apart():
    text = (
        '---\ntitle: "{{< value t >}}"\n---\n`{{< value a >}}` <!-- {{< value b >}} -->\n\n'
        '```{.markdown shortcodes="false"}\n{{< value c >}}\n```\n\n{{{< value d >}}}\n'
    )
    found = [(sc.args[0], sc.context, sc.escaped) for sc in scan(text)]
    assert found == [("a", "code", False), ("b", "comment", False), ("d", "prose", True)]


def test_a_shortcode_may_span_lines_and_hold_quoted_closers():
    (sc,) = scan('{{< value k\n   expect="contains \'>}}\'" >}}')
    assert sc.kwargs == {"expect": "contains '>}}'"}


def test_an_escaped_quote_keeps_a_quoted_argument_open_and_an_apostrophe_opens_none():
    (sc,) = scan('{{< value k expect="contains \\"a >}} b\\"" >}}')
    assert sc.kwargs == {"expect": 'contains "a >}} b"'}
    # a quote that does not start an argument (after a letter) is text
    (sc,) = scan("{{< value k note=don't >}} and after")
    assert sc.kwargs == {"note": "don't"} and sc.raw.endswith(">}}")


@pytest.mark.parametrize(
    "text, line",
    [
        ("one\n\n{{< value k\n\nexpect='1' >}}", 3),  # a blank line ends the paragraph
        ("{{< value k\n  \t\n >}}", 1),  # blank but for spaces and tabs
        ('{{< value k expect="a\n\nb" >}}', 1),  # inside quotes too
        ("x\n{{< value k {{< value j >}}", 2),  # another opens first
        ("{{< value k", 1),  # the document ends
    ],
)
def test_a_shortcode_left_open_is_named_by_the_line_it_opens_on(text, line):
    from articlekit.article.shortcodes import ShortcodeSyntaxError

    with pytest.raises(ShortcodeSyntaxError, match="never closed") as raised:
        scan(text)
    assert raised.value.line == line


def test_each_shortcode_s_line_and_context_follow_the_document_down():
    text = (
        "---\ntitle: {{< value t >}}\n---\n"  # lines 1-3: front matter, skipped
        "{{< value a >}} `{{< value b >}}`\n"  # 4: prose, then inline code
        "\n```python\n{{< value c >}}\n```\n"  # 7: a code block
        "{{< value d\n  >}} {{< value e >}}\n"  # 9: prose again, d spans two lines
        "<!-- {{< value f >}} -->\n"  # 11: a comment
    )
    found = [(sc.args[0], sc.line, sc.context) for sc in scan(text)]
    assert found == [
        ("a", 4, "prose"),
        ("b", 4, "code"),
        ("c", 7, "code"),
        ("d", 9, "prose"),
        ("e", 10, "prose"),
        ("f", 11, "comment"),
    ]


def test_lookup_id_is_key_fmt_expect_with_white_space_collapsed():
    assert lookup_id("k", ".6f", "<  1e-12 ") == "k|.6f|< 1e-12"
    assert lookup_id("k") == "k||"


def test_each_shortcode_knows_its_lookup_id_unquoted_and_with_white_space_collapsed():
    value, claim, source, other = scan(
        '{{< value  k  fmt=".2e" expect="<\n  1" >}} {{< claim k expect=\'< 1\' >}} '
        '{{< source k >}} {{< value k fmt=.2e code=true >}}'
    )
    assert value.lookup_id == "k|.2e|< 1" and value.lookup_parts == ("k", ".2e", "< 1")
    assert claim.lookup_id == "k||< 1" and source.lookup_id == "k||" and other.lookup_id == "k|.2e|"
    assert value.lookup_id == lookup_id("k", ".2e", "< 1")  # one definition


def test_prose_shortcodes_become_quartos_spans():
    md = to_quarto_markdown('x {{< value k fmt=".6f" >}}\n')
    assert (
        '[[]{.quarto-shortcode__-param data-value="value" data-raw="value"}'
        '[]{.quarto-shortcode__-param data-value="k" data-raw="k"}'
        '[]{.quarto-shortcode__-param data-key="fmt" data-value=".6f"}]{.quarto-shortcode__ '
    ) in md


def test_a_prose_check_reads_no_shortcode_python_did_not_parse():
    """The article as a prose check reads it (before any value is bound):
    every prose shortcode taken apart into Quarto's span; in code, which is
    never markup, each left as written, an escaped one printed as the
    shortcode it shows; a shortcodes="false" block shown as written."""
    text = (FIXTURE / "index.qmd").read_text(encoding="utf-8")
    md = to_quarto_markdown(text)
    outside_spans = re.sub(r'data-(?:raw|value)="(?:\\.|[^"\\])*"', "", md)
    verbatim = '```{.markdown shortcodes="false"}\n{{< value demo.dk64.unscaled.max_weight fmt=".6f" >}}\n```'
    in_code = [sc for sc in scan(text) if sc.context != "prose"]
    assert len(in_code) == 4 and all(sc.raw in outside_spans for sc in in_code)
    assert outside_spans.count("{{<") == 1 + len(in_code) and verbatim in outside_spans
    assert '[]{.quarto-shortcode__-escaped data-value="{{< value demo.arrow >}}"}' in md
    assert to_quarto_markdown("```\n{{{< value k >}}}\n```\n") == "```\n{{< value k >}}\n```\n"  # escaped, in code


# --- binding ------------------------------------------------------------------


def test_every_value_is_formatted_once_here_and_traced_to_its_source(article, values_doc):
    doc = bind_text(article, values_doc)
    for sc in scan(article):
        if sc.name != "value" or sc.escaped:
            continue
        b = doc["bindings"][lookup_id(sc.args[0], sc.kwargs.get("fmt", ""), sc.kwargs.get("expect", ""))]
        assert b["text"] == format_value(lookup(values_doc["values"], sc.args[0]), sc.kwargs.get("fmt", ""))
        assert f"article/index.qmd:{sc.line}" in b["locations"]
    b = doc["bindings"]["demo.dk64.unscaled.max_weight|.6f|"]
    assert b["text"] == "0.921946"
    assert b["source"] == {
        "artifact": str(FIXTURE / "results" / "demo.json"),
        "script": "experiments/demo.py",
        "experiment": "demo",
    }
    assert b["anchor"] == "v-demo-dk64-unscaled-max-weight"
    assert b["title"] == (
        "demo.dk64.unscaled.max_weight = 0.9219460123456789 (experiments/demo.py); "
        "recompute: python -m articlekit reproduce demo.dk64.unscaled.max_weight"
    )


def test_claims_are_checked_and_logged_with_their_location(article, values_doc):
    doc = bind_text(article, values_doc)
    claims = {(c["key"], c["expect"]): c for c in doc["claims"]}
    assert claims[("demo.parity.max_abs_diff", "< 1e-12")]["holds"] is True
    assert claims[("demo.raised", "== false")]["location"] == "article/index.qmd:17"
    assert doc["bindings"]["demo.raised||== false"]["printed"] is False


def test_a_missing_key_fails_with_file_line_and_the_closest_keys(values_doc):
    text = "line one\n\nthe weight is {{< value demo.dk64.unscaled.max_weigth fmt=\".6f\" >}}\n"
    with pytest.raises(BindError) as err:
        bind_text(text, values_doc)
    assert err.value.problems[0].startswith(
        "article/index.qmd:3: unknown key 'demo.dk64.unscaled.max_weigth'; closest: demo.dk64.unscaled.max_weight,"
    )


def test_a_bad_format_spec_fails_with_file_line_and_the_spec(values_doc):
    with pytest.raises(BindError, match=r"index.qmd:1: .*bad format spec '\.2q'"):
        bind_text('{{< value demo.masked_max_weight fmt=".2q" >}}\n\n{{< provenance >}}', values_doc)


def test_every_problem_is_reported_at_once(values_doc):
    text = "{{< value nope.a >}}\n{{< value nope.b >}}\n{{< vlaue demo.arrow >}}\n{{< value demo.arrow fnt=x >}}\n"
    with pytest.raises(BindError) as err:
        bind_text(text, values_doc)
    assert [p.split(":")[1] for p in err.value.problems[:4]] == ["1", "2", "3", "4"]
    assert "unknown shortcode 'vlaue'" in err.value.problems[2]
    assert "does not take fnt" in err.value.problems[3]


def test_strict_mode_fails_on_a_claim_the_values_no_longer_support(values_doc):
    text = 'It is {{< value demo.parity.reversed_diff fmt=".2f" expect="< 1e-12" >}}.\n\n{{< provenance >}}\n'
    with pytest.raises(BindError) as err:
        bind_text(text, values_doc, strict=True)
    # the fix, both ways: the prose is wrong (the claim), or the value is (its experiment)
    assert err.value.problems == [
        "article/index.qmd:1: claim 'demo.parity.reversed_diff < 1e-12' failed: value 3.668259537831219. "
        "If the prose is wrong, change the claim (expect=\"< 1e-12\" at this line); if the value is, fix "
        "experiments/demo.py or its parameters (demo: in config.yaml). `--config strict=false` renders it "
        "marked instead."
    ]


def test_non_strict_mode_keeps_the_failed_claim_for_a_visible_warning(values_doc):
    text = 'It is {{< value demo.parity.reversed_diff fmt=".2f" expect="< 1e-12" >}}.\n\n{{< provenance >}}\n'
    doc = bind_text(text, values_doc, strict=False)
    assert doc["bindings"]["demo.parity.reversed_diff|.2f|< 1e-12"]["claim"]["holds"] is False
    assert "✗ fails" in doc["provenance_md"]


def test_a_malformed_claim_fails_even_when_not_strict(values_doc):
    with pytest.raises(BindError, match="expected a comparison"):
        bind_text('{{< value demo.arrow expect="roughly 3" >}}\n\n{{< provenance >}}', values_doc, strict=False)


def test_bound_values_need_a_provenance_table_to_link_to(values_doc):
    with pytest.raises(BindError, match="no {{< provenance >}} table"):
        bind_text("{{< value demo.arrow >}}\n", values_doc)


def test_provenance_is_one_escaped_row_per_key(article, values_doc):
    table = bind_text(article, values_doc)["provenance_md"]
    rows = [line for line in table.splitlines()[2:]]
    assert len(rows) == len({b["key"] for b in bind_text(article, values_doc)["bindings"].values()})
    arrow = next(r for r in rows if "demo.arrow" in r)
    assert "a \\-\\> b \\<c\\> \\& \\*d\\*" in arrow  # text, never markup
    assert "[`demo.arrow`]{#v-demo-arrow}" in arrow


def test_the_command_writes_nothing_when_binding_fails(tmp_path, values_doc, capsys):
    write_json(tmp_path / "values.json", values_doc)  # as `articlekit values` writes it (NaN tagged)
    bad = tmp_path / "index.qmd"
    bad.write_text("{{< value demo.nope >}}\n")
    out = tmp_path / "bindings.json"
    assert (
        bindmod.main([str(bad), "--values", str(tmp_path / "values.json"), "--strict", "true", "--out", str(out)]) == 1
    )
    assert "unknown key 'demo.nope'" in capsys.readouterr().err  # the binding failed, not the reading
    assert not out.exists()


def test_the_extension_example_uses_only_known_shortcodes():
    example = Path(__file__).parent.parent / "article" / "example.qmd"
    names = {sc.name for sc in scan(example.read_text(encoding="utf-8"))}
    assert names <= set(bindmod.SHORTCODES) and {"value", "claim", "provenance", "meta"} <= names


# --- a way back to the source for values printed in code -----------------------

CODE_BLOCK = '```python\nx = {{< value demo.arrow >}}\n```\n'
PROVENANCE = "\n\n{{< provenance >}}\n"  # a block: alone in its paragraph


def test_a_code_block_without_a_source_line_fails_naming_the_keys_and_the_fix(values_doc):
    with pytest.raises(BindError) as err:
        bind_text(CODE_BLOCK + "\nNo source here.\n" + PROVENANCE, values_doc)
    (problem,) = err.value.problems
    assert problem.startswith("article/index.qmd:3: the code block ending here prints demo.arrow")
    assert "Source: {{< source demo.arrow >}}" in problem


def test_a_source_line_in_the_next_paragraph_gives_the_way_back(values_doc):
    doc = bind_text(CODE_BLOCK + "\nSource: {{< source demo.arrow >}}.\n" + PROVENANCE, values_doc)
    binding = doc["bindings"][lookup_id("demo.arrow")]
    assert binding["locations"] == ["article/index.qmd:2", "article/index.qmd:5"]
    assert binding["anchor"] == "v-demo-arrow"


def test_a_source_line_further_down_does_not_count(values_doc):
    text = CODE_BLOCK + "\nA paragraph between.\n\nSource: {{< source demo.arrow >}}.\n" + PROVENANCE
    with pytest.raises(BindError, match="no way back to the source"):
        bind_text(text, values_doc)


def test_a_value_in_inline_code_fails_and_points_to_code_true(values_doc):
    with pytest.raises(BindError) as err:
        bind_text("Shape `{{< value demo.arrow >}}`." + PROVENANCE, values_doc)
    assert "write it in prose as {{< value demo.arrow code=true >}}" in str(err.value)
    doc = bind_text("Shape {{< value demo.arrow code=true >}}." + PROVENANCE, values_doc)
    assert lookup_id("demo.arrow") in doc["bindings"]  # code= is how it prints, not what it looks up


def test_raw_values_read_as_a_reader_knows_them():
    assert short_text(float("nan")) == "nan"
    assert short_text([1.0, float("-inf")]) == "[1.0, -inf]"
    assert short_text({"a": ["x", True]}) == '{a: ["x", true]}'


def test_the_provenance_table_and_tooltip_show_nan_not_its_json_tag(values_doc):
    doc = bind_text("Ratio {{< value demo.underflow >}}." + PROVENANCE, values_doc)
    assert "| nan | nan |" in doc["provenance_md"] and "$float" not in doc["provenance_md"]
    assert doc["bindings"][lookup_id("demo.underflow")]["title"].startswith("demo.underflow = nan (")


# --- bounded work: what one value or one article may ask of every format -----------


def test_a_value_too_long_to_print_is_refused_naming_its_key_experiment_and_the_limit(values_doc):
    import copy

    doc = copy.deepcopy(values_doc)
    doc["values"]["demo.error_message"] = "x" * (bindmod.MAX_VALUE_TEXT + 1)
    with pytest.raises(BindError) as refused:
        bind_text("Text {{< value demo.error_message >}}.\n\n{{< provenance >}}\n", doc, strict=False)
    (problem,) = [p for p in refused.value.problems if "characters long" in p]
    assert problem.startswith("article/index.qmd:1: the value of demo.error_message is 10,001 characters")
    assert "limit of 10,000" in problem and "experiment demo (experiments/demo.py)" in problem
    doc["values"]["demo.error_message"] = "x" * bindmod.MAX_VALUE_TEXT
    bind_text("Text {{< value demo.error_message >}}.\n\n{{< provenance >}}\n", doc, strict=False)


def test_an_article_too_long_is_refused_before_any_work(values_doc):
    with pytest.raises(BindError, match=r"the article is 2,000,001 characters long, over the limit"):
        bind_text("x" * (bindmod.MAX_ARTICLE + 1), values_doc)
