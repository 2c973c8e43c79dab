"""From values to the article's text: shortcodes, their bindings, the
departures section and the lint for typed numbers.

Owns: the shortcode grammar and the lookup id (shortcodes), resolving the
shortcodes (bind), build/bindings.json's shape, writing and reading
(bindings, with bindings_schema.json), the departures section (departures),
the lint (lint), and the figures the article shows, with their lines
(figures).

May import: articlekit.core, articlekit.experiment, articlekit.data.
"""
