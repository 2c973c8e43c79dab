"""What the machinery needs to know about one article: the `publishing:`
section of its config.yaml, handed to each command as `--publishing JSON`.

    publishing:
      libraries: {python: Python, scipy: SciPy}   # recorded per artifact; shown
                                 # in release notes, audit and diff, in this order
      release_label: [scipy]     # libraries whose versions name a release folder
      volatile: [bench.]         # key prefixes whose numbers move with the machine
      machine: [environment.cpu] # keys that say which machine ran a build
      listings: {kernel: {source: experiments/kernel.py, functions: [f, g]}}
      # how the diff and the matrix judge a value that moved (key patterns):
      error_measures: ["*_error"]        # differences of values near one: ULPs of 1.0
      single_precision: ["*.f32.*"]      # computed in float32: float32's ULPs
      spread: ["bench.*.samples"]        # a measurement's scatter: reported, not compared
      per_build: [environment.date]      # differ on every build: never a change
      where_run: ["*.host"]              # where an experiment ran: listed, never compared
      built_at: environment.time_utc     # when the build ran, for the diff's header
      formats: [html, gfm, pdf, docx, jats]  # one rule each (articlekit/render/formats)

Every key is optional, and a missing one means "nothing article-specific":
only Python is recorded, no key is volatile, no machine key is compared, no
listing is cut, every float is judged in ULPs of itself in float64, every
value is compared, and the article is written in the default formats. articlekit itself names no library and no key: whatever
an article wants to record, compare loosely or list comes from here.

A key pattern is a values.json key in which `*` stands for any run of
characters, dots included; nothing else is special, and a pattern must match
the whole key. "*max_err*" matches "fit.max_err" and "fit.x.max_err_rel";
"bench.*.samples" matches "bench.a.samples" and "bench.a.b.samples", not
"bench.a.samples_ms".
"""

import argparse
import functools
import json
import re
from dataclasses import dataclass, field
from types import MappingProxyType

from articlekit.core.errors import ArticlekitError

# A library's distribution name, as `importlib.metadata.version` takes it.
_LIBRARY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# A listing's name becomes a key: listings.<name>.functions.<function>.
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KEYS = (
    "libraries",
    "release_label",
    "volatile",
    "machine",
    "listings",
    "error_measures",
    "single_precision",
    "spread",
    "per_build",
    "where_run",
    "built_at",
    "formats",
)
PATTERN_KEYS = ("error_measures", "single_precision", "spread", "per_build", "where_run")
# What each pattern key means, for its error message.
_PATTERN_EXAMPLE = {
    "error_measures": '["*_error"]',
    "single_precision": '["*.f32.*"]',
    "spread": '["bench.*.samples"]',
    "per_build": "[environment.date]",
    "where_run": '["*.host"]',
}


class PublishingError(ArticlekitError):
    """A `publishing:` section the machinery cannot use; the message names the key and the fix."""


@dataclass(frozen=True)
class Listing:
    """A source file whose top-level functions the article shows, and the
    ones it calls its core (shown together, counted as its lines of code)."""

    source: str
    functions: tuple


@dataclass(frozen=True)
class Publishing:
    libraries: MappingProxyType = field(default_factory=lambda: MappingProxyType({"python": "Python"}))
    release_label: tuple = ()
    volatile: tuple = ()
    machine: tuple = ()
    listings: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    error_measures: tuple = ()
    single_precision: tuple = ()
    spread: tuple = ()
    per_build: tuple = ()
    where_run: tuple = ()
    built_at: str = None
    formats: tuple = None  # the formats the article is written in (articlekit/render/formats); None: the default

    def display(self, library):
        """'numpy' -> 'NumPy': the name a reader knows the library by."""
        return self.libraries.get(library, library)

    def versions_text(self, versions):
        """{"numpy": "2.4.6", "python": None} -> "NumPy 2.4.6": the recorded
        libraries in their configured order, those without a version left out."""
        return ", ".join(f"{self.display(lib)} {versions[lib]}" for lib in self.libraries if versions.get(lib))

    def label_for(self, versions):
        """The release folder's name from the release_label libraries'
        versions: 'numpy-2.4.6_torch-2.13.0'; 'none' for one not installed."""
        return "_".join(f"{lib}-{versions.get(lib) or 'none'}" for lib in self.release_label)

    def is_volatile(self, key):
        return key.startswith(self.volatile) if self.volatile else False

    def is_error_measure(self, key):
        """A measured error (a difference of values near one), judged in ULPs of 1.0."""
        return matches(self.error_measures, key)

    def is_single_precision(self, key):
        """A key computed in float32, judged in float32's ULPs."""
        return matches(self.single_precision, key)

    def is_spread(self, key):
        """A field that says how a measurement scattered: reported, not compared."""
        return matches(self.spread, key)

    def is_per_build(self, key):
        """A value that differs on every build by design (a date, a job id)."""
        return matches(self.per_build, key)

    def is_where_run(self, key):
        """A value that says where an experiment ran (a host, an executor)."""
        return matches(self.where_run, key)


def matches(patterns, key):
    """Whether `key` matches one of the key patterns (`*`: any run of characters)."""
    return bool(patterns) and _compiled(patterns).fullmatch(key) is not None


@functools.lru_cache(maxsize=None)
def _compiled(patterns):
    return re.compile("|".join("(?:" + ".*".join(map(re.escape, p.split("*"))) + ")" for p in patterns), re.DOTALL)


