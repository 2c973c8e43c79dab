"""A new article: `python -m articlekit new PATH` writes the skeleton in
article/ (package data) that builds as written.

May import: articlekit.core and the package's version.
"""
