"""This article's experiments: one module each, run from the article
folder as `python -m experiments.<name>` (by Snakemake, or by hand with
--config config.yaml)."""
