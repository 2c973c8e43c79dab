"""The article's source files mean the same to every step: YAML read strictly
(no key given twice, numbers as YAML 1.2 reads them, aliases that expand
past a limit refused at their line) and text read as UTF-8 (a byte-order
mark is nothing, a bad byte or a control character is named by line and
column; an article with nothing in it is refused)."""

import subprocess

import pytest
import yaml

from articlekit.render.project import split_front_matter
from articlekit.core import sources
from articlekit.core.sources import (
    ALIAS_EXPANSION_LIMIT,
    SourceError,
    load_yaml,
    numbers_read_as_text,
    parse_yaml,
    read_article,
    read_text,
    yaml11_spelling,
)
from tests.workspace import PROJECT_ROOT


def duplicate_error(text, source="f.yaml"):
    with pytest.raises(SourceError) as caught:
        parse_yaml(text, source)
    return str(caught.value)


# --- a key given twice ----------------------------------------------------------------


def test_a_top_level_key_given_twice_is_refused_with_both_lines():
    message = duplicate_error("strict: true\nrenderer: auto\nstrict: false\n", "config.yaml")
    assert message.startswith("config.yaml:3: strict: the key is given twice, at lines 1 and 3")
    assert "delete one of them" in message


def test_a_nested_key_given_twice_is_named_by_its_path():
    message = duplicate_error("scaling:\n  seed: 7\n  n_keys: 2000\n  n_keys: 1000\n")
    assert message.startswith("f.yaml:4: scaling.n_keys: the key is given twice, at lines 3 and 4")


def test_a_key_given_twice_in_a_list_of_mappings_names_the_item_and_its_id():
    text = (
        "entries:\n"
        "  - id: a\n    check: '< 1'\n"
        "  - id: faq.float32\n    check: '< 1e-5'\n    value: 1.0e-7\n    check: '> 1'\n"
    )
    message = duplicate_error(text, "published.yaml")
    assert message.startswith(
        "published.yaml:7: entries[1] (id 'faq.float32').check: the key is given twice, at lines 5 and 7"
    )


def test_a_key_is_the_same_key_quoted_or_not():
    assert "at lines 1 and 2" in duplicate_error("n_keys: 1\n'n_keys': 2\n")


def test_the_same_key_in_two_mappings_and_a_merged_key_overridden_are_not_duplicates():
    data = parse_yaml("a: {seed: 1}\nb: {seed: 1}\nbase: &base {k: 1, j: 2}\nc:\n  <<: *base\n  k: 3\n").data
    assert data["c"] == {"k": 3, "j": 2}


# --- numbers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, number",
    [
        ("1e-7", 1e-7),
        ("1E5", 1e5),
        ("-2e-3", -2e-3),
        ("1.5e7", 1.5e7),
        ("+3e2", 300.0),
        ("-.5", -0.5),
        ("1.0e-7", 1e-7),
        ("0.25", 0.25),
    ],
)
def test_numbers_are_read_as_yaml_1_2_reads_them(text, number):
    value = parse_yaml(f"value: {text}\n").data["value"]
    assert isinstance(value, float) and value == number


@pytest.mark.parametrize(
    "text, value",
    [
        ('"1e-7"', "1e-7"),
        ("'1E5'", "1E5"),
        ("2.14.1", "2.14.1"),
        ("089", "089"),
        ("12", 12),
        ("e5", "e5"),
        ("1e", "1e"),
    ],
)
def test_text_stays_text_and_integers_stay_integers(text, value):
    read = parse_yaml(f"value: {text}\n").data["value"]
    assert read == value and type(read) is type(value)


def test_the_numbers_yaml_1_1_would_read_as_text_are_named_with_line_and_path():
    document = parse_yaml("a: 1.0e-7\nb:\n  tol: 1e-7\n  quoted: '1e-7'\nc: [1, 2E3]\n")
    assert numbers_read_as_text(document) == [(3, "b.tol", "1e-7"), (5, "c[1]", "2E3")]


@pytest.mark.parametrize("text", ["1e-7", "1E5", "-2e-3", "1.5e7", "+3e2", "-.5", ".5e3"])
def test_the_spelling_offered_for_yaml_1_1_reads_as_the_same_number(text):
    spelled = yaml11_spelling(text)
    assert yaml.safe_load(spelled) == float(text) and isinstance(yaml.safe_load(spelled), float)


# --- text -------------------------------------------------------------------------------


def test_a_byte_order_mark_is_read_as_nothing(tmp_path):
    article = tmp_path / "index.qmd"
    article.write_bytes(b'\xef\xbb\xbf---\ntitle: "Attention"\ndate: 2026-10-12\n---\n\nBody.\n')
    text = read_text(article)
    assert text.startswith("---\n")
    front, body = split_front_matter(text, article)
    assert front["title"] == "Attention" and body.strip() == "Body."


def test_newlines_come_back_as_path_read_text_gives_them(tmp_path):
    path = tmp_path / "a.qmd"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree\n")
    assert read_text(path) == "one\ntwo\nthree\n"


