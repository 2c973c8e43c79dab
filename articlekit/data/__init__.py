"""What a build reads and merges: configuration, the article's publishing
settings, the values of every artifact, the published edition, the record
of the environment, and what this build says of each edition entry.

Owns: config checking with file and line, over the experiments' declared
defaults (config), the reference of parameters and result keys written
from those declarations (reference), the publishing: section
(publishing), code listings cut from the sources (listings),
build/values.json (values), baseline/published.yaml (baseline), its
agreement classes, one object each, and the kind of each value (classes),
the environment record (environment), the verdict on each baseline entry,
one judgement for the audit and the article's departures section (edition).

May import: articlekit.core and articlekit.experiment (the envelope).
"""
