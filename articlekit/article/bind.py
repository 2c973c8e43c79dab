"""Resolve every shortcode of the article into build/bindings.json, and
write the bound document that every format is rendered from.

    python -m articlekit bind article/index.qmd --values build/values.json \\
        --strict true --out build/bindings.json --bound build/article.bound.md

Python does all the work (lookup, formatting, claims, provenance): the
bound document (articlekit.article.bound) is the article with each
shortcode replaced by what it prints, as attributed spans, and the Lua that
editors run (value.lua) only looks the finished text up by its lookup id,
so what the article prints is decided, and tested, here.

The document's shape is bindings_schema.json, owned by
articlekit.article.bindings, through which it is written (and every reader
reads it): one binding per lookup id KEY|FMT|EXPECT, holding the formatted
text, the raw value, the claim's verdict, the source and the provenance
anchor; the claims checked; the provenance table and the departures section
as markdown.

Values printed inside code carry no tooltip or link, so each needs a way
back: a code block is followed, in its next paragraph, by
{{< source KEY >}} for every key it prints (the key, linked to its
provenance row); inline code does not bind values: {{< value KEY code=true >}}
in prose prints the same code, linked. Bind fails otherwise, naming the fix.

Every problem is reported at once, each as `file:line: ...`, and then the
command fails without writing anything: unknown keys (with the closest
existing ones), bad format specs, malformed claims, claims that say nothing
(`> -inf`, a value compared with itself: articlekit.core.claims.vacuous), and,
in strict mode, claims the values no longer support. With --strict false a failed claim is
kept (holds=false) and the article shows a visible warning beside it: the
claim's "mark", which the shortcode and the PDF filter print as bind wrote it.

An entry of the baseline that moved unexpectedly, with nothing in the
baseline to explain it (articlekit.data.edition: a reason on a moved value, a
timing outside its band, another configuration), stops a strict bind the
same way, with the entry's baseline file:line, both values and the fix;
with --strict false the departures section marks it and bind warns.

A claim the seed sweep flags (robustness.<key>.flagged_claims: it holds at
the article's seed but fails for many of the sweep's) must be disclosed in
its section, which prints how often it holds (articlekit.article.disclosure);
a strict bind stops on one that is not, naming the claim, its line and the
section, and with --strict false the page marks it.

A seeded value printed outside its sweep's 5-95 % band says so at its
shortcode, band="outside", and every edition prints the note beside it
(articlekit.article.seed_band); a strict bind stops on one that does not,
naming the line, the key, the value, the band and the fix, and with
--strict false the number is marked. A rank or a share of seeds
(robustness.<key>.percentile_at_seed, .holds_fraction) is printed with its
interval in its section (articlekit.article.disclosure.without_interval), or
the same.

A claim about a measured value (keys.measured: an estimate with its
interval) can also be inconclusive: the interval straddles the bound, so the
measurement cannot tell. It is never reported as failed. A strict build
stops on it all the same, since the prose is not supported, with a message
that says so, gives the interval and the machine's load, and says what to
do; with --strict false it renders its own mark, never the failed one
(articlekit.core.status spells both), beside the number.
"""

import argparse
import os
import re

from articlekit.core import claims as claimlib
from articlekit.core.commands import reproduce_command
from articlekit.core.log import log
from articlekit.core.status import FAILS, INCONCLUSIVE, STATUS, binding_mark, claim_said, status_of
from articlekit.data.baseline import load_baseline
from articlekit.article.departures import departures_of, departures_record, departures_section
from articlekit.core.fmt import format_value
from articlekit.core.text import md_text, short_text
from articlekit.core.jsonio import read_json, write_text_atomic
from articlekit.article.bound import bound_markdown
from articlekit.article.bindings import BindingsError, write_bindings
from articlekit.article import disclosure, seed_band
from articlekit.article.shortcodes import ShortcodeSyntaxError, kind_at, normalize_space, regions, scan
from articlekit.core.errors import ArticlekitError
from articlekit.core.sources import read_article
from articlekit.core.keys import UnknownKey, lookup, measured

# Shortcodes and the keyword arguments each accepts. `meta` is Quarto's
# built-in; it is resolved by the renderer, not here.
SHORTCODES = {
    "value": {"fmt", "expect", "code", "band"},
    "claim": {"expect"},
    "source": set(),
    "provenance": set(),
    "departures": set(),
    "meta": set(),
}


class BindError(ArticlekitError):
    def __init__(self, problems):
        self.problems = problems
        super().__init__("\n".join(problems))


def anchor(key):
    return "v-" + re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-")


