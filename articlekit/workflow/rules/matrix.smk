# The version matrix: every experiment (but those config matrix.exclude
# leaves out) in one isolated environment per `matrix:` entry, then one page
# comparing the article's claims, texts and values across them.
#
#   snakemake matrix --cores 4      -> build/matrix.{html,md,json}
#
# lock resolves an entry's pins for its Python (the entry's `python:`, else
# the build's own) and installs nothing: a pin the index lacks, or a Python
# this machine lacks, stops the run before any environment is built (every install waits for
# every lock; ancient: a new lock of one entry rebuilds only that entry).
# An environment that does not install, or an experiment that crashes in it,
# is recorded, not fatal: the others are still built, and the `matrix` rule
# then fails naming its log.
#
# On a cluster (--profile profiles/slurm) the cells (one experiment in one
# environment), the columns and the page are jobs; the environments are made
# where Snakemake runs, as its own --use-conda makes conda environments: the
# login node reaches the package index, compute nodes often do not, and the
# venvs land on the shared filesystem the jobs read. The final check runs
# there too, so that its message about a failed environment is printed in the
# terminal, not in a job's log.


import re


wildcard_constraints:
    label=PLAN.matrix.label_wildcard,
    experiment="|".join(map(re.escape, PLAN.experiment_names)) or "(?!)",


rule matrix_lock:
    output:
        lock="results/matrix/{label}/requirements.lock",
    log:
        "logs/matrix/{label}/lock.log",
    benchmark:
        "benchmarks/out/matrix/{label}/lock.tsv"
    localrule: True
    resources:
        mem_mb=500,
        runtime=5,
    params:
        pins=lambda wildcards: PLAN.matrix.entry_arguments(wildcards.label),
        # derived (a function of the output too): a moved line reruns nothing
        where=lambda wildcards, output: PLAN.matrix.python_where_argument(
            wildcards.label
        ),
    shell:
        "python -m articlekit.review.matrixenv lock --label {wildcards.label} {params.pins} "
        "{params.where} --out {output.lock} 2> {log} || (cat {log} >&2; exit 1)"


rule matrix_env:
    input:
        lock="results/matrix/{label}/requirements.lock",
        every_lock=ancient(PLAN.matrix.locks),
    output:
        freeze="results/matrix/{label}/freeze.json",
        venv=directory(".venv-matrix/{label}"),
    log:
        "logs/matrix/{label}/install.log",
    benchmark:
        "benchmarks/out/matrix/{label}/install.tsv"
    localrule: True
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        pins=lambda wildcards: PLAN.matrix.entry_arguments(wildcards.label),
        # derived: the entry's pins above already carry it
        python=lambda wildcards, output: PLAN.matrix.python_argument(wildcards.label),
        # derived too: an experiment's edited imports rebuild no environment
        # (--forcerun matrix_env compiles what they import now)
        warm=lambda wildcards, output: matrix_warm_arguments(),
    shell:
        "python -m articlekit.review.matrixenv install --label {wildcards.label} --lock {input.lock} "
        "{params.python} --venv {output.venv} --out {output.freeze} --log {log} {params.warm}"


rule matrix_experiment:
    input:
        environment="results/matrix/{label}/freeze.json",
        code=lambda wildcards: experiment_code(wildcards.experiment),
    output:
        json="results/matrix/{label}/{experiment}.json",
    log:
        "logs/matrix/{label}/{experiment}.log",
    benchmark:
        "benchmarks/out/matrix/{label}/{experiment}.tsv"
    threads: experiment_threads_of
    # The experiment's own entry (config experiments:), as its main rule
    # asks: the same script, run in another environment.
    resources:
        mem_mb=lambda wildcards: PLAN.experiment(wildcards.experiment).mem_mb,
        runtime=lambda wildcards: PLAN.experiment(wildcards.experiment).runtime,
    params:
        # a plain value of the wildcards: an edited parameter reruns it in every environment
        config=lambda wildcards: PLAN.params_json(PLAN.experiment(wildcards.experiment)),
        # derived (functions of threads and resources): they rerun nothing
        threads=lambda wildcards, threads: PLAN.experiment(
            wildcards.experiment
        ).threads_argument(threads),
        limits=lambda wildcards, resources: PLAN.experiment(
            wildcards.experiment
        ).limits_argument(resources),
        libraries=lambda wildcards: PLAN.library_arguments(
            PLAN.experiment(wildcards.experiment)
        ),
    shell:
        "python -m articlekit.review.matrixenv run --environment {input.environment} "
        "--experiment {wildcards.experiment} --params {params.config:q} {params.threads} "
        "{params.limits} {params.libraries} --out {output.json} --log {log}"


rule matrix_column:
    input:
        environment="results/matrix/{label}/freeze.json",
        results=expand(
            "results/matrix/{{label}}/{experiment}.json",
            experiment=PLAN.matrix.experiments,
        ),
        shared=PLAN.matrix.shared,
        article=PLAN.article,
        baseline=PLAN.baseline,
        code=module_code("articlekit.review.matrix"),
    output:
        json="build/matrix/{label}.json",
    log:
        "logs/matrix/{label}/column.log",
    benchmark:
        "benchmarks/out/matrix/{label}/column.tsv"
    params:
        pins=lambda wildcards: PLAN.matrix.entry_arguments(wildcards.label),
        publishing=PLAN.publishing_json,
    shell:
        "python -m articlekit.review.matrix column --label {wildcards.label} {params.pins} "
        "--environment {input.environment} --results {input.results} "
        "--shared {input.shared} --article {input.article} --baseline {input.baseline} "
        "--publishing {params.publishing:q} --out {output.json} 2> {log}"


rule matrix_report:
    input:
        columns=expand("build/matrix/{label}.json", label=PLAN.matrix.labels),
        baseline=PLAN.baseline,
        code=module_code("articlekit.review.matrix"),
    output:
        json=PLAN.matrix_json,
        md="build/matrix.md",
        html=report("build/matrix.html", caption="report/matrix.rst", category="Audit"),
    log:
        "logs/matrix/report.log",
    benchmark:
        "benchmarks/out/matrix/report.tsv"
    params:
        publishing=PLAN.publishing_json,
    shell:
        "python -m articlekit.review.matrix report {input.columns} --baseline {input.baseline} "
        "--json {output.json} --md {output.md} --html {output.html} "
        "--publishing {params.publishing:q} 2> {log}"


# The one command. Fails, after the page is written, when an environment
# did not install or an experiment crashed in it, naming the log.
rule matrix:
    input:
        json=PLAN.matrix_json,
        md="build/matrix.md",
        html="build/matrix.html",
    log:
        "logs/matrix/check.log",
    localrule: True
    shell:
        "python -m articlekit.review.matrix check {input.json} 2> {log} || (cat {log} >&2; exit 1)"
