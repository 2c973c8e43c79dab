"""A figure in words: the alt text save_figure writes into the SVG.

A reader who cannot see a figure gets what it plots, its axes and its
headline number. The headline is the experiment's to say (it knows which
number matters: `save_figure(fig, path, alt="...")`, a sentence made from
its values); the rest is read here from the drawn figure itself, so it is
always the data that was plotted: each panel's title, each axis's label,
scale and the range its data span, and for a heatmap its grid and the range
of its cells.

save_figure writes the text as the SVG's <title> (its accessible name, read
by a browser showing the file alone) and articlekit.render.figuredata embeds it as
the image's alt text on the page.

A figure in words also means its visible text is words: save_figure refuses
a figure whose axis label, title, legend entry, tick label or annotation
holds a value's key (`scaling.dk64.unscaled.max_weight`) instead of what the
prose calls that quantity ("largest weight"): `check_words` below.
"""

import re

import numpy as np

from articlekit.core.errors import ArticlekitError
from articlekit.core.fmt import format_value

# A dotted run of identifiers: a key, or a code path such as nn.MultiheadAttention.
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_][\w\[\]]*(?:\.[A-Za-z_][\w\[\]]*)+")
# Keys are lowercase and 3 parts or more (experiment.group.value); code shown
# on purpose (torch.nn.MultiheadAttention, np.max) has a capital or 2 parts.
KEY_PARTS = 3

# mathtext as an axis label spells it ($d_k$, $\sum w_i^2$), in plain words
_MATH = [
    (re.compile(r"\\sqrt\{?([^}$]*)\}?"), r"√\1"),
    (re.compile(r"\\sum\s*"), "Σ"),
    (re.compile(r"\\cdot\s*"), "·"),
    (re.compile(r"[{}$\\]"), ""),
]


def plain(label):
    """An axis label or title as words: no mathtext markup."""
    for pattern, repl in _MATH:
        label = pattern.sub(repl, label)
    return " ".join(label.split())


def number(value):
    """A data value as the alt text prints it: three significant digits, a
    whole number or one of 100 and more whole (1024 and 2000, not 1.02e+03
    and 2e+03)."""
    value = float(value)
    if (value.is_integer() or abs(value) >= 100) and abs(value) < 1e6:
        return str(round(value))
    return format_value(value, ".3g")


def _span(low, high):
    return number(low) if number(low) == number(high) else f"{number(low)} to {number(high)}"


def _panels(fig):
    """The figure's visible axes that plot data: not a colour bar, not hidden."""
    return [
        ax
        for ax in fig.axes
        if ax.get_visible()
        and ax.get_label() != "<colorbar>"
        and (ax.lines or ax.collections or ax.images or ax.patches or ax.containers)
    ]


def _colorbar_label(fig):
    found = [plain(ax.get_ylabel() or ax.get_xlabel()) for ax in fig.axes if ax.get_label() == "<colorbar>"]
    return next((label for label in found if label), "value")


def _heatmap(ax, fig):
    cells = np.asarray(ax.images[0].get_array(), dtype=float)
    rows, cols = cells.shape[:2]
    finite = cells[np.isfinite(cells)]
    spread = f", from {_span(finite.min(), finite.max())}" if finite.size else ""
    axes = [
        f"{side}: {words}"
        for side, words in (("rows", plain(ax.get_ylabel())), ("columns", plain(ax.get_xlabel())))
        if words
    ]
    return "; ".join([f"a {rows} × {cols} grid of {_colorbar_label(fig)}{spread}", *axes])


def _axis(label, scale, low, high):
    words = plain(label) or "unlabelled"
    kind = f", {scale} scale" if scale != "linear" else ""
    return f"{words}{kind}, data from {_span(low, high)}" if np.isfinite([low, high]).all() else words + kind


def _plot(ax):
    box = ax.dataLim
    series = [plain(text.get_text()) for text in (ax.get_legend().get_texts() if ax.get_legend() else [])]
    said = (
        f"x: {_axis(ax.get_xlabel(), ax.get_xscale(), box.x0, box.x1)}; "
        f"y: {_axis(ax.get_ylabel(), ax.get_yscale(), box.y0, box.y1)}"
    )
    return said + ("; series: " + ", ".join(f"“{name}”" for name in series) if series else "")