# Bounds on the work one article asks of every format: a value printed is
# a number, a message or a listing (the longest this article prints is
# under 1,000 characters); an article is prose. Pandoc's Typst writer, for
# one, takes time that grows faster than a string's length: a bound keeps
# every format's time within seconds whatever an experiment writes.
MAX_VALUE_TEXT = 10_000  # characters of one value's printed text
MAX_ARTICLE = 2_000_000  # characters of the article


def too_long(where, key, text, source):
    return (
        f"{where}: the value of {key} is {len(text):,} characters long as printed, over the limit of "
        f"{MAX_VALUE_TEXT:,} (articlekit.article.bind.MAX_VALUE_TEXT); it comes from experiment "
        f"{source.get('experiment', '?')} ({source.get('script', '?')}): print a shorter value, "
        "such as a summary or the first lines of a message"
    )


def bind(article, text, values_doc, strict, baseline=None):
    """-> the bindings document, or raises BindError listing every problem.
    `baseline` (articlekit.data.baseline.Baseline) feeds {{< departures >}}.

    Its jobs, in order: read the shortcodes; the departures section's own
    (articlekit.article.departures); each shortcode resolved into its
    binding (resolve); what the article as a whole owes its values
    (article_problems: a way back from code, disclosures, seed bands,
    intervals); the claims' verdicts (claim_problems); the document."""
    if len(text) > MAX_ARTICLE:
        raise BindError(
            [
                f"{article}: the article is {len(text):,} characters long, over the limit of {MAX_ARTICLE:,}: "
                "split it, or move long material into the experiments' artifacts"
            ]
        )
    values, sources = values_doc["values"], values_doc["sources"]
    try:
        occurrences = scan(text)
    except ShortcodeSyntaxError as exc:
        raise BindError([f"{article}:{exc}"]) from None
    problems = []
    departure_list, departure_codes, departure_warnings = departures_of(
        article, occurrences, values_doc, baseline, problems, strict
    )
    occurrences += departure_codes
    bindings, claim_log, tables = resolve(article, occurrences, values, sources, problems)
    problems += article_problems(article, text, occurrences, values, bindings, strict)
    if strict:
        problems += claim_problems(claim_log, sources)
    if bindings and not tables:
        problems.append(
            f"{article}: the article binds values but has no {{{{< provenance >}}}} table "
            "for them to link to; add one (usually at the end)"
        )
    if problems:
        raise BindError(problems)
    return {
        "article": str(article),
        "strict": strict,
        "bindings": bindings,
        "claims": claim_log,
        "provenance_md": provenance_table(bindings),
        "departures_md": departures_section(departure_list, bindings),
        "departures": departures_record(departure_list),
        # unexplained unexpected moves, shown on the page (strict=false only: strict stops on them)
        "departure_warnings": departure_warnings,
    }


def resolve(article, occurrences, values, sources, problems):
    """Each shortcode into its binding, one per lookup id (a second
    occurrence adds its place), its claim logged at every place.
    -> (bindings, the claims' log, how many provenance tables); what cannot
    be bound is appended to `problems`."""
    bindings, claim_log, tables, anchors = {}, [], 0, {}
    for sc in occurrences:
        if sc.escaped:
            continue
        where = sc.where(article)
        problem = shortcode_problem(sc, where)
        if problem:
            problems.append(problem)
            continue
        if sc.name == "provenance":
            tables += 1
            continue
        if sc.name in ("meta", "departures"):
            continue
        ident = sc.lookup_id
        if ident in bindings:
            placed_again(bindings[ident], sc, where)
        else:
            try:
                bindings[ident] = new_binding(sc, where, values, sources, anchors)
            except BindError as exc:
                problems += exc.problems
                continue
        _log_claim(claim_log, bindings[ident], where)
    return bindings, claim_log, tables


def shortcode_problem(sc, where):
    """What is wrong with a shortcode as written (its name, arguments and
    place), or None."""
    if sc.name not in SHORTCODES:
        return (
            f"{where}: unknown shortcode {sc.name!r} in {sc.raw}; "
            f"this article's shortcodes are {', '.join(sorted(SHORTCODES))}"
        )
    extra = set(sc.kwargs) - SHORTCODES[sc.name]
    if extra:
        allowed = ", ".join(sorted(SHORTCODES[sc.name])) or "none"
        return f"{where}: {sc.name} does not take {', '.join(sorted(extra))} (allowed: {allowed})"
    if sc.name in ("provenance", "meta", "departures"):
        return None
    if len(sc.args) != 1:
        return f"{where}: {sc.name} takes exactly one key, got {len(sc.args)} in {sc.raw}"
    if sc.name == "source" and sc.context != "prose":
        return (
            f"{where}: source links to a value's provenance row and belongs in prose, "
            f"after the code block that binds the value: {sc.raw}"
        )
    if sc.name == "claim" and not sc.kwargs.get("expect"):
        return f"{where}: claim needs expect=\"...\" (e.g. expect=\"== 0.0\") in {sc.raw}"
    if sc.kwargs.get("code", "true") not in ("true", "false"):
        return f"{where}: code= takes true or false, got {sc.kwargs['code']!r} in {sc.raw}"
    return None


