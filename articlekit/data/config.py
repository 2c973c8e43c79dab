"""Check the merged configuration against config/schema.yaml, and say where.

Snakemake's own validate() stops at the first error and prints the schema
around it. This lists every error, one line each, with the file and line it
came from:

    config.yaml:50: timing.rounds: 1 is less than the minimum of 6
    config.yaml:12: bogus: Additional properties are not allowed ('bogus' was unexpected)

A value given with --config has no file line; it is named as "--config".
A parameter's default comes from its experiment's script (its PARAMETERS,
articlekit.experiment.declared), and is named there:

    experiments/timing.py:41: timing.rounds: 1 is less than the minimum of 6

The merged config is the scripts' defaults, overlaid by config.yaml, then
by each --configfile (`with_defaults`, `merged_config`): the scripts come
first in the list of sources, as the files of least precedence.

The schema is read more strictly than JSON Schema reads it, where YAML and
Python blur what the author meant:

- `type: number` refuses NaN and the infinities (`.nan`, `.inf`: JSON has
  neither, so JSON Schema cannot refuse them, and `minimum: 0` lets NaN
  through, since no comparison with NaN is true), unless the key's schema
  says `x-non-finite: true`;
- `type: integer` refuses a float (`2000.0` is an integer to JSON Schema,
  and reaches the experiment as a float), with the spelling to use;
- `x-rule-name: true` on an experiment's name refuses a name that one of the
  workflow's rules already has (each experiment gets a rule of its name),
  given as `rule_names` by the workflow.

Before that, `check_syntax` reads each file strictly (articlekit.core.sources)
and names the line of a YAML syntax error, a key given twice, a number
Snakemake would read as text, a byte that is not UTF-8, or says that a file
is empty; after it, the cross-key rules the schema marks with `x-divides`
(heads must divide d_model) name both keys.

    python -m articlekit config config.yaml [more.yaml ...]

runs all three on files by hand (Snakemake reads `--configfile` files itself,
before the workflow starts, and its message names neither file nor line).
"""

import copy
import difflib
import math
import os
from functools import lru_cache
from pathlib import Path

import yaml

from articlekit.core.equality import is_number
from articlekit.core.errors import ArticlekitError
from articlekit.core.log import log
from articlekit.experiment.declared import DeclarationError, declarations, declared_experiments
from articlekit.core.sources import (
    SourceError,
    load_yaml,
    numbers_read_as_text,
    parse_yaml,
    read_text,
    yaml11_spelling,
    yaml_error_message,
)


class ConfigError(ArticlekitError):
    pass


def check_syntax(path):
    """Raise ConfigError naming the file and line when `path` is not a YAML
    mapping that Snakemake and articlekit read alike: a syntax error, a byte
    that is not UTF-8, a key given twice (Snakemake's reader silently keeps
    the second), a number Snakemake's YAML 1.1 reader takes for text (1e-7),
    an empty file, or a list or scalar on top."""
    shown = _shown(path)
    try:
        text = read_text(path)
        document = parse_yaml(text, shown)
        if "\t" in text:
            # libyaml, the strict reader's fast path, takes a tab after a colon
            # for a space; Snakemake's reader (PyYAML's own) refuses it
            yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_slip(exc, shown, text)) from None
    except SourceError as exc:  # not UTF-8, or a duplicate key
        raise ConfigError(str(exc)) from None
    data = document.data
    if data is None:
        raise ConfigError(
            f"{shown}: the file is empty; a config file holds the keys of config/schema.yaml "
            "(start from a copy of config.yaml)"
        )
    if not isinstance(data, dict):
        raise ConfigError(
            f"{shown}:1: the top level must be keys (strict: ..., experiments: ...), not a {type(data).__name__}"
        )
    texts = numbers_read_as_text(document)
    if texts:
        raise ConfigError(
            "\n  ".join(
                f"{shown}:{line}: {key}: {text} is a number, but Snakemake reads config files as YAML 1.1, "
                f"which takes it for the text {text!r}; write {yaml11_spelling(text)} (a dot and a signed "
                f"exponent), or quote it if you mean the text"
                for line, key, text in texts
            )
        )
    return data


