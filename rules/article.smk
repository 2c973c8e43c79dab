# From artifacts to the article: merge values, bind them into the prose,
# lint for typed numbers, render.

EXTENSION = [
    "articlekit/quarto/_extensions/value/_extension.yml",
    "articlekit/quarto/_extensions/value/value.lua",
]
# The articlekit modules each step runs: editing one reruns the step.
BIND_CODE = [
    "articlekit/audit.py",
    "articlekit/baseline.py",
    "articlekit/bind.py",
    "articlekit/claims.py",
    "articlekit/departures.py",
    "articlekit/fmt.py",
    "articlekit/shortcodes.py",
    "articlekit/values.py",
]
RENDER_CODE = [
    "articlekit/render.py",
    "articlekit/shortcodes.py",
    "articlekit/quarto_shortcodes.lua",
    "articlekit/quarto_layout.lua",
]
PDF_CODE = [
    *RENDER_CODE,
    "articlekit/pdf.py",
    "articlekit/pdf_prepare.lua",
    "articlekit/pdf_finish.lua",
    "articlekit/pdf_style.typ",
]


rule listings:
    input:
        source=ATTENTION_CODE,
        code="articlekit/listings.py",
    output:
        json="results/listings.json",
    log:
        "logs/listings.log",
    benchmark:
        "benchmarks/out/listings.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    shell:
        "python -m articlekit listings {input.source} --out {output.json} 2> {log}"


rule values:
    input:
        results=RESULTS,
        baseline="baseline/published.yaml",
        code=["articlekit/values.py", "articlekit/baseline.py"],
    output:
        json="build/values.json",
    log:
        "logs/values.log",
    benchmark:
        "benchmarks/out/values.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    shell:
        "python -m articlekit values {input.results} --baseline {input.baseline} "
        "--out {output.json} 2> {log}"


rule lint_article:
    input:
        article=ARTICLE,
        values="build/values.json",
        code=["articlekit/lint.py", "articlekit/shortcodes.py"],
    output:
        report="build/lint.txt",
    log:
        "logs/lint_article.log",
    benchmark:
        "benchmarks/out/lint_article.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    shell:
        "python -m articlekit lint {input.article} --values {input.values} --out {output.report} 2> {log}"


rule bind:
    input:
        article=ARTICLE,
        values="build/values.json",
        # {{< departures >}}: where this build departs from the edition
        baseline="baseline/published.yaml",
        code=BIND_CODE,
    output:
        json="build/bindings.json",
    log:
        "logs/bind.log",
    benchmark:
        "benchmarks/out/bind.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    params:
        strict=config["strict"],
    shell:
        "python -m articlekit bind {input.article} --values {input.values} "
        "--strict {params.strict} --baseline {input.baseline} --out {output.json} 2> {log}"


rule render:
    input:
        article=ARTICLE,
        extension=EXTENSION,
        quarto="article/_quarto.yml",
        style="article/style.css",
        bindings="build/bindings.json",
        lint="build/lint.txt",
        figures=article_figures,
        code=RENDER_CODE,
    output:
        html="build/article.html",
        md="build/article.md",
    log:
        "logs/render.log",
    benchmark:
        "benchmarks/out/render.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        renderer=config["renderer"],
    shell:
        "python -m articlekit render {input.article} --bindings {input.bindings} "
        "--renderer {params.renderer} --html {output.html} --md {output.md} 2> {log}"


rule pdf:
    input:
        article=ARTICLE,
        extension=EXTENSION,
        bindings="build/bindings.json",
        lint="build/lint.txt",
        figures=article_figures,
        code=PDF_CODE,
    output:
        pdf=report(
            "build/article.pdf",
            caption="../report/article-pdf.rst",
            category="Article",
        ),
    log:
        "logs/pdf.log",
    benchmark:
        "benchmarks/out/pdf.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m articlekit pdf {input.article} --bindings {input.bindings} "
        "--out {output.pdf} 2> {log}"