def new_binding(sc, where, values, sources, anchors):
    """The binding of a shortcode's first occurrence: the value looked up,
    formatted, its claim judged, its source and provenance anchor; raises
    BindError with the one problem when it cannot be bound."""
    key, fmt, expect = sc.lookup_parts
    try:
        value = lookup(values, key)
        text_out = format_value(value, fmt)
        claim = _check_claim(expect, key, values) if expect else None
    except UnknownKey as exc:
        raise BindError([f"{where}: {undeclared_experiment(exc, sources) or exc}"]) from None
    except ValueError as exc:  # FormatError, ClaimError, a malformed key or index
        raise BindError([f"{where}: {sc.raw}: {exc}"]) from None
    source = dict(sources[key.split("[")[0]])
    if len(text_out) > MAX_VALUE_TEXT:
        raise BindError([too_long(where, key, text_out, source)])
    slug = anchors.setdefault(key, _unique(anchor(key), anchors.values()))
    return {
        "key": key,
        "fmt": fmt,
        "expect": expect,
        "text": text_out,
        "raw": value,
        "title": f"{key} = {short_text(value)} ({source['script']}); recompute: {reproduce_command(key)}",
        "claim": claim,
        "source": source,
        "anchor": slug,
        "locations": [where],
        "printed": sc.name == "value",
        "in_prose": sc.name == "value" and sc.context == "prose",
        # false when only the departures section binds it (its claim repeats the baseline's check)
        "in_text": sc.context != "departures",
    }


def placed_again(binding, sc, where):
    """A further occurrence of a bound lookup id: its place, and how it prints."""
    binding["locations"].append(where)
    binding["printed"] |= sc.name == "value"
    binding["in_prose"] |= sc.name == "value" and sc.context == "prose"
    binding["in_text"] |= sc.context != "departures"


def article_problems(article, text, occurrences, values, bindings, strict):
    """What the article as a whole owes the values it prints: a way back
    from every value in code, the disclosure of a claim the seed sweep
    flags, the note beside a value outside its seeds' band, an interval
    beside a rank. With strict false, what would stop a strict bind marks
    the binding and warns instead."""
    problems = unsourced_code_values(article, text, occurrences)
    # a claim the seed sweep flags is said to be weak in its section (articlekit.article.disclosure)
    for weak in disclosure.undisclosed(article, text, occurrences, values):
        if strict:
            problems.append(weak.message)
        elif weak.shortcode.lookup_id in bindings:
            disclosure.mark(bindings[weak.shortcode.lookup_id], weak)
    # a seeded value outside its sweep's 5-95 % band says so where it is printed (articlekit.article.seed_band)
    for problem in seed_band.check(article, occurrences, values, bindings):
        if problem.lenient:
            log.warning("bind: warning: " + problem.message)
        else:
            problems.append(problem.message)
    # a printed rank or share of seeds prints its interval in its section (articlekit.article.disclosure)
    for bare in disclosure.without_interval(article, text, occurrences, values):
        if strict:
            problems.append(bare.message)
        else:
            log.warning("bind: warning: " + bare.message)
            if bare.shortcode.lookup_id in bindings:
                disclosure.mark_bare(bindings[bare.shortcode.lookup_id], bare)
    return problems


def claim_problems(claim_log, sources):
    """A strict bind's problem for each claim that fails or cannot be decided."""
    problems = []
    for c in claim_log:
        if c["status"] == INCONCLUSIVE:
            problems.append(inconclusive_message(c, sources))
        elif not c["holds"]:
            problems.append(failed_message(c, sources))
    return problems