def yaml_slip(error, shown, text):
    """'file:line:column: not valid YAML: ...' in the words of the slip an
    author makes (a tab, a bracket or quote left open, a line indented off
    its section, a second colon), with its fix; PyYAML's own words otherwise."""
    mark = getattr(error, "problem_mark", None)
    slip = _slip(error, mark, text.splitlines()) if mark is not None else None
    if slip is None:
        return yaml_error_message(error, shown)
    return f"{shown}:{mark.line + 1}:{mark.column + 1}: not valid YAML: {slip}"


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _slip(error, mark, lines):
    problem, context, opened = error.problem or "", error.context or "", error.context_mark
    line = mark.line + 1
    if "'\\t'" in problem or "\t" in problem:
        here = lines[mark.line] if mark.line < len(lines) else ""
        if here[: mark.column].strip():
            return (
                "a tab after the key, and YAML separates with spaces only; fix it there: replace the tab with a space"
            )
        return (
            "a tab indents this line, and YAML indents with spaces only; fix it there: replace the tab "
            "with spaces, as many as the keys beside it have"
        )
    for kind, closing in (("flow mapping", "}"), ("flow sequence", "]")):
        if kind in context and opened is not None:
            return (
                f"the {'{' if closing == '}' else '['} opened at line {opened.line + 1}, column "
                f"{opened.column + 1} is not closed before this line; fix it there: close it with {closing} "
                "(or add the comma between two of its items)"
            )
    if "quoted scalar" in context and opened is not None:
        return (
            f"the quote opened at line {opened.line + 1}, column {opened.column + 1} is never closed; "
            "fix it there: close it with the same quote"
        )
    if "expected <block end>" in problem or "mapping values are not allowed" in problem:
        here = lines[mark.line] if mark.line < len(lines) else ""
        before = [
            (number, text)
            for number, text in enumerate(lines[: mark.line], 1)
            if text.strip() and not text.lstrip().startswith("#")
        ]
        if before and _indent(here) != _indent(before[-1][1]):
            number, text = before[-1]
            above = _indent(text)
            deeper = _indent(here) > above
            aligned = deeper or any(_indent(other) == _indent(here) for _, other in before)
            if not aligned or (deeper and not text.rstrip().endswith(":")):
                spaces = f"{_indent(here)} space{'s' * (_indent(here) != 1)}"
                why = f"but line {number} already has its value" if deeper else "and no key above it is indented so"
                return (
                    f"this line is indented by {spaces} and line {number} above it by {above}, {why}; "
                    f"fix it there: keys of one section start in the same column, so indent it by {above} "
                    "spaces (or under a key that ends with ':' to start a section)"
                )
        if "mapping values are not allowed" in problem and here.count(": ") + here.rstrip().endswith(":") > 1:
            return (
                "a second ': ' on this line; fix it there: quote a value that holds a colon "
                "(key: \"a: b\"), or give each key a line of its own"
            )
    if "could not find expected ':'" in problem:
        return f"line {line} is no `key: value` (a ':' missing, or a quote left open); fix it there"
    return None


def check_syntax_for_snakemake(path):
    """check_syntax, raised as the WorkflowError Snakemake prints without a
    traceback. A missing file is left to Snakemake, which says so."""
    from snakemake.exceptions import WorkflowError

    if Path(path).exists():
        try:
            check_syntax(path)
        except ConfigError as exc:
            raise WorkflowError(str(exc)) from None


def _is_script(path):
    return str(path).endswith(".py")


def _line_index(path):
    """{("timing", "rounds"): line} for every key of a YAML file (1-based),
    or of an experiment script's declared defaults."""
    if _is_script(path):
        try:
            return {(): 1, **_script_declarations(path).lines}
        except (OSError, DeclarationError):
            return {}
    try:
        root = _read_only_document(path).root
    except (OSError, yaml.YAMLError, SourceError):
        return {}
    lines = {(): 1}

    def walk(node, prefix):
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                path = prefix + (key_node.value,)
                lines[path] = key_node.start_mark.line + 1
                walk(value_node, path)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[prefix + (i,)] = item.start_mark.line + 1
                walk(item, prefix + (i,))

    walk(root, ())
    return lines


def _read_only_document(path):
    """The file read strictly, once per content: where() and the messages
    look keys up in the same files many times. Never to be changed."""
    return _parsed(str(path), read_text(path))


@lru_cache(maxsize=16)
def _parsed(path, text):
    return parse_yaml(text, path)


_MISSING = object()


def _script_declarations(path):
    return declarations(path)