@pytest.mark.parametrize(
    "data, line, column, byte",
    [
        (b"---\ntitle: x\n---\n\nThe caf\xe9 is open.\n", 5, 8, "0xe9"),
        (b"\xef\xbb\xbf\x93quoted\x94\n", 1, 1, "0x93"),  # the byte-order mark is no column
        (b"x" * 20000 + b"\n\xc3(\n", 2, 1, "0xc3"),  # past the first chunk the text reader decodes
    ],
)
def test_a_byte_that_is_not_utf8_is_named_by_line_and_column_with_the_fix(tmp_path, data, line, column, byte):
    path = tmp_path / "index.qmd"
    path.write_bytes(data)
    with pytest.raises(SourceError) as caught:
        read_text(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}:{column}: not UTF-8 (byte {byte}")
    assert "re-save the file as UTF-8" in message


def test_a_latin1_byte_is_shown_as_the_character_it_was(tmp_path):
    path = tmp_path / "index.qmd"
    path.write_bytes(b"The caf\xe9 is open.\n")
    with pytest.raises(SourceError, match=r"after 'The caf'\).*that byte is 'é'"):
        read_text(path)


@pytest.mark.parametrize(
    "data, line, column, code",
    [
        (b"The difference\x00 was small.\n", 1, 15, "U+0000 (NUL)"),
        (b"---\ntitle: x\n---\n\nA \x1b[31mred\x1b[0m word.\n", 5, 3, "U+001B (ESC)"),
        (b"\xef\xbb\xbfone\r\ntwo\x0cthree\n", 2, 4, "U+000C (form feed)"),  # lines as the reader counts them
        (b"x" * 20000 + b"\n\x7f\n", 2, 1, "U+007F (DEL)"),
    ],
)
def test_a_control_character_is_named_by_line_and_column_with_the_fix(tmp_path, data, line, column, code):
    """A NUL byte was copied onto the page as it was; an escape sequence
    colours a terminal and shows as nothing in an editor."""
    path = tmp_path / "index.qmd"
    path.write_bytes(data)
    with pytest.raises(SourceError) as caught:
        read_text(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}:{column}: control character {code}"), message
    assert "delete it" in message


def test_tabs_and_newlines_are_text_and_every_further_control_character_is_counted(tmp_path):
    path = tmp_path / "index.qmd"
    path.write_bytes(b"a\tb\r\nc\n")
    assert read_text(path) == "a\tb\nc\n"
    path.write_bytes(b"a\x00b\x00c\x01\n")
    with pytest.raises(SourceError, match=r":1:2: control character U\+0000 \(NUL\), after 'a' \(2 more in the file\)"):
        read_text(path)


@pytest.mark.parametrize(
    "data, what",
    [
        (b"", "is empty"),
        (b"\xef\xbb\xbf", "is empty"),  # a byte-order mark alone
        (b" \n\t\n\r\n", "holds only white space"),
    ],
)
def test_an_article_with_nothing_in_it_is_refused_with_what_to_write(tmp_path, data, what):
    path = tmp_path / "index.qmd"
    path.write_bytes(data)
    with pytest.raises(SourceError) as caught:
        read_article(path)
    message = str(caught.value)
    assert message.startswith(
        f"{path}: the article {what}, so the build would publish an empty page; write its front matter"
    ), message
    assert read_text(path) == data.decode("utf-8-sig").replace("\r\n", "\n")  # other files may be empty


def test_a_one_line_article_is_an_article(tmp_path):
    path = tmp_path / "index.qmd"
    path.write_text("Hello.\n")
    assert read_article(path) == "Hello.\n"


# --- aliases ----------------------------------------------------------------------------


def laughs(levels, indent=""):
    """A "billion laughs": each level nine aliases of the one before."""
    text = f'{indent}a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    names = "abcdefghijklmnopqrstuvwxyz"
    for previous, name in zip(names, names[1:levels]):
        text += f"{indent}{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]\n"
    return text


def test_an_alias_bomb_is_refused_at_the_line_that_expands_before_it_is_built(tmp_path):
    """Nine levels are 9^9 values: PyYAML builds them as shared lists, and the
    plan's digest of the config (a repr) ran out of memory expanding them."""
    path = tmp_path / "config.yaml"
    path.write_text("strict: true\nbomb:\n" + laughs(9, "  "))
    with pytest.raises(SourceError) as caught:
        load_yaml(path)
    message = str(caught.value)
    # the first level past the limit: f (9^6 values), at its own line
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("  f:"))
    assert message.startswith(f"{path}:{line}:6: the aliases here expand to 597,871 values"), message
    assert f"more than the {ALIAS_EXPANSION_LIMIT:,} a source file may repeat" in message
    assert "write the values out, or use fewer aliases" in message


