"""Sizes checked before work: what an experiment's parameters would cost,
against what its rule declares and what the machine has.

An experiment module may define a footprint: a cheap estimate from the
sizes alone, each measure a sum of terms filed under the parameter (or tuple
of parameters) that drives it.

    def footprint(params):
        T = params["T"]
        return {"bytes": {"T": 4 * T * T * 8},          # four (T, T) float64 arrays
                "seconds": {("T", "rounds"): ...}}

- bytes: what run() holds at its peak, beyond what the process held before;
- seconds: a lower bound, from rates faster than any core today, so that a
  refusal is never wrong about a run that would have fit.

It must cover every size of the experiment: each parameter that is an
integer or a list of integers (but `seed` and `threads`, which articlekit
gives their meaning) is a size, and footprint() must read it or file a term
under it (0 when it costs nothing). One that returns nothing for a size (a
`return {}`, a parameter forgotten) is refused, naming the file and the
key: else any value of that size would pass unchecked.

It is checked twice, before any work:

- when the workflow module plans the build (a dry run too), against the
  mem_mb and runtime the config declares for the experiment's rule. The
  plan must stay fast, so the function is compiled from the module's
  source and run on its own, without importing the experiment (and its
  NumPy or PyTorch): it may use its params, builtins, `math`, the
  module's constants that are plain literals (CELL_BYTES = 350) and the
  rates below imported from here (FLOPS), nothing else;
- by run_experiment, just before run(), against the limits the job was
  given (--mem-mb, --runtime) and the memory the machine has available
  now, counting what the process already holds (Python, its libraries).

A refusal names the key that drives the estimate (the largest term's), the
estimate, the limit and what to do:

    config.yaml:97: timing.T = 1000000: the timing experiment would hold an
    estimated 32 TB (experiments/timing.py, footprint()), more than the
    1000 MB its rule declares (experiments.timing.mem_mb). Lower timing.T,
    or raise experiments.timing.mem_mb.
"""

import ast
import builtins
import inspect
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.experiment import declared

MEASURES = ("bytes", "seconds")

# A rate for a footprint's time, faster than one core of any CPU today, so
# that its estimate is a lower bound: float64 operations a second, above a
# core's peak (AVX-512 with two FMA units does 32 a cycle, 1.3e11 at 4 GHz).
FLOPS = 2e11


class SizeError(ArticlekitError):
    """The parameters would not fit, or the footprint itself is broken."""


@dataclass(frozen=True)
class Limits:
    """What a run may spend. None: no such limit is known."""

    mem_mb: float = None  # the rule's declared memory, MB (10^6 bytes, as Snakemake counts)
    runtime_min: float = None  # the rule's declared runtime, minutes
    available_bytes: int = None  # memory the machine has free now
    held_bytes: int = 0  # memory the process holds already


# ---- reading an estimate -----------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """One measure of a footprint (its bytes or its seconds): the terms, largest first."""

    terms: tuple  # ((keys tuple, amount), ...)

    @property
    def total(self):
        return sum(amount for _, amount in self.terms)

    @property
    def driver(self):
        """The keys of the largest term: what to lower."""
        return self.terms[0][0]


# Integer parameters that are no size: what articlekit itself gives an
# experiment's params their meaning for (the sweep's seed, the cores of a
# job that takes every core).
NOT_SIZES = ("seed", "threads")


def sizes(params):
    """The parameters that are sizes: integers, or lists of integers, but
    those of NOT_SIZES."""

    def integer(value):
        return isinstance(value, int) and not isinstance(value, bool)

    return [
        key
        for key, value in params.items()
        if key not in NOT_SIZES and (integer(value) or (isinstance(value, list) and value and all(map(integer, value))))
    ]


class _Reading(dict):
    """The params as footprint() sees them, noting each key it reads."""

    def __init__(self, params):
        super().__init__(params)
        self._params, self.read = params, set()

    def __getitem__(self, key):
        self.read.add(key)
        return self._params[key]  # a Declared's missing key says which section lacks it

    def get(self, key, default=None):
        self.read.add(key)
        return self._params.get(key, default)

    def __iter__(self):
        self.read.update(self._params)
        return iter(self._params)

    def items(self):
        self.read.update(self._params)
        return self._params.items()

    def values(self):
        self.read.update(self._params)
        return self._params.values()


