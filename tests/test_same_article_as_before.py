"""This build makes the same article as a reference commit built here.

A change to the machinery (the move into a library of issue 12, the
restructure of issue 18) must leave every output as it was. The reference
is REFERENCE, a commit of this repository: copied from the history and
built on this machine beside this build, each with its own code on its own
config/test.yaml. Both see the same CPU, BLAS kernel and libraries, so
every float must come back to the last bit, and nothing is judged against
digits that another machine printed (a fixture frozen on another machine
failed wherever OpenBLAS picked a kernel that sums in another order).

What moves between any two builds is what the reference's
publishing.volatile declares (timings, the machine, the build's date):

1. the reference runs its experiments: each result here has the same
   envelope and keys as the reference's, and each value not under a
   volatile prefix is equal, bit for bit; each figure is the same file,
   but those of an experiment that measures volatile values;
2. then this build's results of those experiments (and their figures)
   replace the reference's, and the reference's own code makes its pages
   from them: each file the reference wrote under build/ is then this
   build's file, byte for byte (the PDF but for the time it was written
   and the document ids Typst derives from it). No page line is excused
   for printing a timing.
"""

import json
import math
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections import namedtuple
from pathlib import Path

import pypdf
import pytest

from articlekit.core.ledger import Ledger
from articlekit.review.crate import METADATA_NAME, build_crate, crate_json, files_view
from articlekit.review.journal_bundle import JOURNAL_BUNDLE

from tests.workspace import (
    TEST_BUILD,
    TEST_BUILD_ENVIRONMENT,
    MissingCommit,
    copy_commit,
    copy_environment,
    merged_config,
)

# The commit whose outputs this build must reproduce. Move it only when the
# article changes on purpose (its prose, a value, a page, an experiment's
# parameters), to the commit that made that change, in a commit of its own
# right after it (a commit cannot name itself) whose message says what
# changed in the article. A change to the machinery alone (issue 18's
# restructure) must pass against it unmoved.
REFERENCE = "324635932f3c9a76fcca7f89a5ac857d4f1e2509"

# Files of articlekit that moved since REFERENCE and whose path the build
# prints (the listings artifact names the tool that cut it, a baseline
# reason names it too; the diff page points at its agreement rules). The
# reference's sources are made to name them where they are now, so that
# every other byte is still compared; nothing else of the reference is
# touched. Clear it when REFERENCE moves.
MOVED_SINCE_REFERENCE = {}

EXPERIMENT_OUTPUTS = ("results", "figures")  # what the experiments write
PAGES = "build"  # what the article's rules make from the results
ON_PURPOSE = (
    "\nIf the article changed on purpose, move REFERENCE in tests/test_same_article_as_before.py "
    "(its comment says to which commit)."
)

Reference = namedtuple("Reference", "project measured volatile replaced")
Reference.__doc__ = """project: the reference's copy, its pages made from this build's
volatile results; measured: its own results and figures, as its experiments
wrote them; volatile: its publishing.volatile prefixes; replaced: the
results and figures of its experiments that measure volatile values, which
this build's replaced before its pages were made."""


def config_of(project):
    """What the project's build on config/test.yaml sees (merged over its config.yaml and its experiments' defaults)."""
    return merged_config(project)


