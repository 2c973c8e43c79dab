"""The audit says which of the edition's departures are the versions' and
which this machine's, from the version matrix's column that runs the
edition's own versions; without one it says the question is open and the
command that answers it.

A small article, baseline and "this build" are made here; the matrix is the
real build/matrix.json format (articlekit.review.matrix.column and build),
its environments faked by their results, so no environment is built. The
audit runs as `python -m articlekit audit` does (audit.main), with the
arguments its rule passes. Last, the default build's plan: a matrix run
reruns the audit, and never pulls the matrix's own jobs into the build.
"""

import html
import json
import re

import pytest

from articlekit.article.bind import bind
from articlekit.core.jsonio import read_json, write_json
from articlekit.data.baseline import load_baseline
from articlekit.data.publishing import parse as parse_publishing
from articlekit.data.values import merge
from articlekit.review import audit
from articlekit.review import edition_environment as ee
from articlekit.review import matrix_input
from articlekit.review import matrix as matrixlib
from tests.workspace import copy_environment, copy_project
from tests import snakemake_fork

PUBLISHING_SECTION = {
    "libraries": {"python": "Python", "numpy": "NumPy", "torch": "PyTorch"},
    "per_build": ["environment.build_date"],
}
PUBLISHING = parse_publishing(PUBLISHING_SECTION)
EDITION = {"python": "3.13", "numpy": "2.5.4", "torch": "2.14.1"}

ARTICLE = """\
The largest difference is {{< value parity.diff fmt=".2e" expect="< 1e-12" >}}.
The weight is {{< value example.w fmt=".2f" >}}, from seed {{< value example.seed >}}.
The loop took {{< value timing.loop_ms fmt=".1f" >}} ms.
Run on {{< value environment.os >}} with PyTorch {{< value environment.torch >}}, built {{< value environment.build_date >}}.

{{< provenance >}}
"""

BASELINE = """\
edition: {title: fixture, source: tests/test_edition_environment.py, date: "2026-10-12",
          versions: {python: "3.13", numpy: "2.5.4", torch: "2.14.1"}}
entries:
  - id: diff.versions            # 2.22e-16 again in the edition's environment: the versions'
    class: noise
    published: "2.22e-16"
    value: 2.220446049250313e-16
    key: parity.diff
    fmt: ".2e"
    check: "< 1e-12"
    where: {section: parity, quote: "difference 2.22e-16"}
  - id: weight.machine           # 0.25 there too: this machine's or the code's
    class: not_reproducible
    published: "0.30"
    value: 0.3
    key: example.w
    fmt: ".2f"
    check: "> 0"
    reason: The edition never said how it drew its inputs.
    where: {section: example, quote: "weight 0.30"}
  - id: seed.reproduced          # not a departure
    class: exact
    published: "7"
    value: 7
    key: example.seed
    fmt: d
    where: {section: example, quote: "seed 7"}
  - id: loop.not-run             # timing: not run per environment
    class: timing
    published: "5.669"
    value: 5.669
    key: timing.loop_ms
    fmt: ".3f"
    band: [0.01, 100.0]
    where: {section: timing, quote: "took 5.669 ms"}
  - id: os.machine               # Linux in every column: this machine's
    class: info
    published: "Windows"
    value: "Windows"
    key: environment.os
    where: {section: Sources, quote: "on Windows"}
  - id: torch.versions           # 2.14.1+cu130 there: the edition's release
    class: info
    published: "2.14.1"
    value: "2.14.1"
    key: environment.torch
    where: {section: Sources, quote: "PyTorch 2.14.1"}
  - id: torch.build              # the edition's CPU build; the CUDA build there
    class: info
    published: "2.14.1+cpu"
    value: "2.14.1+cpu"
    key: environment.torch
    where: {section: Sources, quote: "PyTorch 2.14.1+cpu"}
  - id: date.per-build           # every build's own date
    class: info
    published: "October 12, 2026"
    value: "October 12, 2026"
    key: environment.build_date
    where: {section: Sources, quote: "built October 12, 2026"}
"""

FINDINGS = {
    "diff.versions": ee.NOT,
    "weight.machine": ee.ALSO,
    "loop.not-run": ee.NOT_RUN,
    "os.machine": ee.ALSO,
    "torch.versions": ee.NOT,
    "torch.build": ee.ALSO,
    "date.per-build": ee.ALSO,
}


