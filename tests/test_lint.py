"""lint: no number typed into the prose, none laundered through a citation."""

import json
from pathlib import Path

from articlekit.article import lint as lintmod
from articlekit.article.lint import lint, numerals

VALUES = {
    "scaling.dk64.unscaled.max_weight": 0.9219455027665324,
    "parity.sdpa.max_abs_diff": 2.220446049250313e-16,
    "timing.main.speedup": 5.399047619,
    "example.first_row": [0.0278431, 0.1671362],
    "example.params.n_tokens": 5,
    "scaling.params.d_k": [16, 64, 512],
    "example.output_shape": [5, 4],
}


def findings(text):
    return lint("a.qmd", text, VALUES)[0]


def found(text):
    return [n.text for n in numerals(text)]


def test_every_kind_of_numeral_in_prose_is_found():
    assert found("0.921946, 2,000 keys, 92.19%, 2.22e-16, 5.4x faster, -1802.824, section 3.2.1, 5 ms") == [
        "0.921946",
        "2,000",
        "92.19%",
        "2.22e-16",
        "5.4",
        "-1802.824",
        "3.2.1",
        "5",
    ]


def test_digits_inside_words_and_names_are_not_numerals():
    assert found("float64 and float32, Q1, v7, GPT-2, 2D plots, the 3rd row, d_k2") == []


def test_code_shortcodes_urls_comments_attributes_and_list_numbers_are_not_prose():
    text = (
        "---\ndate: 2026-10-12\n---\n"
        "1. see `x = 64` and {{< value example.params.n_tokens >}}\n"
        "2. a [link](https://arxiv.org/abs/1706.03762) <!-- 0.5 --> <span data-x=\"3\">y</span>\n"
        "![fig](../figures/fig-2.svg){width=\"80%\"} footnote[^12]\n\n"
        "```python\nprint(0.921946)\n```\n\n::: {.callout-note appearance=\"1\"}\ntext\n:::\n"
    )
    assert found(text) == []


def test_an_escaped_shortcode_is_code_like_and_found_by_the_one_parser():
    """{{{< ... >}}} prints a shortcode as text: its numbers are syntax, even
    when a quoted argument holds the closing braces."""
    assert found(
        'Write {{{< value example.first_row fmt=".3f" >}}} or\n'
        '{{{< value k expect="contains \'>}}}\' and 0.5" >}}}, not 7.\n'
    ) == ["7"]


def test_rule_a_an_unbound_numeral_is_a_finding_with_its_line():
    (finding,) = findings("first line\n\nwith 5 tokens\n")
    assert finding.startswith("a.qmd:3: numeral '5' is typed, not bound")


def test_cited_facts_and_labels_are_allowed():
    text = "[Section 3.2.1]{.cited} sets [d_model = 512, h = 8]{.cited}. [Error 1]{.label}: [x]{.cited .other}"
    assert findings(text) == []


def test_rule_b_a_computed_value_is_never_typed_at_its_printed_precision():
    text = "0.921946 and 92.19% and 2.22e-16 and 5.4x and 0.027843"
    keys = [f.split("computed value ")[1].split()[0] for f in findings(text)]
    assert keys == ["scaling.dk64.unscaled.max_weight"] * 2 + [
        "parity.sdpa.max_abs_diff",
        "timing.main.speedup",
        "example.first_row[0]",
    ]


def test_rule_b_also_applies_inside_a_cited_span_and_suggests_the_binding():
    (finding,) = findings("[the paper says 0.921946]{.cited}")
    assert "equals the computed value scaling.dk64.unscaled.max_weight but is cited" in finding
    assert '{{< value scaling.dk64.unscaled.max_weight fmt=".6f" >}}' in finding


def test_rule_b_skips_small_integers_single_digits_and_parameters():
    # 5 = output_shape[0], 0.9 ~ max_weight at one digit, 64 = a parameter:
    # all cited here, so only rule B could object, and it does not.
    assert findings("[5 rows, 0.9, and d_k = 64]{.cited}") == []


def test_the_fixture_article_is_clean(tmp_path):
    fixture = Path(__file__).parent / "fixtures" / "article" / "index.qmd"
    values = tmp_path / "values.json"
    values.write_text(json.dumps({"values": VALUES, "sources": {}, "versions": {}}))
    out = tmp_path / "lint.txt"
    assert lintmod.main([str(fixture), "--values", str(values), "--out", str(out)]) == 0
    assert out.read_text().startswith("OK ")


