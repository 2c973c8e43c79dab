"""Reading the article's source files: config.yaml and config/*.yaml, the
baseline, the article and its _quarto.yml. Every reader of those goes
through here, so that each file means the same to every step.

Text is UTF-8. A byte-order mark at the start is read as nothing (some
editors write one; left in, it hides the front matter). A byte that is not
UTF-8 is named by line and column, with the fix:

    article/index.qmd:12:41: not UTF-8 (byte 0xe9, after 'the caf'): re-save the file as UTF-8
    (your editor's 'save with encoding'); saved as Windows-1252 or Latin-1, that byte is 'é'

YAML is read strictly:

- a key given twice in one mapping is refused with both lines (PyYAML keeps
  the last one without a word, so a second `check:` silently replaced the
  first);
- numbers are read as YAML 1.2 reads them. PyYAML implements YAML 1.1,
  whose float needs a dot and a signed exponent: `1e-7`, `1E5` and
  `-2e-3` come back as the text '1e-7'. StrictLoader reads them as the
  numbers they are. Snakemake reads its --configfile files with its own
  YAML 1.1 reader, so a config file cannot be given that reading; for
  those, `numbers_read_as_text` names each such scalar and the config
  check refuses it with the spelling both read alike (1.0e-7);
- aliases are bounded: an alias (*name) repeats what its anchor (&name)
  holds, so nine aliases of nine aliases of ... make a file of a few
  lines a billion values ("billion laughs"), which PyYAML builds as shared
  objects and the next reader that walks them (a digest, a copy, JSON)
  expands until memory runs out. A document whose aliases add more than
  ALIAS_EXPANSION_LIMIT values, or that holds itself, is refused at the
  line of the value that expands.

Text holds no control characters but tab, newline and carriage return: a
NUL byte or an escape sequence is invisible in an editor and copied onto
the page as it is, so it is refused at its line and column. An article
(read_article) must hold something: an empty one, or one of white space
or a byte-order mark alone, would build an empty page.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from articlekit.core.errors import ArticlekitError


class SourceError(ArticlekitError):
    """A source file that cannot be read as written; the message names the
    file and line and says what would fix it."""


# --- text ------------------------------------------------------------------------

BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")


def read_text(path):
    """The file's text: UTF-8, without a leading byte-order mark, newlines
    made \\n as Path.read_text makes them. Raises SourceError naming the
    line and column of the first byte that is not UTF-8."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        # The text-mode decoder counts offsets in its own chunks, and from after
        # the mark: find the byte in the whole file.
        data = Path(path).read_bytes()
        skip = len(BOM_BYTES) if data.startswith(BOM_BYTES) else 0
        try:
            text = data[skip:].decode("utf-8")
        except UnicodeDecodeError as error:
            raise SourceError(not_utf8_message(path, data, skip + error.start)) from None
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # fixed since the first reading
    control = CONTROL.search(text)
    if control:
        raise SourceError(control_message(path, text, control.start()))
    return text


# C0 control characters but tab, newline and carriage return (read as
# newlines), and DEL: nothing a writer means to put in a source file.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
CONTROL_NAMES = {
    0x00: "NUL",
    0x07: "BEL",
    0x08: "backspace",
    0x0B: "vertical tab",
    0x0C: "form feed",
    0x1B: "ESC",
    0x7F: "DEL",
}


def control_message(path, text, offset):
    """'file:line:column: a control character (U+0000, NUL) ...' and the fix,
    for the character at `offset` of `text`; how many more the file holds."""
    line, column = text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
    code = ord(text[offset])
    name = CONTROL_NAMES.get(code, "a control character")
    before = text[text.rfind("\n", 0, offset) + 1 : offset]
    context = f", after {before[-20:].lstrip()!r}" if before.strip() else ""
    more = len(CONTROL.findall(text)) - 1
    others = f" ({more} more in the file)" if more else ""
    return (
        f"{path}:{line}:{column}: control character U+{code:04X} ({name}){context}{others}: it is invisible "
        "in most editors and would reach the page as it is; delete it (only tab and newline may stand "
        "between the words of a source file)"
    )


