"""A document checked against a JSON Schema, each problem naming its entry.

    problems(document, schema, path) -> ["FILE: ENTRY: what is wrong", ...]

sorted by entry, ENTRY written as a reader finds it in the file:
bindings['k|.2e|'].claim.holds, claims[3].status, (top level). The
bindings document (articlekit.article.bindings) and release snapshots
(articlekit.review.snapshot) are checked through here.
"""


def problems(document, schema, path, prefix=()):
    """Every way `document` breaks `schema`, first entry first."""
    # Imported here, not at the top: importing jsonschema costs tens of
    # milliseconds, and Snakemake's plan imports the formats (and through
    # them this module) on every run, where a warm plan checks nothing
    # (tests/test_plan_memory.py holds it to that).
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{path}: {entry_name([*prefix, *error.absolute_path])}: {error.message}" for error in errors]


def entry_name(where):
    """["bindings", "k|.2e|", "text"] -> "bindings['k|.2e|'].text": the
    entry's own key quoted, since value keys hold dots themselves."""
    where = list(where)
    if not where:
        return "(top level)"
    name = str(where[0])
    for depth, step in enumerate(where[1:]):
        if isinstance(step, int):
            name += f"[{step}]"
        elif depth == 0:
            name += f"[{step!r}]"
        else:
            name += f".{step}"
    return name
