# Attention from scratch: NumPy vs PyTorch -- the article as a DAG, built by
# articlekit's Snakemake module from config.yaml (experiments: declares the
# experiments, publishing: what the machinery records and compares).
#
#   snakemake --cores 4      build every artifact, the article, audit and diff
#   snakemake -n             show the plan
#   snakemake release        freeze this build as a snapshot under releases/
#   snakemake matrix         the article across the library versions of config matrix:

import articlekit.workflow


# A YAML slip in config.yaml is named with its line and column (Snakemake's
# own message names neither file nor line).
configfile: articlekit.workflow.checked_config("config.yaml")


module articlekit:
    snakefile:
        articlekit.workflow.snakefile()
    config:
        config


use rule * from articlekit
