"""The summation article's experiments: one module each, run from the
article folder as `python -m experiments.<name>`."""
