# From artifacts to the article: merge values, bind them into the prose,
# lint for typed numbers, read it once as Pandoc does, render the page and the PDF.


# Only for an article that shows listings (publishing.listings).
if PLAN.listing_sources:

    rule listings:
        input:
            source=PLAN.listing_sources,
            code=command_code("listings"),
        output:
            json=PLAN.listings,
        log:
            "logs/listings.log",
        benchmark:
            "benchmarks/out/listings.tsv"
        localrule: True
        params:
            publishing=PLAN.listings_publishing_json,
        shell:
            "python -m articlekit listings --publishing {params.publishing:q} "
            "--out {output.json:q} 2> {log:q}"


rule values:
    input:
        results=PLAN.results,
        # build/robustness.json, when the article binds robustness.* keys
        robustness=PLAN.robustness_values,
        baseline=PLAN.baseline,
        code=command_code("values"),
    output:
        json=PLAN.values,
    log:
        "logs/values.log",
    benchmark:
        "benchmarks/out/values.tsv"
    localrule: True
    params:
        # each artifact and the baseline held against it (no input: it changes on every job)
        ledger=PLAN.ledger,
    shell:
        "python -m articlekit values {input.results:q} {input.robustness:q} --baseline {input.baseline:q} "
        "--ledger {params.ledger:q} --out {output.json:q} 2> {log:q}"


rule lint_article:
    input:
        article=PLAN.article,
        values=PLAN.values,
        code=command_code("lint"),
    output:
        report=PLAN.lint_report,
    log:
        "logs/lint_article.log",
    benchmark:
        "benchmarks/out/lint_article.tsv"
    localrule: True
    shell:
        "python -m articlekit lint {input.article:q} --values {input.values:q} --out {output.report:q} 2> {log:q}"


rule bind:
    input:
        article=PLAN.article,
        values=PLAN.values,
        # {{< departures >}}: where this build departs from the edition
        baseline=PLAN.baseline,
        code=command_code("bind"),
    output:
        json=PLAN.bindings,
        # the article with every shortcode resolved: what every format renders
        bound=PLAN.bound_article,
    log:
        "logs/bind.log",
    benchmark:
        "benchmarks/out/bind.tsv"
    localrule: True
    params:
        strict=PLAN.strict,
    shell:
        "python -m articlekit bind {input.article:q} --values {input.values:q} "
        "--strict {params.strict} --baseline {input.baseline:q} --out {output.json:q} "
        "--bound {output.bound:q} 2> {log:q}"


# The bound article as Pandoc reads it (its tree, in Pandoc's JSON), read
# once for the HTML, the markdown and the PDF, which Pandoc writes from it:
# reading is most of what each costs. It is written only once the prose
# check passed (articlekit/article/prose_guard.py: raw HTML, images,
# attributes). Its Pandoc's version is a param: a new Pandoc reads it again.
rule parse_article:
    input:
        article=PLAN.article,
        bound=PLAN.bound_article,
        # checked once here, each the file its rule wrote, before any format starts
        figures=article_figures,
        code=command_code("parse"),
    output:
        ast=PLAN.pandoc_tree,
    log:
        "logs/parse_article.log",
    benchmark:
        "benchmarks/out/parse_article.tsv"
    localrule: True
    params:
        pandoc_version=PLAN.renderer.pandoc_version,
    shell:
        "python -m articlekit parse {input.article:q} --bound {input.bound:q} --out {output.ast:q} 2> {log:q}"


# One rule per format the article is written in (config publishing.formats;
# articlekit/render/formats/, a module each), named after the format. Each
# renders the bound article's tree; its code is the render command's and
# its own module's, so an edit to one format reruns that format alone.
for fmt in PLAN.formats:

    rule:
        name:
            fmt.name
        input:
            article=PLAN.article,
            extension=PLAN.extension,
            quarto=PLAN.quarto_settings,
            style=PLAN.article_style if fmt.quarto else [],
            cited=PLAN.cited,
            bindings=PLAN.bindings,
            bound=PLAN.bound_article,
            lint=PLAN.lint_report,
            figures=article_figures,
            # checked when it was read (raw HTML refused): Pandoc writes
            # from it; Quarto reads the bound article once it passed
            ast=PLAN.pandoc_tree,
            code=format_code(fmt),
        output:
            out=(
                report(fmt.output, caption=fmt.caption, category="Article")
                if fmt.caption
                else fmt.output
            ),
        log:
            f"logs/{fmt.name}.log",
        benchmark:
            f"benchmarks/out/{fmt.name}.tsv"
        priority: fmt.priority
        resources:
            mem_mb=1000,
            runtime=5,
        params:
            # the shell runs when the job does, after the loop: what it
            # needs of the format goes through params
            format=fmt.name,
            # what writes it: an upgrade, or a switch of renderer, writes it again
            tools=PLAN.format_tools(fmt),
            renderer=PLAN.renderer.name if fmt.quarto else "pandoc",
        shell:
            "python -m articlekit render {input.article:q} --to {params.format} "
            "--bindings {input.bindings:q} --renderer {params.renderer} "
            "--bound {input.bound:q} --ast {input.ast:q} --out {output.out:q} 2> {log:q}"
