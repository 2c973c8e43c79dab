"""What an experiment declares, read and held to: its parameters, their
schema, defaults and meanings, and what its result keys mean (beside its
code, in experiments/NAME.py), and what the config gives it (the section
NAME: and experiments.NAME.figures).

An experiment's script declares, as module-level literals:

    PARAMETERS = {
        "n_keys": {"type": "integer", "minimum": 2, "default": 2000,
                   "description": "random keys each query is held against"},
    }
    RESULT_KEYS = {"scaling.dk{d}.dot_std": "standard deviation of the dot products; d in `d_k`"}
    RESULT_KEYS_NOTE = "One query against `n_keys` random keys ..."   # optional

Each parameter is a JSON Schema with its `default` (a parameter without
one must be given by the config) and its `description`; the config's
section NAME: overrides the defaults key by key. `declarations(path)`
reads them with ast.literal_eval, never importing the script: the plan
reads every experiment's on each `snakemake` call, and importing would
load NumPy and PyTorch into it. A script without PARAMETERS takes its
parameters from the config as before (their types inferred from
config.yaml: articlekit.data.config). The workflow merges and checks them
(articlekit.data.config); `python -m articlekit keys` writes the reference
of parameters and result keys from them (articlekit.data.keys).

run() and plot() get them as `Declared` mappings: a name the config does
not declare raises `Undeclared`, whose message names the config section
that lacks it, where in the experiment it was asked for, and what to add,
instead of a bare `KeyError: 'scale'`. After plot(), `unwritten_figures`
names each declared figure it did not write, with what it did write, so
that the experiment fails with the fix before Snakemake waits for the
missing file and blames the file system's latency.
"""

import ast
import copy
import os
import traceback
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.experiment import scratch

# Where the messages send the author: the article's config, as the
# skeleton (articlekit new) names it.
CONFIG_FILE = "config.yaml"

# The names of the literals an experiment's script declares.
PARAMETERS = "PARAMETERS"
RESULT_KEYS = "RESULT_KEYS"
RESULT_KEYS_NOTE = "RESULT_KEYS_NOTE"
DECLARED_NAMES = (PARAMETERS, RESULT_KEYS, RESULT_KEYS_NOTE)


class DeclarationError(ArticlekitError):
    """A script's declarations that cannot be read: the message names its file, line and the fix."""


@dataclass(frozen=True)
class Declarations:
    """What experiments/NAME.py declares. parameters/result_keys: None when
    it declares none (the config alone gives its parameters). lines:
    ("NAME", key[, index ...]) -> the line of that parameter's default (or
    of the key itself), for messages that point at the script."""

    path: str
    name: str
    parameters: dict = None
    result_keys: dict = None
    note: str = None
    lines: dict = field(default_factory=dict)

    @property
    def defaults(self):
        """{parameter: its default}, for those that have one (a fresh copy)."""
        return {
            key: copy.deepcopy(spec["default"]) for key, spec in (self.parameters or {}).items() if "default" in spec
        }

    @property
    def section_schema(self):
        """The JSON Schema of the config section NAME: every declared
        parameter, each required (the defaults are merged in before the
        check: a missing one has no default), no other."""
        parameters = self.parameters or {}
        return {
            "type": "object",
            "additionalProperties": False,
            "required": list(parameters),
            "properties": {key: dict(spec) for key, spec in parameters.items()},
        }


def script_path(name, root=".", package="experiments"):
    """experiments/NAME.py (or experiments/NAME/__init__.py) under root, or None."""
    for candidate in (Path(root, package, f"{name}.py"), Path(root, package, name, "__init__.py")):
        if candidate.is_file():
            return str(candidate) if root != "." else os.path.relpath(candidate)
    return None


def declared_experiments(names, root="."):
    """{name: Declarations} of each experiment in `names` whose script is there."""
    found = {}
    for name in names:
        path = script_path(name, root)
        if path is not None:
            found[name] = declarations(path, name)
    return found