def _value_at(path, file):
    if _is_script(file):
        found = _script_declarations(file)
        data = {found.name: found.defaults}
    else:
        try:
            data = _read_only_document(file).data
        except yaml.YAMLError as exc:
            raise SourceError(yaml_error_message(exc, file)) from None
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return data


def _same(a, b):
    """Equal and of the same JSON type: True is not 1 here, as in the schema."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True  # the same .nan, though NaN equals nothing
    return (isinstance(a, bool), isinstance(a, (int, float)), isinstance(a, str)) == (
        isinstance(b, bool),
        isinstance(b, (int, float)),
        isinstance(b, str),
    ) and a == b


def _where(path, value, indexed):
    """'file:line' of the key in the file of highest precedence that sets it
    to this value; "--config" when the value came from the command line
    instead ("--config (overriding file:line)" when a file sets it too).
    An error about a key's content (a missing required key) points at the
    key itself. indexed: (file, _line_index(file)), highest precedence first."""
    for config_file, lines in indexed:
        if path in lines:
            where = f"{config_file}:{lines[path]}"
            given = _value_at(path, config_file)
            if isinstance(given, dict) and isinstance(value, dict):
                return where  # a mapping is merged key by key: the file of highest precedence has it
            if not _same(given, value):
                return f"--config (overriding {where})"
            return where
    return "--config"


def _hint(error):
    """What would fix it, where the schema's own message does not say."""
    if error.validator == "type" and error.validator_value == "boolean":
        return "; write true or false"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        return f"; allowed here: {', '.join(allowed)}" if allowed else ""
    if error.validator in (
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "enum",
    ) and error.schema.get("description"):
        return f" ({error.schema['description']})"
    return ""


def _cross_key_errors(config, schema, prefix=()):
    """(path, message) for each cross-key rule the config breaks: `x-divides:
    OTHER`, the key's value must divide its sibling OTHER's (heads |
    d_model); `x-at-most: OTHER`, it must not exceed it (the key's
    description, when it has one, says why)."""
    found = []
    for name, rule in (schema.get("properties") or {}).items():
        value = config.get(name) if isinstance(config, dict) else None
        if isinstance(value, dict):
            found += _cross_key_errors(value, rule, prefix + (name,))
        bound = rule.get("x-at-most")
        if bound and all(is_number(v) for v in (value, config.get(bound))) and value > config[bound]:
            dotted = ".".join(prefix + (bound,))
            why = f" ({rule['description']})" if rule.get("description") else ""
            found.append(
                (
                    prefix + (name,),
                    value,
                    f"{value} is more than {dotted} = {config[bound]}{why}; lower it "
                    f"to at most {config[bound]}, or raise {dotted}",
                )
            )
        other = rule.get("x-divides")
        if other and isinstance(value, int) and isinstance(config.get(other), int) and value > 0:
            total = config[other]
            if total % value:
                divisors = [str(d) for d in range(1, total + 1) if total % d == 0]
                dotted = ".".join(prefix + (other,))
                found.append(
                    (
                        prefix + (name,),
                        value,
                        f"{value} does not divide {dotted} = {total} (each of the "
                        f"{value} parts would get {total / value:g} columns); "
                        f"choose one of {', '.join(divisors)}, or change {dotted}",
                    )
                )
    return found


def _at(data, path):
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _shown(path):
    """A config file as the user would write it: relative when it is under
    the working folder (Snakemake hands --configfile over as absolute)."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def strict_validator(schema, rule_names=()):
    """A Draft 2020-12 validator of `schema` whose `type` refuses NaN and
    the infinities as numbers and floats as integers, and which knows
    `x-rule-name` (see the module's docstring)."""
    import jsonschema  # here, not on top: a plan that remembers its checks passed never loads it

    draft = jsonschema.Draft202012Validator
    reserved = sorted(set(rule_names))

    def strict_type(validator, types, instance, schema_here):
        found = list(draft.VALIDATORS["type"](validator, types, instance, schema_here))
        yield from found
        if found or not isinstance(instance, float):
            return
        types = [types] if isinstance(types, str) else list(types)
        if not math.isfinite(instance) and "number" in types and not schema_here.get("x-non-finite"):
            spelled = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}[repr(instance)]
            yield jsonschema.ValidationError(
                f"{spelled} is not a finite number, and a finite number is meant here (the schema's bounds "
                "cannot refuse NaN or infinity: JSON has neither); write a number"
            )
        elif "integer" in types and "number" not in types:
            yield jsonschema.ValidationError(
                f"{instance!r} is a float, and an integer is meant here: write {int(instance)} (no decimal "
                "point), or the experiment gets a float"
            )

    def rule_name(validator, wanted, instance, schema_here):
        if wanted and instance in reserved:
            yield jsonschema.ValidationError(
                f"{instance!r} is the name of one of the workflow's rules ({', '.join(reserved)}), and each "
                f"experiment gets a rule of its own name; rename the experiment (experiments/{instance}.py, "
                f"its entry here and its section {instance}:)"
            )

    strict = jsonschema.validators.extend(draft, {"type": strict_type, "x-rule-name": rule_name})
    return strict(schema)


