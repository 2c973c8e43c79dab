"""What the article asks of the seed sweep, read from its prose when the workflow plans.

Every plan reads it, a no-op's too, so it imports only the shortcode reader
and the image links: not NumPy, not the values' schemas that the sweep's
summary (articlekit.article.robustness) needs.

- seed_figures: the article's figures of one value across the seeds, its
  image links to figures/robustness-<key>.svg (drawn by
  articlekit.article.seed_figure);
- article_shortcodes: the values it prints, the claims it makes and the
  values whose seeds it plots, which the summary reads from the article;
- shortcodes_digest: a short digest of them, the summary's param (a new
  printed key or claim reruns it; the reason Snakemake prints stays one line).
"""

import hashlib
import json
import os
import re

from articlekit.article.figures import figure_links
from articlekit.article.shortcodes import scan

SEED_FIGURE = re.compile(r"figures/robustness-(?P<key>[^/]+)\.svg")


def seed_figures(article, text):
    """{figures/robustness-<key>.svg: <key>} for every such image link of the
    article, in the order written."""
    found = {}
    for link in figure_links(text, os.path.dirname(article) or "."):
        match = SEED_FIGURE.fullmatch(link.path)
        if match:
            found[link.path] = match.group("key")
    return found


def article_shortcodes(article, text, occurrences=None):
    """{"printed": [key], "claims": [[key, expect]], "plotted": [key]}: the
    values the article prints, the claims it makes and the values whose
    seeds it shows as a figure (figures/robustness-<key>.svg, <key> spelt as
    under robustness.), each once, in reading order. Where they stand is
    left out on purpose: the workflow hands its digest over as a param
    (shortcodes_digest), so that only a new claim, printed key or figure,
    not a prose edit, reruns the summary (and the values and the article
    after it). `occurrences`: the
    text's shortcodes, when they were scanned already (else they are
    scanned here, and a ShortcodeSyntaxError says where they do not parse)."""
    printed, claimed = {}, {}
    for sc in scan(text) if occurrences is None else occurrences:
        if sc.escaped or sc.context == "comment" or sc.name not in ("value", "claim") or len(sc.args) != 1:
            continue
        key = sc.args[0]
        if sc.name == "value":
            printed[key] = None
        if sc.kwargs.get("expect"):
            claimed[(key, sc.kwargs["expect"])] = None
    plotted = list(dict.fromkeys(seed_figures(article, text).values()))
    return {"printed": list(printed), "claims": [list(claim) for claim in claimed], "plotted": plotted}


def shortcodes_digest(shortcodes):
    """A short digest of article_shortcodes' answer: the summary's param in
    the workflow, in place of the whole list, which Snakemake printed whole
    ("Params have changed since last execution: ...") when one key changed.
    The summary reads the shortcodes from the article and refuses to go on
    where their digest is not this one (the article edited since the plan)."""
    text = json.dumps(dict(shortcodes), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
