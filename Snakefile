# Attention from scratch: NumPy vs PyTorch -- the article as a DAG.
# Wiring only: every rule's logic lives in experiments/ or articlekit/.
#
#   snakemake --cores 4      build every artifact, the article, audit and diff
#   snakemake -n             show the plan
#   snakemake release        freeze this build as a snapshot under releases/
#   snakemake matrix         the article across the library versions of config matrix:


from articlekit.config import check_syntax_for_snakemake

# A YAML slip in config.yaml is named with its line (Snakemake's own
# message names neither file nor line).
check_syntax_for_snakemake("config.yaml")


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/experiments.smk"
include: "rules/article.smk"
include: "rules/audit.smk"
include: "rules/matrix.smk"


rule all:
    default_target: True
    input:
        every_output,