def describe(fig):
    """What each panel of a matplotlib figure plots, in one sentence each."""
    panels = _panels(fig)
    parts = []
    for ax in panels:
        title = plain(ax.get_title())
        body = _heatmap(ax, fig) if ax.images else _plot(ax)
        parts.append(f"{title}: {body}" if title else body)
    if not parts:
        return "A figure with no plotted data."
    lead = f"{len(parts)} panels. " if len(parts) > 1 else ""
    return lead + " ".join(part[0].upper() + part[1:] + "." for part in parts)


def alt_text(fig, headline=None):
    """The figure's alt text: the experiment's headline (what it shows and
    the number that matters), then what each panel plots, read from it."""
    headline = " ".join((headline or "").split())
    if headline and not headline.endswith((".", "!", "?")):
        headline += "."
    return " ".join(filter(None, [headline, describe(fig)]))


# ---- the figure's text is words, not keys --------------------------------------------


class KeyInFigure(ArticlekitError):
    """A figure whose visible text shows a value's key instead of words."""


def _where_names(fig):
    """{id(text artist): what it is, as a reader would name it}."""
    names = {}

    def name(artists, what):
        names.update((id(artist), what) for artist in artists)

    for ax in fig.axes:
        bar = ax.get_label() == "<colorbar>"
        name([ax.xaxis.label], "colour bar label" if bar else "x-axis label")
        name([ax.yaxis.label], "colour bar label" if bar else "y-axis label")
        name([ax.title], "title")
        name([*ax.get_xticklabels(), *ax.get_yticklabels()], "tick label")
    for legend in [ax.get_legend() for ax in fig.axes] + list(fig.legends):
        if legend is not None:
            name(legend.get_texts(), "legend entry")
            name([legend.get_title()], "legend title")
    name(fig.texts, "figure text")
    return names


def visible_text(fig):
    """[(what, text)]: every piece of text the drawn figure shows (its tick
    labels are only set once it is drawn: call this after savefig)."""
    from matplotlib.text import Text

    names = _where_names(fig)
    return [
        (names.get(id(artist)) or "text", artist.get_text())
        for artist in fig.findobj(Text)
        if artist.get_visible() and (artist.axes is None or artist.axes.get_visible()) and artist.get_text().strip()
    ]


def _known_pattern(known):
    """One regex for the values' own keys, each a whole token; None for none.
    Longest first, so that a.b.c is found as itself and not as a.b."""
    if not known:
        return None
    spelled = "|".join(map(re.escape, sorted(set(known), key=len, reverse=True)))
    return re.compile(rf"(?<![\w.])(?:{spelled})(?![\w\[]|\.\w)")


def keys_in(text, known=()):
    """The keys `text` shows: lowercase dotted paths of 3 parts or more,
    and any of `known` (the values' own dotted keys, those of 2 parts too).
    `known` may be a pattern made by _known_pattern, for many texts."""
    found = [token for token in _DOTTED.findall(text) if token == token.lower() and token.count(".") + 1 >= KEY_PARTS]
    pattern = known if isinstance(known, re.Pattern) or known is None else _known_pattern(known)
    found += pattern.findall(text) if pattern else []
    return list(dict.fromkeys(found))


def value_keys(experiment, values):
    """Every key of an experiment's values as the article spells it
    (experiment.group.value): the dicts' paths, lists not walked."""
    found = []

    def walk(prefix, node):
        for name, child in node.items():
            found.append(f"{prefix}.{name}")
            if isinstance(child, dict):
                walk(f"{prefix}.{name}", child)

    if isinstance(values, dict):
        walk(experiment, values)
    return found


def check_words(fig, figure, known=()):
    """Raise KeyInFigure naming `figure` (its path), each text that shows a
    key and the fix, when the drawn figure's visible text holds one."""
    pattern = _known_pattern(known)
    found = [(what, text, keys_in(text, pattern)) for what, text in visible_text(fig)]
    found = [(what, text, keys) for what, text, keys in found if keys]
    if not found:
        return
    said = "; ".join(f"its {what} reads {text!r}, which shows the key {keys[0]}" for what, text, keys in found)
    raise KeyInFigure(
        f"{figure}: {said}",
        fix="label the axis (or title, legend) in the words the prose uses for that quantity, not the value's key",
    )
