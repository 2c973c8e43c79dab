"""Fail the build when a number is typed into the prose instead of bound.

    python -m articlekit lint [article/index.qmd] [--values build/values.json] [--out build/lint.txt]

Run in the article's folder after a build (or `snakemake build/values.json`),
it reads the article and the values at those defaults; without --out the
report goes to the terminal (stdout), as the build's rule writes it to
build/lint.txt. Findings go to stderr, with exit status 1.

What counts as prose: whatever the reader sees. That is the article's text
outside fenced code blocks, inline code, shortcodes, HTML comments, URLs,
link and image targets and footnote labels; and, inside the markup that is
otherwise skipped, the text a reader still sees: footnote definitions, the
title, subtitle, abstract and description in the front matter, and the
values of text attributes (title="...", fig-cap, fig-alt, tbl-cap, alt, ...)
in {attribute} blocks, fenced div lines (a callout's title), HTML tags and
link titles. Ids, classes and other attributes are not prose.

What counts as a numeral: a run of digits that stands on its own: 5, 2,000,
0.921946, 92.19%, 2.22e-16, 5.4x, 3.2.1, -1802.824. Digits that are part of a
word or name are not numerals: float64, Q1, v7, GPT-2, 2D, 3rd. Neither is
the number of an ordered list item at the start of a line ("1. ").

Marker for numbers that are not computed by the pipeline: a bracketed span
with class `cited` (a fact quoted from a source: `[section 3.2.1]{.cited}`,
`[d_model = 512]{.cited}`) or `label` (a name that happens to hold a digit:
`[Error 1]{.label}`). Both render as plain text in Quarto and Pandoc.
TeX math (`$1 / \\sum_i w_i^2$`, `$$...$$`) counts as marked too: its
numerals are the formula's own.

Rules (each finding is reported as `file:line: numeral '...' ...`):

A. Unbound: every numeral in prose outside a cited/label span is a finding.
   Print it with {{< value KEY fmt=... >}} or mark it.
B. Laundered: a numeral anywhere in prose, inside cited/label spans too,
   that equals a computed value of build/values.json is a finding: a
   computed number is bound, never cited. "Equals" means equal at the
   precision printed: 0.921946 matches 0.92194601 (6 decimals), 92.19%
   matches the fraction 0.921946, 2.22e-16 matches 2.220446049250313e-16, 5.4x matches
   5.399. Parameters (`*.params.*`) are inputs, not computed, and are left
   to rule A. So that coincidences do not drown the signal, rule B skips
   integers up to 10 and numerals with a single significant digit (0.1,
   1e-9, 3000): they are too common to tell a typed result from a fact.
   Rule A still catches them in plain prose ("5 tokens" must be bound).
   A plain integer (512) is compared with measured floats only, never with
   integer values (sizes, counts, shapes): an integer result such as the
   sweep's d_k = 512 coincides with cited facts like the paper's
   d_model = 512, while a typed copy of a measurement (1342 for 1341.59)
   is still caught. Plain integers are also not compared with list items
   (sweeps, timing samples) or with the parts of a measured value
   (`X.estimate`, `X.low`, `X.high`, see articlekit.core.keys.measured): noisy
   values would match any integer sooner or later. Inside a cited/label
   span, a plain integer of up to three digits is a quoted parameter
   (h = 8, d_k = 64) and is not compared at all: a noisy timing of 63.8 ms
   must not fail the build over the paper's d_k = 64.

On success the report (counts) is written to --out; on failure nothing is
written, the findings go to stderr and the exit status is 1.
"""

import argparse
import math
import os
import re
from dataclasses import dataclass

from articlekit.core.jsonio import read_json, write_text_atomic
from articlekit.article.shortcodes import ShortcodeSyntaxError, regions, scan
from articlekit.core.log import log
from articlekit.core.sources import read_text

