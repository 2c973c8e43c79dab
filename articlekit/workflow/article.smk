# From artifacts to the article: merge values, bind them into the prose,
# lint for typed numbers, read it once as Pandoc does, render the page and the PDF.


# Only for an article that shows listings (publishing.listings).
if LISTING_SOURCES:

    rule listings:
        input:
            source=LISTING_SOURCES,
            code=command_code("listings"),
        output:
            json=LISTINGS,
        log:
            "logs/listings.log",
        benchmark:
            "benchmarks/out/listings.tsv"
        params:
            publishing=LISTINGS_PUBLISHING_JSON,
        shell:
            "python -m articlekit listings --publishing {params.publishing:q} "
            "--out {output.json} 2> {log}"


rule values:
    input:
        results=RESULTS,
        # build/robustness.json, when the article binds robustness.* keys
        robustness=ROBUSTNESS_VALUES,
        baseline=BASELINE,
        code=command_code("values"),
    output:
        json=VALUES,
    log:
        "logs/values.log",
    benchmark:
        "benchmarks/out/values.tsv"
    params:
        # each artifact and the baseline held against it (no input: it changes on every job)
        ledger=LEDGER,
    shell:
        "python -m articlekit values {input.results} {input.robustness} --baseline {input.baseline} "
        "--ledger {params.ledger} --out {output.json} 2> {log}"


rule lint_article:
    input:
        article=ARTICLE,
        values=VALUES,
        code=command_code("lint"),
    output:
        report=LINT_REPORT,
    log:
        "logs/lint_article.log",
    benchmark:
        "benchmarks/out/lint_article.tsv"
    shell:
        "python -m articlekit lint {input.article} --values {input.values} --out {output.report} 2> {log}"


rule bind:
    input:
        article=ARTICLE,
        values=VALUES,
        # {{< departures >}}: where this build departs from the edition
        baseline=BASELINE,
        code=command_code("bind"),
    output:
        json=BINDINGS,
    log:
        "logs/bind.log",
    benchmark:
        "benchmarks/out/bind.tsv"
    params:
        strict=STRICT,
    shell:
        "python -m articlekit bind {input.article} --values {input.values} "
        "--strict {params.strict} --baseline {input.baseline} --out {output.json} 2> {log}"


# The article as Pandoc reads it (its tree, in Pandoc's JSON), read once for
# the HTML, the markdown and the PDF, which Pandoc writes from it: reading
# is most of what each costs. It is written only once the prose check
# passed (articlekit/article/prose_guard.py: raw HTML, images, attributes).
# Its Pandoc's version is a param: a new Pandoc reads the article again.
rule parse_article:
    input:
        article=ARTICLE,
        code=command_code("parse"),
    output:
        ast=PANDOC_TREE,
    log:
        "logs/parse_article.log",
    benchmark:
        "benchmarks/out/parse_article.tsv"
    params:
        pandoc_version=PANDOC_VERSION,
    shell:
        "python -m articlekit parse {input.article} --out {output.ast} 2> {log}"


rule render:
    input:
        article=ARTICLE,
        extension=EXTENSION,
        quarto=f"{ARTICLE_DIR}/_quarto.yml",
        style=ARTICLE_STYLE,
        bindings=BINDINGS,
        lint=LINT_REPORT,
        figures=article_figures,
        # checked when it was read (raw HTML refused): Pandoc writes the
        # page from it; Quarto reads the article once it passed
        ast=PANDOC_TREE,
        code=command_code("render"),
    output:
        html="build/article.html",
        md="build/article.md",
    log:
        "logs/render.log",
    benchmark:
        "benchmarks/out/render.tsv"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        renderer=RENDERER,
        renderer_version=RENDERER_VERSION,
    shell:
        "python -m articlekit render {input.article} --bindings {input.bindings} "
        "--renderer {params.renderer} --ast {input.ast} --html {output.html} --md {output.md} 2> {log}"


rule pdf:
    input:
        article=ARTICLE,
        extension=EXTENSION,
        bindings=BINDINGS,
        lint=LINT_REPORT,
        figures=article_figures,
        ast=PANDOC_TREE,
        code=command_code("pdf"),
    output:
        pdf=report(
            "build/article.pdf",
            caption="report/article-pdf.rst",
            category="Article",
        ),
    log:
        "logs/pdf.log",
    benchmark:
        "benchmarks/out/pdf.tsv"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        pandoc_version=PANDOC_VERSION,
        typst_version=TYPST_VERSION,
    shell:
        "python -m articlekit pdf {input.article} --bindings {input.bindings} "
        "--ast {input.ast} --out {output.pdf} 2> {log}"
