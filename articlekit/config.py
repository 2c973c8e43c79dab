"""Check the merged configuration against config/schema.yaml, and say where.

Snakemake's own validate() stops at the first error and prints the schema
around it. This lists every error, one line each, with the file and line it
came from:

    config.yaml:50: timing.rounds: 1 is less than the minimum of 6
    config.yaml:12: bogus: Additional properties are not allowed ('bogus' was unexpected)

A value given with --config has no file line; it is named as "--config".
"""

from pathlib import Path

import jsonschema
import yaml


class ConfigError(ValueError):
    pass


def _line_index(path):
    """{("timing", "rounds"): line} for every key of a YAML file (1-based)."""
    try:
        root = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
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


def _value_at(path, file):
    data = yaml.safe_load(Path(file).read_text(encoding="utf-8"))
    for part in path:
        data = data[part]
    return data


def _where(path, value, indexed):
    """'file:line' of the key (or its closest enclosing key) in the file of
    highest precedence that sets it; "--config" when the value came from the
    command line instead. indexed: (file, _line_index(file)), highest
    precedence first."""
    for depth in range(len(path), -1, -1):
        for config_file, lines in indexed:
            if path[:depth] in lines:
                where = f"{config_file}:{lines[path[:depth]]}"
                if depth == len(path) and _value_at(path, config_file) != value:
                    return f"--config (overriding {where})"
                return where
    return "--config"


def check_config(config, schema_path, config_files=()):
    """Raise ConfigError listing every violation of the schema, or return."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    by_precedence = list(dict.fromkeys(map(str, reversed(list(config_files)))))
    indexed = [(f, _line_index(f)) for f in by_precedence]
    problems = []
    for error in errors:
        path, value = tuple(error.absolute_path), error.instance
        if error.validator == "additionalProperties":
            # point at the unexpected key itself, not at its parent
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            if extra:
                path, value = path + (extra[0],), error.instance[extra[0]]
        dotted = ".".join(str(p) for p in path) or "(top level)"
        problems.append(f"{_where(path, value, indexed)}: {dotted}: {error.message}")
    raise ConfigError(
        f"the configuration does not match {schema_path}:\n  " + "\n  ".join(problems)
    )