def _artifacts(folder, versions, diff, w):
    """An environment's results, as experiments/*.py write them."""
    folder.mkdir(parents=True, exist_ok=True)
    made = {
        "environment": {
            "values": {
                "os": "Linux",
                "torch": versions["torch"],
                "python": versions["python"],
                "numpy": versions["numpy"],
                "build_date": "2026-12-02",
            }
        },
        "parity": {"values": {"diff": diff}},
        "example": {"values": {"w": w, "seed": 7}},
    }
    paths = []
    for name, doc in made.items():
        path = folder / f"{name}.json"
        write_json(path, {"experiment": name, "script": f"experiments/{name}.py", "versions": versions, **doc})
        paths.append(path)
    return paths


@pytest.fixture
def project(tmp_path):
    """This build (torch 2.13.0 on Python 3.11) and a two-column matrix: the
    NumPy 2.4.6 column and the edition's (Python 3.13.0, NumPy 2.5.4,
    PyTorch 2.14.1+cu130), whose parity difference is the edition's."""
    (tmp_path / "index.qmd").write_text(ARTICLE)
    (tmp_path / "published.yaml").write_text(BASELINE)
    timing = tmp_path / "results/timing.json"
    timing.parent.mkdir(parents=True)
    write_json(timing, {"experiment": "timing", "script": "experiments/timing.py", "values": {"loop_ms": 1.7}})
    here = {"python": "3.11.7", "numpy": "2.4.6", "torch": "2.13.0+cpu"}
    results = _artifacts(tmp_path / "results", here, 4.440892098500626e-16, 0.25)
    values = merge([(p, read_json(p)) for p in [*results, timing]])
    write_json(tmp_path / "values.json", values)
    write_json(tmp_path / "bindings.json", bind("index.qmd", ARTICLE, values, strict=False))

    columns = []
    for label, versions, diff in [
        ("numpy-2.4.6", here, 4.440892098500626e-16),
        ("edition", {"python": "3.13.0", "numpy": "2.5.4", "torch": "2.14.1+cu130"}, 2.220446049250313e-16),
    ]:
        freeze = tmp_path / f"matrix/{label}/freeze.json"
        freeze.parent.mkdir(parents=True)
        write_json(
            freeze, {"label": label, "installed": True, "log": "install.log", "python_version": versions["python"]}
        )
        columns.append(
            matrixlib.column(
                label,
                ["numpy==" + versions["numpy"]],
                freeze,
                _artifacts(tmp_path / f"matrix/{label}", versions, diff, 0.25),
                [timing],
                tmp_path / "index.qmd",
                publishing=PUBLISHING,
            )
        )
    baseline = load_baseline(tmp_path / "published.yaml")
    write_json(tmp_path / "matrix.json", matrixlib.build(columns, baseline, PUBLISHING))
    return tmp_path


def run_audit(project, *matrix_args):
    """The audit as its rule runs it; -> (exit code, build/audit.json, .md, .html)."""
    out = {kind: project / f"audit.{kind}" for kind in ("json", "md", "html")}
    code = audit.main(
        [
            "--baseline",
            str(project / "published.yaml"),
            "--values",
            str(project / "values.json"),
            "--bindings",
            str(project / "bindings.json"),
            "--json",
            str(out["json"]),
            "--md",
            str(out["md"]),
            "--html",
            str(out["html"]),
            "--publishing",
            json.dumps(PUBLISHING_SECTION),
            *matrix_args,
        ]
    )
    if code != 0:
        return code, None, None, None
    page = html.unescape(re.sub(r"<[^>]+>", "", out["html"].read_text()))  # the words a reader sees
    return code, read_json(out["json"]), out["md"].read_text(), page


def rule_arguments(path):
    return matrix_input.matrix_argument(str(path)).split()