def undeclared_experiment(unknown, sources):
    """For a key whose first part names no experiment that gave values
    (variance.indicator_variance while experiments: declares harmonic
    alone): the message that says so and how to declare it; None for a key
    of a known experiment, or a typo with close keys (UnknownKey's own
    message names them)."""
    group = unknown.key.split(".")[0].split("[")[0]
    made = {source["experiment"]: source["script"] for source in sources.values()}
    if group in made:
        return None
    folders = [os.path.dirname(script) for name, script in made.items() if os.path.basename(script) == f"{name}.py"]
    script = os.path.join(folders[0] if folders else "experiments", f"{group}.py")
    if os.path.exists(script):
        todo = f"{script} is there: declare it"
    elif unknown.closest:
        return None
    else:
        todo = f"to bind its values, write {script} and declare it"
    return (
        f"unknown key {unknown.key!r}: no experiment {group!r} is declared in experiments: of config.yaml "
        f"(the values come from {', '.join(sorted(made)) or 'none'}); {todo}, `{group}: {{}}` under "
        f"experiments:, with its parameters in a top-level section {group}:, and build again"
    )


def unsourced_code_values(article, text, occurrences):
    """Values printed inside code cannot carry a tooltip or a link, so each
    needs a way back to its source (the README's promise, every bound number):
    a code block is followed, in the next paragraph, by {{< source KEY >}}
    for each key it binds; inline code is not used for values at all, since
    {{< value KEY code=true >}} in prose prints the same code with its link."""
    spans = regions(text)
    problems, blocks = [], {}
    for sc in occurrences:
        if sc.escaped or sc.name != "value" or sc.context != "code" or len(sc.args) != 1:
            continue
        key = normalize_space(sc.args[0])
        if kind_at(spans, sc.start) == "inline_code":
            problems.append(
                f"{sc.where(article)}: {sc.raw} inside inline code has no tooltip or link to its "
                f"source; write it in prose as {{{{< value {key} code=true >}}}} (printed as code, "
                "linked)"
            )
            continue
        block = next(s for s in spans if s[0] <= sc.start < s[1])
        blocks.setdefault(block, []).append(key)
    for (_, end, _), keys in blocks.items():
        after = _paragraph_after(text, spans, end)
        sourced = {
            normalize_space(sc.args[0])
            for sc in occurrences
            if sc.name == "source" and sc.args and after[0] <= sc.start < after[1]
        }
        missing = [k for k in dict.fromkeys(keys) if k not in sourced]
        if missing:
            line = text.count("\n", 0, end) + 1
            problems.append(
                f"{article}:{line}: the code block ending here prints {', '.join(missing)} with no way "
                "back to the source; add after it a line such as: Source: "
                + ", ".join(f"{{{{< source {k} >}}}}" for k in missing)
            )
    return problems


def _paragraph_after(text, spans, code_end):
    """(start, end) of the first paragraph after the closing fence of the code
    region ending at code_end."""
    fence_end = next((e for s, e, kind in spans if s == code_end and kind == "fence"), code_end)
    start = fence_end
    while start < len(text) and text[start] in " \t\n":
        start += 1
    blank = re.search(r"\n[ \t]*\n", text[start:])
    return start, start + blank.start() if blank else len(text)


def _unique(slug, taken):
    taken = set(taken)
    candidate, n = slug, 2
    while candidate in taken:
        candidate, n = f"{slug}-{n}", n + 1
    return candidate


def _check_claim(expect, key, values):
    claimlib.refuse_vacuous(expect, key)  # a claim no value could break is not shown as checked
    result = claimlib.evaluate(expect, measured(values, key), resolve=lambda k: measured(values, k))
    claim = {"expect": expect, "holds": result.holds, "status": result.status, "message": result.message}
    if binding_mark(result.status):  # what the page shows beside it: the shortcode prints it as it is here
        claim["mark"] = binding_mark(result.status)
    return claim


def _log_claim(claim_log, binding, where):
    if binding["claim"] is not None:
        claim_log.append(
            {
                "location": where,
                "key": binding["key"],
                "expect": binding["expect"],
                "value": binding["raw"],
                "holds": binding["claim"]["holds"],
                "status": binding["claim"]["status"],
                "message": binding["claim"]["message"],
            }
        )


def failed_message(claim, sources):
    """Why a strict build stopped on a claim that fails, and the two fixes:
    the prose is wrong (change the claim) or the value is (its experiment)."""
    source = sources.get(claim["key"].split("[")[0], {})
    made_by = (
        f"{source['script']} or its parameters ({source['experiment']}: in config.yaml)"
        if source.get("script") and source.get("experiment")
        else "what computes it"
    )
    return (
        f"{claim['location']}: {claim_said(claim)}: value {short_text(claim['value'])}. "
        f"If the prose is wrong, change the claim (expect=\"{claim['expect']}\" at this line); "
        f"if the value is, fix {made_by}. `--config strict=false` renders it marked instead."
    )