def read_article(path):
    """read_text, for the article's source: refused when it holds nothing
    to build (empty, white space only, or a byte-order mark alone)."""
    text = read_text(path)
    if not text.strip():
        what = "is empty" if not text else "holds only white space"
        raise SourceError(
            f"{path}: the article {what}, so the build would publish an empty page; write its "
            "front matter (---, title: ..., ---) and its prose, with the values it cites as "
            "{{< value KEY >}} (docs/authoring.md; `python -m articlekit new DIR` starts one)"
        )
    return text


def not_utf8_message(path, data, offset):
    """'file:line:column: not UTF-8 (byte 0x..)' and the fix, for the byte
    at `offset` of `data` (the bytes before it are valid UTF-8)."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    before = data[line_start:offset].decode("utf-8")
    if line_start == 0:
        before = before.removeprefix(BOM)
    line, column = data.count(b"\n", 0, offset) + 1, len(before) + 1
    byte = data[offset]
    context = f", after {before[-20:].lstrip()!r}" if before.strip() else ""
    legacy = bytes([byte]).decode("cp1252", errors="replace")
    guess = (
        f"; saved as Windows-1252 or Latin-1, that byte is {legacy!r}"
        if byte >= 0x80 and legacy.isprintable() and legacy != "\ufffd"
        else ""
    )
    return (
        f"{path}:{line}:{column}: not UTF-8 (byte 0x{byte:02x}{context}): re-save the file as UTF-8 "
        f"(your editor's 'save with encoding'){guess}"
    )


# --- YAML --------------------------------------------------------------------------

# The floats of YAML 1.2 (core schema) that PyYAML's 1.1 resolver misses:
# an exponent after a mantissa without a dot or before an unsigned power
# (1e-7, 1.5e7), and a signed fraction without a leading digit (-.5). Plain
# integers are left to PyYAML (in YAML 1.2 `089` is the integer 89, not a float).
YAML12_FLOAT = re.compile(r"^[-+]?(?:(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|\.[0-9]+)$")
FLOAT_TAG = "tag:yaml.org,2002:float"


class DuplicateKeyError(SourceError):
    pass


class StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping and
    reads YAML 1.2's numbers (1e-7) as numbers. Set `source` to the file's
    name for the messages."""

    source = "<yaml>"

    def compose_document(self):
        root = super().compose_document()
        self.check_unique_keys(root)
        return root

    def check_unique_keys(self, root):
        seen = set()
        for node, path in walk(root):
            if not isinstance(node, yaml.MappingNode) or id(node) in seen:
                continue
            seen.add(id(node))
            first = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.key_identity(key_node)
                if key in first:
                    line, again = first[key].start_mark.line + 1, key_node.start_mark.line + 1
                    raise DuplicateKeyError(
                        f"{self.source}:{again}: {dotted(path + (key_node.value,))}: the key is given twice, "
                        f"at lines {line} and {again}; YAML would silently keep only the second: "
                        "delete one of them"
                    )
                first[key] = key_node

    def key_identity(self, key_node):
        """A key as the mapping will hold it: `1` and `1.0`, `"a"` and `a`
        are the same key."""
        try:
            key = self.construct_object(key_node)
            hash(key)
            return key
        except (yaml.YAMLError, TypeError):
            return key_node.tag, key_node.value


# Last, so PyYAML's own resolvers (int, its float, ...) still come first.
StrictLoader.add_implicit_resolver(FLOAT_TAG, YAML12_FLOAT, list("-+0123456789."))


