"""The baseline: the published edition's numbers as data, checked on load.

A baseline that is wrong makes every audit wrong, so a bad entry must stop
the build with the file, the line, the entry id and what to fix.
"""

import os
import re
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from articlekit.core.schema import RECORDS
from articlekit.data.baseline import BaselineError, load_baseline
from articlekit.core.fmt import format_printed as render

PUBLISHED = "baseline/published.yaml"

EDITION = """\
edition:
  title: t
  source: s
  date: "2026-10-12"
  versions: {python: "3.13", numpy: "2.5.4", torch: "2.14.1"}
entries:
  - id: scaling.dk64.unscaled.max-weight
    class: exact
    published: "0.921946"
    value: 0.9219455027665324
    key: scaling.dk64.unscaled.max_weight
    fmt: ".6f"
    where: {section: s, quote: q}
"""


def baseline_with(tmp_path, entry):
    """A valid one-entry baseline plus `entry` (YAML text) as its second entry."""
    path = tmp_path / "published.yaml"
    path.write_text(EDITION + textwrap.indent(textwrap.dedent(entry), "  "))
    return path


def load_error(tmp_path, entry):
    path = baseline_with(tmp_path, entry)
    with pytest.raises(BaselineError) as caught:
        load_baseline(path)
    return path, str(caught.value)


# ---- the published edition -----------------------------------------------------


@pytest.fixture(scope="module")
def published():
    return load_baseline(PUBLISHED)


def test_the_published_baseline_loads_and_covers_the_edition(published):
    audited = [e for e in published.entries if e.cls != "cited"]
    assert len(audited) >= 60
    assert set(Counter(e.cls for e in published.entries)) == {
        "exact",
        "noise",
        "timing",
        "text",
        "info",
        "not_reproducible",
        "erratum",
        "revised",
        "cited",
    }


# ---- the baseline and the article agree on what the article prints ----------------

ARTICLE = Path(__file__).resolve().parent.parent / "article" / "index.qmd"
CITED_SPAN = re.compile(r"\[([^\]]*)\]\{\.cited\}")


def article_keys():
    from articlekit.article.shortcodes import scan

    return {
        " ".join(sc.args[0].split())
        for sc in scan(ARTICLE.read_text(encoding="utf-8"))
        if sc.name in ("value", "claim") and sc.args
    }


@pytest.mark.parametrize(
    "entry",
    [e for e in load_baseline(ARTICLE.parent.parent / PUBLISHED).entries if e.cls == "cited"],
    ids=lambda e: e.id,
)
def test_every_cited_entry_is_cited_in_the_article_or_dropped_with_a_reason(entry):
    """The audit's "cited, not audited" list must not name facts the
    article no longer prints (the arXiv dates, N = 6, dropout 0.1)."""
    spans = CITED_SPAN.findall(ARTICLE.read_text(encoding="utf-8"))
    found = any(re.search(rf"(?<![\w.]){re.escape(entry.published)}(?![\w])", span) for span in spans)
    if entry.dropped:
        assert not found, f"{entry.id} is marked dropped but the article cites {entry.published!r}; remove `dropped`"
    else:
        assert found, (
            f"{entry.id}: {entry.published!r} is in no [...]{{.cited}} span of {ARTICLE.name}; "
            "cite it there, or mark the entry `dropped:` with the reason"
        )


def test_every_measured_entry_is_printed_by_the_article():
    from articlekit.review.audit import keys_related

    keys = article_keys()
    missing = [
        f"{e.id} ({e.key})"
        for e in load_baseline(ARTICLE.parent.parent / PUBLISHED).entries
        if e.key and not e.dropped and not any(keys_related(k, e.key) for k in keys)
    ]
    assert missing == [], "baseline entries whose key the article never binds"


def test_the_article_places_the_departures_section():
    from articlekit.article.shortcodes import scan

    assert [sc.name for sc in scan(ARTICLE.read_text(encoding="utf-8"))].count("departures") == 1