def test_the_command_fails_and_writes_nothing_on_findings(tmp_path, capsys):
    article = tmp_path / "a.qmd"
    article.write_text("It took 5.669 ms.\n")
    values = tmp_path / "values.json"
    values.write_text(json.dumps({"values": VALUES}))
    out = tmp_path / "lint.txt"
    assert lintmod.main([str(article), "--values", str(values), "--out", str(out)]) == 1
    assert not out.exists()
    assert f"{article}:1: numeral '5.669'" in capsys.readouterr().err


def test_tex_math_holds_the_formula_s_own_numerals_but_no_computed_value():
    text = "Effective keys $1 / \\sum_i w_i^2$; the paper's $$d_\\text{model} = 512$$ and $h = 8$.\n"
    assert findings(text) == []
    assert findings("Unscaled, the weight is $w = 0.921946$.")[0].startswith(
        "a.qmd:1: numeral '0.921946' equals the computed value scaling.dk64.unscaled.max_weight"
    )


def test_dollar_amounts_are_not_math():
    assert found("It costs $5 and then $6 more.") == ["5", "6"]


def test_what_the_reader_sees_is_prose_footnotes_callout_titles_and_text_attributes():
    text = (
        "A note.[^w]\n\n"
        "[^w]: The unscaled weight was 0.921946.\n\n"
        "::: {.callout-tip title=\"92.19% on one key\"}\nTip.\n:::\n\n"
        "![A figure](f.svg){#fig-a fig-alt=\"weights near 0.027843\" width=\"80%\"}\n\n"
        "A [link](https://example.org/9 \"took 5.4x as long\") and <abbr title=\"2.22e-16 here\">x</abbr>.\n"
    )
    lines = {int(f.split(":")[1]) for f in findings(text)}
    assert lines == {3, 5, 9, 11}
    assert len(findings(text)) == 5


def test_front_matter_title_is_prose_but_its_other_keys_are_not():
    text = '---\ntitle: "Where 92.19% of the weight goes"\ndate: 2026-10-12\nversion: 3\n---\nBody.\n'
    (finding,) = findings(text)
    assert finding.startswith("a.qmd:2: numeral '92.19%' equals the computed value")


def test_a_malformed_shortcode_is_reported_with_the_file_and_line(tmp_path, capsys):
    article = tmp_path / "a.qmd"
    article.write_text('Intro.\n\nUnclosed {{< value a fmt="r" here.\n\nLater {{< value b >}}.\n')
    values = tmp_path / "values.json"
    values.write_text(json.dumps({"values": VALUES}))
    assert lintmod.main([str(article), "--values", str(values), "--out", str(tmp_path / "lint.txt")]) == 1
    assert f"lint: {article}:3: shortcode '{{{{< value a" in capsys.readouterr().err


def test_a_quoted_small_integer_is_not_laundering_when_a_noisy_timing_rounds_to_it():
    values = {**VALUES, "timing.main.torch.min_ms": 63.8, "timing.loop.median_ms": 1341.59}
    assert lint("a.qmd", "[d_model = 512, h = 8, d_k = 64]{.cited}", values)[0] == []
    (finding,) = lint("a.qmd", "[it took 1342 ms]{.cited}", values)[0]
    assert "equals the computed value timing.loop.median_ms but is cited" in finding


def test_run_by_hand_in_an_articles_folder_it_needs_no_option_and_prints_its_report(tmp_path, capsys, monkeypatch):
    """`python -m articlekit lint`, as docs/reference.md shows it: the
    article and the values at their places, the report on stdout."""
    (tmp_path / "article").mkdir()
    (tmp_path / "article/index.qmd").write_text("Nothing typed here.\n")
    monkeypatch.chdir(tmp_path)
    assert lintmod.main([]) == 1  # before a build: no values to compare with, and it says so
    said = capsys.readouterr().err
    assert "no build/values.json: " in said and "(`snakemake build/values.json`" in said
    (tmp_path / "build").mkdir()
    (tmp_path / "build/values.json").write_text(json.dumps({"values": VALUES}))
    assert lintmod.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK article/index.qmd\n") and "computed values compared" in out
    assert not list(tmp_path.glob("build/lint*"))  # nothing written without --out
