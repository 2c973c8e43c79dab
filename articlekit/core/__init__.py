"""Leaves every stage stands on: formatting, claims, keys, strict reading
of source files, JSON and work files.

Owns: how a value becomes text (fmt), the claim grammar and its verdicts
(claims), a claim's status and every word, sign and mark that says it
(status), key paths into the values (keys), reading YAML and text strictly
(sources), JSON at full precision with atomic writes (jsonio), checking a
document against a JSON Schema with each problem's entry named (schema),
work folders a killed run leaves (workfiles), the command that recomputes
a key, as the pages print it (commands), which rule wrote each file of a
build and its digest then (ledger), the project a command serves, found
from any folder inside it (project).

May import: the standard library and third-party libraries only; nothing
of articlekit outside core. Knows no article and no stage.
"""