def test_the_line_count_the_edition_printed_is_tracked(published):
    """'About 40 lines' became the count of the lines the listings show."""
    counts = [e for e in published.entries if e.key == "listings.attention.core_lines"]
    assert {e.cls for e in counts} == {"revised"} and any(e.published == "about 40" for e in counts)


def test_the_seeded_scaling_table_is_exact_to_every_printed_digit(published):
    table = [e for e in published.entries if re.match(r"scaling\.dk\d+\.", e.id)]
    assert len(table) == 15
    assert {e.cls for e in table} == {"exact"}


@pytest.mark.parametrize(
    "printed, key",
    [
        ("92.19%", "scaling.dk64.unscaled.max_weight"),
        ("0.94%", "scaling.dk64.scaled.max_weight"),
        ("1.1102230246251565e-16", "example.row_sum_max_deviation"),
        ("(5, 16)", "multihead.output_shape"),
        ("(4, 5, 5)", "multihead.weights_shape"),
        ("5.669", "timing.main.loop.median_ms.estimate"),
        ("1.050", "timing.main.matrix.median_ms.estimate"),
        ("4.00e-15", "timing.main.max_abs_diff"),
        ("-1802.824", "errors.underflow.dot"),
        ("nan", "errors.underflow.ratio"),
        ("1.2147038513899666", "errors.wrong_axis.output_diff"),
        ("[1. 1. 1. 1. 1.]", "errors.wrong_axis.axis_last_row_sums"),
        ("3.668259537831219", "mask_convention.reversed.max_abs_diff"),
        ("October 12, 2026", "environment.build_date"),
    ],
)
def test_values_easy_to_overlook_are_in_the_baseline(published, printed, key):
    assert any(e.published == printed and e.key == key for e in published.entries), (printed, key)


def test_every_measured_entry_says_how_to_regenerate_it(published):
    for e in published.entries:
        if e.cls == "cited":
            assert e.key is None and e.reason
        else:
            assert e.key, e.id
    for e in published.entries:
        if e.cls == "not_reproducible":
            assert e.reason, e.id


def test_entries_know_their_line_in_the_file(published):
    first = published.entries[0]
    lines = open(PUBLISHED, encoding="utf-8").read().splitlines()
    assert f"id: {first.id}" in lines[first.line - 1]


def test_the_minus_1e9_errata_are_the_added_mask_the_edition_describes(published):
    """The edition's "float mask with -1e9" is added to the scores (as
    PyTorch adds a float attn_mask); filled-in -1e9 is another measurement,
    so each erratum names the added one, in the precision it speaks of."""
    by_id = {e.id: e for e in published.entries}
    assert "float mask" in by_id["causal.minus-1e9-weight"].where["quote"]
    assert by_id["causal.minus-1e9-weight"].key == "example.minus_1e9.added.float64.max_masked_weight"
    assert "float32" in by_id["faq.minus-1e9-float32"].where["quote"]
    assert by_id["faq.minus-1e9-float32"].key == "example.minus_1e9.added.float32.max_masked_weight"
    for entry in (by_id["causal.minus-1e9-weight"], by_id["faq.minus-1e9-float32"]):
        assert entry.cls == "erratum" and entry.check == "== 0.0" and "visible" in entry.reason


def test_the_edition_underflow_is_regenerated_by_its_plain_procedure(published):
    """The edition's dot product (-1802.824) comes back from a plain procedure:
    default_rng(3) draws a, then b, 1024 standard normals times 10 each, in
    float32. The baseline holds it exact, and the experiment's own function,
    at the edition's width and scale, prints the edition's digits."""
    from experiments.errors import underflow

    by_id = {e.id: e for e in published.entries}
    entry = by_id["errors.underflow.dot"]
    assert entry.cls == "exact" and entry.fmt == ".3f"
    dim, scale = by_id["errors.underflow.dim"].value, by_id["errors.underflow.scale"].value  # the edition's
    dot, values = underflow(3, dim, scale)
    assert f"{values['dot']:{entry.fmt}}" == entry.published
    assert values["exp"] == 0.0 and values["ratio_is_nan"]
    assert values["warning_message"] == by_id["errors.underflow.warning"].published