def check_config(config, schema_path, config_files=(), rule_names=()):
    """Raise ConfigError listing every violation of the schema (its path,
    or the schema itself), or return. rule_names: the names of the
    workflow's rules, for `x-rule-name`."""
    if isinstance(schema_path, dict):
        _check(config, schema_path, "the schema", config_files, rule_names)
        return
    try:
        schema = load_yaml(schema_path)
    except SourceError as exc:
        raise ConfigError(str(exc)) from None
    _check(config, schema, str(schema_path), config_files, rule_names)


def _check(config, schema, schema_name, config_files=(), rule_names=(), hint=None):
    """check_config with the schema given; hint(path, error) may add to an
    error's message."""
    validator = strict_validator(schema, rule_names)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    found = []
    for error in errors:
        path, value = tuple(error.absolute_path), error.instance
        if error.validator == "additionalProperties":
            # point at the unexpected key itself, not at its parent
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            if extra:
                path, value = path + (extra[0],), error.instance[extra[0]]
        elif "propertyNames" in error.absolute_schema_path:
            # a key's name is wrong: point at the key, with its own value, so
            # that it is found in the file that sets it
            parent = _at(config, path)
            if isinstance(parent, dict) and error.instance in parent:
                path, value = path + (error.instance,), parent[error.instance]
        found.append((path, value, error.message + _hint(error) + (hint(path, error) if hint else "")))
    if not found:  # cross-key rules only make sense once every key has its type
        found = _cross_key_errors(config, schema)
    if not found:
        return
    by_precedence = list(dict.fromkeys(map(_shown, reversed(list(config_files)))))
    indexed = [(f, _line_index(f)) for f in by_precedence]
    problems = []
    for path, value, message in found:
        dotted = ".".join(str(p) for p in path) or "(top level)"
        where = _where(path, value, indexed) if path else (by_precedence[0] if by_precedence else "--config")
        problems.append(f"{where}: {dotted}: {message}")
    raise ConfigError(f"the configuration does not match {schema_name}:\n  " + "\n  ".join(problems))


# ---- an article without a schema for a section: the types config.yaml gives -------


