"""From values to the article's text: shortcodes, their bindings, the
departures section, the lint for typed numbers, and the article's claims
judged across the seed sweep's seeds.

Owns: the shortcode grammar and the lookup id (shortcodes), resolving the
shortcodes (bind), build/bindings.json's shape, writing and reading
(bindings, with bindings_schema.json), the departures section (departures),
the lint (lint), the figures the article shows, with their lines
(figures), and build/robustness.json, the sweep's claims and values
across seeds, which the article may bind (robustness).

May import: articlekit.core, articlekit.experiment, articlekit.data.
"""