def test_each_departure_is_the_versions_or_this_machines_as_the_editions_environment_has_it(project):
    code, report, md, html = run_audit(project, *rule_arguments(project / "matrix.json"))
    assert code == 0
    found = report["edition_environment"]
    assert found["environment"]["label"] == "edition"  # the column with the edition's versions, not the first
    assert {e["id"]: e["finding"] for e in found["entries"]} == FINDINGS  # seed.reproduced is no departure
    by_id = {e["id"]: e for e in found["entries"]}
    assert (by_id["diff.versions"]["this_build"], by_id["diff.versions"]["there"]) == ("4.44e-16", "2.22e-16")
    assert by_id["weight.machine"]["why"] == "this machine's or the code's"
    assert by_id["loop.not-run"]["there"] is None and "takes timing from the main build" in by_id["loop.not-run"]["why"]
    assert by_id["torch.build"]["why"].startswith(
        "the same release in another build (2.14.1+cu130 there, 2.14.1+cpu in the edition)"
    )
    assert by_id["date.per-build"]["why"] == "it differs on every build by design (publishing.per_build)"
    assert found["counts"] == {ee.NOT: 2, ee.ALSO: 4, ee.NOT_RUN: 1}
    for page in (md, html):
        assert "The edition's environment" in page
        assert "Of the 7 departures from the edition, 2 are not in the edition's environment" in page
        assert "4 are also in the edition's environment (this machine's or the code's)" in page
        assert "Python 3.13.0, NumPy 2.5.4, PyTorch 2.14.1+cu130" in page
    assert re.search(
        r"\| diff\.versions \| `parity\.diff` \| moved as expected \| `2\.22e-16` \| `4\.44e-16` \| "
        r"`2\.22e-16` \| not in the edition's environment: the versions' \|",
        md,
    )


def test_without_a_matrix_run_the_question_is_open_and_the_audit_names_the_command(project):
    code, report, md, html = run_audit(project, *rule_arguments(project / "never-run.json"))
    assert code == 0
    found = report["edition_environment"]
    assert found["entries"] == [] and found["environment"] is None
    for page in (md, html):
        assert "is open: no version matrix was run" in page
        assert "snakemake matrix --cores 2 answers it" in page and "Python 3.13, NumPy 2.5.4, PyTorch 2.14.1" in page


def test_a_matrix_without_the_editions_versions_leaves_the_question_open_naming_what_it_ran(project):
    matrix = read_json(project / "matrix.json")
    matrix["environments"] = [e for e in matrix["environments"] if e["label"] != "edition"]
    write_json(project / "other.json", matrix)
    _, report, md, _ = run_audit(project, *rule_arguments(project / "other.json"))
    assert report["edition_environment"]["entries"] == []
    assert "has no built environment with them (it has numpy-2.4.6 (Python 3.11.7, NumPy 2.4.6, PyTorch " in md


def test_an_article_without_a_matrix_is_told_how_to_add_one(project):
    _, report, md, _ = run_audit(project)
    assert "this article configures no version matrix" in report["edition_environment"]["text"]
    assert "docs/version-matrix.md" in md


def test_a_matrix_that_changed_after_snakemake_planned_the_audit_is_refused(project, capsys):
    arguments = rule_arguments(project / "matrix.json")
    (project / "matrix.json").write_text((project / "matrix.json").read_text() + "\n")
    code, *_ = run_audit(project, *arguments)
    assert code == 1
    assert "matrix.json changed after Snakemake planned the audit; run snakemake again" in capsys.readouterr().err


def test_the_rule_passes_the_matrix_with_its_digest_only_once_it_ran(tmp_path):
    path = tmp_path / "matrix.json"
    assert matrix_input.matrix_argument(None) == ""
    assert matrix_input.matrix_argument(str(path)) == f"--matrix {path}"
    path.write_text("{}")
    assert matrix_input.matrix_argument(str(path)) == f"--matrix {path} --matrix-sha256 {matrix_input.digest(path)}"


# ---- the default build's plan ----------------------------------------------------------


def _plan(work):
    """The dry run's plan, forked from a Snakemake imported once (tests/snakemake_fork.py)."""
    argv = ["--cores", "2", "--configfile", "config/test.yaml", "--dry-run", "--printshellcmds"]
    proc = snakemake_fork.run(work, argv, copy_environment(work), timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:]
    return proc.stdout


@pytest.mark.workflow
def test_a_matrix_run_reruns_the_audit_and_never_the_matrix_in_the_default_build(tmp_path):
    work = copy_project(tmp_path / "project")
    before = _plan(work)
    assert "--matrix build/matrix.json --log" in before  # not run yet: the audit says the question is open
    (work / "build").mkdir(exist_ok=True)
    (work / "build/matrix.json").write_text('{"environments": [], "rows": []}')
    after = _plan(work)
    assert f"--matrix build/matrix.json --matrix-sha256 {ee.digest(work / 'build/matrix.json')} --log" in after
    assert not re.search(r"^(local)?rule matrix", after, re.M)  # the default build runs none of the matrix's jobs
    jobs = lambda plan: sorted(re.findall(r"^(?:local)?rule (\w+):", plan, re.M))  # noqa: E731
    assert jobs(after) == jobs(before)