def test_aliases_that_repeat_a_little_are_fine_and_the_limit_counts_what_they_add():
    data = parse_yaml("pins: &pins [numpy==2, torch==2]\nmatrix: [{pins: *pins}, {pins: *pins}]\n").data
    assert data["matrix"][1]["pins"] == ["numpy==2", "torch==2"]
    assert parse_yaml(laughs(5)).data["e"][0][0][0][0] == ["lol"] * 9  # 9^5 values: within the limit
    with pytest.raises(SourceError, match="the aliases here expand to"):
        parse_yaml(laughs(6))


def test_a_long_file_without_an_alias_is_never_refused_whatever_its_size(monkeypatch):
    """The limit counts what aliases add, not the file's values. Shown with
    the limit lowered to a thousand (a file past 100,000 values takes a
    second to read): 9^4 values by aliases are refused, 1,010 written out
    are read."""
    monkeypatch.setattr(sources, "ALIAS_EXPANSION_LIMIT", 1_000)
    with pytest.raises(SourceError, match="more than the 1,000 a source file may repeat"):
        parse_yaml(laughs(4))
    assert len(parse_yaml("[" + ", ".join(["1"] * 1_010) + "]").data) == 1_010


@pytest.mark.parametrize("text", ["x: &a [1, *a]\n", "x: &a {k: *a}\n"])
def test_a_value_that_holds_itself_is_refused(text):
    with pytest.raises(SourceError, match=r"^f.yaml:1:4: this value holds an alias of itself"):
        parse_yaml(text, "f.yaml")


# --- the front matter -----------------------------------------------------------------


def test_a_front_matter_key_given_twice_is_named_with_the_article_line():
    text = "---\ntitle: One\nlang: en\ntitle: Two\n---\n\nBody.\n"
    with pytest.raises(SourceError, match=r"^index.qmd:4: title: the key is given twice, at lines 2 and 4"):
        split_front_matter(text, "index.qmd")


def test_a_front_matter_syntax_error_is_named_with_the_article_line():
    with pytest.raises(SourceError, match=r"^index.qmd:4:1: not valid YAML: .*opened at line 3\)"):
        split_front_matter("---\ntitle: One\nlang: [en\n---\n\nBody.\n", "index.qmd")


# --- the project's own files ------------------------------------------------------------


def test_every_yaml_file_the_project_ships_reads_strictly():
    """config/schema.yaml once gave `publishing:` twice; the second silently won."""
    listed = subprocess.run(
        ["git", "ls-files", "*.yaml", "*.yml"], cwd=PROJECT_ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    assert len(listed) > 10
    for name in listed:
        document = parse_yaml(read_text(PROJECT_ROOT / name), name)
        assert not numbers_read_as_text(document), name


# --- libyaml reads as the pure-Python reader does ------------------------------------------


def readings(text):
    """(data, every node's kind, tag and line) as each loader reads text."""
    from articlekit.core.sources import FastStrictLoader, StrictLoader, _parse_with, walk

    assert FastStrictLoader is not None, "PyYAML without libyaml: every reading takes the slow path"
    return [
        (
            document.data,
            [(type(node).__name__, node.tag, node.start_mark.line) for node, _ in walk(document.root)],
            numbers_read_as_text(document),
        )
        for document in (_parse_with(loader, text, "f.yaml") for loader in (StrictLoader, FastStrictLoader))
    ]


def test_libyaml_reads_every_yaml_file_of_the_project_as_the_strict_reader_does():
    listed = subprocess.run(
        ["git", "ls-files", "*.yaml", "*.yml"], cwd=PROJECT_ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    for name in listed:
        slow, fast = readings(read_text(PROJECT_ROOT / name))
        assert fast == slow, name


@pytest.mark.parametrize(
    "text",
    [
        "a: 1e-7\nb: [1, 2E3, '1e-7']\n",
        "x: &anchor {k: 1}\ny: *anchor\n",
        "- id: a\n  check: '< 1'\n- {id: b, value: -.5}\n",
        "{1: one, '1': two}\n",
    ],
)
def test_libyaml_reads_numbers_anchors_and_lines_as_the_strict_reader_does(text):
    slow, fast = readings(text)
    assert fast == slow


@pytest.mark.parametrize("text", ["a: 1\nb: [1, 2\nc: 3\n", "a: 1\nb:\n  c: 1\n  c: 1.0\n", "{1: one, 1.0: two}\n"])
def test_an_error_is_worded_as_the_strict_reader_words_it(text):
    from articlekit.core.sources import FastStrictLoader, StrictLoader, _parse_with

    with pytest.raises((yaml.YAMLError, SourceError)) as slow:
        _parse_with(StrictLoader, text, "f.yaml")
    with pytest.raises(type(slow.value)) as fast:
        _parse_with(FastStrictLoader, text, "f.yaml")
    with pytest.raises(type(slow.value)) as read:
        parse_yaml(text, "f.yaml")
    assert str(read.value) == str(slow.value)
    if isinstance(slow.value, SourceError):  # a key given twice: found by the same check on the same nodes
        assert str(fast.value) == str(slow.value)