if getattr(yaml, "__with_libyaml__", False):

    class FastStrictLoader(yaml.CSafeLoader):
        """StrictLoader's reading through libyaml, PyYAML's C parser: the
        same nodes, lines and data, five to ten times faster (the baseline
        is read by most steps, the config by every plan). Its parser does
        not call compose_document: parse_yaml checks the keys itself. Its
        error messages are libyaml's own: parse_yaml reads a file that
        fails again with StrictLoader, whose messages the fixes are written
        against."""

        source = "<yaml>"
        check_unique_keys = StrictLoader.check_unique_keys
        key_identity = StrictLoader.key_identity

    FastStrictLoader.add_implicit_resolver(FLOAT_TAG, YAML12_FLOAT, list("-+0123456789."))
else:  # a PyYAML built without libyaml
    FastStrictLoader = None


def walk(node, path=()):
    """(node, key path) for every node, depth first. A key path is a tuple of
    keys and (index, id) pairs for items of a list; aliases are followed
    once."""
    stack, seen = [(node, path)], set()
    while stack:
        node, path = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield node, path
        if isinstance(node, yaml.MappingNode):
            stack += [
                (value, path + (key.value,)) for key, value in reversed(node.value) if isinstance(key, yaml.ScalarNode)
            ]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, path + ((index, item_id(item)),)) for index, item in reversed(list(enumerate(node.value)))]


def item_id(node):
    """The `id:` of a list item that is a mapping (a baseline entry), if any."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "id" and isinstance(value, yaml.ScalarNode):
                return value.value
    return None


def dotted(path):
    """('entries', (97, 'faq.x'), 'check') -> "entries[97] (id 'faq.x').check"."""
    text = ""
    for part in path:
        if isinstance(part, tuple):
            index, name = part
            text += f"[{index}]" + (f" (id {name!r})" if name is not None else "")
        else:
            text += ("." if text else "") + str(part)
    return text or "(top level)"


@dataclass
class Document:
    """A YAML file read strictly: its data, and its nodes (for line numbers)."""

    data: object
    root: object
    source: str = ""


def parse_yaml(text, source="<yaml>", first_line=1):
    """-> Document. Raises DuplicateKeyError (a SourceError) for a key given
    twice, yaml.YAMLError for a syntax error. first_line: the file line
    the text starts on (front matter starts on line 2)."""
    text = "\n" * (first_line - 1) + text.removeprefix(BOM)
    if FastStrictLoader is not None:
        try:
            return _parse_with(FastStrictLoader, text, source)
        except yaml.YAMLError:
            pass  # said again below, in StrictLoader's words
    return _parse_with(StrictLoader, text, source)


def _parse_with(loader_class, text, source):
    loader = loader_class(text)
    loader.source = str(source)
    try:
        root = loader.get_single_node()
        if loader_class is FastStrictLoader and root is not None:
            loader.check_unique_keys(root)
        if root is not None and ALIAS.search(text):
            check_expansion(root, source)
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return Document(data, root, str(source))


# How many values a document's aliases may add to it, in all: far more than
# any hand-written file repeats (a list of pins shared by two entries adds a
# few), far less than would take a reader seconds to walk.
ALIAS_EXPANSION_LIMIT = 100_000
# What an alias looks like (*name after a space, a bracket or a comma): a
# file without one has nothing to expand, and is not walked for it.
ALIAS = re.compile(r"(?:^|[\s\[{,])\*[^\s,\[\]{}]")


class AliasExpansionError(SourceError):
    pass


def check_expansion(root, source="<yaml>"):
    """Raise AliasExpansionError when the document, its aliases expanded,
    holds more than ALIAS_EXPANSION_LIMIT values beyond the nodes written
    (named at the line of the innermost value that alone expands past the
    limit), or holds itself. Linear in the nodes written: the expanded size
    of each node is counted once."""
    sizes = expanded_sizes(root, source)
    distinct = len(sizes)
    if sizes[id(root)] - distinct <= ALIAS_EXPANSION_LIMIT:
        return
    node = root
    while True:  # down to the value whose own parts each stay within the limit
        bigger = [child for child in _children(node) if sizes[id(child)] > ALIAS_EXPANSION_LIMIT]
        if not bigger:
            break
        node = max(bigger, key=lambda child: sizes[id(child)])
    mark = node.start_mark
    raise AliasExpansionError(
        f"{source}:{mark.line + 1}:{mark.column + 1}: the aliases here expand to {sizes[id(node)]:,} values "
        f"(the whole file to {sizes[id(root)]:,}), more than the {ALIAS_EXPANSION_LIMIT:,} a source file may "
        "repeat: each alias (*name) copies all its anchor (&name) holds, so aliases of aliases multiply; "
        "write the values out, or use fewer aliases"
    )


def expanded_sizes(root, source="<yaml>"):
    """{id(node): how many values the node holds with its aliases expanded
    (itself, and for a mapping its keys too)} for every node under root.
    AliasExpansionError for a node that holds itself (`&a [*a]`), which no
    reader could expand."""
    sizes, open_nodes = {}, set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if children_done:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in _children(node))
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                mark = child.start_mark
                raise AliasExpansionError(
                    f"{source}:{mark.line + 1}:{mark.column + 1}: this value holds an alias of itself, so it "
                    "never ends when expanded; write it out instead"
                )
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes


def _children(node):
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return node.value
    return []


def yaml_error_message(error, source):
    """'file:line:column: not valid YAML: ...' and the usual fixes."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if not isinstance(error, yaml.MarkedYAMLError):
        return f"{source}: not valid YAML: {error}"
    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else str(source)
    opened = error.context_mark
    since = (
        f" ({error.context} opened at line {opened.line + 1})"
        if error.context and opened and mark and opened.line != mark.line
        else ""
    )
    return (
        f"{where}: not valid YAML: {error.problem}{since}; fix it there (a missing quote, "
        "bracket or colon, or a tab used to indent: use spaces)"
    )


