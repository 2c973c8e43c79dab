# Seed robustness: every seeded experiment (its params have a `seed`, and
# config robustness.exclude does not leave it out) rerun for config
# robustness.seeds seeds derived from its own, in chunks of robustness.chunk
# seeds, one process per chunk (articlekit/experiment/sweep.py), then one
# page of the article's seeded values and claims across them, and the
# figures of one value across the seeds that the article shows.
#
#   snakemake robustness --cores 4      -> build/robustness.{html,md,json}
#
# Each chunk is a job and an output of its own: --cores and a cluster
# profile spread them, and a killed sweep resumes from the chunks it had not
# written. A seed whose run raises is recorded in its chunk, not fatal.


rule robustness_chunk:
    input:
        # the experiment's code and the sweep's, which runs it
        code=lambda wildcards: sorted(
            {
                *experiment_code(wildcards.experiment),
                *module_code("articlekit.experiment.sweep"),
            }
        ),
    output:
        json="results/robustness/{experiment}/chunk-{chunk}.json",
    log:
        "logs/robustness/{experiment}/chunk-{chunk}.log",
    benchmark:
        "benchmarks/out/robustness/{experiment}/chunk-{chunk}.tsv"
    wildcard_constraints:
        experiment=PLAN.sweep.wildcard,
        chunk=r"\d+",
    resources:
        mem_mb=lambda wildcards: PLAN.experiment(wildcards.experiment).mem_mb,
        runtime=lambda wildcards: PLAN.experiment(wildcards.experiment).runtime,
    params:
        # plain values of the wildcards: an edited parameter, seed count or
        # chunk size reruns the chunks it changes
        config=lambda wildcards: PLAN.params_json(PLAN.experiment(wildcards.experiment)),
        seeds=lambda wildcards: PLAN.sweep.seed_arguments(wildcards.chunk),
        versions=experiment_versions,
        libraries=lambda wildcards: PLAN.library_arguments(
            PLAN.experiment(wildcards.experiment)
        ),
    shell:
        "python -m articlekit.experiment.sweep --experiment {wildcards.experiment} "
        "--params {params.config:q} {params.seeds} {params.libraries} "
        "--out {output.json} --log {log}"


# The sweep's claims and values across its seeds: what the article binds
# (robustness.<key>.median, ...), so it is the article's step, before bind.
# Which claims and values: the article's, read from it by the job; the param
# is their digest, so that a new printed key or claim reruns the summary (a
# prose edit does not: the article is no input) and Snakemake's reason
# ("Params have changed ...") prints one short line, not the article's list.
rule robustness_summary:
    input:
        chunks=PLAN.sweep.chunks,
        results=[f"results/{name}.json" for name in PLAN.sweep.experiments],
        baseline=PLAN.baseline,
        code=module_code("articlekit.article.robustness"),
    output:
        json=PLAN.robustness_json,
    log:
        "logs/robustness/summary.log",
    benchmark:
        "benchmarks/out/robustness/summary.tsv"
    localrule: True
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        settings=PLAN.sweep.settings_json,
        article=PLAN.article,
        shortcodes=PLAN.sweep.shortcodes_digest,
    shell:
        "python -m articlekit.article.robustness --chunks {input.chunks} --results {input.results} "
        "--baseline {input.baseline} --article {params.article:q} --digest {params.shortcodes} "
        "--settings {params.settings:q} --json {output.json} 2> {log}"


# The article's figures of one value across the seeds, for an article that
# shows one (figures/robustness-<key>.svg, read from its image links).
if PLAN.sweep.figures:

    rule robustness_figures:
        input:
            json=PLAN.robustness_json,
            code=module_code("articlekit.article.seed_figure"),
        output:
            figures=list(PLAN.sweep.figures),
        log:
            "logs/robustness/figures.log",
        benchmark:
            "benchmarks/out/robustness/figures.tsv"
        params:
            figures=PLAN.sweep.figure_arguments,
        shell:
            "python -m articlekit.article.seed_figure {input.json} {params.figures} 2> {log}"


# Its page, for reviewers.
rule robustness_report:
    input:
        json=PLAN.robustness_json,
        code=module_code("articlekit.review.robustness"),
    output:
        md="build/robustness.md",
        html=report(
            "build/robustness.html", caption="report/robustness.rst", category="Audit"
        ),
    log:
        "logs/robustness/report.log",
    benchmark:
        "benchmarks/out/robustness/report.tsv"
    localrule: True
    shell:
        "python -m articlekit.review.robustness {input.json} --md {output.md} "
        "--html {output.html} 2> {log}"


# The one command: the page, and its one-line summary. The chunks are its
# inputs too: Snakemake would not remake a missing one while the page exists.
rule robustness:
    input:
        chunks=PLAN.sweep.chunks,
        json=PLAN.robustness_json,
        md="build/robustness.md",
        html="build/robustness.html",
    log:
        "logs/robustness/done.log",
    localrule: True
    shell:
        "cat logs/robustness/summary.log > {log}; cat {log} >&2"
