# The build's manifest, an RO-Crate (build/ro-crate-metadata.json): the
# SHA-256 of every file the build wrote and read, each job that wrote one,
# and every bound value, for `python -m articlekit verify` and a reader's tool.
# Last in the DAG: every other output of the default build is its input, and
# so are the files the plan reads (the config and its schemas, the
# Snakefiles), so it is made again whenever any of them changes, and only
# then. It refuses an output its rule did not write, or a source that
# changed while the build ran (articlekit/core/ledger.py).


rule manifest:
    input:
        # every other file of the default target
        outputs=lambda wildcards: [
            p
            for p in default_outputs()
            if p not in (PLAN.manifest, PLAN.journal_bundle)
        ],
        plan=PLAN.plan_sources(),
        code=module_code("articlekit.review.manifest"),
        bindings=PLAN.bindings,
        article=PLAN.article,
    output:
        json=PLAN.manifest,
    log:
        "logs/manifest.log",
    benchmark:
        "benchmarks/out/manifest.tsv"
    localrule: True
    params:
        ledger=PLAN.ledger,
    shell:
        "python -m articlekit.review.manifest --ledger {params.ledger:q} --read {input.plan:q} "
        "--bindings {input.bindings:q} --article {input.article:q} --out {output.json:q} {input.outputs:q} 2> {log:q}"


# The journal's bundle: the JATS edition with the crate beside it, listed in
# its MECA manifest. Made after the crate, which lists the JATS zip and so
# cannot be inside it; the crate does not list this bundle, its package.
for fmt in [f for f in PLAN.formats if f.name == "jats"]:

    rule journal_bundle:
        input:
            jats=fmt.output,
            crate=PLAN.manifest,
            code=module_code("articlekit.review.journal_bundle"),
        output:
            zip=PLAN.journal_bundle,
        log:
            "logs/journal_bundle.log",
        benchmark:
            "benchmarks/out/journal_bundle.tsv"
        localrule: True
        shell:
            "python -m articlekit.review.journal_bundle --jats {input.jats:q} --crate {input.crate:q} "
            "--out {output.zip:q} 2> {log:q}"