# Markup a reader does not see. Each is blanked out except the parts in the
# named groups `seen` (a link's title, an attribute's visible value).
_VISIBLE_ATTRIBUTES = r"(?:title|subtitle|fig-cap|fig-alt|fig-scap|tbl-cap|lst-cap|alt|caption|summary|aria-label)"
_SEEN_VALUE = re.compile(rf"""(?<![\w-]){_VISIBLE_ATTRIBUTES}\s*=\s*(?:"(?P<double>[^"]*)"|'(?P<single>[^']*)')""")
_MASKS = [  # markup holding text attributes first: their values must be seen
    re.compile(r"^\s*:{3,}.*$", re.M),  # fenced div lines
    re.compile(r"</?[A-Za-z][^>\n]*>"),  # HTML tags
    re.compile(r"\{[#.][^}\n]*\}|\{[^}\n]*=[^}\n]*\}"),  # {#id .class key=value}
    re.compile(r"<?(?:https?|ftp)://[^\s)>\]\"]+>?"),  # URLs
    re.compile(r"\bwww\.[^\s)>\]\"]+"),
    re.compile(r"\]\([^)\s]*(?:\s+\"(?P<seen>[^\"]*)\")?\)"),  # link and image targets; titles are seen
    re.compile(r"^\s*\[(?!\^)[^\]]+\]:\s+\S+", re.M),  # reference definitions (their titles are seen)
    re.compile(r"\[\^[^\]]+\]:?"),  # footnote labels; a footnote's text is seen
    re.compile(r"^\s*(?:>\s*)*\d+[.)](?=\s)", re.M),  # ordered list numbers
]
# Front matter keys whose values the reader sees (the page's title block).
_SEEN_METADATA = re.compile(r"^(?:title|subtitle|abstract|description):[ \t]*(?P<seen>.*)$", re.M)
_MARKED = re.compile(r"\[([^\[\]\n]*)\]\{[^}\n]*\.(?:cited|label)\b[^}\n]*\}")
# TeX math as Pandoc reads it ($...$: no space inside either dollar, the
# closing one not followed by a digit; $$...$$): a formula's constants are
# part of the formula, like a cited fact.
_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?![\s$])(?:\\.|[^$\\\n])+?(?<![\s\\])\$(?!\d)", re.S)
_NUMERAL = re.compile(
    r"(?<![\w.^/\\])(?<!\w-)(?P<sign>[-−](?=\d))?"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)+|\d+)"
    r"(?:[eE](?P<exp>[-+−]?\d+))?"
    r"(?P<suffix>%|[A-Za-zµ]+)?"
)
_UNITS = {"x", "ms", "µs", "us", "ns", "s", "GB", "MB", "KB", "kB", "GiB", "MiB", "KiB"}


@dataclass
class Numeral:
    text: str
    line: int
    marked: bool  # inside a cited/label span


def prose_mask(text):
    """The text with everything that is not prose blanked out (same length,
    so offsets and line numbers still match). Links, attributes and tags are
    kept: the cited/label spans are found in this; mask_markup removes them."""
    keep = bytearray(len(text))
    for start, end, kind in regions(text):
        if kind == "prose":
            keep[start:end] = b"\x01" * (end - start)
    for start, end in seen_front_matter(text):
        keep[start:end] = b"\x01" * (end - start)
    for sc in scan(text):  # escaped ones too ({{{< ... >}}}): code-like
        keep[sc.start : sc.end] = bytes(sc.end - sc.start)
    return "".join(c if k or c == "\n" else " " for c, k in zip(text, keep))


def mask_markup(masked):
    """Blank out URLs, link targets, attributes, tags and the like (_MASKS),
    keeping what a reader sees inside them: link titles and the values of
    text attributes such as a callout's title="..."."""
    for pattern in _MASKS:
        masked = pattern.sub(_blank_unseen, masked)
    return masked


def _blank_unseen(match):
    chunk, start = match.group(0), match.start()
    keep = [
        (m.start(g), m.end(g))
        for m in _SEEN_VALUE.finditer(chunk)
        for g in ("double", "single")
        if m.group(g) is not None
    ]
    if "seen" in match.re.groupindex and match.group("seen") is not None:
        keep.append((match.start("seen") - start, match.end("seen") - start))
    return "".join(c if c == "\n" or any(a <= i < b for a, b in keep) else " " for i, c in enumerate(chunk))


def seen_front_matter(text):
    """(start, end) of the front matter values a reader sees (title, ...)."""
    spans = []
    for start, end, kind in regions(text):
        if kind == "frontmatter":
            spans += [(m.start("seen"), m.end("seen")) for m in _SEEN_METADATA.finditer(text, start, end)]
    return spans


def numerals(text):
    """Every numeral in the prose of a .qmd, with its line and whether it is
    inside a cited/label span."""
    prose = prose_mask(text)
    masked = mask_markup(prose)
    marked = [(m.start(1), m.end(1)) for m in _MARKED.finditer(prose)]
    marked += [(m.start(), m.end()) for m in _MATH.finditer(prose)]
    found = []
    for m in _NUMERAL.finditer(masked):
        suffix = m.group("suffix") or ""
        if suffix and suffix != "%" and suffix not in _UNITS:
            continue  # 2D, 3rd, 64bit: part of a word
        start = m.start()
        if m.group("sign") and start > 0 and (masked[start - 1].isalnum() or masked[start - 1] in "_"):
            continue  # GPT-2, d_k-1: a name, not a negative number
        token = m.group(0)[: len(m.group(0)) - len(suffix)] + ("%" if suffix == "%" else "")
        found.append(Numeral(token, masked.count("\n", 0, start) + 1, any(a <= start < b for a, b in marked)))
    return found


# --- rule B: does a literal equal a computed value at its printed precision? --