def inconclusive_message(claim, sources):
    """Why a strict build stopped on a claim its measurement cannot decide,
    and what to do about it."""
    source = sources.get(claim["key"].split("[")[0], {})
    rule = source.get("experiment", "the experiment")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{claim['location']}: {claim_said(claim)} "
        f"(it neither holds nor fails): {claim['message']}. Load average now {load} (1, 5, 15 min) on {os.cpu_count()} CPUs. "
        f"The measurement was too noisy to decide: rerun it on a quieter machine with "
        f"`snakemake --cores N --forcerun {rule}`, or build with `--config strict=false` "
        f"to publish the value marked inconclusive."
    )


# --- the provenance table ---------------------------------------------------


def provenance_table(bindings):
    """One row per key: where each printed number comes from, and the
    command that recomputes it. The first cell carries the anchor (#v-...)
    the bound numbers link to."""
    rows = {}
    for b in bindings.values():
        row = rows.setdefault(b["key"], {"binding": b, "quoted": [], "claims": []})
        if b["printed"] and b["text"] not in row["quoted"]:
            row["quoted"].append(b["text"])
        if b["claim"]:
            row["claims"].append(f"{b['expect']} {STATUS[status_of(b['claim'])].shown}")
    header = (
        "| Key | As quoted | Raw value | Claims checked | Artifact | Script | Recompute |\n"
        "|:------------|:--------|:--------|:--------|:--------|:--------|:--------|\n"
    )
    lines = []
    for key in sorted(rows):
        row = rows[key]
        b = row["binding"]
        cells = [
            f"[`{key}`]{{#{b['anchor']}}}",
            "; ".join(md_text(short_text(t)) for t in row["quoted"]),
            md_text(short_text(b["raw"])),
            md_text("; ".join(row["claims"])),
            f"`{b['source']['artifact']}`",
            f"`{b['source']['script']}`",
            f"`{reproduce_command(key)}`",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return header + "\n".join(lines) + "\n"


def files_of(problems, article):
    """The files the problems are in, in the order met: each problem starts
    'FILE:LINE: ' (the article's, or the baseline's for one of its entries)."""
    files = []
    for problem in problems:
        match = re.match(r"([^\s:]+):\d+: ", problem)
        files.append(match.group(1) if match else str(article))
    return list(dict.fromkeys(files))


def parse_bool(text):
    lowered = str(text).strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit bind", description=__doc__.splitlines()[0])
    parser.add_argument("article", help="the .qmd to bind")
    parser.add_argument("--values", required=True, help="build/values.json")
    parser.add_argument(
        "--strict",
        type=parse_bool,
        default=True,
        help="true: a failed claim fails the build; false: it renders a warning",
    )
    parser.add_argument("--out", required=True, help="where to write build/bindings.json")
    parser.add_argument("--baseline", help="baseline/published.yaml, for {{< departures >}}")
    parser.add_argument("--bound", help="where to write build/article.bound.md, the document every format renders")
    args = parser.parse_args(argv)
    try:
        text = read_article(args.article)  # refused when empty: it would publish an empty page
        baseline = load_baseline(args.baseline) if args.baseline else None  # BaselineError: a ValueError
        values_doc = read_json(args.values)
        document = bind(args.article, text, values_doc, args.strict, baseline)
        bound = bound_markdown(text, document, args.article) if args.bound else None
    except BindError as exc:
        log.error(f"bind: {len(exc.problems)} problem(s) in {' and '.join(files_of(exc.problems, args.article))}:")
        for problem in exc.problems:
            log.error(problem)
        return 1
    try:
        write_bindings(args.out, document)
        if bound is not None:
            write_text_atomic(args.bound, bound)
    except BindingsError as exc:
        log.error(f"bind: {exc}")
        return 1
    failed = sum(c["status"] == FAILS for c in document["claims"])
    undecided = [c for c in document["claims"] if c["status"] == INCONCLUSIVE]
    for c in undecided:
        log.warning("bind: warning: " + inconclusive_message(c, values_doc["sources"]))
    for message in document["departure_warnings"] + disclosure.warnings(document["bindings"]):
        log.warning("bind: warning: " + message)
    log.info(
        f"bind: {len(document['bindings'])} bindings, {len(document['claims'])} claims checked"
        + (f", {failed} {STATUS[FAILS].counted} (shown as warnings: strict=false)" if failed else "")
        + (f", {len(undecided)} {STATUS[INCONCLUSIVE].counted} (shown as warnings: strict=false)" if undecided else "")
        + (
            f", {len(document['departure_warnings'])} unexplained departures (shown on the page: strict=false)"
            if document["departure_warnings"]
            else ""
        )
        + f" -> {args.out}"
    )
    return 0