def estimate(footprint, params, source, name=None):
    """{"bytes": Estimate, "seconds": Estimate} from footprint(params), or a
    SizeError naming `source` when it fails, returns something else, or
    returns nothing for one of the experiment's sizes (named `name.KEY`)."""
    reading = _Reading(params)
    try:
        found = footprint(reading)
    except declared.Undeclared as exc:  # a parameter the config lacks: the section and the fix
        raise SizeError(f"{exc} (in footprint())") from None
    except NameError as exc:
        raise SizeError(
            f"{source}: footprint() cannot run on its own ({exc}): it must be plain arithmetic on "
            "its params, using only builtins, math, the module's literal constants and "
            "articlekit.experiment.footprint's rates, because the plan runs it without importing the "
            "experiment"
        ) from None
    except Exception as exc:  # a bug in the estimate is the experiment's, named as such
        raise SizeError(f"{source}: footprint() failed on these params: {type(exc).__name__}: {exc}") from None
    if not isinstance(found, dict) or not set(found) <= set(MEASURES):
        raise SizeError(f"{source}: footprint() must return a dict with {' and/or '.join(MEASURES)}, not {found!r}")
    estimates = {measure: _terms(found[measure], params, source, measure) for measure in MEASURES if found.get(measure)}
    named = {key for measure in estimates.values() for keys, _ in measure.terms for key in keys}
    uncovered = [key for key in sizes(params) if key not in reading.read | named]
    if uncovered:
        shown = _and([f"{name + '.' if name else ''}{key} = {_shown(params[key])}" for key in uncovered])
        raise SizeError(
            f"{source}: footprint() returns nothing for {shown}: "
            f"{'a size' if len(uncovered) == 1 else 'sizes'} of the experiment (integer parameters), "
            "which it neither reads nor files a term under, so no value of "
            f"{'it' if len(uncovered) == 1 else 'them'} would ever be refused. Estimate what "
            f"{uncovered[0]!r} costs in footprint() (a term under it in bytes or seconds), or file it "
            "under 0 if it costs nothing"
        )
    return estimates


def _terms(given, params, source, measure):
    if not isinstance(given, dict):
        raise SizeError(f"{source}: footprint()[{measure!r}] must map parameter names to amounts, not {given!r}")
    terms = []
    for keys, amount in given.items():
        keys = keys if isinstance(keys, tuple) else (keys,)
        unknown = [key for key in keys if key not in params]
        if unknown:
            raise SizeError(
                f"{source}: footprint()[{measure!r}] files a term under {unknown[0]!r}, which is not "
                f"a parameter (they are {', '.join(map(str, params))})"
            )
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not amount >= 0:
            raise SizeError(f"{source}: footprint()[{measure!r}][{keys}] must be a number >= 0, not {amount!r}")
        terms.append((keys, amount))
    return Estimate(tuple(sorted(terms, key=lambda term: -term[1])))


# ---- checking it -----------------------------------------------------------------


def check(name, params, footprint, limits, source, where=None):
    """Raise SizeError, one line per limit the estimate exceeds, or return
    the estimate. where(key) -> "config.yaml:97" places a key, when known."""
    found = estimate(footprint, params, source, name)
    memory, seconds = found.get("bytes"), found.get("seconds")

    def refusal(measure, costs, limit, otherwise):
        keys = measure.driver
        place = where(f"{name}.{keys[0]}") if where else None
        named = _and([f"{name}.{key} = {_shown(params[key])}" for key in keys])
        lower = " or ".join(f"{name}.{key}" for key in keys)
        return (
            f"{place + ': ' if place else ''}{named}: the {name} experiment {costs} ({source}, footprint()), "
            f"{limit}. Lower {lower}, or {otherwise}."
        )

    problems = []
    if memory and limits.mem_mb is not None and limits.held_bytes + memory.total > limits.mem_mb * 1e6:
        held = f" beside the {_bytes(limits.held_bytes)} the process holds already" if limits.held_bytes else ""
        problems.append(
            refusal(
                memory,
                f"would hold an estimated {_bytes(memory.total)}{held}",
                f"more than the {limits.mem_mb:g} MB its rule declares (experiments.{name}.mem_mb)",
                f"raise experiments.{name}.mem_mb",
            )
        )
    if memory and limits.available_bytes is not None and memory.total > limits.available_bytes:
        problems.append(
            refusal(
                memory,
                f"would hold an estimated {_bytes(memory.total)}",
                f"more than the {_bytes(limits.available_bytes)} this machine has available now",
                "run it where more memory is free",
            )
        )
    if seconds and limits.runtime_min is not None and seconds.total > limits.runtime_min * 60:
        problems.append(
            refusal(
                seconds,
                f"would take at least {_duration(seconds.total)}",
                f"more than the {limits.runtime_min:g} min its rule declares (experiments.{name}.runtime)",
                f"raise experiments.{name}.runtime",
            )
        )
    if problems:
        raise SizeError("\n".join(problems))
    return found