# ---- malformed entries fail naming file, line and id ------------------------------


def test_an_unknown_class_fails_naming_file_line_and_id(tmp_path):
    path, message = load_error(
        tmp_path,
        """\
        - id: parity.sdpa
          class: approximately
          published: "2.22e-16"
          value: 2.220446049250313e-16
          key: parity.sdpa.max_abs_diff
          where: {section: s, quote: q}
        """,
    )
    assert f"{path}:14: entry 'parity.sdpa': class:" in message
    assert "'approximately' is not one of" in message


def test_the_schema_ships_with_articlekit_and_takes_its_classes_from_their_definition():
    """One definition of the agreement classes: the schema an article's
    baseline is checked against is the package's, its enum baseline.CLASSES."""
    from articlekit.data import baseline

    assert baseline.SCHEMA.parent == Path(baseline.__file__).parent and baseline.SCHEMA.is_file()
    schema = baseline._load_schema()
    assert schema["properties"]["entries"]["items"]["properties"]["class"]["enum"] == list(baseline.CLASSES)


def test_a_text_entry_names_a_library_the_edition_gives_a_version_of(tmp_path):
    """Any library may change a message, not only a fixed list; but the audit
    can only compare versions the edition recorded."""
    text_entry = """\
        - id: errors.message
          class: text
          published: "boom"
          value: "boom"
          key: errors.message
          library: {library}
          where: {{section: s, quote: q}}
        """
    load_baseline(baseline_with(tmp_path, text_entry.format(library="numpy")))
    path, message = load_error(tmp_path, text_entry.format(library="scipy"))
    assert f"{path}:14: entry 'errors.message': library 'scipy' has no version in edition.versions" in message


def test_a_noise_entry_needs_its_bound(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: parity.sdpa
          class: noise
          published: "2.22e-16"
          value: 2.220446049250313e-16
          key: parity.sdpa.max_abs_diff
          fmt: ".2e"
          where: {section: s, quote: q}
        """,
    )
    assert "entry 'parity.sdpa'" in message and "'check' is a required property" in message


def test_an_erratum_says_what_was_wrong_and_checks_the_correction(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: faq.minus-1e9
          class: erratum
          published: "a tiny non-zero value"
          value: "non-zero"
          key: example.fill_minus_1e9.max_masked_weight_float32
          where: {section: s, quote: q}
        """,
    )
    assert "entry 'faq.minus-1e9'" in message
    assert "'reason' is a required property" in message and "'check' is a required property" in message


def test_a_revision_says_why(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: tldr.line-count
          class: revised
          published: "about 40"
          value: 40
          key: listings.attention.core_lines
          where: {section: s, quote: q}
        """,
    )
    assert "entry 'tldr.line-count'" in message and "'reason' is a required property" in message


def test_a_dropped_entry_says_why(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: cited.dropout
          class: cited
          published: "0.1"
          reason: The paper's base configuration.
          dropped: ""
          where: {section: s, quote: q}
        """,
    )
    assert "entry 'cited.dropout'" in message and "dropped" in message