def parse(section, where="publishing"):
    """The validated Publishing of a `publishing:` mapping (None: the defaults)."""
    if section is None:
        return Publishing()
    if not isinstance(section, dict):
        raise PublishingError(f"{where}: expected a mapping with keys {', '.join(KEYS)}, got {section!r}")
    unknown = sorted(set(section) - set(KEYS))
    if unknown:
        raise PublishingError(f"{where}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(KEYS)}")
    libraries = _libraries(section.get("libraries"), where)
    label = _names(section.get("release_label"), f"{where}.release_label", "a list of library names, e.g. [scipy]")
    unrecorded = [lib for lib in label if lib not in libraries]
    if unrecorded:
        raise PublishingError(
            f"{where}.release_label: {', '.join(unrecorded)} not in {where}.libraries; a release is labelled "
            f"by recorded libraries only: add {unrecorded[0]} to libraries or drop it from release_label"
        )
    return Publishing(
        libraries=MappingProxyType(libraries),
        release_label=label,
        volatile=_names(section.get("volatile"), f"{where}.volatile", "a list of key prefixes, e.g. [bench.]"),
        machine=_names(section.get("machine"), f"{where}.machine", "a list of keys, e.g. [environment.cpu]"),
        listings=MappingProxyType(_listings(section.get("listings"), f"{where}.listings")),
        **{key: _patterns(section.get(key), f"{where}.{key}", _PATTERN_EXAMPLE[key]) for key in PATTERN_KEYS},
        built_at=_key(section.get("built_at"), f"{where}.built_at"),
        formats=_formats(section, f"{where}.formats"),
    )


def _formats(section, where):
    """The formats listed (names; the Plan checks each has a module), None when the key is absent."""
    if "formats" not in section:
        return None
    formats = _names(section["formats"], where, "a list of format names, e.g. [html, gfm, pdf, docx, jats]")
    if not formats:
        raise PublishingError(f"{where}: an empty list writes the article in no format; list at least html")
    return formats


def from_json(text):
    """Publishing from the `--publishing JSON` argument; None or '' gives the defaults."""
    if not text:
        return Publishing()
    try:
        section = json.loads(text)
    except ValueError as exc:
        raise PublishingError(
            f"--publishing: not JSON ({exc}); pass the config's publishing section "
            "as one JSON string, e.g. --publishing '{\"libraries\": {\"python\": \"Python\"}}'"
        ) from None
    return parse(section)


def add_argument(parser):
    """--publishing on a command's parser, parsed and validated by argparse
    (a bad section stops the command with its message and exit status 2)."""

    def publishing(text):
        try:
            return from_json(text)
        except PublishingError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parser.add_argument(
        "--publishing",
        type=publishing,
        default=Publishing(),
        help=f"the config's publishing: section as JSON ({', '.join(KEYS)}); omitted: nothing article-specific",
    )


def _libraries(value, where):
    if value is None:
        return {"python": "Python"}
    if not isinstance(value, dict) or not value:
        raise PublishingError(
            f"{where}.libraries: expected a mapping of library to display name, "
            f"e.g. {{python: Python, scipy: SciPy}}, got {value!r}"
        )
    for library, display in value.items():
        if not isinstance(library, str) or not _LIBRARY.match(library):
            raise PublishingError(
                f"{where}.libraries: {library!r} is not a distribution name; write it as pip knows it, e.g. scipy"
            )
        if not isinstance(display, str) or not display.strip():
            raise PublishingError(
                f"{where}.libraries.{library}: expected the name readers know it by, "
                f"e.g. {library}: {library.capitalize()}, got {display!r}"
            )
    return dict(value)


def _names(value, where, expected):
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise PublishingError(f"{where}: expected {expected}, got {value!r}")
    twice = sorted({v for v in value if value.count(v) > 1})
    if twice:
        raise PublishingError(f"{where}: {', '.join(twice)} listed more than once; list each once")
    return tuple(value)


def _patterns(value, where, example):
    patterns = _names(value, where, f"a list of key patterns (* for any run of characters), e.g. {example}")
    for pattern in patterns:
        if not pattern.strip("*"):
            raise PublishingError(
                f"{where}: {pattern!r} would match every key; name the keys it is for, e.g. {example}"
            )
        if pattern != pattern.strip():
            raise PublishingError(f"{where}: {pattern!r} starts or ends with a space, which no key has; remove it")
    return patterns


def _key(value, where):
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "*" in value:
        raise PublishingError(f"{where}: expected one key of values.json, e.g. environment.time_utc, got {value!r}")
    return value


def _listings(value, where):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PublishingError(
            f"{where}: expected a mapping of listing name to {{source: PATH, functions: [...]}}, got {value!r}"
        )
    out = {}
    for name, listing in value.items():
        here = f"{where}.{name}"
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise PublishingError(
                f"{where}: {name!r} cannot name a listing (it becomes the key "
                "listings.<name>): use letters, digits and _"
            )
        if not isinstance(listing, dict) or set(listing) != {"source", "functions"}:
            raise PublishingError(f"{here}: expected {{source: PATH, functions: [NAME, ...]}}, got {listing!r}")
        if not isinstance(listing["source"], str) or not listing["source"].endswith(".py"):
            raise PublishingError(f"{here}.source: expected the path of a Python file, got {listing['source']!r}")
        functions = _names(listing["functions"], f"{here}.functions", "a list of top-level function names")
        if not functions:
            raise PublishingError(f"{here}.functions: name at least one function the article shows")
        out[name] = Listing(source=listing["source"], functions=functions)
    return out
