"""What the config declares for one experiment, held to: its parameters
(the config section NAME:) and its figures (experiments.NAME.figures).

run() and plot() get them as `Declared` mappings: a name the config does
not declare raises `Undeclared`, whose message names the config section
that lacks it, where in the experiment it was asked for, and what to add,
instead of a bare `KeyError: 'scale'`. After plot(), `unwritten_figures`
names each declared figure it did not write, with what it did write, so
that the experiment fails with the fix before Snakemake waits for the
missing file and blames the file system's latency.
"""

import os
import traceback
from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.experiment import scratch

# Where the messages send the author: the article's config, as the
# skeleton (articlekit new) names it.
CONFIG_FILE = "config.yaml"


class Undeclared(ArticlekitError, KeyError):
    """A name run() or plot() asked for that the config does not declare."""

    def __init__(self, message, asked_at=None):
        super().__init__(message)
        self.message, self.asked_at = message, asked_at

    def __str__(self):
        return f"{self.asked_at}: {self.message}" if self.asked_at else self.message


class Declared(dict):
    """A plain dict of what the config declares, except that a missing name
    raises Undeclared with `explain(name, self)` as its message. Still a
    dict: json.dumps, dict(...), .get and `in` behave as they always do."""

    def __init__(self, items, explain):
        super().__init__(items)
        self._explain = explain

    def __missing__(self, name):
        raise Undeclared(self._explain(name, self), asked_at=_asker())

    def __reduce__(self):
        # copied and pickled as the plain dict it stands for: its explain()
        # is a closure, which a worker process could not unpickle
        return dict, (dict(self),)


def params_of(experiment, params, config_file=CONFIG_FILE):
    """The experiment's params, whose missing key names the section that lacks it."""

    def explain(key, present):
        if not present:
            return (
                f"the experiment asks for params[{key!r}], but {config_file} gives {experiment!r} no parameters "
                f"(experiments: declares it, and no top-level section {experiment}: sets any); add the "
                f"section to {config_file}:\n\n{experiment}:\n  {key}: ...\n"
            )
        return (
            f"the experiment asks for params[{key!r}], but the section {experiment}: of {config_file} has no "
            f"key {key!r} (it sets {', '.join(map(str, present))}); add `{key}: ...` under {experiment}:"
        )

    return Declared(params, explain)


def figures_of(experiment, figures, config_file=CONFIG_FILE):
    """{figure name: path} as --figure gave them, whose missing name names experiments.NAME.figures."""

    def explain(name, declared):
        have = ", ".join(f"{n} ({_relative(p)})" for n, p in declared.items()) or "none"
        return (
            f"plot() asks for figures[{name!r}], but experiments.{experiment}.figures in {config_file} "
            f"declares {have}; declare it there ({name}: figures/{experiment}-{name}.svg), or have "
            f"plot() save one of those"
        )

    return Declared(figures, explain)


def _asker():
    """'experiments/variance.py:23' for the line that asked: the innermost
    frame outside this module."""
    for frame in reversed(traceback.extract_stack()[:-1]):
        if os.path.abspath(frame.filename) != os.path.abspath(__file__):
            return f"{_relative(frame.filename)}:{frame.lineno}"
    return None


def _relative(path):
    return scratch.shown(path)


# ---- figures: what plot() wrote ----------------------------------------------------


def stamp(path):
    """What tells a file written now from the one that was there: None when absent."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_ino, found.st_mtime_ns, found.st_size


def written_figures(figures, before, saved):
    """(the declared paths plot() wrote: new or changed since `before`,
    {path: stamp}, or saved by save_figure; the other files save_figure
    wrote, `saved` being the resolved paths it wrote)."""
    declared = [
        path
        for path in figures.values()
        if stamp(path) is not None and (stamp(path) != before.get(path) or _resolved(path) in saved)
    ]
    known = {_resolved(path) for path in figures.values()}
    others = [_relative(path) for path in dict.fromkeys(saved) if path not in known]
    return declared, others


def unwritten_figures(experiment, figures, written, others=(), has_plot=True, config_file=CONFIG_FILE):
    """The message when a declared figure was not written, else None.
    written: the declared paths it wrote; others: the undeclared ones."""
    missing = {name: path for name, path in figures.items() if path not in written}
    if not missing:
        return None
    names = ", ".join(f"{name!r} ({_relative(path)})" for name, path in missing.items())
    where = f"experiments.{experiment}.figures in {config_file}"
    if not has_plot:
        return (
            f"{where} declares {names}, but the experiment passes no plot to run_experiment; write "
            f"plot(values, params, figures) to save them, or remove them from {where}"
        )
    did = [*map(_relative, written), *(f"{path} (not declared)" for path in others)]
    example = next(iter(missing))
    return (
        f"plot() did not write {names}, which {where} declares; it wrote "
        f"{', '.join(did) if did else 'no figure'}. Save it in plot() with "
        f"save_figure(fig, figures[{example!r}]), or remove it from {where}"
    )


def _resolved(path):
    return str(Path(path).resolve())