def computed_numbers(values):
    """(key, number) for every computed numeric leaf, list items included;
    parameters are inputs and are skipped."""
    out = []

    def walk(key, v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return
        if isinstance(v, (int, float)):
            if not (isinstance(v, float) and not math.isfinite(v)):
                out.append((key, v))
        elif isinstance(v, list):
            for i, item in enumerate(v):
                walk(f"{key}[{i}]", item)
        elif isinstance(v, dict):
            for name, item in v.items():
                walk(f"{key}.{name}", item)

    for key, value in values.items():
        if ".params." not in key:
            walk(key, value)
    return out


def parse_literal(text):
    """'92.19%' -> (value, how to format a candidate the same way) or None
    when the numeral carries too little to compare (rule B's exemptions)."""
    pct = text.endswith("%")
    body = text.rstrip("%").replace(",", "").replace("−", "-")
    m = re.fullmatch(r"(-?)(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?", body)
    if not m:
        return None  # 3.2.1 and the like: not a number
    sign, whole, frac, exp = m.groups()
    mantissa = (whole + (frac or "")).lstrip("0")
    significant = len(mantissa.rstrip("0")) if not frac else len(mantissa)
    if significant < 2:
        return None
    if frac is None and exp is None and not pct and abs(int(whole)) <= 10:
        return None
    if exp is not None:
        spec = f".{len(whole) + len(frac or '') - 1}e"
    else:
        spec = f".{len(frac or '')}f"
    return float(body), spec, pct


_MEASURED_PARTS = (".estimate", ".low", ".high")


def matches(parsed, key, number):
    """Does the computed `number` (at `key`) print as the literal parse_literal
    read? A plain integer literal is compared with neither integer values nor
    list items: both coincide with cited facts too easily (see rule B)."""
    value, spec, pct = parsed
    if spec == ".0f" and not pct and (isinstance(number, int) or "[" in key or key.endswith(_MEASURED_PARTS)):
        return False
    candidate = number * 100 if pct else number  # values are stored as fractions
    return float(format(candidate, spec)) == value


def _short_plain_integer(text):
    """64, 512: a plain integer of at most three digits."""
    return re.fullmatch(r"-?\d{1,3}", text.replace("−", "-")) is not None


def suggested_fmt(parsed):
    """The fmt="..." that prints a value the way the parsed literal is written."""
    _, spec, pct = parsed
    if pct:
        return f' fmt="{spec[:-1]}%"'
    return "" if spec == ".0f" else f' fmt="{spec}"'


# --- the command -------------------------------------------------------------


def lint(path, text, values):
    """-> (findings, numeral list)."""
    computed = computed_numbers(values)
    findings = []
    found = numerals(text)
    for n in found:
        parsed = parse_literal(n.text)
        if n.marked and parsed and _short_plain_integer(n.text):
            parsed = None  # a quoted parameter (h = 8, d_k = 64), not a laundered measurement
        hits = [key for key, number in computed if parsed and matches(parsed, key, number)]
        # the regenerated value first: binding the published edition's copy
        # (published.*) would print the old number, not this build's
        hits.sort(key=lambda key: key.startswith("published."))
        where = f"{path}:{n.line}: numeral '{n.text}'"
        if hits:
            also = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
            how = "cited" if n.marked else "typed"
            findings.append(
                f"{where} equals the computed value {hits[0]}{also} but is {how}; "
                f"bind it: {{{{< value {hits[0]}{suggested_fmt(parsed)} >}}}}"
            )
        elif not n.marked:
            findings.append(
                f"{where} is typed, not bound: print it with {{{{< value KEY fmt=... >}}}}, "
                "or mark a cited fact [..]{.cited} / a name [..]{.label}"
            )
    return findings, found


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m articlekit lint", description=__doc__.splitlines()[0])
    parser.add_argument(
        "article", nargs="?", default="article/index.qmd", help="the .qmd to lint (default: article/index.qmd)"
    )
    parser.add_argument(
        "--values",
        default="build/values.json",
        help="the build's values, to find typed copies of computed numbers (default: build/values.json)",
    )
    parser.add_argument("--out", help="where to write the report (only when clean); default: print it (stdout)")
    args = parser.parse_args(argv)
    if not os.path.exists(args.values):
        log.error(
            f"lint: no {args.values}: the values are what a typed number is compared with; build them first "
            "(`snakemake build/values.json` in the article's folder) or name them with --values"
        )
        return 1
    try:
        text = read_text(args.article)
        values = read_json(args.values)["values"]
        findings, found = lint(args.article, text, values)
        shortcodes = [sc for sc in scan(text) if not sc.escaped]
    except ShortcodeSyntaxError as exc:
        log.error(f"lint: {args.article}:{exc}")
        return 1
    if findings:
        log.error(f"lint: {len(findings)} typed number(s) in {args.article}:")
        for finding in findings:
            log.error(finding)
        return 1
    marked = sum(n.marked for n in found)
    report = (
        f"OK {args.article}\n"
        f"shortcodes: {len(shortcodes)} ({sum(sc.name == 'value' for sc in shortcodes)} value, "
        f"{sum(sc.name == 'claim' for sc in shortcodes)} claim)\n"
        f"numerals in prose: {len(found)}, all in cited/label spans: {marked}\n"
        f"computed values compared: {len(computed_numbers(values))}\n"
    )
    if args.out is None:
        print(report, end="")
        return 0
    write_text_atomic(args.out, report)
    log.info(report.rstrip())
    return 0