def test_a_measured_entry_needs_its_key(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: timing.speedup
          class: timing
          published: "5.4"
          value: 5.4
          check: "> 1"
          where: {section: s, quote: q}
        """,
    )
    assert "entry 'timing.speedup'" in message and "'key' is a required property" in message


def test_a_value_that_does_not_print_as_published_fails(tmp_path):
    path, message = load_error(
        tmp_path,
        """\
        - id: scaling.dk64.dot-std
          class: exact
          published: "7.32"
          value: 7.35
          key: scaling.dk64.dot_std
          fmt: ".2f"
          where: {section: s, quote: q}
        """,
    )
    assert f"{path}:14: entry 'scaling.dk64.dot-std'" in message
    assert "prints as '7.35'" in message and "'7.32'" in message


FLOAT32_ENTRY = """\
    - id: parity.float32
      class: noise
      published: "1.00e-07"
      value: VALUE
      key: parity.float32.sdpa.max_abs_diff
      fmt: ".2e"
      check: "< 1e-5"
      where: {section: s, quote: q}
    """


def test_1e_minus_7_is_the_number_as_in_yaml_1_2_and_its_check_judges_it(tmp_path):
    """PyYAML alone reads 1e-7 (no dot) as the text '1e-7', which then
    'failed its own check'."""
    baseline = load_baseline(baseline_with(tmp_path, FLOAT32_ENTRY.replace("VALUE", "1e-7")))
    assert baseline.entries[1].value == 1e-7 and isinstance(baseline.entries[1].value, float)
    _, message = load_error(tmp_path, FLOAT32_ENTRY.replace("VALUE", "1e-3").replace('"1.00e-07"', '"1.00e-03"'))
    assert "the published value 0.001 fails its own check '< 1e-5'" in message


def test_a_quoted_number_is_named_as_text_not_as_a_failed_check(tmp_path):
    path, message = load_error(tmp_path, FLOAT32_ENTRY.replace("VALUE", '"1e-7"'))
    assert (
        f"{path}:14: entry 'parity.float32': value '1e-7' is quoted, so it is text, not a number: "
        "write it without the quotes" in message
    )
    assert "fails its own check" not in message and "cannot be printed" not in message


def test_a_key_given_twice_in_an_entry_is_refused_with_both_lines(tmp_path):
    """The second `check:` used to replace the first without a word."""
    path, message = load_error(
        tmp_path,
        FLOAT32_ENTRY.replace("VALUE", "1.0e-7").replace('check: "< 1e-5"\n', 'check: "< 1e-5"\n      check: "> 1"\n'),
    )
    assert message == (
        f"{path}:21: entries[1] (id 'parity.float32').check: the key is given twice, at lines 20 "
        "and 21; YAML would silently keep only the second: delete one of them"
    )


def test_a_baseline_with_a_byte_order_mark_loads_and_a_bad_byte_is_named(tmp_path):
    path = baseline_with(tmp_path, FLOAT32_ENTRY.replace("VALUE", "1.0e-7"))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert [e.line for e in load_baseline(path).entries] == [7, 14]
    path.write_bytes(path.read_bytes().replace(b"quote: q}", b"quote: caf\xe9}", 1))
    _, message = load_error_of(path)
    assert message.startswith(f"{path}:13:") and "not UTF-8 (byte 0xe9" in message


def load_error_of(path):
    with pytest.raises(BaselineError) as caught:
        load_baseline(path)
    return path, str(caught.value)


def test_a_published_value_outside_its_own_bound_fails(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: parity.float32
          class: noise
          published: "1e-3"
          value: 1.0e-3
          key: parity.float32.sdpa.max_abs_diff
          check: "< 1e-5"
          where: {section: s, quote: q}
        """,
    )
    assert "entry 'parity.float32'" in message and "fails its own check" in message


def test_a_malformed_check_fails(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: timing.speedup
          class: timing
          published: "5.4"
          value: 5.4
          key: timing.main.speedup
          check: "faster than 1"
          where: {section: s, quote: q}
        """,
    )
    assert "entry 'timing.speedup': check:" in message


def test_ids_are_unique(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: scaling.dk64.unscaled.max-weight
          class: exact
          published: "0.92"
          value: 0.9219455027665324
          key: scaling.dk64.unscaled.max_weight
          fmt: ".2f"
          where: {section: s, quote: q}
        """,
    )
    assert "duplicate id" in message


def test_a_band_belongs_to_timing_entries_only(tmp_path):
    _, message = load_error(
        tmp_path,
        """\
        - id: scaling.dk64.dot-std
          class: exact
          published: "7.32"
          value: 7.324561041533949
          key: scaling.dk64.dot_std
          fmt: ".2f"
          band: [0.5, 2]
          where: {section: s, quote: q}
        """,
    )
    assert "entry 'scaling.dk64.dot-std'" in message and "class" in message