def declarations(path, name=None):
    """The Declarations of the script at `path` (its section's name: the
    file's stem, or `name`); DeclarationError naming the line when one is
    not a literal of the form above. Read once per content."""
    path = str(path)
    try:
        stat = os.stat(path)
    except OSError:
        return Declarations(path, name or Path(path).stem)
    return _declarations(path, name or Path(path).stem, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _declarations(path, name, _mtime, _size):
    shown = scratch.shown(path)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    if not any(word in source for word in DECLARED_NAMES):
        return Declarations(path, name)  # most scripts' fast path: nothing to parse
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as error:
        raise DeclarationError(f"{shown}:{error.lineno}: not valid Python ({error.msg}); fix it there") from None
    found, nodes = {}, {}
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            if isinstance(target, ast.Name) and target.id in DECLARED_NAMES and node.value is not None:
                try:
                    found[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    raise DeclarationError(
                        f"{shown}:{node.lineno}: {target.id} is computed, and the workflow reads it without "
                        f"running the script (so that planning imports no NumPy or PyTorch); write it as a "
                        f"literal: dicts, lists, strings, numbers, True, False and None only"
                    ) from None
                nodes[target.id] = node.value
    parameters, keys, note = found.get(PARAMETERS), found.get(RESULT_KEYS), found.get(RESULT_KEYS_NOTE)
    lines = {}
    if PARAMETERS in found:
        _check_parameters(parameters, shown, nodes[PARAMETERS])
        lines = _parameter_lines(name, nodes[PARAMETERS])
    if RESULT_KEYS in found:
        _check_result_keys(keys, name, shown, nodes[RESULT_KEYS])
    if note is not None and not isinstance(note, str):
        raise DeclarationError(
            f"{shown}:{nodes[RESULT_KEYS_NOTE].lineno}: {RESULT_KEYS_NOTE} is a text, not a {type(note).__name__}"
        )
    return Declarations(path, name, parameters, keys, note, lines)


def _check_parameters(parameters, shown, node):
    example = '{"seed": {"type": "integer", "minimum": 0, "default": 7, "description": "..."}}'
    if not isinstance(parameters, dict):
        raise DeclarationError(
            f"{shown}:{node.lineno}: {PARAMETERS} is a {type(parameters).__name__}; write a dict of "
            f"parameter -> its JSON Schema with default and description, e.g. {PARAMETERS} = {example}"
        )
    for (key, spec), key_node in zip(parameters.items(), node.keys):
        line = key_node.lineno if key_node is not None else node.lineno
        if not isinstance(key, str) or not key.isidentifier():
            raise DeclarationError(
                f"{shown}:{line}: {PARAMETERS}: {key!r} is not a parameter's name (letters, digits and _, "
                "as the config's keys are)"
            )
        if not isinstance(spec, dict):
            raise DeclarationError(
                f"{shown}:{line}: {PARAMETERS}[{key!r}] is a {type(spec).__name__}; write its JSON Schema "
                f"as a dict with its default and description, e.g. {{\"type\": \"integer\", \"default\": "
                f"{spec!r}, \"description\": \"...\"}}"
            )
        if not isinstance(spec.get("description"), str) or not spec["description"].strip():
            raise DeclarationError(
                f"{shown}:{line}: {PARAMETERS}[{key!r}] has no description; say in a few words what it sets "
                "(the reference of parameters, python -m articlekit keys, prints it, and the config's "
                "errors quote it)"
            )


def _check_result_keys(keys, name, shown, node):
    if not isinstance(keys, dict):
        raise DeclarationError(
            f"{shown}:{node.lineno}: {RESULT_KEYS} is a {type(keys).__name__}; write a dict of key pattern -> "
            f"its meaning, e.g. {RESULT_KEYS} = {{\"{name}.mean\": \"the mean, in seconds\"}}"
        )
    for (key, meaning), key_node in zip(keys.items(), node.keys):
        line = key_node.lineno if key_node is not None else node.lineno
        if not isinstance(key, str) or not key.startswith(f"{name}."):
            raise DeclarationError(
                f"{shown}:{line}: {RESULT_KEYS}: {key!r} is not a key of this experiment's; its keys start "
                f"with {name + '.'!r} (build/values.json names each value so)"
            )
        if not isinstance(meaning, str) or not meaning.strip():
            raise DeclarationError(f"{shown}:{line}: {RESULT_KEYS}[{key!r}]: say what the value means, with its unit")


def _parameter_lines(name, node):
    """(name, key[, index ...]) -> line, for each parameter and the items of its default."""
    lines = {(name,): node.lineno}
    for key_node, spec_node in zip(node.keys, node.values):
        if not isinstance(key_node, ast.Constant):
            continue
        path = (name, key_node.value)
        lines[path] = key_node.lineno
        if isinstance(spec_node, ast.Dict):
            for field_node, value_node in zip(spec_node.keys, spec_node.values):
                if isinstance(field_node, ast.Constant) and field_node.value == "default":
                    lines[path] = value_node.lineno
                    _item_lines(value_node, path, lines)
    return lines


def _item_lines(node, path, lines):
    if isinstance(node, (ast.List, ast.Tuple)):
        for i, item in enumerate(node.elts):
            lines[path + (i,)] = item.lineno
            _item_lines(item, path + (i,), lines)
    elif isinstance(node, ast.Dict):
        for key_node, value_node in zip(node.keys, node.values):
            if isinstance(key_node, ast.Constant):
                lines[path + (key_node.value,)] = key_node.lineno
                _item_lines(value_node, path + (key_node.value,), lines)


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
