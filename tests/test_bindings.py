"""build/bindings.json has one owner (articlekit/article/bindings.py) and a
schema shipped beside it: bind writes only what the schema allows, and every
command that reads the file refuses one that is not a bindings file, naming
the file, the first entry that is wrong and the fix."""

import copy
from pathlib import Path

import jsonschema
import pytest

from articlekit.article import bind as bindmod
from articlekit.article import bindings as bindingsmod
from articlekit.article.bind import bind
from articlekit.article.bindings import BindingsError, load_bindings, write_bindings
from articlekit.core import claims
from articlekit.core.jsonio import read_json, write_json
from articlekit.__main__ import main as cli
from tests.test_render import make_article

AUDIT_FIXTURES = Path(__file__).parent / "fixtures" / "audit"
FIX = "snakemake --forcerun bind"


@pytest.fixture(scope="module")
def bound(tmp_path_factory):
    """(article, values.json, the document bind made for the fixture article)."""
    folder = tmp_path_factory.mktemp("bindings") / "article"
    article, values = make_article(folder)
    write_json(folder / "values.json", values)
    return article, folder / "values.json", bind(str(article), article.read_text(encoding="utf-8"), values, True)


def a_binding(document, with_claim=False):
    return next(ident for ident, b in document["bindings"].items() if (b["claim"] is not None) == with_claim)


def test_the_schema_is_json_schema_and_ships_beside_its_module():
    from tests.test_layout import shipped_data_files

    jsonschema.Draft202012Validator.check_schema(bindingsmod.schema())
    assert bindingsmod.SCHEMA in shipped_data_files()
    assert bindingsmod.SCHEMA.parent == Path(bindingsmod.__file__).parent


def test_what_bind_writes_is_what_the_schema_describes(bound, tmp_path):
    article, values, document = bound
    assert bindingsmod.bindings_problems(document, "doc") == []
    assert (
        bindmod.main([str(article), "--values", str(values), "--strict", "true", "--out", str(tmp_path / "b.json")])
        == 0
    )
    assert load_bindings(tmp_path / "b.json") == read_json(tmp_path / "b.json")
    # no field the schema leaves out: a new one must be described there first
    ident = a_binding(document)
    extra = copy.deepcopy(document)
    extra["bindings"][ident]["mark"] = "✓"
    assert bindingsmod.bindings_problems(extra, "doc") == [
        f"doc: bindings[{ident!r}]: Additional properties are not allowed ('mark' was unexpected)"
    ]


def test_a_claims_status_is_one_of_the_claim_statuses(bound):
    document = copy.deepcopy(bound[2])
    ident = a_binding(document, with_claim=True)
    document["bindings"][ident]["claim"]["status"] = "failed"
    (problem,) = bindingsmod.bindings_problems(document, "doc")
    assert problem.startswith(f"doc: bindings[{ident!r}].claim.status: 'failed' is not one of ")
    assert all(repr(s) in problem for s in (claims.HOLDS, claims.FAILS, claims.INCONCLUSIVE))


def test_a_binding_filed_under_another_id_than_its_lookup_id_is_refused(bound):
    document = copy.deepcopy(bound[2])
    ident = a_binding(document)
    key, fmt, _ = ident.split("|")
    document["bindings"][f"{key}|{fmt}|> 0"] = document["bindings"].pop(ident)
    assert bindingsmod.bindings_problems(document, "doc") == [
        f"doc: bindings['{key}|{fmt}|> 0']: the id is not the lookup id of its key, fmt and expect, {ident!r}"
    ]


def test_bind_writes_nothing_it_could_not_read_back(bound, tmp_path, monkeypatch):
    article, values, document = bound
    broken = copy.deepcopy(document)
    del broken["bindings"][a_binding(broken)]["in_text"]
    monkeypatch.setattr(bindmod, "bind", lambda *args: broken)
    out = tmp_path / "b.json"
    assert bindmod.main([str(article), "--values", str(values), "--strict", "true", "--out", str(out)]) == 1
    assert not out.exists()


# ---- every reader refuses a file that is not one, with the file, the entry and the fix --------------------