def load_yaml(path):
    """The data of a YAML file, read strictly; SourceError for anything that
    keeps it from being read (encoding, syntax, a duplicate key)."""
    try:
        return parse_yaml(read_text(path), path).data
    except yaml.YAMLError as error:
        raise SourceError(yaml_error_message(error, path)) from None


def numbers_read_as_text(document):
    """(line, key path, text) of each plain scalar that YAML 1.2 reads as a
    number and PyYAML's YAML 1.1 (Snakemake's reader) as text."""
    found = []
    for node, path in walk(document.root):
        # a plain scalar's style: None from StrictLoader, '' from libyaml
        if (
            isinstance(node, yaml.ScalarNode)
            and node.tag == FLOAT_TAG
            and not node.style
            and yaml11_tag(node.value) != FLOAT_TAG
        ):
            found.append((node.start_mark.line + 1, dotted(path), node.value))
    return found


def yaml11_tag(text):
    """The tag PyYAML's SafeLoader resolves a plain scalar to."""
    for tag, pattern in yaml.SafeLoader.yaml_implicit_resolvers.get(text[:1], []):
        if pattern.match(text):
            return tag
    return "tag:yaml.org,2002:str"


def yaml11_spelling(text):
    """The same number written so YAML 1.1 reads it too: a dot in the
    mantissa and a signed exponent (1e-7 -> 1.0e-7, 1E5 -> 1.0E+5)."""
    mantissa, e, exponent = re.split(r"([eE])", text, maxsplit=1) if re.search("[eE]", text) else (text, "", "")
    sign, digits = (mantissa[0], mantissa[1:]) if mantissa[:1] in "+-" else ("", mantissa)
    if digits.startswith("."):
        digits = "0" + digits
    if "." not in digits:
        digits += ".0"
    if exponent and exponent[0] not in "+-":
        exponent = "+" + exponent
    return f"{sign}{digits}{e}{exponent}"