def inferred_schema(value):
    """The JSON Schema of value's types, as its config file gives them: an
    integer stays an integer, a float a number (an integer is one too), a
    text a text, a boolean a boolean, a list a list of its items' common
    type, a mapping the same keys with their types (others allowed). No
    range, no required key: a type is all a value says about itself."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"} if math.isfinite(value) else {"type": "number", "x-non-finite": True}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        items = [inferred_schema(item) for item in value]
        kinds = {item.get("type") for item in items}
        if kinds == {"integer", "number"}:
            items = [{"type": "number"}]
        common = items[0] if items and all(item == items[0] for item in items) else None
        return {"type": "array", **({"items": common} if common else {})}
    if isinstance(value, dict):
        return {"type": "object", "properties": {str(k): inferred_schema(v) for k, v in value.items()}}
    return {}  # null: anything


def _reference(config_files):
    """The article's own config file, whose values give the types: the
    Snakefile's `configfile:`. The workflow lists its files as Snakemake
    does (workflow.configfiles: each --configfile, then the Snakefile's),
    then the --configfile files again (workflow.overwrite_configfiles), so
    it is the first file named once; None when there is none."""
    shown = [_shown(path) for path in config_files if not _is_script(path)]
    once = [path for path in shown if shown.count(path) == 1 and os.path.exists(path)]
    return once[0] if once else (shown[0] if shown and os.path.exists(shown[0]) else None)


# An experiment's `seed` is articlekit's to know: the seed sweep runs every
# experiment whose seed is an integer (articlekit/workflow/settings.py) over
# seeds derived from it, and NumPy's generators take nothing else. Without a
# schema, a seed typed as text ("2026x") made the experiment unseeded and
# failed in its job (SeedSequence expects int), not at its line.
SEED_SCHEMA = {"type": "integer", "minimum": 0}
SEED_WHY = (
    "a seed is a whole number, 0 or more: NumPy's generators take nothing else, and the seed sweep "
    "varies only an integer seed"
)

TYPE_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a text",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping (keys and values)",
}


def check_article_config(config, schema_path, config_files, sections, declared=None):
    """The article's own parameters, checked: each experiment's section
    against what its script declares (`declared`: {name: Declarations},
    the sources' PARAMETERS), the rest against the article's schema when
    it has one (check_config), and each of `sections` (its experiments'
    parameter sections) that neither describes, or all of them without
    either, against the types its first config file gives them
    (`inferred_schema`): a --configfile or --config that gives a parameter
    another type is refused at its line, with the type meant and where it
    was given. A value of the first file is its own reference, so a wrong
    type there, a range and a missing key are for a schema to catch; but a
    `seed` is held to what a seed is (SEED_SCHEMA), config.yaml's too."""
    declared = {name: found for name, found in (declared or {}).items() if found.parameters is not None}
    described = set(declared)
    schema = None
    if os.path.exists(schema_path):
        try:
            schema = load_yaml(schema_path)
        except SourceError as exc:
            raise ConfigError(str(exc)) from None
        twice = sorted(described & set((schema.get("properties") or {}) if isinstance(schema, dict) else ()))
        if twice:
            raise ConfigError(
                f"{schema_path}: describes {', '.join(twice)}:, whose script declares its PARAMETERS too; "
                f"describe an experiment's parameters in one place: take the section out of {schema_path}"
            )
    if schema is not None or declared:
        schema = article_schema(schema, declared)

        def new_key(path, error):
            if error.validator == "additionalProperties" and len(path) > 1:
                if path[0] in declared:
                    return (
                        f"; a new parameter: declare it in {declared[path[0]].path}'s PARAMETERS, with its "
                        "default and description"
                    )
                return f"; a new parameter: describe it in {schema_path} too"
            return ""

        shown = " and ".join(
            [
                *([str(schema_path)] if os.path.exists(schema_path) else []),
                *(["the experiments' PARAMETERS"] * bool(declared)),
            ]
        )
        _check(config, schema, shown, config_files, hint=new_key)
        described |= set(schema.get("properties") or {})
    reference = _reference(config_files)
    if reference is None:
        return
    try:
        given = _read_only_document(reference).data or {}
    except (OSError, yaml.YAMLError, SourceError):
        return
    inferred = {
        name: inferred_schema(given[name])
        for name in sections
        if name not in described and isinstance(given.get(name), dict)
    }
    if not inferred:
        return
    seeded = [name for name, section in inferred.items() if "seed" in section["properties"]]
    for name in seeded:  # what a seed is, articlekit knows: config.yaml's own value is held to it too
        inferred[name]["properties"]["seed"] = SEED_SCHEMA
    lines = _line_index(reference)

    def hint(path, error):
        if len(path) == 2 and path[1] == "seed" and error.validator in ("type", "minimum"):
            return "" if "write" in error.message else f" ({SEED_WHY})"
        if error.validator != "type" or path not in lines or "write" in error.message:
            return ""
        meant = TYPE_WORDS.get(error.validator_value, error.validator_value)
        return f"; {reference}:{lines[path]} gives it as {meant}, so write {meant}"

    described_by = (
        f"the types {reference} gives{', a seed a whole number' if seeded else ''} "
        f"({', '.join(sorted(inferred))}: neither its script's PARAMETERS nor {schema_path} describes "
        f"{'them' if len(inferred) > 1 else 'it'})"
    )
    _check(config, {"type": "object", "properties": inferred}, described_by, config_files, hint=hint)


def article_schema(schema, declared):
    """The article's schema (a dict, or None) with each declared
    experiment's section (its script's PARAMETERS) among its properties."""
    schema = dict(schema or {"type": "object"})
    schema["properties"] = {
        **(schema.get("properties") or {}),
        **{name: found.section_schema for name, found in declared.items() if found.parameters is not None},
    }
    return schema


# ---- the merged config: the scripts' defaults, then the files -------------------------


def declared_sources(config, root="."):
    """{name: Declarations} for each experiment of config `experiments:`
    whose script is there. ConfigError names a declaration that cannot be read."""
    names = [name for name in (config.get("experiments") or {}) if isinstance(name, str)]
    try:
        return declared_experiments(names, root)
    except DeclarationError as error:
        raise ConfigError(str(error)) from None


def with_defaults(config, declared):
    """(the config over its experiments' declared defaults, the sources:
    each declaring script, as a config file of least precedence). Nested
    keys merge one by one, as Snakemake merges --configfile files."""
    merged = {}
    for name, found in declared.items():
        defaults = found.defaults
        if defaults:
            merged[name] = defaults
    _update(merged, copy.deepcopy(dict(config)))
    return merged, [found.path for found in declared.values() if found.parameters is not None]


def merged_config(paths, root="."):
    """(the config the files make together over the declared defaults of
    the experiments they name, its sources: the scripts, then the files).
    What a build sees; for the commands that read the config by hand."""
    config = read_configs(paths)
    merged, scripts = with_defaults(config, declared_sources(config, root))
    return merged, [*scripts, *map(str, paths)]


def where(config, key, config_files=()):
    """'file:line' of a key of the merged config ("timing.T" ->
    "config.yaml:97", or "--config"), as check_config places it: for a
    problem found after the schema, such as a size too large. `key` is
    dotted, or a path that may index lists (("matrix", "environments", 0, "label"))."""
    path, value = (tuple(key.split(".")) if isinstance(key, str) else tuple(key)), config
    for part in path:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value):
            value = value[part]
        else:
            value = None
    by_precedence = list(dict.fromkeys(map(_shown, reversed(list(config_files)))))
    return _where(path, value, [(f, _line_index(f)) for f in by_precedence])


def check_known_keys(config, known, config_files=(), what="not a known key", explain=None):
    """Raise ConfigError naming each top-level key that is not in `known`,
    with its file and line and the closest known key: a misspelt section
    (publishin:) would otherwise be kept and silently never read.
    explain(key, guess) may say better what the key is and how to fix it
    (guess: the closest-key hint, for it to keep or drop); None keeps the guess."""
    unknown = [key for key in config if key not in known]
    if not unknown:
        return
    by_precedence = list(dict.fromkeys(map(_shown, reversed(list(config_files)))))
    indexed = [(f, _line_index(f)) for f in by_precedence]
    problems = []
    for key in unknown:
        close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1)
        hint = f"did you mean {close[0]}?" if close else f"the keys are {', '.join(sorted(map(str, known)))}"
        hint = (explain(key, hint) if explain else None) or hint
        problems.append(f"{_where((key,), config[key], indexed)}: {key}: is {what}; {hint}")
    raise ConfigError("unknown key(s) in the configuration:\n  " + "\n  ".join(problems))


