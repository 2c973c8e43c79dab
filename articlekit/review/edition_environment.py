"""Which of the edition's departures are its versions' and which this machine's.

The audit finds where this build departs from the published edition (an
erratum, a value not reproducible, a move as expected or not). A departure
may come from the library versions (the edition ran others) or from this
machine and the code (its CPU, its BLAS, the way the inputs are drawn). The
version matrix (build/matrix.json) can tell them apart when one of its
environments runs the edition's own versions (the baseline's
`edition: versions:`): there, a departure whose printed value comes back was
the versions'; one that is still there is this machine's or the code's.

    attribution(baseline, audit_rows, matrix, matrix_path) -> what the audit prints

Without such a matrix run the question is open, and the audit names the
command that answers it. The matrix is optional input to the audit rule:
articlekit.review.matrix_input.matrix_argument() gives its path with a digest of its contents, so a new
matrix run reruns the audit, and a build without one has the DAG it had
before (the matrix's own jobs are never pulled into the default build).
"""

from datetime import datetime, timezone
from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.core.jsonio import read_json
from articlekit.core.keys import split_key
from articlekit.data.classes import CITED, REPRODUCED, same_release
from articlekit.data.edition import against_edition
from articlekit.data.environment import PREFIX
from articlekit.review.matrix_input import digest
from articlekit.review.pages import cell, code, table

ALSO = "also in the edition's environment"
NOT = "not in the edition's environment"
NOT_RUN = "not run in the edition's environment"
# What each finding says about where the departure comes from.
MEANS = {ALSO: "this machine's or the code's", NOT: "the versions'", NOT_RUN: "open"}
COMMAND = "snakemake matrix --cores 2"


class MatrixDigestError(ArticlekitError):
    pass


def load_matrix(path, sha256=None):
    """build/matrix.json, or None when it was never made; the digest, when
    given, must be the file's (else it changed after Snakemake planned the
    audit: run it again)."""
    if path is None or not Path(path).exists():
        return None
    if sha256 and digest(path) != sha256:
        raise MatrixDigestError(f"{path} changed after Snakemake planned the audit; run snakemake again")
    return read_json(path)


# ---- the edition's environment in a matrix ----------------------------------------------


def runs_the_editions_versions(environment, edition_versions):
    """An environment of the matrix that was built and ran every library at
    the edition's version ('3.13' takes 3.13.0; '2.14.1' takes 2.14.1+cu130)."""
    got = environment.get("versions") or {}
    return (
        bool(environment.get("complete"))
        and bool(edition_versions)
        and all(same_release(str(version), got.get(library)) for library, version in edition_versions.items())
    )


def _cells(matrix, label):
    """{key: value} of one environment's column, as the matrix rows hold them."""
    out = {}
    for row in matrix["rows"]:
        cell = row["cells"].get(label)
        if cell is not None:
            out.setdefault(row["key"], cell["raw"])
    return out


def _there(entry, value, edition_versions, environment):
    """(ALSO or NOT, the value as the edition printed it, why) for one
    departure, given its value in the edition's environment."""
    status, shown, _ = against_edition(entry, value, edition_versions, environment["versions"])
    key = entry.key
    if key.startswith(PREFIX) and key[len(PREFIX) :] in edition_versions:
        # a version the edition printed ('3.13', '2.14.1+cpu'), by release
        if same_release(str(entry.published), value):
            return NOT, shown, MEANS[NOT]
        if same_release(str(entry.published).split("+", 1)[0], value):
            return (
                ALSO,
                shown,
                (f"the same release in another build ({value} there, {entry.published} in the edition): {MEANS[ALSO]}"),
            )
        return ALSO, shown, MEANS[ALSO]
    finding = NOT if status == REPRODUCED else ALSO
    return finding, shown, MEANS[finding]


def _finding(row, entry, cells, matrix, edition_versions, environment, publishing):
    """One departure's line: its value in the edition's environment and what that says."""
    experiment = split_key(row["key"])[0].split(".")[0]
    found = {
        "id": row["id"],
        "key": row["key"],
        "status": row["status"],
        "published": row["published"],
        "this_build": row["regenerated"],
        "there": None,
    }
    if experiment in matrix.get("left_out", []):
        return {
            **found,
            "finding": NOT_RUN,
            "why": f"the matrix takes {experiment} from the main build (it is not run per environment)",
        }
    if row["key"] not in cells:
        return {**found, "finding": NOT_RUN, "why": "the matrix has no row for this key"}
    finding, shown, why = _there(entry, cells[row["key"]], edition_versions, environment)
    if publishing.is_per_build(row["key"]):
        why = "it differs on every build by design (publishing.per_build)"
    return {**found, "there": shown, "finding": finding, "why": why}


