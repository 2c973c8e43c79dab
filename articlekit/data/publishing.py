"""What the machinery needs to know about one article: the `publishing:`
section of its config.yaml, handed to each command as `--publishing JSON`.

    publishing:
      libraries: {python: Python, numpy: NumPy}   # recorded per artifact; shown
                                 # in release notes, audit and diff, in this order
      release_label: [numpy]     # libraries whose versions name a release folder
      volatile: [timing.]        # key prefixes whose numbers move with the machine
      machine: [environment.cpu_model]   # keys that say which machine ran a build
      listings: {kernel: {source: experiments/kernel.py, functions: [f, g]}}

Every key is optional, and a missing one means "nothing article-specific":
only Python is recorded, no key is volatile, no machine key is compared, no
listing is cut. articlekit itself names no library and no key: whatever an
article wants to record, compare loosely or list comes from here.
"""

import argparse
import json
import re
from dataclasses import dataclass, field
from types import MappingProxyType

# A library's distribution name, as `importlib.metadata.version` takes it.
_LIBRARY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# A listing's name becomes a key: listings.<name>.functions.<function>.
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KEYS = ("libraries", "release_label", "volatile", "machine", "listings")


class PublishingError(ValueError):
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
            f"by recorded libraries only: add {unrecorded[0]} to libraries or drop it from release_label")
    return Publishing(
        libraries=MappingProxyType(libraries),
        release_label=label,
        volatile=_names(section.get("volatile"), f"{where}.volatile", "a list of key prefixes, e.g. [timing.]"),
        machine=_names(section.get("machine"), f"{where}.machine", "a list of keys, e.g. [environment.cpu_model]"),
        listings=MappingProxyType(_listings(section.get("listings"), f"{where}.listings")),
    )


def from_json(text):
    """Publishing from the `--publishing JSON` argument; None or '' gives the defaults."""
    if not text:
        return Publishing()
    try:
        section = json.loads(text)
    except ValueError as exc:
        raise PublishingError(f"--publishing: not JSON ({exc}); pass the config's publishing section "
                              "as one JSON string, e.g. --publishing '{\"libraries\": {\"python\": \"Python\"}}'") from None
    return parse(section)


def add_argument(parser):
    """--publishing on a command's parser, parsed and validated by argparse
    (a bad section stops the command with its message and exit status 2)."""
    def publishing(text):
        try:
            return from_json(text)
        except PublishingError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parser.add_argument("--publishing", type=publishing, default=Publishing(),
                        help="the config's publishing: section as JSON (libraries, release_label, volatile, "
                             "machine, listings); omitted: nothing article-specific")


def _libraries(value, where):
    if value is None:
        return {"python": "Python"}
    if not isinstance(value, dict) or not value:
        raise PublishingError(f"{where}.libraries: expected a mapping of library to display name, "
                              f"e.g. {{python: Python, scipy: SciPy}}, got {value!r}")
    for library, display in value.items():
        if not isinstance(library, str) or not _LIBRARY.match(library):
            raise PublishingError(f"{where}.libraries: {library!r} is not a distribution name; "
                                  "write it as pip knows it, e.g. scipy")
        if not isinstance(display, str) or not display.strip():
            raise PublishingError(f"{where}.libraries.{library}: expected the name readers know it by, "
                                  f"e.g. {library}: {library.capitalize()}, got {display!r}")
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


def _listings(value, where):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PublishingError(f"{where}: expected a mapping of listing name to {{source: PATH, functions: [...]}}, "
                              f"got {value!r}")
    out = {}
    for name, listing in value.items():
        here = f"{where}.{name}"
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise PublishingError(f"{where}: {name!r} cannot name a listing (it becomes the key "
                                  "listings.<name>): use letters, digits and _")
        if not isinstance(listing, dict) or set(listing) != {"source", "functions"}:
            raise PublishingError(f"{here}: expected {{source: PATH, functions: [NAME, ...]}}, got {listing!r}")
        if not isinstance(listing["source"], str) or not listing["source"].endswith(".py"):
            raise PublishingError(f"{here}.source: expected the path of a Python file, got {listing['source']!r}")
        functions = _names(listing["functions"], f"{here}.functions", "a list of top-level function names")
        if not functions:
            raise PublishingError(f"{here}.functions: name at least one function the article shows")
        out[name] = Listing(source=listing["source"], functions=functions)
    return out
