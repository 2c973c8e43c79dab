# The build's manifest: the SHA-256 of every file the build wrote and read,
# each with the rule that made or read it, for `python -m articlekit verify`.
# Last in the DAG: every other output of the default build is its input, and
# so are the files the plan reads (the config and its schemas, the
# Snakefiles), so it is made again whenever any of them changes, and only
# then. It refuses an output its rule did not write, or a source that
# changed while the build ran (articlekit/core/ledger.py).


rule manifest:
    input:
        # every other file of the default target
        outputs=lambda wildcards: [p for p in default_outputs() if p != PLAN.manifest],
        plan=PLAN.plan_sources(),
        code=module_code("articlekit.review.manifest"),
    output:
        json=PLAN.manifest,
    log:
        "logs/manifest.log",
    benchmark:
        "benchmarks/out/manifest.tsv"
    params:
        ledger=PLAN.ledger,
    shell:
        "python -m articlekit.review.manifest --ledger {params.ledger} --read {input.plan} "
        "--out {output.json} {input.outputs} 2> {log}"
