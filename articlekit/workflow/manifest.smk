# The build's manifest: the SHA-256 of every file the build wrote and read,
# each with the rule that made or read it, for `python -m articlekit verify`.
# Last in the DAG: every other output of the default build is its input, so
# it is made again whenever anything is, and only then; so are the files the
# plan reads (the config and its schemas, the Snakefiles). It refuses an
# output its rule did not write, or a source that changed while the build
# ran (articlekit/core/ledger.py).

MANIFEST = "build/manifest.json"
# What the plan reads that no job does: shown relative to the article when
# inside it (the module's own files are, in this repository).
PLAN_SOURCES = sorted(
    {
        os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
        for path in [
            *CONFIG_FILES,
            workflow.main_snakefile,
            *MODULE_FILES,
            MODULE_SCHEMA,
            *([ARTICLE_SCHEMA] if os.path.exists(ARTICLE_SCHEMA) else []),
        ]
    }
)


rule manifest:
    input:
        # every other file of the default target
        outputs=lambda wildcards: [p for p in default_outputs() if p != MANIFEST],
        plan=PLAN_SOURCES,
        code=module_code("articlekit.review.manifest"),
    output:
        json=MANIFEST,
    log:
        "logs/manifest.log",
    benchmark:
        "benchmarks/out/manifest.tsv"
    params:
        ledger=LEDGER,
    shell:
        "python -m articlekit.review.manifest --ledger {params.ledger} --read {input.plan} "
        "--out {output.json} {input.outputs} 2> {log}"