def test_invalid_yaml_fails_naming_the_line(tmp_path):
    path = tmp_path / "published.yaml"
    path.write_text(EDITION + "  - id: [unclosed\n")
    with pytest.raises(BaselineError, match=rf"{path}:\d+: not valid YAML"):
        load_baseline(path)


def test_a_missing_baseline_fails_naming_it(tmp_path):
    with pytest.raises(BaselineError, match="nowhere.yaml: cannot read"):
        load_baseline(tmp_path / "nowhere.yaml")


# ---- a schema check remembered, never one skipped wrongly ---------------------------


@pytest.fixture
def project_folder(tmp_path, monkeypatch):
    """A folder Snakemake has run in (its .snakemake/), the working folder:
    where the baselines that passed their schema check are remembered."""
    (tmp_path / ".snakemake").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_unchanged_baseline_is_not_schema_checked_again(project_folder, monkeypatch):
    from articlekit.data import baseline

    path = project_folder / "published.yaml"
    path.write_text(EDITION)
    load_baseline(path)
    assert (project_folder / RECORDS / baseline.CHECKED).is_file()
    checks = []
    monkeypatch.setattr(baseline, "_schema_problems", lambda *args: checks.append(args) or [])
    assert load_baseline(path).entries[0].id == "scaling.dk64.unscaled.max-weight"
    assert checks == []


def test_a_baseline_edited_after_its_check_passed_is_refused_same_size_and_time(project_folder):
    """The record is of the text's digest: an edit that keeps the file's size
    and modification time is checked again, and refused."""
    path = project_folder / "published.yaml"
    path.write_text(EDITION)
    load_baseline(path)
    before = path.stat()
    path.write_text(EDITION.replace("class: exact", "class: exacq"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    with pytest.raises(BaselineError, match=r"(?s)invalid baseline.*'exacq' is not one of"):
        load_baseline(path)


def test_a_passed_baseline_is_checked_again_against_another_schema(project_folder, monkeypatch):
    """An articlekit whose schema asks more checks a remembered baseline again."""
    from articlekit.data import baseline

    path = project_folder / "published.yaml"
    path.write_text(EDITION)
    load_baseline(path)
    shipped = baseline._load_schema

    def stricter():
        schema = shipped()
        schema["required"] = [*schema.get("required", []), "errata"]
        return schema

    monkeypatch.setattr(baseline, "_load_schema", stricter)
    with pytest.raises(BaselineError, match="'errata' is a required property"):
        load_baseline(path)


def test_a_failed_check_is_not_remembered_and_nothing_is_kept_outside_a_project(tmp_path, monkeypatch):
    from articlekit.data import baseline

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "published.yaml"
    path.write_text(EDITION)
    load_baseline(path)
    assert not (tmp_path / ".snakemake").exists()  # no Snakemake here: every load checks
    (tmp_path / ".snakemake").mkdir()
    path.write_text(EDITION.replace("class: exact", "class: exacq"))
    for _ in range(2):
        with pytest.raises(BaselineError, match="invalid baseline"):
            load_baseline(path)
    assert not (tmp_path / RECORDS / baseline.CHECKED).exists()


# ---- printing like the edition ---------------------------------------------------


@pytest.mark.parametrize(
    "value, fmt, printed",
    [
        (0.9219455027665324, ".6f", "0.921946"),
        (0.9219455027665324, ".2%", "92.19%"),
        (2000, ",d", "2,000"),
        (2.220446049250313e-16, "r", "2.220446049250313e-16"),
        ([5, 16], "shape", "(5, 16)"),
        ([4, 5, 5], "shape", "(4, 5, 5)"),
        ([1.0, 1.0, 1.0], "np.6", "[1. 1. 1.]"),
        (float("nan"), "r", "nan"),
    ],
)
def test_render_prints_like_the_edition(value, fmt, printed):
    assert render(value, fmt) == printed
