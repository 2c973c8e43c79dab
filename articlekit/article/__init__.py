"""From values to the article's text: shortcodes, their bindings, the
departures section and the lint for typed numbers.

Owns: the shortcode grammar (shortcodes), build/bindings.json (bind),
the departures section (departures), and the lint (lint).

May import: articlekit.core, articlekit.experiment, articlekit.data.
"""
