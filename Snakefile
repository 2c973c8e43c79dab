# Attention from scratch: NumPy vs PyTorch -- the article as a DAG.
# Wiring only: every rule's logic lives in experiments/ or articlekit/.
#
#   snakemake --cores 4      build every artifact, the article, audit and diff
#   snakemake -n             show the plan
#   snakemake release        freeze this build as a snapshot under releases/
#   snakemake matrix         the article across the library versions of config matrix:


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
        ARTICLE_OUTPUTS,
        AUDIT_OUTPUTS,