def attribution(baseline, rows, matrix, matrix_path, publishing):
    """What the audit says of its departures (rows: the audit's entries;
    those neither reproduced nor cited) in the edition's environment.
    `matrix`: build/matrix.json as data, or None when no matrix was run;
    `matrix_path` None when the article configures no matrix."""
    edition_versions = dict(baseline.edition.get("versions") or {})
    wanted = publishing.versions_text(edition_versions)
    departures = [r for r in rows if r["status"] not in (REPRODUCED, CITED)]
    doc = {
        "versions": edition_versions,
        "matrix": matrix_path,
        "environment": None,
        "entries": [],
        "counts": {ALSO: 0, NOT: 0, NOT_RUN: 0},
        "departures": len(departures),
    }
    if matrix_path is None:
        doc["text"] = (
            f"Whether the edition's departures are its versions' or this machine's is open: this "
            f"article configures no version matrix. Add an environment with the edition's versions "
            f"({wanted}) to a matrix: section (docs/version-matrix.md), then run {COMMAND} "
            f"and this build again."
        )
        return doc
    matching = [e for e in (matrix or {}).get("environments", []) if runs_the_editions_versions(e, edition_versions)]
    if not matching:
        ran = ", ".join(
            f"{e['label']} ({publishing.versions_text(e.get('versions') or {}) or 'not built'})"
            for e in (matrix or {}).get("environments", [])
        )
        seen = (
            f"{matrix_path} has no built environment with them (it has {ran})"
            if matrix
            else f"no version matrix was run ({matrix_path} does not exist)"
        )
        doc["text"] = (
            f"Whether the edition's departures are its versions' or this machine's is open: "
            f"{seen}. {COMMAND} answers it when config.yaml's matrix: has an environment with "
            f"the edition's versions ({wanted}); run this build again after it."
        )
        return doc
    environment = matching[0]
    label = environment["label"]
    cells = _cells(matrix, label)
    by_id = {e.id: e for e in baseline.entries}
    for row in departures:
        found = _finding(row, by_id[row["id"]], cells, matrix, edition_versions, environment, publishing)
        doc["entries"].append(found)
        doc["counts"][found["finding"]] += 1
    counts = doc["counts"]
    # when the matrix ran: its values are that day's code's, which a later build may have changed
    made = datetime.fromtimestamp(Path(matrix_path).stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc["environment"] = {"label": label, "versions": environment["versions"], "made": made}
    doc["text"] = (
        f"In the edition's environment, column {label} of {matrix_path} (written {made}): "
        f"{publishing.versions_text(environment['versions'])}. Of the {len(departures)} departures "
        f"from the edition, {counts[NOT]} {'is' if counts[NOT] == 1 else 'are'} {NOT} "
        f"(the edition's value comes back there: {MEANS[NOT]}), {counts[ALSO]} "
        f"{'is' if counts[ALSO] == 1 else 'are'} {ALSO} ({MEANS[ALSO]}), and {counts[NOT_RUN]} "
        f"{'was' if counts[NOT_RUN] == 1 else 'were'} not run there (taken from the main build)."
    )
    return doc


# ---- the audit's pages -----------------------------------------------------------------

HEADING = "The edition's environment"


def to_markdown(doc):
    """The audit's section, as Markdown lines."""
    lines = [f"## {HEADING}", "", cell(doc["text"]), ""]
    if doc["entries"]:
        lines += table(
            ["id", "key", "status here", "published", "this build", "edition's environment", "finding"],
            [
                [
                    cell(e["id"]),
                    code(e["key"]),
                    e["status"],
                    code(e["published"]),
                    code(e["this_build"]),
                    code(e["there"]) if e["there"] is not None else "—",
                    cell(f"{e['finding']}: {e['why']}"),
                ]
                for e in doc["entries"]
            ],
        )
        lines.append("")
    return lines