def summary(found):
    """'an estimated 138 MB and at least 6.12 s': a passed estimate, for the log."""
    parts = []
    if "bytes" in found:
        parts.append(f"an estimated {_bytes(found['bytes'].total)}")
    if "seconds" in found:
        parts.append(f"at least {_duration(found['seconds'].total)}")
    return " and ".join(parts)


def _and(items):
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _shown(value):
    """A parameter as the message shows it: a long list by its ends."""
    if isinstance(value, list) and len(value) > 6:
        return f"[{value[0]}, {value[1]}, ..., {value[-1]}]"
    return str(value)


def _bytes(n):
    """Decimal units, as mem_mb counts: 1.5 GB, 500 MB."""
    for unit, size in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"


def _duration(seconds):
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


# ---- at plan time: the footprint from the source ---------------------------------------


def from_source(path):
    """The module's footprint compiled from its source with its literal
    constants, without importing the module; None when it defines none."""
    path = Path(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    defined = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "footprint"]
    if not defined:
        return None
    namespace = {"__builtins__": builtins, "math": math}
    this = sys.modules[__name__]
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == __name__ and node.level == 0:
            namespace.update((alias.asname or alias.name, getattr(this, alias.name)) for alias in node.names)
            continue
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        else:
            continue
        try:
            value = ast.literal_eval(node.value)
        except ValueError:  # computed, not a literal: unavailable to the plan
            continue
        for target in targets:
            namespace.update(_bound(target, value))
    exec(compile(ast.Module(body=[defined[-1]], type_ignores=[]), str(path), "exec"), namespace)
    return namespace["footprint"]


def _bound(target, value):
    """(name, value) pairs an assignment binds: NAME = 1, or A, B = 1, 2."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(target.elts) == len(value):
        return [pair for element, item in zip(target.elts, value) for pair in _bound(element, item)]
    return []


def check_plan(name, path, params, mem_mb, runtime_min, where=None):
    """The plan's check of one experiment, against its rule's declared
    limits (no file: nothing to check; the rule's code input says so)."""
    if path is None or not Path(path).is_file():
        return
    footprint = from_source(path)
    if footprint is not None:
        check(
            name,
            declared.params_of(name, params),
            footprint,
            Limits(mem_mb=mem_mb, runtime_min=runtime_min),
            _relative(path),
            where,
        )


def _relative(path):
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


# ---- at run time: the module's own footprint, and the machine ----------------------------


def check_run(name, run, params, mem_mb=None, runtime_min=None):
    """run_experiment's check, before run(): the footprint of run()'s module,
    against the job's limits and this machine's free memory."""
    module = sys.modules.get(run.__module__)
    footprint = getattr(module, "footprint", None)
    if footprint is None:
        return None
    limits = Limits(
        mem_mb=mem_mb, runtime_min=runtime_min, available_bytes=available_memory(), held_bytes=held_memory()
    )
    return check(name, params, footprint, limits, _relative(inspect.getsourcefile(run)))


def available_memory():
    """Bytes the machine could give this process now without swapping
    (MemAvailable), else its free physical memory; None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def held_memory():
    """Bytes this process holds now (its resident set)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, kB elsewhere
