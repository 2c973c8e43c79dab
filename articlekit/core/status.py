"""A claim's status and every way a page or a message says it: the one table.

core.claims judges a claim holds, fails or is inconclusive (its measured
interval straddles the bound); this module is where those three are
spelled. Bind, render, the preview, the PDF, the audit, the diff and the
matrix all read STATUS, and bind writes the article's mark for a claim that
does not hold into build/bindings.json (binding_mark()), so the Lua filters and the
Typst style match on the class it names, never on its words. An
inconclusive claim is never reported as failed: it has its own word, sign,
class and mark on every page.

    status        holds      fails            inconclusive
    word          holds      fails            inconclusive
    mark          ✓          ✗                ?
    shown         ✓          ✗ fails          ? inconclusive   (a report's cell)
    css           holds      fails            inconclusive     (a report page's badge)
    verdict       holds      failed           is inconclusive  ("claim 'KEY EXPECT' ...")
    counted       held       failed           inconclusive     ("3 claims ...")
    result        holds      does not hold    is inconclusive: the interval straddles its bound
                                                               (core.claims' message)
    page_mark     -          ⚠ claim failed   ⚠ claim inconclusive   (the article, beside the number)
    page_class    -          claim-failed     claim-inconclusive     (page.css, pdf_style.typ)

A claim that holds shows its sign alone: it is the quiet, common case, and
the article marks nothing beside its number. One that does not hold shows
its sign and its word, so it reads without a legend.
"""

from dataclasses import dataclass

HOLDS, FAILS, INCONCLUSIVE = "holds", "fails", "inconclusive"


@dataclass(frozen=True)
class Status:
    key: str
    word: str
    mark: str
    css: str
    verdict: str
    counted: str
    result: str
    page_mark: str | None = None
    page_class: str | None = None

    @property
    def shown(self):
        """How a report's cell shows the status."""
        return self.mark if self.key == HOLDS else f"{self.mark} {self.word}"


STATUS = {
    s.key: s
    for s in (
        Status(HOLDS, word="holds", mark="✓", css="holds", verdict="holds", counted="held", result="holds"),
        Status(
            FAILS,
            word="fails",
            mark="✗",
            css="fails",
            verdict="failed",
            counted="failed",
            result="does not hold",
            page_mark="⚠ claim failed",
            page_class="claim-failed",
        ),
        Status(
            INCONCLUSIVE,
            word="inconclusive",
            mark="?",
            css="inconclusive",
            verdict="is inconclusive",
            counted="inconclusive",
            result="is inconclusive: the interval straddles its bound",
            page_mark="⚠ claim inconclusive",
            page_class="claim-inconclusive",
        ),
    )
}


# A seeded value printed outside its sweep's 5-95 % band, the prose saying so
# (band="outside": articlekit.article.seed_band): the note beside the number is a
# disclosure, not a verdict, so it has a class of its own, in neither a failed
# nor an inconclusive claim's colour. It travels the claim marks' path
# (claim-mark= in the bound tree, each edition's style by class).
OUTLIER_CLASS = "claim-outlier"
# Every class a mark beside a number may have (prose_guard allows no other).
MARK_CLASSES = tuple(s.page_class for s in STATUS.values() if s.page_class) + (OUTLIER_CLASS,)


def status_of(claim):
    """The status key of a claim as a document holds it (a binding's claim,
    bind's claims log, an audit or matrix row), None when no claim is made.
    Documents written before a claim could be inconclusive (releases) carry
    only `holds`."""
    if not claim or claim.get("holds") is None:
        return None
    return claim.get("status") or (HOLDS if claim["holds"] else FAILS)


def of(claim):
    """The Status of a claim (see status_of), None when no claim is made."""
    key = status_of(claim)
    return STATUS[key] if key else None


def binding_mark(status):
    """What the article shows beside the number of a claim with this status,
    as bind writes it into the claim in build/bindings.json: {"text", "class"};
    None for a claim that holds (the article marks nothing)."""
    s = STATUS[status]
    return {"text": s.page_mark, "class": s.page_class} if s.page_mark else None


def claim_said(claim):
    """ "claim 'KEY EXPECT' failed" (or "is inconclusive", "holds"), for a claim
    of bind's log: how every message names a claim and its status."""
    return f"claim '{claim['key']} {claim['expect']}' {of(claim).verdict}"