def build(project, *extra):
    """REFERENCE built as the built_project fixture is (TEST_BUILD, the PDF's and Word file's date fixed)."""
    env = {**copy_environment(project), **TEST_BUILD_ENVIRONMENT}
    done = subprocess.run([*TEST_BUILD, *extra], cwd=project, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(
            f"building the reference {REFERENCE[:9]} in {project} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        )


def keyed_values(result):
    """An experiment's result as the keys the article reads it by:
    {"float32": {"sdpa": {"max_abs_diff": x}}} of parity ->
    {"parity.float32.sdpa.max_abs_diff": x}. Written here, not imported from
    articlekit, so that this test reads the same while the library moves."""

    def walk(tree, prefix):
        for name, value in tree.items():
            if isinstance(value, dict):
                yield from walk(value, f"{prefix}.{name}")
            else:
                yield f"{prefix}.{name}", value

    return dict(walk(result.get("values") or {}, result.get("experiment")))


def measures_volatile(result, volatile):
    """An experiment's result holding a value under a volatile prefix."""
    return any(key.startswith(volatile) for key in keyed_values(result))


def name_moved_files_where_they_are(project):
    """In the reference's sources (articlekit's code, the baseline, the
    prose, the config), each path of MOVED_SINCE_REFERENCE replaced by the
    file's path today, and nothing else changed."""
    for path in sorted(project.rglob("*")):
        if path.suffix not in (".py", ".yaml", ".qmd", ".smk") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        renamed = text
        for old, new in MOVED_SINCE_REFERENCE.items():
            renamed = renamed.replace(old, new)
        if renamed != text:
            path.write_text(renamed, encoding="utf-8")


# Where Snakemake's main process records which rule wrote each output and
# its digest (articlekit/core/ledger.py); a build refuses an output whose
# bytes are not what its rule wrote.
LEDGER = Path(".snakemake/articlekit/ledger.json")


def carry_ledger_entries(source, target, rels):
    """Each file of rels copied from the build `source` into `target` comes
    with the ledger entry its rule's job left in source: the file is what
    that rule wrote, in another build of the same code, so the target's
    build takes it instead of refusing it as rewritten by hand. Nothing else
    of the target's ledger is touched; a project without a ledger (a
    reference older than it) needs none."""
    if not (source / LEDGER).is_file() or not (target / LEDGER).is_file():
        return
    theirs = json.loads((source / LEDGER).read_text(encoding="utf-8"))["outputs"]
    ledger = json.loads((target / LEDGER).read_text(encoding="utf-8"))
    for rel in map(str, rels):
        if rel in theirs:
            ledger["outputs"][rel] = theirs[rel]
    (target / LEDGER).write_text(json.dumps(ledger, indent=1), encoding="utf-8")


@pytest.fixture(scope="module")
def reference(built_project, tmp_path_factory):
    """REFERENCE built here, once for the module (about a minute on
    config/test.yaml)."""
    root = tmp_path_factory.mktemp("reference")
    try:
        project = copy_commit(root / "project", REFERENCE)
    except MissingCommit as exc:
        pytest.fail(f"this test builds REFERENCE ({Path(__file__).name}) to compare with: {exc}")
    name_moved_files_where_they_are(project)
    build(project, "--omit-from", f"{PAGES}/values.json")  # its experiments only
    measured = root / "measured"
    for folder in EXPERIMENT_OUTPUTS:
        shutil.copytree(project / folder, measured / folder)

    config = config_of(project)
    volatile = tuple(config["publishing"]["volatile"])
    replaced = []
    for path in sorted((project / "results").glob("*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        if measures_volatile(result, volatile):
            declared = (config["experiments"].get(result["experiment"]) or {}).get("figures") or {}
            # an experiment with runs: N combines N run files (results/runs/NAME/): this build's come
            # too, copied first, so that what combines them is newer and Snakemake does not rerun it
            runs = sorted(
                p.relative_to(built_project)
                for p in (built_project / "results/runs" / result["experiment"]).glob("*.json")
            )
            for rel in [*runs, path.relative_to(project), *map(Path, declared.values())]:
                replaced.append(rel)
                if (built_project / rel).is_file():  # else the experiment test says what is missing
                    shutil.copyfile(built_project / rel, project / rel)
    carry_ledger_entries(built_project, project, replaced)
    build(project)  # values and pages; the experiments do not run again (their outputs are newer)
    return Reference(project, measured, volatile, replaced)


# ---- what counts as a difference --------------------------------------------------


def bits(value):
    """A value as its JSON text: floats to their last bit, 1 apart from 1.0,
    NaN equal to NaN."""
    return json.dumps(value, sort_keys=True)


def result_differences(then, now, volatile):
    """What differs between the reference's result of an experiment (then)
    and this build's (now), but values under a volatile prefix."""
    moved = [
        f"{field}: reference {bits(then.get(field))}, this build {bits(now.get(field))}"
        for field in sorted((set(then) | set(now)) - {"values"})
        if bits(then.get(field)) != bits(now.get(field))
    ]
    old, new = keyed_values(then), keyed_values(now)
    moved += [f"{key}: only in the reference" for key in sorted(set(old) - set(new))]
    moved += [f"{key}: only in this build" for key in sorted(set(new) - set(old))]
    moved += [
        f"{key}: reference {bits(old[key])}, this build {bits(new[key])}"
        for key in sorted(set(old) & set(new))
        if not key.startswith(volatile) and bits(old[key]) != bits(new[key])
    ]
    return moved


# What differs between two PDFs Typst writes from the same source: when it
# wrote them, and the document ids it derives from that.
PDF_WRITTEN_AT = [
    (re.compile(rb"\(D:\d{14}Z\)"), b"(D:)"),
    (re.compile(rb"<xmp:(ModifyDate|CreateDate)>[^<]*<"), rb"<xmp:\1><"),
    (re.compile(rb"<xmpMM:(InstanceID|DocumentID)>[^<]*<"), rb"<xmpMM:\1><"),
    (re.compile(rb"/ID\s*\[\s*\([^)]*\)\s*\([^)]*\)\s*\]"), b"/ID[]"),
]


def pdf_content(path):
    pdf = path.read_bytes()
    for pattern, blank in PDF_WRITTEN_AT:
        pdf = pattern.sub(blank, pdf)
    return pdf


def pdf_pages(path):
    return [page.extract_text() for page in pypdf.PdfReader(path).pages]


def pdf_difference(then, now):
    """None for two PDFs that differ only in when they were written; else
    the first page whose text differs, or that the text is the same but not
    the rest (a figure, a font, the layout)."""
    if pdf_content(then) == pdf_content(now):
        return None
    old, new = pdf_pages(then), pdf_pages(now)
    if len(old) != len(new):
        return f"{len(old)} pages in the reference, {len(new)} in this build"
    for number, (a, b) in enumerate(zip(old, new), 1):
        if a != b:
            return f"page {number}, {first_difference(a, b)}"
    return "the same text on every page, but not the same figures, fonts or layout"


def first_difference(then, now):
    """Where two texts first differ, by line, or None when they are equal."""
    old, new = then.splitlines(), now.splitlines()
    differing = [(number, a, b) for number, (a, b) in enumerate(zip(old, new), 1) if a != b]
    if differing:
        number, a, b = differing[0]
        more = f" (and {len(differing) - 1} more lines)" if len(differing) > 1 else ""
        return f"line {number}: reference {a[:200]!r}, this build {b[:200]!r}{more}"
    if len(old) != len(new):
        return f"{len(old)} lines in the reference, {len(new)} in this build"
    return None if then == now else "same lines, other line endings"


# build/ro-crate-metadata.json lists every output and input of the build with its
# digest (articlekit/review/manifest.py, crate.py), read as its files view
# (the times of its runs differ on every build by design). Two of those digests move with
# what this test excuses elsewhere: the PDF's (the time Typst wrote it,
# compared above without it), and the library's own files among the inputs
# (articlekit/...: the machinery, which a restructure changes on purpose).
MANIFEST = Path(PAGES) / "ro-crate-metadata.json"
LIBRARY = "articlekit/"


def manifest_difference(then, now):
    """None when two manifests list the same outputs, by the same rules,
    and the same inputs, each with the same digest, but the PDF's digest
    and the entries of the library's own files."""

    def comparable(path):
        manifest = files_view(json.loads(path.read_text(encoding="utf-8")), root=PAGES)
        outputs = {
            name: {**entry, "sha256": None} if name.endswith(".pdf") else entry
            for name, entry in manifest.get("outputs", {}).items()
        }
        inputs = {
            name: entry
            for name, entry in manifest.get("inputs", {}).items()
            if not (name.startswith(LIBRARY) or f"/{LIBRARY}" in name)
        }
        return {**manifest, "outputs": outputs, "inputs": inputs}

    old, new = comparable(then), comparable(now)
    moved = [
        f"{part} {name}: reference {bits(old[part].get(name))}, this build {bits(new[part].get(name))}"
        for part in ("outputs", "inputs")
        for name in sorted(set(old[part]) | set(new[part]))
        if bits(old[part].get(name)) != bits(new[part].get(name))
    ]
    moved += [
        f"{field}: reference {bits(old.get(field))}, this build {bits(new.get(field))}"
        for field in sorted((set(old) | set(new)) - {"outputs", "inputs"})
        if bits(old.get(field)) != bits(new.get(field))
    ]
    return "; ".join(moved[:5]) + (f" (and {len(moved) - 5} more)" if len(moved) > 5 else "") if moved else None


def bundle_difference(then, now):
    """None when two journal bundles hold the same entries, byte for byte,
    but their crates, which are compared as manifests are."""

    def entries(path):
        with zipfile.ZipFile(path) as bundle:
            return {name: bundle.read(name) for name in bundle.namelist()}

    old, new = entries(then), entries(now)
    if set(old) != set(new):
        return f"entries {sorted(set(old) ^ set(new))} in one bundle only"
    moved = [name for name in sorted(old) if name != METADATA_NAME and old[name] != new[name]]
    if moved:
        return f"its {', '.join(moved)} not the same"
    with tempfile.TemporaryDirectory() as folder:
        crates = [Path(folder) / side for side in ("then", "now")]
        for path, found in zip(crates, (old, new)):
            path.write_bytes(found[METADATA_NAME])
        said = manifest_difference(*crates)
    return f"its crate: {said}" if said else None


def file_difference(then, now):
    """None when the file `now` says what `then` says: the same bytes, but
    for the time a PDF was written (and the digests a manifest keeps of it
    and of the library's code)."""
    if not now.is_file():
        return "not made by this build"
    if then.suffix == ".pdf":
        return pdf_difference(then, now)
    if then.name == MANIFEST.name and then.parent.name == PAGES:
        return manifest_difference(then, now)
    if then.name == Path(JOURNAL_BUNDLE).name:
        return bundle_difference(then, now)
    a, b = then.read_bytes(), now.read_bytes()
    if a == b:
        return None
    try:
        return first_difference(a.decode("utf-8"), b.decode("utf-8"))
    except UnicodeDecodeError:
        return f"{len(a)} bytes in the reference, {len(b)} in this build, not the same"


def files_under(root, folder):
    """The files a build wrote under folder, relative to root (work files,
    whose names start with a dot, left out)."""
    return sorted(
        p.relative_to(root)
        for p in (root / folder).rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def differing_files(then_root, now_root, rels):
    report = [(rel, file_difference(then_root / rel, now_root / rel)) for rel in rels]
    return [f"{rel}: {why}" for rel, why in report if why]


# ---- this build against the reference -----------------------------------------------


@pytest.mark.slow
def test_the_volatile_prefixes_are_the_references(reference, built_project):
    """A change cannot excuse more values from the comparison than the
    reference did."""
    assert tuple(config_of(built_project)["publishing"]["volatile"]) == reference.volatile


@pytest.mark.slow
def test_every_experiment_computed_what_the_reference_computed(reference, built_project):
    moved = []
    for rel in files_under(reference.measured, "results"):
        if not (built_project / rel).is_file():
            moved.append(f"{rel}: not made by this build")
            continue
        then = json.loads((reference.measured / rel).read_text(encoding="utf-8"))
        now = json.loads((built_project / rel).read_text(encoding="utf-8"))
        moved += [f"{rel}: {line}" for line in result_differences(then, now, reference.volatile)]
    made_here = set(files_under(built_project, "results")) - set(files_under(reference.measured, "results"))
    moved += [f"{rel}: not made by the reference" for rel in sorted(made_here)]
    assert moved == [], f"results moved since {REFERENCE[:9]}:\n" + "\n".join(moved) + ON_PURPOSE


@pytest.mark.slow
def test_every_figure_is_the_references_but_those_of_measurements(reference, built_project):
    figures = [rel for rel in files_under(reference.measured, "figures") if rel not in reference.replaced]
    assert figures, "no figure compared: the reference drew none"
    moved = differing_files(reference.measured, built_project, figures)
    assert moved == [], f"figures changed since {REFERENCE[:9]}:\n" + "\n".join(moved) + ON_PURPOSE


@pytest.mark.slow
def test_from_the_same_measurements_every_page_is_the_references(reference, built_project):
    """article.md and .html, the PDF, values, bindings, audit, diff, lint."""
    pages = files_under(reference.project, PAGES)
    assert {"article.md", "article.html", "values.json", "bindings.json", "audit.json"} <= {p.name for p in pages}
    moved = differing_files(reference.project, built_project, pages)
    assert moved == [], f"pages changed since {REFERENCE[:9]}:\n" + "\n".join(moved) + ON_PURPOSE


# ---- the comparison finds what it must, and only that ---------------------------------


@pytest.mark.slow
def test_a_last_bit_moved_in_a_computed_value_is_a_difference_and_a_timing_is_not(reference):
    then = json.loads((reference.measured / "results" / "parity.json").read_text(encoding="utf-8"))
    name = next(k for k, v in then["values"].items() if isinstance(v, float) and v)
    now = json.loads(json.dumps(then))
    now["values"][name] = math.nextafter(then["values"][name], math.inf)  # one ULP up
    assert [line.split(":")[0] for line in result_differences(then, now, reference.volatile)] == [f"parity.{name}"]

    timing = json.loads((reference.measured / "results" / "timing.json").read_text(encoding="utf-8"))
    slower = json.loads(json.dumps(timing), parse_float=lambda text: 2 * float(text))
    assert keyed_values(slower) != keyed_values(timing)
    assert result_differences(timing, slower, reference.volatile) == []


def test_a_manifest_differs_by_a_source_but_not_by_the_pdfs_time_or_the_librarys_code(tmp_path):
    def manifest(folder, pdf, code, prose):
        path = tmp_path / folder / MANIFEST
        path.parent.mkdir(parents=True)
        view = {
            "outputs": {"build/article.pdf": {"sha256": pdf, "rule": "pdf"}},
            "inputs": {
                "articlekit/render/page.py": {"sha256": code, "read_by": ["pdf"]},
                "article/index.qmd": {"sha256": prose, "read_by": ["pdf"]},
            },
        }
        ledger = Ledger(document={"outputs": {"build/article.pdf": {"rule": "pdf", "inputs": list(view["inputs"])}}})
        path.write_text(crate_json(build_crate(view, ledger, root=PAGES)), encoding="utf-8")
        return path

    then = manifest("then", "a1", "c1", "p1")
    assert file_difference(then, manifest("pdf-and-code", "a2", "c2", "p1")) is None
    assert "inputs article/index.qmd" in file_difference(then, manifest("prose", "a1", "c1", "p2"))


@pytest.mark.slow
def test_one_word_changed_on_a_page_is_a_difference(reference, tmp_path):
    changed = tmp_path / PAGES
    shutil.copytree(reference.project / PAGES, changed)
    article = changed / "article.md"
    article.write_text(article.read_text(encoding="utf-8").replace(" the ", " a ", 1), encoding="utf-8")
    assert [
        line.split(":")[0]
        for line in differing_files(reference.project, tmp_path, files_under(reference.project, PAGES))
    ] == ["build/article.md"]


@pytest.mark.slow
def test_a_pdf_written_later_is_the_same_and_one_changed_byte_is_not(reference, tmp_path):
    written = reference.project / PAGES / "article.pdf"
    pdf = written.read_bytes()
    assert re.search(rb"\(D:\d{14}Z\)", pdf) and b"<xmpMM:DocumentID>" in pdf and b"/ID[(" in pdf
    later = pdf
    for pattern, then in [
        (rb"\(D:\d{14}Z\)", b"(D:20991231235959Z)"),
        (rb"Date>[^<]+<", b"Date>2099-12-31T23:59:59Z<"),
        (rb"ID>[^<]+<", b"ID>AAAA<"),
        (rb"/ID\[\([^)]*\)\([^)]*\)\]", b"/ID[(AAAA)(AAAA)]"),
    ]:
        later = re.sub(pattern, then, later)
    (tmp_path / "later.pdf").write_bytes(later)
    assert later != pdf and pdf_difference(written, tmp_path / "later.pdf") is None
    other = tmp_path / "other.pdf"
    other.write_bytes(pdf.replace(b"/Creator(Typst", b"/Creator(Typsx", 1))
    assert pdf_difference(written, other) == "the same text on every page, but not the same figures, fonts or layout"


# ---- a clone that lacks the reference says so -------------------------------------------


def commit_file(repo, name, text):
    (repo / name).write_text(text, encoding="utf-8")
    for args in (["add", name], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_a_commit_is_copied_with_the_files_it_tracked(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    first = commit_file(repo, "a.txt", "first\n")
    commit_file(repo, "a.txt", "second\n")
    copy = copy_commit(tmp_path / "copy", first, root=repo)
    assert (copy / "a.txt").read_text(encoding="utf-8") == "first\n"
    assert not (copy / ".git").exists()


def test_a_shallow_clone_without_the_commit_says_how_to_fetch_it(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    first = commit_file(repo, "a.txt", "first\n")
    commit_file(repo, "a.txt", "second\n")
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(tmp_path / "shallow")],
        check=True,
        capture_output=True,
    )
    with pytest.raises(MissingCommit, match=rf"commit {first} is not in .*shallow clone.*git fetch --unshallow"):
        copy_commit(tmp_path / "copy", first, root=tmp_path / "shallow")


def test_a_folder_that_is_no_checkout_says_so(tmp_path):
    with pytest.raises(MissingCommit, match="is not a git checkout.*run this in a clone"):
        copy_commit(tmp_path / "copy", REFERENCE, root=tmp_path)


def test_a_journal_bundle_differs_by_its_entries_but_not_by_its_crates_times(tmp_path):
    from articlekit.render.formats import jats

    def bundle(name, article, when):
        crate = {"@graph": [{"@id": "#build", "endTime": when, "result": [], "object": []}]}
        entries = {"article.xml": article, METADATA_NAME: json.dumps(crate).encode()}
        path = tmp_path / name / "article.meca.zip"
        path.parent.mkdir()
        path.write_bytes(jats.zip_bytes(entries))
        return path

    then = bundle("then", b"<article/>", "2026-01-01T00:00:00Z")
    assert bundle_difference(then, bundle("later", b"<article/>", "2026-12-06T07:00:00Z")) is None
    assert "its article.xml not the same" in bundle_difference(then, bundle("edited", b"<article>x</article>", "t"))
