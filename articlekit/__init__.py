"""Publishing machinery: merge experiment artifacts, bind them into the
article's prose, check its claims, render it, and audit it."""

# The library's own version, apart from any article's: `python -m articlekit --version`.
__version__ = "1.0.0"