def readers(article, values, bindings, out):
    """Each command that reads build/bindings.json, as its rule runs it
    (python -m articlekit COMMAND: a user's error is printed there, once)."""
    audit = AUDIT_FIXTURES
    return {
        "render": lambda: cli(
            [
                "render",
                str(article),
                "--bindings",
                str(bindings),
                "--renderer",
                "pandoc",
                "--html",
                str(out / "a.html"),
                "--md",
                str(out / "a.md"),
            ]
        ),
        "pdf": lambda: cli(["pdf", str(article), "--bindings", str(bindings), "--out", str(out / "a.pdf")]),
        "audit": lambda: cli(
            [
                "audit",
                "--baseline",
                str(audit / "baseline.yaml"),
                "--values",
                str(values),
                "--bindings",
                str(bindings),
                "--json",
                str(out / "audit.json"),
                "--md",
                str(out / "audit.md"),
                "--html",
                str(out / "audit.html"),
            ]
        ),
        "diff": lambda: cli(
            [
                "diff",
                "--values",
                str(values),
                "--bindings",
                str(bindings),
                "--json",
                str(out / "diff.json"),
                "--md",
                str(out / "diff.md"),
            ]
        ),
        "release": lambda: cli(
            [
                "release",
                "--label",
                "x-1",
                "--values",
                str(values),
                "--bindings",
                str(bindings),
                "--audit",
                str(audit / "values.json"),
                "--releases",
                str(out / "rel"),
            ]
        ),
    }


@pytest.mark.parametrize("reader", ["render", "pdf", "audit", "diff", "release"])
def test_each_reader_refuses_a_malformed_bindings_file_naming_file_entry_and_fix(bound, tmp_path, capsys, reader):
    article, values, document = bound
    broken = copy.deepcopy(document)
    ident = a_binding(broken, with_claim=True)
    broken["bindings"][ident]["claim"]["holds"] = "yes"
    del broken["departures"]
    path = tmp_path / "bindings.json"
    write_json(path, broken)
    out = tmp_path / "out"
    assert readers(article, values, path, out)[reader]() == 1
    err = capsys.readouterr().err
    # the first entry in the file's order, and how many more there are
    assert f"{path}: (top level): 'departures' is a required property (and 1 more); " in err
    assert FIX in err
    assert not out.exists() or not any(out.rglob("*.*"))  # nothing written


@pytest.mark.parametrize("reader", ["render", "audit"])
def test_each_reader_names_a_missing_or_unreadable_bindings_file(bound, tmp_path, capsys, reader):
    article, values, _ = bound
    missing = tmp_path / "none.json"
    assert readers(article, values, missing, tmp_path / "out")[reader]() == 1
    assert f"{missing}: no bindings file there; rebuild it with snakemake ({FIX})" in capsys.readouterr().err
    cut = tmp_path / "cut.json"
    cut.write_text('{"article": "a", "bindings": {', encoding="utf-8")
    assert readers(article, values, cut, tmp_path / "out")[reader]() == 1
    assert f"{cut}:1:" in (err := capsys.readouterr().err) and "not valid JSON" in err and FIX in err


def test_load_bindings_names_the_entry_as_a_reader_finds_it_in_the_file(bound, tmp_path):
    document = copy.deepcopy(bound[2])
    ident = a_binding(document)
    document["bindings"][ident]["locations"] = ["index.qmd"]
    write_json(tmp_path / "b.json", document)
    with pytest.raises(BindingsError) as refused:
        load_bindings(tmp_path / "b.json")
    assert str(refused.value) == (
        f"{tmp_path / 'b.json'}: bindings[{ident!r}].locations[0]: 'index.qmd' does not match ':[0-9]+$'; "
        "this is not a bindings file as `articlekit bind` writes it: rebuild it with snakemake "
        f"({FIX}), which writes it with `python -m articlekit bind`"
    )


def test_the_audit_fixture_is_a_bindings_file():
    """The fixture the audit, diff and release tests read is one bind could have written."""
    load_bindings(AUDIT_FIXTURES / "bindings.json")


def test_write_bindings_then_load_bindings_gives_the_document_back(bound, tmp_path):
    write_bindings(tmp_path / "b.json", bound[2])
    assert load_bindings(tmp_path / "b.json") == bound[2]


