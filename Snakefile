# Attention from scratch: NumPy vs PyTorch -- the article as a DAG, built by
# articlekit's Snakemake module from config.yaml (experiments: declares the
# experiments, publishing: what the machinery records and compares).
#
#   snakemake --cores 4      build every artifact, the article, audit and diff
#   snakemake -n             show the plan
#   snakemake release        freeze this build as a snapshot under releases/
#   snakemake matrix         the article across the library versions of config matrix:

import articlekit.workflow
from articlekit.data.config import check_syntax_for_snakemake

# A YAML slip in config.yaml is named with its line (Snakemake's own
# message names neither file nor line).
check_syntax_for_snakemake("config.yaml")


configfile: "config.yaml"


module articlekit:
    snakefile:
        articlekit.workflow.snakefile()
    config:
        config


use rule * from articlekit