def main(argv):
    """python -m articlekit config FILE...: the checks a build makes, by hand.
    Later files override earlier ones, as with several --configfile, and
    every file the experiments' declared defaults (experiments/NAME.py)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m articlekit config", description=main.__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="config files, e.g. config.yaml config/test.yaml")
    parser.add_argument("--schema", default="config/schema.yaml")
    parser.add_argument(
        "--merged", action="store_true", help="print the merged config (defaults, then each file) as YAML"
    )
    args = parser.parse_args(argv)
    try:
        merged, sources = merged_config(args.files)
        check_article_config(merged, args.schema, sources, merged.get("experiments") or {}, declared_sources(merged))
    except (OSError, ConfigError) as exc:
        log.error(f"config: {exc}")
        return 1
    if args.merged:
        print(yaml.safe_dump(merged, sort_keys=False, allow_unicode=True), end="")
        return 0
    log.info(f"config: {', '.join(args.files)} match {args.schema} and the experiments' PARAMETERS")
    return 0


def read_configs(paths):
    """The config the files make together, each read strictly (check_syntax),
    later files overriding earlier ones key by key, as Snakemake merges
    --configfile files."""
    merged = {}
    for path in paths:
        _update(merged, check_syntax(path))
    return merged


def _update(base, new):
    """Snakemake's merge of config files: nested keys override one by one."""
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _update(base[key], value)
        else:
            base[key] = value