def test_a_bindings_file_read_again_is_checked_again_once_it_changed(bound, tmp_path, monkeypatch):
    """A render reads the file twice and checks its schema once; a process
    that wrote it (the quarto pre-render binds, then reads it back) has
    checked it as it wrote it; a file edited in between (another size or
    mtime) is checked again."""
    import articlekit.article.bindings as bindingsmod

    checks = []
    real_problems = bindingsmod.bindings_problems
    monkeypatch.setattr(
        bindingsmod,
        "bindings_problems",
        lambda doc, path, *text: checks.append(path) or real_problems(doc, path, *text),
    )
    path = tmp_path / "b.json"
    write_bindings(path, bound[2])
    load_bindings(path)
    load_bindings(path)
    assert len(checks) == 1
    document = copy.deepcopy(bound[2])
    document["bindings"][a_binding(document)]["locations"] = ["index.qmd"]
    write_json(path, document)
    with pytest.raises(BindingsError, match="locations"):
        load_bindings(path)
    assert len(checks) == 2


# ---- the schema check of what bind writes, remembered: never one skipped wrongly ----------------


@pytest.fixture
def project_folder(tmp_path, monkeypatch):
    """A folder Snakemake has run in, the working folder: where the bindings
    texts that passed their schema check are remembered (core.schema.RECORDS)."""
    (tmp_path / ".snakemake").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def counted_schema_checks(monkeypatch):
    checks = []
    real = bindingsmod.problems
    monkeypatch.setattr(bindingsmod, "problems", lambda *args: checks.append(args[2]) or real(*args))
    return checks


def test_a_document_written_before_is_written_again_without_its_schema_check(bound, project_folder, monkeypatch):
    checks = counted_schema_checks(monkeypatch)
    write_bindings(project_folder / "a.json", bound[2])
    write_bindings(project_folder / "b.json", copy.deepcopy(bound[2]))
    assert len(checks) == 1
    assert read_json(project_folder / "b.json") == bound[2]


def test_a_document_unlike_those_that_passed_is_checked_and_refused(bound, project_folder, monkeypatch):
    """Remembered are the texts that passed, by digest: any other document,
    however close, is held to the schema, and one that breaks it is not written."""
    checks = counted_schema_checks(monkeypatch)
    write_bindings(project_folder / "a.json", bound[2])
    broken = copy.deepcopy(bound[2])
    del broken["bindings"][a_binding(broken)]["in_text"]
    for _ in range(2):  # a failure is never remembered
        with pytest.raises(BindingsError, match="'in_text' is a required property"):
            write_bindings(project_folder / "b.json", broken)
    assert len(checks) == 3 and not (project_folder / "b.json").exists()


def test_a_document_that_passed_is_checked_again_under_another_schema(bound, project_folder, monkeypatch):
    write_bindings(project_folder / "a.json", bound[2])
    stricter = copy.deepcopy(bindingsmod.schema())
    stricter["required"] = [*stricter["required"], "errata"]
    monkeypatch.setattr(bindingsmod, "schema", lambda: stricter)
    with pytest.raises(BindingsError, match="'errata' is a required property"):
        write_bindings(project_folder / "b.json", bound[2])


def test_an_editions_job_reads_the_text_bind_wrote_without_its_schema_check(bound, project_folder, monkeypatch):
    """Each edition's job is a process of its own: the text bind wrote passed
    as it was written, and is not checked again as it is read."""
    write_bindings(project_folder / "b.json", bound[2])
    monkeypatch.setattr(bindingsmod, "_CHECKED", set())  # another process
    checks = counted_schema_checks(monkeypatch)
    assert load_bindings(project_folder / "b.json") == bound[2]
    assert not checks


def test_a_bindings_file_edited_by_hand_is_checked_as_it_is_read(bound, project_folder, monkeypatch):
    """Remembered are texts, not files: an edit that keeps the JSON valid,
    even one that keeps the file's size, is held to the schema."""
    path = project_folder / "b.json"
    write_bindings(path, bound[2])
    monkeypatch.setattr(bindingsmod, "_CHECKED", set())
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"in_text"', '"in_txet"', 1), encoding="utf-8")
    with pytest.raises(BindingsError, match="'in_text' is a required property"):
        load_bindings(path)
